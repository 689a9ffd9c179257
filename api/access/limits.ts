/**
 * Pure arithmetic of the access limits (spec section 8): the hourly window a request falls in,
 * the UTC day of the row budget and when it resets, and the response headers that describe both.
 *
 * Windows are fixed and aligned: hours start on the UTC hour, budget days at 00:00 UTC.
 */
import { lastAnswer } from '../../common/lru.ts';
import { CAPABILITIES, type Scope } from './scopes.ts';

export const HOUR_S = 3600;

/** The hourly window holding `ms` (epoch milliseconds): start and reset in epoch seconds. */
export function hourWindow(ms: number): { start: number; reset: number } {
  const start = Math.floor(ms / 1000 / HOUR_S) * HOUR_S;
  return { start, reset: start + HOUR_S };
}

const DAY_MS = 86_400_000;
/** Largest time a Date holds (ms either side of the epoch); beyond it the Date answers stay as they were (an error, NaN). */
const TIME_MAX_MS = 8.64e15;
/**
 * The day (days since the epoch) `utcDay` and `budgetReset` remember their answer for (NaN, never
 * remembered, past a Date's range): every request asks for today, so each is computed once a
 * day, not with a Date per request.
 */
const dayKey = (ms: number): number => (ms >= -TIME_MAX_MS && ms <= TIME_MAX_MS ? Math.floor(ms / DAY_MS) : NaN);

/** The UTC day (YYYY-MM-DD) holding `ms`. */
export const utcDay: (ms: number) => string = lastAnswer(
  (ms: number) => new Date(ms).toISOString().slice(0, 10),
  dayKey,
);

/** 00:00 UTC after the day holding `ms`, in epoch seconds: when that day's row budget resets. */
export const budgetReset: (ms: number) => number = lastAnswer((ms: number) => {
  const d = new Date(ms);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1) / 1000;
}, dayKey);

/** A real calendar day from 1970 on, written YYYY-MM-DD (`2026-02-30`, `2026-13-01`, month 00 and day 32 are not). */
export function isDay(s: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const t = Date.UTC(y, mo - 1, d);
  const back = new Date(t);
  return y >= 1970 && back.getUTCFullYear() === y && back.getUTCMonth() === mo - 1 && back.getUTCDate() === d;
}

/** The day `n` days before `day` (YYYY-MM-DD). */
export function daysBefore(day: string, n: number): string {
  return utcDay(Date.parse(day + 'T00:00:00Z') - n * 86_400_000);
}

export interface RateState {
  limit: number;
  /** Requests left in the window after this one (never negative). */
  remaining: number;
  /** Epoch seconds when the window resets. */
  reset: number;
}

export interface BudgetState {
  /** Rows per day; null = uncapped. */
  limit: number | null;
  remaining: number | null;
  /** Epoch seconds of the next 00:00 UTC. */
  reset: number;
}

/** The hourly request limit of a scope. */
export const requestsPerHour = (scope: Scope): number => CAPABILITIES[scope].requestsPerHour;
/** The daily row budget of a scope (null = uncapped). */
export const dailyRows = (scope: Scope): number | null => CAPABILITIES[scope].dailyRows;

/**
 * Rate-limit headers: the de-facto `X-RateLimit-*` trio (reset in epoch seconds, spec 8) and the
 * IETF structured fields (draft-ietf-httpapi-ratelimit-headers: `RateLimit-Policy` names the
 * policy with its quota `q` and window `w`; `RateLimit` gives the remaining `r` and seconds to
 * reset `t`).
 */
export function rateLimitHeaders(
  r: RateState,
  nowMs: number,
  policy = 'hourly',
  windowS = HOUR_S,
): Record<string, string> {
  const t = Math.max(0, r.reset - Math.floor(nowMs / 1000));
  return {
    'X-RateLimit-Limit': String(r.limit),
    'X-RateLimit-Remaining': String(r.remaining),
    'X-RateLimit-Reset': String(r.reset),
    'RateLimit-Policy': `"${policy}";q=${r.limit};w=${windowS}`,
    RateLimit: `"${policy}";r=${r.remaining};t=${t}`,
  };
}

/** Row-budget headers: `X-Budget-Limit` / `-Remaining` (`unlimited` when uncapped) and `-Reset` (epoch s). */
export function budgetHeaders(b: BudgetState): Record<string, string> {
  return {
    'X-Budget-Limit': b.limit === null ? 'unlimited' : String(b.limit),
    'X-Budget-Remaining': b.remaining === null ? 'unlimited' : String(b.remaining),
    'X-Budget-Reset': String(b.reset),
  };
}

/** Seconds from `nowMs` to `resetS` (at least 1), for `Retry-After`. */
export const retryAfter = (resetS: number, nowMs: number): number => Math.max(1, Math.ceil(resetS - nowMs / 1000));
