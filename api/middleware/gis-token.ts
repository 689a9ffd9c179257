/**
 * `access_token=<gt_…>` on the GIS paths (`/v1/feeds/…`, `/v1/ogc/…`, `/v1/tiles/…`): opens the token
 * (api/gis/token.ts) and hands the sealed key to the normal Bearer authentication as its
 * `Authorization` header, so scope checks, revocation, budgets and usage apply unchanged.
 * A request may authenticate one way only (RFC 6750 §2): a header and a token → 400. Elsewhere
 * `access_token` is not accepted (the endpoint rejects it as an unknown parameter).
 * The token is redacted from `instance` in problem bodies (api/http/errors.ts) and never logged.
 */
import type { Middleware } from 'koa';
import { ApiError, invalidParams } from '../http/errors.ts';
import { openGisToken } from '../gis/token.ts';

/** Paths where `access_token` is accepted. */
const GIS_PATHS = ['/v1/feeds/', '/v1/ogc', '/v1/tiles/'];

function isGisPath(path: string): boolean {
  return GIS_PATHS.some((p) => path.startsWith(p)) && path !== '/v1/feeds/token';
}

/** `key`: the current token key, or the current one followed by those of previous secrets (a rotation). */
export function gisTokenMiddleware(key: Buffer | readonly Buffer[], now: () => number = () => Date.now()): Middleware {
  return async (ctx, next) => {
    if (!isGisPath(ctx.path)) return next(); // (before ctx.query: elsewhere the query need not be parsed here)
    const token = ctx.query['access_token'];
    if (token === undefined) return next();
    if (Array.isArray(token)) throw invalidParams([{ name: 'access_token', reason: 'given more than once' }]);
    if (ctx.get('Authorization')) {
      throw invalidParams([
        {
          name: 'access_token',
          reason: 'send the key one way: either the Authorization header or access_token, not both',
        },
      ]);
    }
    const opened = openGisToken(token, key, Math.floor(now() / 1000));
    if ('error' in opened) {
      const detail =
        opened.error === 'expired'
          ? 'this access_token has expired; get a new one from /v1/feeds/token'
          : 'this access_token is not valid; get one from /v1/feeds/token';
      throw new ApiError(401, opened.error === 'expired' ? 'expired_token' : 'invalid_token', detail, {
        headers: { 'WWW-Authenticate': `Bearer realm="leads", error="invalid_token", error_description="${detail}"` },
      });
    }
    ctx.req.headers['authorization'] = `Bearer ${opened.apiKey}`;
    await next();
  };
}
