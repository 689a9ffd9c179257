/**
 * The row-budget seam between routes and the access model, and the one place a route's records
 * are charged.
 *
 * A route that returns records does not charge them itself: its handler answers a `Served`
 * (`served(records, send)`) — how many records it is about to send and how it sends them — and
 * `charging(handler)` (here; every such route is wrapped in it) charges `records` to
 * `ctx.state.budget`, then calls `send`. So the charge comes after the handler has counted and
 * before any header, body or byte of the answer is set: a refused charge (429 `budget_exhausted`,
 * 403 `budget_too_small`) or a quote (`dry_run=1`) leaves no trace of the answer, and nothing is
 * charged for an answer that is not sent. A streaming export counts first and starts its stream in
 * `send`, after the charge; what it reserved before (its temp file) is given back by `refused` when
 * the charge throws. `quoteChange(budget)`, the one other caller of `charge`, answers `dry_run=1`
 * on a change before the change acts.
 *
 * A capped budget throws the 429 `budget_exhausted` problem when `n` is more than what remains
 * (nothing is sent and nothing is charged: no silent truncation).
 *
 * The access model (api/access/enforce.ts) installs the key's daily budget per request. On
 * `dry_run=1` it installs a quoting budget instead: `charge(n)` throws a signal that the
 * middleware turns into the quote (`X-Budget-Cost`, a BudgetQuote body) — so errors thrown by
 * `charge` propagate (never caught and swallowed). On `HEAD` the budget refuses as the GET's would
 * but charges nothing (the route answers as for the GET; Koa sends no body). Without the access
 * model (unauthenticated paths) there is no budget and nothing is charged; `UNLIMITED` is the
 * budget of the bench's app without access limits.
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

/** What a route serves: the records it is about to send and how it sends them once they are charged. */
export interface Served {
  /** Records the answer holds (what the daily row budget counts; 0 for an empty tile). */
  readonly records: number;
  /** Set the answer (headers, status, body); called only after the records are charged. */
  send(): void | Promise<void>;
  /** Give back what the handler reserved for the answer (an export's temp file) when the charge throws. */
  refused?(): void;
}

/** A route's answer of `records` records, sent by `send` once they are charged. */
export function served(records: number, send: Served['send'], refused?: () => void): Served {
  return refused ? { records, send, refused } : { records, send };
}

/** What `charging` needs of a request: its budget (absent on public paths). */
interface Budgeted {
  state: { budget?: RowBudget };
}

/**
 * A route handler that charges what it serves: the handler counts (answers a `Served`, or nothing
 * when it serves no records), then the records are charged — here, the one place — and sent.
 */
export function charging<C extends Budgeted>(
  handler: (ctx: C) => Served | void | Promise<Served | void>,
): (ctx: C) => Promise<void> {
  return async (ctx) => {
    const answer = await handler(ctx);
    if (!answer) return;
    const budget = ctx.state.budget;
    if (budget) {
      try {
        await budget.charge(answer.records);
      } catch (e) {
        answer.refused?.();
        throw e;
      }
    }
    await answer.send();
  };
}

/**
 * `dry_run=1` on a change (POST / PATCH / DELETE that acts): the quote, 0 rows, is answered here,
 * before the change acts — a quote never changes anything. No-op without a quoting budget.
 */
export async function quoteChange(budget: RowBudget | undefined): Promise<void> {
  if (budget?.quoting) await budget.charge(0);
}
