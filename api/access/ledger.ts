/**
 * The usage ledger's write side: every request of a key is counted in memory (per key, UTC day
 * and route: requests, errors, rows) and flushed to the state store at least every second, and on
 * `stop()` (graceful shutdown / SIGTERM). So a graceful stop loses nothing, and a SIGKILL at most
 * the last second. A failed flush keeps its counts and retries with the next one: while the store
 * cannot be written (disk full, read-only, locked; requests then get 503 `service_degraded`) the
 * counts accumulate in memory and reach the store with the first flush that succeeds. The first
 * failure and the recovery are logged (not every retry).
 *
 * Housekeeping rides on the flush timer: once an hour, per-route detail older than the detail
 * window (USAGE_DETAIL_DAYS, default 90) and stale hourly/budget counters are pruned.
 */
import type { StateStore, UsageDelta } from '../state/store-interface.ts';
import { daysBefore, HOUR_S, utcDay } from './limits.ts';

export interface LedgerOptions {
  flushMs?: number;
  /** Days of per-route detail kept. */
  detailDays?: number;
  now?: () => number;
  log?: (line: string) => void;
}

export class UsageLedger {
  private pending = new Map<string, UsageDelta>();
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();
  private lastPrune = 0;
  private stopped = false;
  /** Failed flushes in a row (0 = the store is writable). */
  private failures = 0;
  /** When the oldest count not yet written was recorded (ms); null when everything is written. */
  private pendingSince: number | null = null;
  private readonly flushMs: number;
  private readonly detailDays: number;
  private readonly now: () => number;
  private readonly log: (line: string) => void;

  private readonly store: Pick<StateStore, 'addUsage' | 'prune'>;
  constructor(store: Pick<StateStore, 'addUsage' | 'prune'>, opts: LedgerOptions = {}) {
    this.store = store;
    this.flushMs = opts.flushMs ?? 1000;
    this.detailDays = opts.detailDays ?? 90;
    this.now = opts.now ?? Date.now;
    this.log = opts.log ?? (() => {});
  }

  /** Count one request of `keyId` on `route` (e.g. `GET /v1/leads/{id}`) with its status and rows returned. */
  record(keyId: string, route: string, status: number, rows: number): void {
    const day = utcDay(this.now());
    const k = `${keyId}\u0000${day}\u0000${route}`;
    let d = this.pending.get(k);
    if (!d) this.pending.set(k, (d = { key_id: keyId, day, route, requests: 0, errors: 0, rows: 0 }));
    d.requests += 1;
    if (status >= 400) d.errors += 1;
    d.rows += rows;
    this.pendingSince ??= this.now();
    if (!this.timer && !this.stopped) {
      this.timer = setInterval(() => void this.flush(), this.flushMs);
      this.timer.unref();
    }
  }

  /** Requests counted but not yet written. */
  get pendingRequests(): number {
    let n = 0;
    for (const d of this.pending.values()) n += d.requests;
    return n;
  }

  /** How long the oldest count not yet written has waited, ms (0 when everything is written): the flush lag. */
  get lagMs(): number {
    return this.pendingSince === null ? 0 : Math.max(0, this.now() - this.pendingSince);
  }

  /** Write what is pending (one flush at a time; a call during a flush waits for it, then flushes again). */
  flush(): Promise<void> {
    this.flushing = this.flushing.catch(() => {}).then(() => this.flushOnce());
    return this.flushing;
  }

  private async flushOnce(): Promise<void> {
    if (this.pending.size > 0) {
      const batch = [...this.pending.values()];
      const since = this.pendingSince;
      this.pending = new Map();
      this.pendingSince = null;
      try {
        await this.store.addUsage(batch);
      } catch (e) {
        this.pendingSince = since; // the batch's counts are older than any recorded meanwhile
        // keep the counts: merge them back for the next flush
        for (const d of batch) {
          const k = `${d.key_id}\u0000${d.day}\u0000${d.route}`;
          const cur = this.pending.get(k);
          if (cur) ((cur.requests += d.requests), (cur.errors += d.errors), (cur.rows += d.rows));
          else this.pending.set(k, d);
        }
        if (this.failures++ === 0 || this.stopped)
          this.log(
            `usage ledger: flush failed, ${batch.length} rows kept in memory and retried every flush until the store can be written: ${(e as Error).message}`,
          );
        if (this.stopped) throw e;
        return;
      }
      if (this.failures > 0)
        this.log(
          `usage ledger: the store is writable again after ${this.failures} failed flushes; the counts kept meanwhile are written`,
        );
      this.failures = 0;
    }
    const t = this.now();
    if (t - this.lastPrune >= HOUR_S * 1000 && !this.stopped) {
      this.lastPrune = t;
      const today = utcDay(t);
      await this.store
        .prune({
          detailBefore: daysBefore(today, this.detailDays - 1),
          windowBefore: Math.floor(t / 1000) - 2 * HOUR_S,
          budgetBefore: daysBefore(today, 1),
        })
        .catch((e: Error) => this.log(`usage ledger: prune failed: ${e.message}`));
    }
  }

  /** Stop the timer and write everything pending (rejects if the last write fails). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.flush();
  }
}
