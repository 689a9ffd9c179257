/**
 * The retry schedule of webhook deliveries (docs/webhooks.md "Retries"): after the n-th failed
 * attempt the next one is due after 30 s × 4^(n−1), capped at 12 h, plus up to 25% random
 * jitter (so receivers recovering from an outage are not hit by every retry at once):
 *
 *   attempt 2 after 30 s, 3 after 2 min, 4 after 8 min, 5 after 32 min, 6 after ~2.1 h,
 *   7 after ~8.5 h, 8 after 12 h  → about 23 h (up to ~29 h with jitter) before a delivery is dead
 *
 * with the default WEBHOOK_MAX_ATTEMPTS of 8. A `Retry-After` (seconds or HTTP date, capped at
 * 24 h) pushes the next attempt later, never earlier. 2xx is success; 410 Gone is final (the
 * webhook is disabled); every other answer, a timeout or a connection error is retried.
 * Pure functions: the clock and the random source are passed in.
 */
import type { DeliveryOutcome } from '../state/webhook-interface.ts';

export const RETRY_BASE_MS = 30_000;
export const RETRY_FACTOR = 4;
export const RETRY_CAP_MS = 12 * 3600_000;
export const RETRY_JITTER = 0.25;
export const RETRY_AFTER_CAP_MS = 24 * 3600_000;

/** Delay before the next attempt after `failures` failed attempts (≥ 1); `random` in [0, 1), so the delay is in [base, 1.25 · base). */
export function retryDelayMs(failures: number, random: () => number = Math.random): number {
  const base = Math.min(RETRY_BASE_MS * RETRY_FACTOR ** Math.max(0, failures - 1), RETRY_CAP_MS);
  return Math.floor(base * (1 + RETRY_JITTER * random()));
}

/**
 * A `Retry-After` value in milliseconds from `now`: delta-seconds or an HTTP date (RFC 9110),
 * capped at 24 h; null when absent or unparseable; 0 for a date in the past.
 */
export function parseRetryAfter(value: string | null | undefined, now: Date): number | null {
  if (value === null || value === undefined || value.trim() === '') return null;
  const v = value.trim();
  let ms: number;
  if (/^\d+$/.test(v)) ms = Number(v) * 1000;
  else {
    const t = Date.parse(v);
    if (Number.isNaN(t)) return null;
    ms = Math.max(0, t - now.getTime());
  }
  return Math.min(ms, RETRY_AFTER_CAP_MS);
}

/** The result of one attempt as the dispatcher saw it. */
export interface AttemptResult {
  /** HTTP status, or null when no answer came (timeout, connection refused, refused destination). */
  statusCode: number | null;
  retryAfter: string | null;
  error: string | null;
}

/**
 * What an attempt leads to: delivered (2xx), dead (410, or the last allowed attempt failed) or
 * pending until the scheduled retry. `attempts` counts this attempt.
 */
export function attemptOutcome(
  r: AttemptResult,
  o: { attempts: number; maxAttempts: number; now: Date; random?: () => number },
): DeliveryOutcome {
  if (r.statusCode !== null && r.statusCode >= 200 && r.statusCode < 300) return { status: 'delivered' };
  if (r.statusCode === 410)
    return { status: 'dead', reason: 'gone: the destination answered 410 Gone; the webhook was disabled' };
  const what = r.statusCode !== null ? `HTTP ${r.statusCode}` : (r.error ?? 'no answer');
  if (o.attempts >= o.maxAttempts) return { status: 'dead', reason: `failed ${o.attempts} attempts; last: ${what}` };
  const delay = Math.max(retryDelayMs(o.attempts, o.random), parseRetryAfter(r.retryAfter, o.now) ?? 0);
  return { status: 'pending', next_attempt_at: new Date(o.now.getTime() + delay) };
}
