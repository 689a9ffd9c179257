/**
 * The hourly request count of a key, taken from the state store in blocks when the key is busy
 * (issue 34 item 3: one store write per request was a sixth of a list page's CPU, and the write
 * made the next request's key-change check cost ~30 µs more).
 *
 * Every request of a key still gets its own number in the hour's window, and no number passes the
 * limit, across every process sharing the store:
 *  - a key that sent this process fewer than two requests in the previous `LEASE.spanMs` (10 ms),
 *    or any key with a daily row budget (whose budget headers need the day's rows from the store
 *    with each request), is counted per request as before: one atomic upsert (`hitRateLimit`);
 *  - a busier key reserves a block of as many numbers as it sent in the previous span (at most
 *    `LEASE.max`) with one atomic conditional upsert (`reserveRequests`: the block is granted
 *    only if the window's count stays within the limit), and the process hands them out one per
 *    request without touching the store. The request that reserves takes the first.
 *  - once the window refuses a block (fewer numbers remain than asked), the key is counted per
 *    request until the window ends, so the limit-th request passes and the next is refused exactly.
 *
 * What this changes, and how far (docs/api.md "Hourly rate limit"): a burst never goes over the
 * limit. A process holds at most `LEASE.max - 1` reserved numbers of a key it has not handed out;
 * they count as used, so with N processes serving a key, its requests may be refused up to
 * (N − 1) × 63 before the limit is reached (and a process that stops forgets its unused numbers:
 * up to 63 of that hour). A store that can no longer be written is found at the next reservation
 * — within 63 requests, about 10 ms, of a busy key's traffic — rather than at the next request.
 * Revocation, expiry and plan changes are the auth middleware's, checked on every request before
 * counting, and are not affected.
 */
import type { StateStore } from '../state/store-interface.ts';

/** How blocks are sized: as many numbers as the key's requests in the previous `spanMs`, at most `max`. */
export const LEASE = { spanMs: 10, max: 64, keysMax: 10_000 } as const;

/** A key's block of numbers in one window, and how busy the key is in this process. */
interface KeyLease {
  window: number;
  /** Reserved numbers not yet handed out: `next` to `end`, inclusive. */
  next: number;
  end: number;
  /** The reservation in flight, if any (other requests of the key wait for it, and fail with it). */
  pending: Promise<unknown> | null;
  /** The window refused a block: counted per request until it ends. */
  full: boolean;
  /** Requests of the key in the current span (since `spanStart`) and in the span before it. */
  spanStart: number;
  spanCount: number;
  lastSpanCount: number;
}

export interface RequestCount {
  /** The window's count including this request. */
  count: number;
  /** Rows charged to the key today, as read with the count (0 when counted from a block: only keys without a daily budget are). */
  rowsUsed: number;
}

/** The hourly counter of every key this process serves (one per access middleware). */
export class RequestLeases {
  private readonly store: Pick<StateStore, 'hitRateLimit' | 'reserveRequests'>;
  private readonly leases = new Map<string, KeyLease>();

  constructor(store: Pick<StateStore, 'hitRateLimit' | 'reserveRequests'>) {
    this.store = store;
  }

  /**
   * Count one request of `keyId` in the window starting at `windowStart` (epoch s) of a scope
   * allowing `limit` requests; `budgeted`: the key has a daily row budget (counted per request,
   * with the day's rows). `nowMs` sizes the blocks.
   */
  async hit(
    keyId: string,
    windowStart: number,
    day: string,
    limit: number,
    budgeted: boolean,
    nowMs: number,
  ): Promise<RequestCount> {
    if (budgeted) return this.store.hitRateLimit(keyId, windowStart, day);
    const lease = this.leaseOf(keyId, windowStart, nowMs);
    for (;;) {
      if (lease.next <= lease.end) return { count: lease.next++, rowsUsed: 0 };
      if (lease.pending) {
        // then take a number of its block, or reserve again; a reservation the store failed fails
        // its waiters too (the store is not answering: a second attempt would wait as long again)
        await lease.pending;
        continue;
      }
      const n = lease.full ? 1 : Math.min(LEASE.max, lease.lastSpanCount, limit);
      if (n <= 1) return this.store.hitRateLimit(keyId, windowStart, day);
      const reserving = this.store.reserveRequests(keyId, windowStart, n, limit);
      lease.pending = reserving;
      let count: number | null;
      try {
        count = await reserving;
      } finally {
        lease.pending = null;
      }
      if (count === null) {
        lease.full = true;
        return this.store.hitRateLimit(keyId, windowStart, day);
      }
      // the block is count - n + 1 … count: this request takes the first
      lease.next = count - n + 2;
      lease.end = count;
      return { count: count - n + 1, rowsUsed: 0 };
    }
  }

  /** The key's lease in this window (a fresh one in a new window), with this request tallied. */
  private leaseOf(keyId: string, windowStart: number, nowMs: number): KeyLease {
    let lease = this.leases.get(keyId);
    if (!lease || lease.window !== windowStart) {
      const fresh: KeyLease = {
        window: windowStart,
        next: 1,
        end: 0,
        pending: null,
        full: false,
        spanStart: nowMs,
        spanCount: 0,
        lastSpanCount: lease && lease.window < windowStart ? lease.lastSpanCount : 0,
      };
      if (lease || this.room(windowStart)) this.leases.set(keyId, fresh);
      lease = fresh; // (no room: a lease of this request alone, counted per request)
    }
    if (nowMs - lease.spanStart >= LEASE.spanMs) {
      lease.lastSpanCount = nowMs - lease.spanStart < 2 * LEASE.spanMs ? lease.spanCount : 0;
      lease.spanStart = nowMs;
      lease.spanCount = 0;
    }
    lease.spanCount++;
    return lease;
  }

  /** Whether another key's lease may be kept (leases of past windows are dropped first: their numbers are of no use). */
  private room(windowStart: number): boolean {
    if (this.leases.size < LEASE.keysMax) return true;
    for (const [k, l] of this.leases) if (l.window < windowStart) this.leases.delete(k);
    return this.leases.size < LEASE.keysMax;
  }
}
