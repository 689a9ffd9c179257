/**
 * The row-budget seam between routes and the access model.
 *
 * Every route that returns records calls `ctx.state.budget.charge(n)` with the number of records
 * it is about to send, before it sends them — once, with the full count (a streaming export
 * counts first, then charges, then streams). A capped budget throws the 429 `budget_exhausted`
 * problem when `n` is more than what remains (nothing is sent and nothing is charged: no silent
 * truncation).
 *
 * The access model (api/access/enforce.ts) installs the key's daily budget per request. On
 * `dry_run=1` it installs a quoting budget instead: `charge(n)` throws a signal that the
 * middleware turns into the quote (`X-Budget-Cost`, a BudgetQuote body) — so a route must let
 * errors thrown by `charge` propagate (never catch and swallow them). On `HEAD` the budget refuses
 * as the GET's would but charges nothing (the route answers as for the GET; Koa sends no body).
 * Without the access model (unauthenticated paths), `UNLIMITED` is used.
 */
export interface RowBudget {
  /** Rows that may still be returned today; null when the scope has no cap. */
  readonly remaining: number | null;
  /** Charge `rows` records or throw the 429 `budget_exhausted` problem (charging nothing). */
  charge(rows: number): void | Promise<void>;
  /** True for the quoting budget of `dry_run=1` (its `charge` always throws the quote). */
  readonly quoting?: boolean;
}

export const UNLIMITED: RowBudget = {
  remaining: null,
  charge() {},
};
