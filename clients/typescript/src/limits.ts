/**
 * The access headers of every keyed answer (docs/api.md "Limits and budgets"), read into numbers:
 * the hourly request window (`X-RateLimit-*`) and the daily row budget (`X-Budget-*`, `null`
 * where the scope is uncapped — the server says `unlimited`).
 */
export interface Limits {
  requestId: string | null;
  rateLimit: { limit: number; remaining: number; reset: number } | null;
  /** `limit` / `remaining` null: uncapped. `cost`: rows a quote says the request would cost. */
  budget: { limit: number | null; remaining: number | null; reset: number; cost: number | null } | null;
}

const num = (v: string | null): number | null => (v === null || v === 'unlimited' || v === '' ? null : Number(v));

/** The limits an answer reports (fields null when its headers are absent, e.g. public paths). */
export function limitsOf(h: Headers): Limits {
  const rl = num(h.get('x-ratelimit-limit'));
  const reset = num(h.get('x-budget-reset'));
  return {
    requestId: h.get('x-request-id'),
    rateLimit:
      rl === null
        ? null
        : {
            limit: rl,
            remaining: num(h.get('x-ratelimit-remaining')) ?? 0,
            reset: num(h.get('x-ratelimit-reset')) ?? 0,
          },
    budget:
      reset === null
        ? null
        : {
            limit: num(h.get('x-budget-limit')),
            remaining: num(h.get('x-budget-remaining')),
            reset,
            cost: num(h.get('x-budget-cost')),
          },
  };
}

/**
 * Milliseconds to wait before retrying a 429 / 503: `Retry-After` (seconds or an HTTP date), else
 * the rate-limit window's reset, else null (no hint: do not retry).
 */
export function retryDelayMs(h: Headers, nowMs: number): number | null {
  const ra = h.get('retry-after');
  if (ra !== null && /^\d+$/.test(ra.trim())) return Number(ra.trim()) * 1000;
  if (ra !== null && !Number.isNaN(Date.parse(ra))) return Math.max(0, Date.parse(ra) - nowMs);
  const reset = num(h.get('x-ratelimit-reset'));
  return reset === null ? null : Math.max(0, reset * 1000 - nowMs);
}
