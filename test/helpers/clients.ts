/**
 * What the client tests (test/clients/) share: a server clock that can be frozen and then made to
 * run on from just before the end of an hourly window (so a real 429 is retried across a real
 * reset within seconds), and a fresh key of one scope on its own account.
 *
 * @example
 *   const clock = new MovableClock();
 *   const api = await startTestApi({ clock: clock.now });
 *   const key = await freshKey(api, 'commonwealth');
 *   await spendHourlyLimit(api, key, clock, 1500);   // the next request is a 429 with Retry-After: 2
 */
import { generateKey } from '../../api/access/keys.ts';
import { hourWindow } from '../../api/access/limits.ts';
import type { Scope } from '../../api/access/scopes.ts';
import type { TestApi } from './api.ts';

export class MovableClock {
  #frozen: number | null = null;
  #offsetMs = 0;
  /** The server's clock (pass as `startTestApi({ clock: clock.now })`). */
  readonly now = (): Date => new Date(this.#frozen ?? Date.now() + this.#offsetMs);
  /** Stop at `ms`. */
  freeze(ms: number): void {
    this.#frozen = ms;
  }
  /** Run on in real time from `ms`. */
  runFrom(ms: number): void {
    this.#frozen = null;
    this.#offsetMs = ms - Date.now();
  }
}

let accounts = 0;
/** The id of each key `freshKey` made, by the raw key. */
const keyIds = new Map<string, string>();

/** A new key of `scope` on a new account (its own hourly window and budget). */
export async function freshKey(api: TestApi, scope: Scope): Promise<string> {
  const a = await api.store.createAccount(`clients${++accounts}`, 'premium');
  const k = generateKey(scope);
  await api.store.insertKey({
    id: k.id,
    account_id: a.id,
    scope,
    name: null,
    display_prefix: k.displayPrefix,
    hash: k.hash,
  });
  keyIds.set(k.raw, k.id);
  return k.raw;
}

/**
 * Spend the hourly request limit (its `X-RateLimit-Limit`) of a key `freshKey` made in the window
 * of the clock's now, then let the clock run on from `beforeResetMs` before that window ends: the
 * key's next request is a 429 `rate_limited` whose `Retry-After` ends after the reset, and a retry
 * then succeeds. One request is sent; the rest of the window's numbers are taken in the server's
 * store at once, as the server takes a busy key's block (`reserveRequests`,
 * api/access/request-leases.ts), not by ~600 more requests (the limit itself is tested request by
 * request in test/api/access/http.test.ts).
 */
export async function spendHourlyLimit(
  api: TestApi,
  key: string,
  clock: MovableClock,
  beforeResetMs: number,
): Promise<void> {
  const id = keyIds.get(key);
  if (!id) throw new Error('spendHourlyLimit: a key of freshKey');
  const { start, reset } = hourWindow(clock.now().getTime());
  clock.freeze(reset * 1000 - 60_000);
  const first = await fetch(`${api.baseUrl}/v1/meta`, { headers: { Authorization: `Bearer ${key}` } });
  await first.arrayBuffer();
  const left = Number(first.headers.get('x-ratelimit-remaining'));
  const limit = Number(first.headers.get('x-ratelimit-limit'));
  const counted = await api.store.reserveRequests(id, start, left, limit);
  if (counted !== limit) throw new Error(`spendHourlyLimit: the window holds ${counted} of ${limit} requests`);
  clock.runFrom(reset * 1000 - beforeResetMs);
}
