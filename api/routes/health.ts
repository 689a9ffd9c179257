/**
 * The operational endpoints, at the origin (outside /v1), without an API key, never cached:
 *
 * - `GET /healthz` — the process is alive and answering HTTP (for a liveness probe); 200 always.
 * - `GET /readyz` — a release is loaded and the state store can be read AND written (a write
 *   probe, `StateStore.probeWrite`, answering within `READY_STORE_TIMEOUT_MS`; its result is
 *   reused for `READY_PROBE_CACHE_MS`, one probe at a time): 200, else `503 not_ready` naming
 *   what is not ready (for a load balancer's readiness check: a replica without a release, or
 *   whose store is locked by another process, read-only or unreachable — so that every keyed
 *   request would get 503 — is taken out, and back in within a few seconds once writes work).
 * - `GET /metrics` — the Prometheus text exposition (api/observability/metrics.ts), only with
 *   `Authorization: Bearer <METRICS_TOKEN>` (401 `invalid_metrics_token` otherwise); a 404
 *   when METRICS_TOKEN is unset. A separate listener on METRICS_PORT serves it without a token
 *   (api/server.ts), bound to METRICS_HOST (default 127.0.0.1).
 *
 * They are mounted before the release pin and the key check (api/app.ts).
 */
import Router from '@koa/router';
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Middleware } from 'koa';
import type { ApiConfig } from '../config.ts';
import type { AppContext, AppState } from '../http/context.ts';
import { mount, type Operation } from './operation.ts';
import { schemaRef } from '../openapi/endpoint.ts';
import { OPERATIONS_TAG } from '../openapi/observability.ts';
import { ApiError } from '../http/errors.ts';
import type { ReleaseManager } from '../releases/release.ts';
import type { StateStore } from '../state/store-interface.ts';
import type { ApiMetrics } from '../observability/metrics.ts';

/** The paths served at the origin, outside /v1. */
export const OPERATIONAL_PATHS: readonly string[] = ['/healthz', '/readyz', '/metrics'];

/** How long /readyz waits for the state store's write probe before it counts as not answering. */
const READY_STORE_TIMEOUT_MS = 1000;
/** How long a write probe's result is reused by /readyz (a load balancer probing every second costs one write a second at most). */
export const READY_PROBE_CACHE_MS = 1000;

/** The body of `GET /healthz`. */
export interface HealthBody {
  status: 'ok';
}

/** The body of a ready `GET /readyz`. */
export interface ReadyBody {
  status: 'ready';
  release: string;
  checks: { release: 'ok'; state_store: 'ok' };
}

export interface HealthDeps {
  releases: Pick<ReleaseManager, 'current'>;
  /** Its write probe answers whether keyed requests can be counted. */
  store: Pick<StateStore, 'probeWrite'>;
  metrics: Pick<ApiMetrics, 'scrape'>;
  /** Why the store does not answer goes to the log, not to the (public) response. */
  log: (line: string) => void;
}

/** Whether `Authorization` carries `Bearer <token>`, compared in constant time (digests of equal length). */
function bearerMatches(header: string, token: string): boolean {
  const m = /^Bearer +(\S+) *$/i.exec(header.trim());
  if (!m || token === '') return false;
  const digest = (s: string): Buffer => createHash('sha256').update(s, 'utf8').digest();
  return timingSafeEqual(digest(m[1]!), digest(token));
}

/** What is wrong with the state store (logged), or null when its write probe succeeds in time. */
async function storeProblem(store: HealthDeps['store']): Promise<string | null> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve(`did not answer within ${READY_STORE_TIMEOUT_MS} ms`), READY_STORE_TIMEOUT_MS);
    timer.unref();
  });
  try {
    return await Promise.race([store.probeWrite().then(() => null), timeout]);
  } catch (e) {
    const cause = (e as { cause?: { message?: unknown } }).cause?.message ?? (e as Error)?.message;
    return `failed: ${String(cause ?? e)}`;
  } finally {
    clearTimeout(timer);
  }
}

/** `storeProblem`, one probe at a time, its answer reused for READY_PROBE_CACHE_MS after it settles. */
function cachedStoreProblem(store: HealthDeps['store']): () => Promise<string | null> {
  let last: { at: number; problem: Promise<string | null> } | null = null;
  return () => {
    const now = Date.now();
    if (last === null || now - last.at >= READY_PROBE_CACHE_MS) {
      const entry = { at: Infinity, problem: storeProblem(store) };
      void entry.problem.then(() => (entry.at = Date.now())); // in flight: shared; settled: reused for a while
      last = entry;
    }
    return last.problem;
  };
}

/** What the operational operations share: the store probe and whether the store was last seen down. */
interface HealthEnv {
  config: Pick<ApiConfig, 'metricsToken'>;
  deps: HealthDeps;
  probe: () => Promise<string | null>;
  /** Log when the store stops answering and when it answers again, not on every probe. */
  storeWasDown: boolean;
}

/** `GET /healthz`. */
function healthz(ctx: AppContext): void {
  ctx.set('Cache-Control', 'no-store');
  ctx.body = { status: 'ok' } satisfies HealthBody;
}

/** `GET /readyz`: a release is loaded and the state store answers its write probe. */
async function readyz(ctx: AppContext, env: HealthEnv): Promise<void> {
  ctx.set('Cache-Control', 'no-store');
  const checks: Record<string, string> = {};
  let release: string | null = null;
  try {
    release = env.deps.releases.current().id;
    checks['release'] = 'ok';
  } catch {
    checks['release'] = 'no release is loaded';
  }
  const store = await env.probe();
  if ((store !== null) !== env.storeWasDown)
    env.deps.log(
      store !== null ? `readyz: not ready, the state store ${store}` : 'readyz: the state store answers again',
    );
  env.storeWasDown = store !== null;
  checks['state_store'] = store === null ? 'ok' : 'not answering';
  const failing = Object.entries(checks).filter(([, v]) => v !== 'ok');
  if (failing.length > 0 || release === null) {
    throw new ApiError(503, 'not_ready', `not ready: ${failing.map(([k, v]) => `${k}: ${v}`).join('; ')}`, {
      headers: { 'Cache-Control': 'no-store', 'Retry-After': '5' },
    });
  }
  ctx.body = { status: 'ready', release, checks: { release: 'ok', state_store: 'ok' } } satisfies ReadyBody;
}

/** `GET /metrics` with the METRICS_TOKEN. */
async function metricsText(ctx: AppContext, env: HealthEnv): Promise<void> {
  if (env.config.metricsToken === '') throw new ApiError(404, 'not_found', `no endpoint at ${ctx.path}`);
  if (!bearerMatches(ctx.get('Authorization'), env.config.metricsToken)) {
    throw new ApiError(401, 'invalid_metrics_token', 'GET /metrics needs Authorization: Bearer <METRICS_TOKEN>', {
      headers: { 'WWW-Authenticate': 'Bearer realm="metrics"', 'Cache-Control': 'no-store' },
    });
  }
  const m = await env.deps.metrics.scrape();
  ctx.set('Cache-Control', 'no-store');
  ctx.type = m.contentType;
  ctx.body = m.body;
}

/** The operational operations (paths at the origin, `origin: true`). */
export const HEALTH_OPERATIONS: readonly Operation<HealthEnv>[] = [
  {
    method: 'get',
    path: '/healthz',
    origin: true,
    tag: OPERATIONS_TAG.name,
    public: true,
    summary: 'Liveness: the process answers',
    description:
      'Answers 200 while the process is alive and serving HTTP, whether or not a release is loaded. No key needed; `Cache-Control: no-store`.',
    ok: { schema: schemaRef('HealthResponse'), description: 'Alive.' },
    errors: [],
    handler: healthz,
  },
  {
    method: 'get',
    path: '/readyz',
    origin: true,
    tag: OPERATIONS_TAG.name,
    public: true,
    summary: 'Readiness: a release is loaded and the state store answers',
    description:
      'Answers 200 when a release is loaded and the state store answers a query within 2 s; otherwise `503 not_ready`, whose `checks` name what is not ready. ' +
      "For a load balancer's readiness check. No key needed; `Cache-Control: no-store`.",
    ok: { schema: schemaRef('ReadyResponse'), description: 'Ready to serve.' },
    errors: [],
    handler: readyz,
  },
  {
    method: 'get',
    path: '/metrics',
    origin: true,
    tag: OPERATIONS_TAG.name,
    public: true,
    security: [{ metricsToken: [] }],
    summary: 'Prometheus metrics',
    description:
      "The server's metrics in the Prometheus text format (requests and latency by route template and status class, rows served, 429s by reason, release age, index build time, " +
      'usage-ledger flush lag, webhook queue, exports running, state-store latency, process metrics; the list is in docs/operations.md). ' +
      'Needs `Authorization: Bearer <METRICS_TOKEN>` (401 `invalid_metrics_token` otherwise); 404 when the server has no METRICS_TOKEN. ' +
      'A server with METRICS_PORT also serves it, without a token, on a listener of its own bound to METRICS_HOST (default 127.0.0.1).',
    ok: {
      schema: { type: 'string', description: 'Prometheus text exposition format 0.0.4.' },
      type: 'text/plain',
      description: 'The metrics.',
    },
    errors: [401, 404],
    handler: metricsText,
  },
];

/** The router of /healthz, /readyz and /metrics (paths at the origin). */
export function healthRouter(config: Pick<ApiConfig, 'metricsToken'>, deps: HealthDeps): Router<AppState> {
  return mount(HEALTH_OPERATIONS, { config, deps, probe: cachedStoreProblem(deps.store), storeWasDown: false });
}

/** 405 (204 for OPTIONS) for the operational paths with a method other than GET / HEAD; after `healthRouter`. */
export function operationalMethods(): Middleware {
  return async (ctx, next) => {
    if (!OPERATIONAL_PATHS.includes(ctx.path) || ctx.method === 'GET' || ctx.method === 'HEAD') return next();
    ctx.set('Allow', 'GET, HEAD, OPTIONS');
    if (ctx.method === 'OPTIONS') {
      ctx.status = 204;
      return;
    }
    throw new ApiError(
      405,
      'method_not_allowed',
      `${ctx.method} is not allowed on ${ctx.path}; allowed: GET, HEAD, OPTIONS`,
      { headers: { Allow: 'GET, HEAD, OPTIONS' } },
    );
  };
}
