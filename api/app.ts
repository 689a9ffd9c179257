/**
 * `createApp(config, deps)` builds the Koa application; it does not listen (api/server.ts does).
 *
 * Middleware, in order:
 *   access log and request metrics (outermost: they see the final status, once the response is
 *   sent)  →  problem (errors → RFC 9457)  →  compression (gzip / br of large answers; not
 *   problems, not /app)  →  CORS (preflights answered without a key; the
 *   allowed origin on every /v1 answer, errors included; not /v1/claim nor /app)  →  client address (ctx.ip; X-Forwarded-* only from
 *   TRUSTED_PROXIES)  →  request id  →  security headers  →  deprecation headers (only when an
 *   operation is deprecated)  →  operational routes at the origin (/healthz, /readyz, /metrics:
 *   no key, no release pin)  →  the account area under /app (api/app-area/router.ts: sessions,
 *   not keys; nothing else reaches it)  →  public routers (openapi.json, docs, reference, problem types, licence claim)
 *   →  release pin  →  failed-key throttle  →  GIS access_token (→ Bearer header, GIS paths
 *   only)  →  auth (Bearer key)  →  access (hourly limit, daily row budget, usage ledger)
 *   →  attribution headers (commonwealth)  →  account and webhooks routers (never cached)
 *   →  conditional GET (ETag / 304)  →  routers under /v1
 */
import Koa from 'koa';
import Router from '@koa/router';
import type { ApiConfig } from './config.ts';
import type { AppDeps } from './http/app-deps.ts';
import type { RefusedRelease } from './releases/release.ts';
import { UNLIMITED } from './access/budget.ts';
import type { AppState } from './http/context.ts';
import { problemMiddleware } from './http/errors.ts';
import { requestIdMiddleware } from './middleware/request-id.ts';
import { securityHeadersMiddleware } from './middleware/security-headers.ts';
import { corsMiddleware } from './middleware/cors.ts';
import { compressionMiddleware } from './middleware/compression.ts';
import { clientAddressMiddleware } from './middleware/client-address.ts';
import { releaseMiddleware } from './middleware/release.ts';
import { authMiddleware } from './middleware/auth.ts';
import { conditionalMiddleware } from './middleware/conditional.ts';
import { methodNotAllowed } from './middleware/method.ts';
import { attributionMiddleware } from './middleware/attribution.ts';
import { leadsRouter } from './routes/leads.ts';
import { eventsRouter } from './routes/events.ts';
import { infrastructureRouter } from './routes/infrastructure.ts';
import { metaRouter } from './routes/meta.ts';
import { docsRouter } from './routes/docs.ts';
import { problemsRouter } from './routes/problems.ts';
import { apiRootRouter } from './routes/api-root.ts';
import { webhooksRouter } from './routes/webhooks.ts';
import { claimRouter } from './routes/claim.ts';
import { accountRouter } from './routes/account.ts';
import { accessMiddleware } from './access/enforce.ts';
import { failedAuthThrottle } from './access/throttle.ts';
import { UsageLedger } from './access/ledger.ts';
import { intelRouter } from './routes/intel.ts';
import { exportsRouter } from './routes/exports.ts';
import { feedsRouter } from './routes/feeds.ts';
import { ogcRouter } from './routes/ogc.ts';
import { tilesRouter } from './routes/tiles.ts';
import { authoritiesRouter } from './routes/authorities.ts';
import { appArea } from './app-area/router.ts';
import { gisTokenMiddleware } from './middleware/gis-token.ts';
import { deprecationMiddleware } from './middleware/deprecation.ts';
import { DEPRECATIONS, checkDeprecations } from './access/service-terms.ts';
import { buildOpenApi, endpoints } from './openapi/document.ts';
import { checkDeclared } from './routes/operation.ts';
import { tokenKey } from './gis/token.ts';
import { releaseLayersCache } from './gis/features.ts';
import { randomBytes } from 'node:crypto';
import { accessLogMiddleware } from './middleware/access-log.ts';
import { healthRouter, operationalMethods, OPERATIONAL_PATHS } from './routes/health.ts';
import { ApiMetrics } from './observability/metrics.ts';
import { createLogger } from './observability/log.ts';

/** Build the application. Routers are mounted under /v1; docs assets are public, all else keyed. */
export function createApp(config: ApiConfig, deps: AppDeps): Koa<AppState> {
  const deprecations = deps.deprecations ?? DEPRECATIONS;
  checkDeprecations(
    deprecations,
    endpoints().map((e) => `${e.method.toUpperCase()} ${e.path}`),
  );
  const app = new Koa<AppState>({ proxy: config.trustProxy });
  app.silent = true; // errors are logged by the problem middleware, with the request id
  const parts = appParts(config, deps);
  observeApp(parts, deps);
  // the chain, in the order of the module comment: what answers without a key, then the keyed API
  useOpenChain(app, config, deps, parts, deprecations);
  useKeyedChain(app, config, deps, parts);
  return app;
}

/** What the middleware chain is made of: the routers, the usage ledger, metrics, the GIS token key. */
interface AppParts {
  ledger: UsageLedger;
  metrics: ApiMetrics;
  logger: ReturnType<typeof createLogger>;
  docs: Router<AppState>;
  problems: Router<AppState>;
  root: Router<AppState>;
  claim: Router<AppState>;
  account: Router<AppState>;
  webhooks: Router<AppState>;
  /** Every router under /v1, in the order they are mounted. */
  routers: Router<AppState>[];
  health: Router<AppState>;
  gisKey: ReturnType<typeof tokenKey>;
  /** The route template of a request (`routeOf`). */
  route: (method: string, path: string) => string;
  now: () => number;
}

/** Make the routers and what they share; refuse a route that is not a declared operation. */
function appParts(config: ApiConfig, deps: AppDeps): AppParts {
  const docs = docsRouter(() => buildOpenApi(config, deps.deprecations ? { deprecations: deps.deprecations } : {}));
  const problems = problemsRouter(config);
  const root = apiRootRouter(config);
  const ledger =
    deps.ledger ??
    new UsageLedger(deps.store, {
      detailDays: config.usageDetailDays,
      now: () => deps.clock().getTime(),
      log: deps.log,
    });
  const metrics = deps.metrics ?? new ApiMetrics();
  const logger = deps.logger ?? createLogger(config.logLevel, deps.log);
  const claim = claimRouter(config, deps);
  const account = accountRouter(config, { ...deps, ledger });
  const webhooks = webhooksRouter(config, deps);
  // GIS query tokens (access_token) are sealed with GIS_TOKEN_SECRET, or a per-process secret.
  const gisKey = tokenKey(config.gisTokenSecret || randomBytes(32).toString('hex'));
  const layers = releaseLayersCache();
  const routers = [
    docs,
    problems,
    root,
    claim,
    account,
    metaRouter(config, deps),
    authoritiesRouter(config),
    leadsRouter(config),
    eventsRouter(config, deps),
    infrastructureRouter(config, deps),
    exportsRouter(config, { ...deps, metrics }),
    feedsRouter(config, { ...deps, tokenKey: gisKey, layers }),
    ogcRouter(config, { ...deps, layers }),
    tilesRouter(config, deps),
    intelRouter(config, deps),
    webhooks,
  ];
  const now = (): number => deps.clock().getTime();
  const health = healthRouter(config, { releases: deps.releases, store: deps.store, metrics, log: deps.log });
  // every route is one of the operations the OpenAPI document describes (api/routes/operation.ts)
  checkDeclared([...routers, health], endpoints());
  const route = routeOf(routers);
  return {
    ledger,
    metrics,
    logger,
    docs,
    problems,
    root,
    claim,
    account,
    webhooks,
    routers,
    health,
    gisKey,
    route,
    now,
  };
}

/** What the metrics read of the app at each scrape: the release served, the ledger's lag, the webhook queue. */
function observeApp({ metrics, ledger, now }: AppParts, deps: AppDeps): void {
  metrics.observe({
    now,
    release: () => {
      if (deps.releases.status().serving === null) return null;
      const r = deps.releases.current();
      return { id: r.id, builtAt: r.manifest.built_at };
    },
    ledger: () => ({ pendingRequests: ledger.pendingRequests, lagMs: ledger.lagMs }),
    webhookQueue: () => deps.store.webhooks.queueStats(),
  });
}

/** Paths under /v1 that need no key (the published reference and the licence claim). */
const PUBLIC_PATHS = ['/v1/docs', '/v1/reference', '/v1/openapi.json', '/v1/claim', '/v1/problems'];
const isPublic = (path: string): boolean =>
  !path.startsWith('/v1') || PUBLIC_PATHS.some((p) => path === p || path.startsWith(p + '/'));

/**
 * The chain up to the release pin: access log, problems, compression, CORS, client address,
 * request id, security and deprecation headers, then what answers without a key — the
 * operational routes, the account area and the public routers.
 */
function useOpenChain(
  app: Koa<AppState>,
  config: ApiConfig,
  deps: AppDeps,
  parts: AppParts,
  deprecations: NonNullable<AppDeps['deprecations']>,
): void {
  const { logger, metrics, route, health, ledger } = parts;
  // the operational paths are labelled as themselves; every other path by its /v1 route template, or `other`
  const routeLabel = (method: string, path: string): string =>
    OPERATIONAL_PATHS.includes(path) && (method === 'GET' || method === 'HEAD')
      ? `${method} ${path}`
      : route(method, path);
  app.use(accessLogMiddleware({ logger, metrics, routeOf: routeLabel }));
  app.use(problemMiddleware(deps.log, { publicBaseUrl: config.publicBaseUrl }));
  // inside the problem middleware: problems are sent as they are (small; the access log reads their code)
  app.use(compressionMiddleware(config));
  // before every key check (a preflight carries no key), and its headers stay on problem answers
  app.use(corsMiddleware(config));
  app.use(clientAddressMiddleware(config, deps.log));
  app.use(requestIdMiddleware());
  app.use(securityHeadersMiddleware(config));
  if (Object.keys(deprecations).length > 0) app.use(deprecationMiddleware(deprecations, route));
  // /healthz, /readyz, /metrics: for load balancers and Prometheus, before the release pin and the key check
  app.use(routesOf(health));
  app.use(operationalMethods());
  // The account area (/app) runs on sessions: it answers before the release pin and the API-key checks.
  app.use(appArea(config, { ...deps, ledger }));
  // The published reference (openapi.json, docs, reference, the problem types) and the licence claim page need neither a key nor a loaded release.
  // GET /v1, the index of links, too.
  app.use(
    routesOf(
      new Router<AppState>({ prefix: '/v1' })
        .use(parts.root.routes())
        .use(parts.docs.routes())
        .use(parts.problems.routes())
        .use(parts.claim.routes()),
    ),
  );
}

/**
 * The chain from the release pin on: failed-key throttle, GIS token, auth and access (or the
 * bench's fixed key), attribution, the account-state routers, conditional GET, the /v1 routers.
 */
function useKeyedChain(app: Koa<AppState>, config: ApiConfig, deps: AppDeps, parts: AppParts): void {
  const { ledger, gisKey, route, now, routers, docs, problems, root, claim, account, webhooks } = parts;
  app.use(releaseMiddleware(deps.releases));
  // the throttle wraps the GIS token too, so a 401 for a bad access_token reports the allowance
  if (!deps.benchWithoutAccess)
    app.use(failedAuthThrottle({ limit: config.authFailLimit, windowS: config.authFailWindowS, isPublic, now }));
  // tokens sealed under a previous secret (GIS_TOKEN_SECRETS_PREVIOUS) still open after a rotation
  app.use(gisTokenMiddleware([gisKey, ...config.gisTokenSecretsPrevious.map(tokenKey)], now)); // the clock the token was minted on
  if (deps.benchWithoutAccess) {
    const key = deps.benchWithoutAccess;
    app.use((ctx, next) => {
      ctx.state.key = key;
      ctx.state.budget = UNLIMITED;
      return next();
    });
  } else {
    app.use(authMiddleware(deps.store, { publicPaths: PUBLIC_PATHS, cacheMs: config.keyCacheMs, now }));
    app.use(accessMiddleware({ store: deps.store, ledger, now, limits: config.accessLimits, routeOf: route }));
  }
  app.use(attributionMiddleware());
  // The usage ledger and webhooks are account state, not release data: never answered from an ETag.
  app.use(routesOf(new Router<AppState>({ prefix: '/v1' }).use(account.routes()).use(webhooks.routes())));
  // a refused release changes /v1/meta's release_status: its ETag changes with it
  app.use(conditionalMiddleware({ variant: () => refusedStamp(deps.releases.status().refused) }));
  const v1 = new Router<AppState>({ prefix: '/v1' });
  for (const r of routers)
    if (r !== docs && r !== problems && r !== root && r !== claim && r !== account && r !== webhooks)
      v1.use(r.routes());
  app.use(v1.routes());
  app.use(methodNotAllowed(routers));
}

/**
 * `router.routes()` for a router most requests pass by (the operational, public and account
 * routers sit in the chain before the /v1 routers): a path none of its routes matches (each
 * route's own `match`) goes straight on, without the router's dispatch — its walk of every layer,
 * the match result, the not-found event. Keeps `.router` (tests read the app's routers from it).
 */
function routesOf(router: Router<AppState>): Koa.Middleware<AppState> {
  const dispatch = router.routes() as Koa.Middleware<AppState>;
  const routes = router.stack.filter((layer) => layer.methods.length > 0);
  const passBy: Koa.Middleware<AppState> = (ctx, next) => {
    const path = ctx.path;
    for (const route of routes) if (route.match(path)) return dispatch(ctx, next);
    return next();
  };
  return Object.assign(passBy, { router });
}

/** Paths whose route template `routeOf` remembers: at most this many, each at most `ROUTE_PATH_CACHED_MAX` long. */
const ROUTES_CACHED_MAX = 4096;
const ROUTE_PATH_CACHED_MAX = 256;

/**
 * The route template a request is counted under in the usage ledger, e.g. `GET /v1/leads/{id}`;
 * `other` for paths no router has (so unknown paths cannot grow the ledger). The routers do not
 * change once the app is built, so the template of a method and path is matched once and
 * remembered (bounded: ids make many paths; emptied when full), not matched against every route
 * of every router on each request.
 */
export function routeOf(routers: readonly Router<AppState>[]): (method: string, path: string) => string {
  const match = (method: string, path: string): string => {
    const rel = path.slice(3);
    for (const r of routers) {
      const m = r.match(rel, method === 'HEAD' ? 'GET' : method);
      const layer = m.pathAndMethod.find((l) => l.methods.length > 0);
      if (layer) return `${method} /v1${String(layer.path).replace(/:([A-Za-z_]+)/g, '{$1}')}`;
    }
    return 'other';
  };
  const seen = new Map<string, string>();
  return (method, path) => {
    if (!path.startsWith('/v1/')) return 'other';
    if (path.length > ROUTE_PATH_CACHED_MAX) return match(method, path);
    const key = `${method} ${path}`;
    let route = seen.get(key);
    if (route === undefined) {
      route = match(method, path);
      if (seen.size >= ROUTES_CACHED_MAX) seen.clear();
      seen.set(key, route);
    }
    return route;
  };
}

/** What of a refused release goes into ETags ('' when none is refused, so ETags stay as they were). */
function refusedStamp(r: RefusedRelease | null): string {
  return r ? `refused ${r.release} ${r.attempts}` : '';
}
