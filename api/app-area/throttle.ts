/**
 * Sign-in throttling of the account area, shared by every replica through the state store.
 * Failed sign-ins are counted per account (`account:<id>`, password sign-ins only) and per
 * client address (`addr:<ip>`, an IPv6 client by its /64 as for failed API keys), in fixed
 * windows of `APP_SIGNIN_FAIL_WINDOW_S` read as a SLIDING window: the estimate is this window's
 * count plus the previous window's count weighted by how much of it still overlaps the last
 * `windowS` seconds. At `APP_SIGNIN_FAIL_LIMIT` (10) the key is throttled: sign-in answers 429
 * with `Retry-After` — even for the right password, or guessing would go on — until the
 * estimate falls below the limit. Passkey sign-ins are held only by the address limit: a passkey
 * cannot be guessed, so a stranger hammering an account's password cannot lock its owner out of
 * signing in with a passkey.
 */
import type { ApiConfig } from '../config.ts';
import { throttleKey } from '../access/throttle.ts';
import type { AppStore } from '../state/app-store.ts';

/**
 * The sliding-window estimate at `nowS` from the current window's count `cur` and the previous
 * one's `prev`, and (when it is at or above `limit`) the whole seconds until it falls below.
 * @example slidingWindow({ limit: 10, windowS: 100, nowS: 140, prev: 10, cur: 5 }) // { count: 11, retryAfterS: 11 }
 */
export function slidingWindow(o: { limit: number; windowS: number; nowS: number; prev: number; cur: number }): {
  count: number;
  retryAfterS: number;
} {
  const start = Math.floor(o.nowS / o.windowS) * o.windowS;
  const f = (o.nowS - start) / o.windowS;
  const count = o.cur + o.prev * (1 - f);
  if (count < o.limit) return { count, retryAfterS: 0 };
  let until: number;
  if (o.cur >= o.limit)
    until = start + o.windowS + o.windowS * (1 - o.limit / o.cur); // this window's count must decay in the next
  else until = start + o.windowS * (1 - (o.limit - o.cur) / o.prev); // the previous window's share must shrink
  return { count, retryAfterS: Math.max(1, Math.ceil(until - o.nowS + 1e-9)) };
}

export interface SigninThrottle {
  /** The throttle keys of a sign-in: the address, and the account for a password sign-in. */
  keys(ip: string, accountId?: number): string[];
  /** Seconds to wait when any of `keys` is throttled, else 0. */
  retryAfter(keys: readonly string[]): Promise<number>;
  /** Count a failed sign-in under `keys`; true when this failure throttled one of them. */
  fail(keys: readonly string[]): Promise<boolean>;
}

export function signinThrottle(
  store: Pick<AppStore, 'signinFailures' | 'addSigninFailure'>,
  config: Pick<ApiConfig, 'appSigninFailLimit' | 'appSigninFailWindowS'>,
  now: () => number,
): SigninThrottle {
  const windowS = config.appSigninFailWindowS;
  const limit = config.appSigninFailLimit;
  const state = async (keys: readonly string[]) => {
    const nowS = now() / 1000;
    const cur = Math.floor(nowS / windowS) * windowS;
    const counts = await store.signinFailures(keys, [cur - windowS, cur]);
    return {
      nowS,
      cur,
      windows: keys.map((k) => slidingWindow({ limit, windowS, nowS, prev: counts[k]![0]!, cur: counts[k]![1]! })),
    };
  };
  return {
    keys: (ip, accountId) => [
      `addr:${throttleKey(ip || 'unknown')}`,
      ...(accountId === undefined ? [] : [`account:${accountId}`]),
    ],
    async retryAfter(keys) {
      return Math.max(0, ...(await state(keys)).windows.map((w) => w.retryAfterS));
    },
    async fail(keys) {
      const before = await state(keys);
      await store.addSigninFailure(keys, before.cur);
      const after = await state(keys);
      return after.windows.some((w, i) => w.count >= limit && before.windows[i]!.count < limit);
    },
  };
}
