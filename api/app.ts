/**
 * `createApp(config, deps)` builds the Koa application; it does not listen (api/server.ts does).
 *
 * Middleware, in order:
 *   problem (errors → RFC 9457)  →  request id  →  security headers  →  release pin
 *   →  auth (Bearer key)  →  conditional GET (ETag / 304)  →  routers under /v1
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
  const routers = [docs, metaRouter(config, deps), leadsRouter(config, deps), infrastructureRouter(config, deps), exportsRouter(config, deps)];
  app.use(problemMiddleware(deps.log));
  app.use(requestIdMiddleware());
  app.use(securityHeadersMiddleware(config));
  // The published reference (openapi.json, docs) needs neither a key nor a loaded release.
  app.use(new Router<AppState>({ prefix: '/v1' }).use(docs.routes()).routes());
  app.use(releaseMiddleware(deps.releases));
  app.use(authMiddleware(deps.store, { publicPaths: ['/v1/docs', '/v1/openapi.json'], cacheMs: config.keyCacheMs }));
  app.use(conditionalMiddleware());
  for (const r of routers) if (r !== docs) v1.use(r.routes());
  app.use(v1.routes());
  app.use(methodNotAllowed(routers));
  return app;
}
