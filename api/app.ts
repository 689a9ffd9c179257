/**
 * `createApp(config, deps)` builds the Koa application; it does not listen (api/server.ts does).
 *
 * Middleware, in order:
 *   problem (errors → RFC 9457)  →  request id  →  security headers  →  release pin
 *   →  GIS access_token (→ Bearer header, GIS paths only)  →  auth (Bearer key)  →  conditional GET (ETag / 304)  →  routers under /v1
 */
import Koa from 'koa';
import Router from '@koa/router';
import type { ApiConfig } from './config.ts';
import type { ApiDb } from './db.ts';
import type { ReleaseManager } from './release.ts';
import type { StateStore } from './state/store.ts';
import type { AppState } from './context.ts';
import { problemMiddleware } from './errors.ts';
import { requestIdMiddleware } from './middleware/request-id.ts';
import { securityHeadersMiddleware } from './middleware/security-headers.ts';
import { releaseMiddleware } from './middleware/release.ts';
import { authMiddleware } from './middleware/auth.ts';
import { conditionalMiddleware } from './middleware/conditional.ts';
import { methodNotAllowed } from './middleware/method.ts';
import { leadsRouter } from './routes/leads.ts';
import { infrastructureRouter } from './routes/infrastructure.ts';
import { metaRouter } from './routes/meta.ts';
import { docsRouter } from './routes/docs.ts';
import { exportsRouter } from './routes/exports.ts';
import { feedsRouter } from './routes/feeds.ts';
import { ogcRouter } from './routes/ogc.ts';
import { gisTokenMiddleware } from './middleware/gis-token.ts';
import { tokenKey } from './gis/token.ts';
import { releaseLayersCache } from './gis/features.ts';
import { randomBytes } from 'node:crypto';

export interface AppDeps {
  db: ApiDb;
  releases: ReleaseManager;
  store: StateStore;
  clock: () => Date;
  log: (line: string) => void;
}

/** Build the application. Routers are mounted under /v1; docs assets are public, all else keyed. */
export function createApp(config: ApiConfig, deps: AppDeps): Koa<AppState> {
  const app = new Koa<AppState>({ proxy: config.trustProxy });
  app.silent = true; // errors are logged by the problem middleware, with the request id
  const v1 = new Router<AppState>({ prefix: '/v1' });
  const docs = docsRouter(config, deps);
  // GIS query tokens (access_token) are sealed with GIS_TOKEN_SECRET, or a per-process secret.
  const gisKey = tokenKey(config.gisTokenSecret || randomBytes(32).toString('hex'));
  const layers = releaseLayersCache();
  const routers = [
    docs,
    metaRouter(config, deps),
    leadsRouter(config, deps),
    infrastructureRouter(config, deps),
    exportsRouter(config, deps),
    feedsRouter(config, { ...deps, tokenKey: gisKey, layers }),
    ogcRouter(config, { ...deps, layers }),
  ];
  app.use(problemMiddleware(deps.log));
  app.use(requestIdMiddleware());
  app.use(securityHeadersMiddleware(config));
  // The published reference (openapi.json, docs) needs neither a key nor a loaded release.
  app.use(new Router<AppState>({ prefix: '/v1' }).use(docs.routes()).routes());
  app.use(releaseMiddleware(deps.releases));
  app.use(gisTokenMiddleware(gisKey));
  app.use(authMiddleware(deps.store, { publicPaths: ['/v1/docs', '/v1/openapi.json'], cacheMs: config.keyCacheMs }));
  app.use(conditionalMiddleware());
  for (const r of routers) if (r !== docs) v1.use(r.routes());
  app.use(v1.routes());
  app.use(methodNotAllowed(routers));
  return app;
}
