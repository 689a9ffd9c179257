/**
 * Cross-origin resource sharing (CORS) for the keyed API, as public bearer-token APIs do it
 * (GitHub's REST API is the model): a page on another origin may call `/v1/…` with its key in the
 * `Authorization` header and read the answer — errors included, so a page sees its 401 or 429 —
 * and MapLibre on another origin can load the vector tiles.
 *
 * - A preflight (`OPTIONS` with `Origin` and `Access-Control-Request-Method`) is answered here,
 *   `204`, before the release pin and the key check: a browser never sends a key with it.
 * - Every other answer under `/v1` carries `Access-Control-Allow-Origin` and
 *   `Access-Control-Expose-Headers` (the response headers a script may read), set before the
 *   request goes on, so the problem middleware's error answers keep them.
 * - No credentials: the API authenticates by header, never by cookie, so
 *   `Access-Control-Allow-Credentials` is never sent and `*` may be the allowed origin.
 * - `CORS_ALLOW_ORIGINS` (config `corsAllowOrigins`): `*` (default); a list of origins, then the
 *   request's `Origin` is echoed when it is one of them (nothing otherwise) and `Vary: Origin` is
 *   sent; or `none`, no CORS at all.
 * - Never on the licence claim page and its calls (`/v1/claim…`: their CSRF defence is that a
 *   cross-site page cannot send them JSON without a preflight nobody answers) nor on the account
 *   area (`/app`, cookie sessions) or the operational paths — they are not under `/v1`.
 */
import type { Middleware } from 'koa';
import type { ApiConfig } from '../config.ts';

/** Methods a cross-origin page may use (the preflight's `Access-Control-Allow-Methods`). */
const CORS_ALLOW_METHODS: readonly string[] = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'];

/** Request headers a cross-origin page may send beyond the CORS-safelisted ones: the key, JSON bodies, revalidation, retries, its own request id. */
export const CORS_ALLOW_HEADERS: readonly string[] = [
  'Authorization',
  'Content-Type',
  'If-None-Match',
  'Idempotency-Key',
  'X-Request-Id',
];

/**
 * Response headers a cross-origin script may read (`Access-Control-Expose-Headers`): every
 * header the API sends that is not CORS-safelisted (Cache-Control, Content-Language,
 * Content-Length, Content-Type, Expires, Last-Modified and Pragma always are). A test checks
 * that each response header of the OpenAPI document is here.
 */
export const CORS_EXPOSE_HEADERS: readonly string[] = [
  'ETag',
  'Link',
  'Location',
  'Retry-After',
  'WWW-Authenticate',
  'Allow',
  'X-Request-Id',
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'RateLimit',
  'RateLimit-Policy',
  'X-Budget-Limit',
  'X-Budget-Remaining',
  'X-Budget-Reset',
  'X-Budget-Cost',
  'X-Attribution',
  'X-Export-Rows',
  'X-Export-Release',
  'Content-Crs',
  'Idempotent-Replayed',
  'Content-Disposition',
  'Deprecation',
  'Sunset',
];

/** How long a browser may reuse a preflight's answer, seconds (Chromium caps it at 7,200; Firefox at 86,400). */
export const CORS_MAX_AGE_S = 7200;

/** True for the paths that get CORS: everything under `/v1` except the licence claim page and its calls. */
function corsApplies(path: string): boolean {
  if (path !== '/v1' && !path.startsWith('/v1/')) return false;
  return path !== '/v1/claim' && !path.startsWith('/v1/claim/');
}

/**
 * The CORS middleware; mounted in api/app.ts right after the problem middleware, so it answers
 * preflights before any key check and its headers are on every answer below it, errors included.
 */
export function corsMiddleware(config: Pick<ApiConfig, 'corsAllowOrigins'>): Middleware {
  const origins = config.corsAllowOrigins;
  if (origins.length === 0) return (_ctx, next) => next(); // CORS_ALLOW_ORIGINS=none
  const anyOrigin = origins.includes('*');
  const listed = new Set(origins);
  const methods = CORS_ALLOW_METHODS.join(', ');
  const headers = CORS_ALLOW_HEADERS.join(', ');
  const expose = CORS_EXPOSE_HEADERS.join(', ');
  return async (ctx, next) => {
    if (!corsApplies(ctx.path)) return next();
    const origin = ctx.get('Origin');
    let allow: string | null = '*';
    if (!anyOrigin) {
      ctx.vary('Origin'); // the answer depends on the Origin: shared caches must keep one per origin
      allow = listed.has(origin) ? origin : null;
    }
    if (ctx.method === 'OPTIONS' && origin !== '' && ctx.get('Access-Control-Request-Method') !== '') {
      // a preflight: no key, no release needed; without the headers (an origin not listed) the browser refuses
      ctx.status = 204;
      if (allow !== null) {
        ctx.set('Access-Control-Allow-Origin', allow);
        ctx.set('Access-Control-Allow-Methods', methods);
        ctx.set('Access-Control-Allow-Headers', headers);
        ctx.set('Access-Control-Max-Age', String(CORS_MAX_AGE_S));
      }
      return;
    }
    if (allow !== null) {
      ctx.set('Access-Control-Allow-Origin', allow);
      ctx.set('Access-Control-Expose-Headers', expose);
    }
    await next();
  };
}
