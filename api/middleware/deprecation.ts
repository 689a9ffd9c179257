/**
 * `Deprecation` (RFC 9745), `Sunset` (RFC 8594) and `Link: <…>; rel="deprecation"` on every
 * response of an operation the deprecation table declares (api/access/service-terms.ts), errors
 * included; the OpenAPI document marks the same operations `deprecated: true` from the same
 * table. createApp mounts it only when the table has an entry, so with none no response pays for
 * the route lookup or carries the headers.
 */
import type { Middleware } from 'koa';
import { deprecationHeaders, type DeprecationTable } from '../access/service-terms.ts';

/**
 * `routeOf(method, path)` gives the route template a request falls under (`GET /v1/leads/{id}`,
 * or `other`), as `routeOf` in api/app.ts; the table's keys are the same without `/v1`.
 */
export function deprecationMiddleware(
  table: DeprecationTable,
  routeOf: (method: string, path: string) => string,
): Middleware {
  const headers = new Map(Object.entries(table).map(([op, d]) => [op, deprecationHeaders(d)]));
  return async (ctx, next) => {
    const method = ctx.method === 'HEAD' ? 'GET' : ctx.method;
    const route = routeOf(method, ctx.path);
    const h = route.startsWith(`${method} /v1/`)
      ? headers.get(`${method} ${route.slice(method.length + 4)}`)
      : undefined;
    if (!h) return next();
    // Set before the route runs, so a streamed body or a thrown problem carries them too.
    ctx.set('Deprecation', h.Deprecation);
    ctx.set('Sunset', h.Sunset);
    ctx.append('Link', h.Link);
    try {
      await next();
    } finally {
      // A route that set its own `Link` (paging, licence) replaced ours: add it back.
      const links = ctx.response.get('Link');
      const list = Array.isArray(links) ? links : links ? [String(links)] : [];
      if (!ctx.headerSent && !list.some((l) => l.includes('rel="deprecation"'))) ctx.append('Link', h.Link);
    }
  };
}
