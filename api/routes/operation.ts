/**
 * An operation declared once: its path, method, parameters (the query schema its parser reads),
 * responses, scopes and documentation — the `Endpoint` fields the OpenAPI document is built from
 * (api/openapi/document.ts) — and its handler, in one object. Each resource's file in
 * `api/routes/` exports its list of operations; `mount` turns a list into the Koa router the app
 * mounts, and the document lists the same objects (`endpoints()`), so a route and its
 * documentation cannot drift apart. `checkDeclared` refuses a router holding a route that is not
 * one of the documented operations (createApp runs it on every router it mounts).
 *
 * As FastAPI's path-operation decorator (tipg's routes are declared with it) carries the path,
 * parameters, responses and summary of a function, and `app.openapi()` reads them back.
 */
import Router from '@koa/router';
import type { Endpoint } from '../openapi/endpoint.ts';
import type { AppContext, AppState } from '../http/context.ts';
import { charging, quoteChange, type Served } from '../access/budget.ts';

/** One operation: its OpenAPI declaration and its handler. `E`: what the resource's handlers share (config, deps, caches). */
export interface Operation<E = unknown> extends Endpoint {
  /**
   * Answer the request. A handler that serves records counts them and answers `served(n, send)`
   * (api/access/budget.ts): the records are charged, then `send` sets the answer.
   */
  handler(ctx: AppContext, env: E): Served | void | Promise<Served | void>;
  /** A POST that only reads (`POST /leads/search`): `dry_run=1` quotes the records it would serve, not 0 before it acts. */
  reads?: boolean;
}

/** An operation's path as Koa's router writes it: `/leads/{id}` → `/leads/:id`. */
export function routerPath(path: string): string {
  return path.replace(/\{([A-Za-z_]+)\}/g, ':$1');
}

/** The operation each route of a router was mounted from. */
const declared = new WeakMap<object, Operation<never>>();

/**
 * The router of a resource: each operation mounted at its path and method (in the list's order,
 * which decides between overlapping paths: `/infrastructure/renewables` before
 * `/infrastructure/{id}`), its handler given `env`. `use` runs before every operation of the
 * router (the webhooks' capability guard). Every operation but a read answers `dry_run=1` before
 * it acts (`quoteChange`); the records a handler serves are charged in one place (`charging`).
 */
export function mount<E>(
  operations: readonly Operation<E>[],
  env: E,
  opts: { use?: Parameters<Router<AppState>['use']>[0] } = {},
): Router<AppState> {
  const router = new Router<AppState>();
  if (opts.use) router.use(opts.use);
  for (const op of operations) {
    const changes = op.method !== 'get' && !op.reads;
    const answer = charging((ctx: AppContext) => op.handler(ctx, env));
    const run = changes
      ? async (ctx: AppContext): Promise<void> => {
          await quoteChange(ctx.state.budget);
          await answer(ctx);
        }
      : answer;
    router[op.method](routerPath(op.path), run);
    const layer = router.stack.at(-1)!;
    declared.set(layer, op as Operation<never>);
  }
  return router;
}

/** The operation a route was mounted from (undefined for a route added by hand). */
export function declarationOf(route: object): Endpoint | undefined {
  return declared.get(route);
}

/**
 * Throw unless every route of `routers` was mounted from one of `documented` (the operations of
 * the OpenAPI document): a route added by hand (`router.get(…)`), or mounted from a list the
 * document does not hold, would be served without being described.
 */
export function checkDeclared(routers: readonly Router<AppState>[], documented: readonly Endpoint[]): void {
  const known = new Set<Endpoint>(documented);
  for (const router of routers) {
    for (const layer of router.stack) {
      if (layer.methods.length === 0) continue; // router.use middleware, not a route
      const op = declarationOf(layer);
      const route = `${layer.methods.filter((m) => m !== 'HEAD').join(', ')} ${String(layer.path)}`;
      if (!op) throw new Error(`${route} was not mounted from an operation (api/routes/operation.ts mount)`);
      if (!known.has(op))
        throw new Error(
          `${route} is not in the OpenAPI document: add its operations to endpoints() in api/openapi/document.ts`,
        );
    }
  }
}
