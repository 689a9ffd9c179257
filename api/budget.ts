/**
 * The row-budget seam between routes and the access model.
 *
 * Every route that returns records calls `ctx.state.budget.charge(n)` with the number of records
 * it is about to send, before it sends them. A capped budget throws the 429 `budget_exhausted`
 * problem when `n` is more than what remains (nothing is sent and nothing is charged: no silent
 * truncation). `quote(n)` says what a request would cost without charging (HEAD and `dry_run=1`).
 *
 * The access model (api/usage/*) installs the real, per-key daily budget; until a key has one,
 * `UNLIMITED` is used.
 */
export interface RowBudget {
  /** Rows that may still be returned today; null when the scope has no cap. */
  readonly remaining: number | null;
  /** Charge `rows` records or throw the 429 `budget_exhausted` problem (charging nothing). */
  charge(rows: number): void | Promise<void>;
}

export const UNLIMITED: RowBudget = {
  remaining: null,
  charge() {},
};
