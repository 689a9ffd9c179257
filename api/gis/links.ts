/**
 * Links written by the GIS endpoints (`next`, `self`, OGC landing-page links). They use the
 * origin the request came to (`X-Forwarded-Proto` / `X-Forwarded-Host` when `TRUST_PROXY=1` and the
 * peer is in TRUSTED_PROXIES; api/middleware/client-address.ts drops them otherwise), so
 * a GIS client follows them back to the server it connected to, and they carry the request's
 * `access_token` on, so a client that authenticates by query parameter keeps doing so.
 */
import type { AppContext } from '../http/context.ts';

export interface Link {
  href: string;
  rel: string;
  type?: string;
  title?: string;
}

/** Absolute URL of `path` (starting with /v1) on this server, with `params` and the request's access_token. */
export function gisHref(ctx: AppContext, path: string, params: Record<string, string | undefined> = {}): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined) q.set(k, v);
  const token = ctx.query['access_token'];
  if (typeof token === 'string') q.set('access_token', token);
  const qs = q.toString();
  return `${ctx.protocol}://${ctx.host}${path}${qs ? `?${qs}` : ''}`;
}

/** The request's own query (without access_token, added back by `gisHref`), with `cursor` set or removed. */
export function sameQuery(ctx: AppContext, cursor: string | undefined): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(ctx.query)) {
    if (k === 'access_token' || k === 'cursor' || v === undefined) continue;
    out[k] = Array.isArray(v) ? [...new Set(v)].join(',') : v; // a value repeated as is (GDAL 3.6 re-adds its own) is one
  }
  out['cursor'] = cursor;
  return out;
}
