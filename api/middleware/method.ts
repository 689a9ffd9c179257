/**
 * 405 for a path that exists with other methods: after the routers found no route for this
 * method, ask each resource router which methods its matching routes accept and answer a
 * problem+json with `Allow`. `OPTIONS` is answered 204 with `Allow`.
 */
import type { Middleware } from 'koa';
import type Router from '@koa/router';
import { ApiError } from '../http/errors.ts';

/** Resource routers are mounted under this prefix (their own paths do not include it). */
const MOUNT = '/v1';

/** Methods accepted at `path` by any of the routers (HEAD is implied by GET), sorted. */
function allowedMethods(routers: readonly Pick<Router<any, any>, 'match'>[], path: string): string[] {
  if (path !== MOUNT && !path.startsWith(MOUNT + '/')) return [];
  const candidates = [path, path.slice(MOUNT.length) || '/'];
  const methods = new Set<string>();
  for (const r of routers) {
    for (const p of candidates) {
      for (const layer of r.match(p, 'GET').path) for (const m of layer.methods) methods.add(m);
    }
  }
  if (methods.has('GET')) methods.add('HEAD');
  if (methods.size > 0) methods.add('OPTIONS');
  return [...methods].sort();
}

export function methodNotAllowed(routers: readonly Pick<Router<any, any>, 'match'>[]): Middleware {
  return async (ctx, next) => {
    await next();
    if (ctx.status !== 404 || ctx.body !== undefined) return;
    const allow = allowedMethods(routers, ctx.path);
    if (allow.length === 0) return;
    if (ctx.method === 'OPTIONS') {
      ctx.set('Allow', allow.join(', '));
      ctx.status = 204;
      return;
    }
    throw new ApiError(
      405,
      'method_not_allowed',
      `${ctx.method} is not allowed on ${ctx.path}; allowed: ${allow.join(', ')}`,
      {
        headers: { Allow: allow.join(', ') },
      },
    );
  };
}
