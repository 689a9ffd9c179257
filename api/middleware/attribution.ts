/**
 * Attribution on every response to a key whose scope must attribute (commonwealth, spec 1.5),
 * whatever the format: `Link: <licence>; rel="license"` (RFC 8288, appended to any other `Link`)
 * and `X-Attribution: <text>`, set before the route runs so streamed exports carry them too.
 * JSON bodies also carry the text in `_meta.attribution`; Parquet exports in their key-value
 * metadata. The rule and the values come from `attribution()` in api/access/masking.ts.
 */
import type { Middleware } from 'koa';
import { attribution } from '../access/masking.ts';
import type { Scope } from '../access/scopes.ts';

export function attributionMiddleware(): Middleware {
  return async (ctx, next) => {
    const scope = (ctx.state['key'] as { scope: Scope } | undefined)?.scope;
    const a = scope ? attribution(scope) : null;
    if (a) {
      ctx.append('Link', a.headers.Link);
      ctx.set('X-Attribution', a.headers['X-Attribution']);
    }
    await next();
  };
}
