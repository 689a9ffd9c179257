/**
 * Conditional GET. A 200 GET answer is a pure function of (release id, method, path, query,
 * scope) and the release status (`GET /v1/meta` reports a refused release: `variant`), so the
 * weak ETag is a hash of exactly that — computable before the route runs. A
 * matching `If-None-Match` is answered 304 at once, without running the query; otherwise the
 * route runs and a 200 answer gets the `ETag` and `Cache-Control: private, max-age=60`.
 */
import { sha256Hex } from '../http/sha256.ts';
import type { Middleware } from 'koa';

export const CACHE_CONTROL = 'private, max-age=60';

/** The weak ETag of a request: `W/"<16 hex>"`. Query parameters are sorted, so their order does not matter. */
export function etagFor(parts: {
  release: string;
  method: string;
  path: string;
  query: string;
  scope: string;
  variant?: string;
}): string {
  const q = new URLSearchParams(parts.query);
  q.sort();
  const method = parts.method === 'HEAD' ? 'GET' : parts.method;
  const fields = [parts.release, method, parts.path, q.toString(), parts.scope];
  if (parts.variant) fields.push(parts.variant); // absent: the ETags are what they were
  return `W/"${sha256Hex(fields.join('\n')).slice(0, 16)}"`;
}

/** An entity tag without its weak marker. */
function bareTag(t: string): string {
  return t.trim().replace(/^W\//, '');
}

/** True when `If-None-Match` lists the tag (weak comparison, `*` matches anything). */
export function ifNoneMatchHits(header: string, etag: string): boolean {
  if (header.trim() === '*') return true;
  const want = bareTag(etag);
  for (const t of header.split(',')) if (bareTag(t) === want) return true;
  return false;
}

/** `variant`: a string that changes when answers change without a new release (the release status). */
export function conditionalMiddleware(opts: { variant?: () => string } = {}): Middleware {
  return async (ctx, next) => {
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return next();
    const release = ctx.state['release'] as { id: string } | undefined;
    if (!release) return next();
    const scope = (ctx.state['key'] as { scope: string } | undefined)?.scope ?? 'public';
    const etag = etagFor({
      release: release.id,
      method: ctx.method,
      path: ctx.path,
      query: ctx.querystring,
      scope,
      variant: opts.variant?.() ?? '',
    });
    const inm = ctx.get('If-None-Match');
    if (inm && ifNoneMatchHits(inm, etag)) {
      ctx.status = 304;
      ctx.set('ETag', etag);
      ctx.set('Cache-Control', CACHE_CONTROL);
      return;
    }
    await next();
    if (ctx.status === 200) {
      ctx.set('ETag', etag);
      if (!ctx.response.get('Cache-Control')) ctx.set('Cache-Control', CACHE_CONTROL);
    }
  };
}
