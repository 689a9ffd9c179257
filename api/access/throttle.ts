/**
 * Throttling of repeated invalid-key attempts per client address (`ctx.ip`; behind a proxy with
 * TRUST_PROXY=1 the X-Forwarded-For client). Every 401 for a key that was presented but not
 * accepted (malformed, unknown, revoked, expired) counts; after `limit` of them in a fixed window
 * of `windowS` seconds the address gets 429 `too_many_failed_attempts` (with `Retry-After`) for
 * every keyed request until the window ends — before any key lookup, so guessing stops costing
 * the store anything. A missing header does not count (it is a mistake, not a guess), nor does an
 * `access_token` that does not open (it cannot be guessed); every 401 carries the address's
 * allowance in the `X-RateLimit-*` / `RateLimit*` headers (policy `failed-key-attempts`).
 *
 * Counts are kept in this replica's memory (bounded; the oldest addresses are dropped first).
 */
import type { Middleware } from 'koa';
import { ApiError } from '../errors.ts';
import { rateLimitHeaders, retryAfter } from './limits.ts';

export interface ThrottleOptions {
  limit: number;
  windowS: number;
  now?: () => number;
  /** Paths the throttle ignores (the public docs). */
  isPublic: (path: string) => boolean;
  maxAddresses?: number;
}

const COUNTED = new Set(['malformed_key', 'unknown_key', 'revoked_key', 'expired_key']);

export function failedAuthThrottle(opts: ThrottleOptions): Middleware {
  const now = opts.now ?? Date.now;
  const max = opts.maxAddresses ?? 100_000;
  const seen = new Map<string, { failures: number; reset: number }>();
  const entry = (ip: string, t: number) => {
    let e = seen.get(ip);
    if (e && e.reset * 1000 <= t) {
      seen.delete(ip);
      e = undefined;
    }
    return e;
  };
  const headers = (failures: number, reset: number, t: number) => ({
    ...rateLimitHeaders({ limit: opts.limit, remaining: Math.max(0, opts.limit - failures), reset }, t, 'failed-key-attempts', opts.windowS),
  });

  return async (ctx, next) => {
    if (opts.isPublic(ctx.path)) return next();
    const t = now();
    const ip = ctx.ip || 'unknown';
    // a key presented in the header, or sealed in a GIS access_token (opened after this middleware)
    const presented = ctx.get('Authorization') !== '' || ctx.query['access_token'] !== undefined;
    const blocked = entry(ip, t);
    if (presented && blocked && blocked.failures >= opts.limit) {
      throw new ApiError(
        429,
        'too_many_failed_attempts',
        `too many requests with an invalid API key from this address; try again after ${new Date(blocked.reset * 1000).toISOString()}`,
        { headers: { ...headers(blocked.failures, blocked.reset, t), 'Retry-After': String(retryAfter(blocked.reset, t)) } },
      );
    }
    try {
      await next();
    } catch (e) {
      if (e instanceof ApiError && e.status === 401) {
        let cur = entry(ip, t);
        if (COUNTED.has(e.code)) {
          if (!cur) {
            if (seen.size >= max) seen.delete(seen.keys().next().value!);
            cur = { failures: 0, reset: Math.floor(t / 1000) + opts.windowS };
            seen.set(ip, cur);
          }
          cur.failures += 1;
        }
        // Every 401 (a missing key and a bad access_token too) reports this address's allowance of
        // failed-key attempts: it is the only limit a request without an accepted key is under.
        const h = headers(cur?.failures ?? 0, cur?.reset ?? Math.floor(t / 1000) + opts.windowS, t);
        for (const [k, v] of Object.entries(h)) e.headers[k] = v;
      }
      throw e;
    }
  };
}
