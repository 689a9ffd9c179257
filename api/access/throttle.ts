/**
 * Throttling of repeated invalid-key attempts per client address (`ctx.ip`, set by
 * `api/middleware/client-address.ts`: behind a proxy the right-most untrusted X-Forwarded-For
 * address; an IPv6 client counts by its /64, which one host can rotate through). Every 401 for a
 * key that was presented but not accepted (malformed, unknown, revoked, expired) counts; after
 * `limit` of them in a fixed window of `windowS` seconds, every further request from the address
 * whose key is not valid gets 429 `too_many_failed_attempts` (with `Retry-After`) instead of its
 * 401 until the window ends. A request whose key is valid is never throttled, so an attacker who
 * shares (or forges) a victim's address cannot lock the victim out; a malformed key is answered
 * 429 before any lookup, a well-formed one costs one key lookup by hash. A missing header does
 * not count (it is a mistake, not a guess), nor does an `access_token` that does not open (it
 * cannot be guessed); every 401 carries the address's allowance in the `X-RateLimit-*` /
 * `RateLimit*` headers (policy `failed-key-attempts`).
 *
 * Counts are kept in this replica's memory (bounded; the oldest addresses are dropped first).
 */
import type { Middleware } from 'koa';
import { lastAnswer } from '../../common/lru.ts';
import { ApiError } from '../http/errors.ts';
import { ipv6Words } from '../http/ip-address.ts';
import { parseBearer } from './keys.ts';
import { rateLimitHeaders, retryAfter } from './limits.ts';

/** What failures are counted under: the address, or for IPv6 its /64 (`2001:db8:1:2::/64`). */
export function throttleKey(ip: string): string {
  const w = ipv6Words(ip);
  return w
    ? `${w
        .slice(0, 4)
        .map((x) => x.toString(16))
        .join(':')}::/64`
    : ip;
}

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
    ...rateLimitHeaders(
      { limit: opts.limit, remaining: Math.max(0, opts.limit - failures), reset },
      t,
      'failed-key-attempts',
      opts.windowS,
    ),
  });

  const tooMany = (e: { failures: number; reset: number }, t: number): ApiError =>
    new ApiError(
      429,
      'too_many_failed_attempts',
      `too many requests with an invalid API key from this address; try again after ${new Date(e.reset * 1000).toISOString()}`,
      { headers: { ...headers(e.failures, e.reset, t), 'Retry-After': String(retryAfter(e.reset, t)) } },
    );

  // what an address counts under, remembered for the last one (the same client asks many times in a row)
  const keyOf = lastAnswer(throttleKey);
  return async (ctx, next) => {
    if (opts.isPublic(ctx.path)) return next();
    const t = now();
    const ip = keyOf(ctx.ip || 'unknown');
    const found = entry(ip, t);
    const blocked = found && found.failures >= opts.limit ? found : null;
    // a malformed key cannot be valid: no lookup for it
    if (blocked && parseBearer(ctx.get('Authorization')) === 'malformed') throw tooMany(blocked, t);
    try {
      await next();
    } catch (e) {
      if (e instanceof ApiError && e.status === 401) {
        let cur = entry(ip, t);
        if (COUNTED.has(e.code)) {
          if (blocked) throw tooMany(blocked, t);
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
