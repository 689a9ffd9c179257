/**
 * The access middleware, after authentication: for every keyed request it
 *   1. counts the request in the key's hourly window (exact across replicas: one atomic store
 *      statement per request, or per block of numbers for a busy key without a daily budget,
 *      api/access/request-leases.ts) and answers 429 `rate_limited` past the scope's limit;
 *   2. installs the key's daily row budget as `ctx.state.budget` (the records a route serves are
 *      charged in one place, `charging` in api/access/budget.ts, after the route counted them and
 *      before it sends them; a charge past the budget is a 429 `budget_exhausted` and charges nothing);
 *   3. turns `dry_run=1` into a quote: the route runs up to its charge, which reports the cost
 *      instead of paying it; answers `HEAD` as the `GET` (same status, same headers, no body)
 *      with a budget that checks as the GET's would but charges nothing — no rows are delivered —
 *      and says in `X-Budget-Cost` what the GET would charge;
 *   4. sets the rate-limit and budget headers on every response, success or error;
 *   5. records the request in the usage ledger (route, status, rows returned).
 */
import type { Middleware } from 'koa';
import type { AppState } from '../http/context.ts';
import { ApiError, invalidParams, type ParamError } from '../http/errors.ts';
import { parseQuery, querySchema } from '../query/parse-query.ts';
import type { RowBudget } from './budget.ts';
import type { ApiKey, StateStore } from '../state/store-interface.ts';
import {
  budgetHeaders,
  budgetReset,
  dailyRows,
  hourWindow,
  rateLimitHeaders,
  requestsPerHour,
  retryAfter,
  utcDay,
  type BudgetState,
} from './limits.ts';
import type { UsageLedger } from './ledger.ts';
import { RequestLeases } from './request-leases.ts';

export interface AccessOptions {
  store: Pick<StateStore, 'hitRateLimit' | 'reserveRequests' | 'chargeRows'>;
  ledger: Pick<UsageLedger, 'record'>;
  now: () => number;
  /** false: no rate limits, no budgets (bench only); requests are still counted in the ledger. */
  limits: boolean;
  /** The route template a request is counted under, e.g. `GET /v1/leads/{id}` (`other` when none). */
  routeOf: (method: string, path: string) => string;
}

/** Thrown by a quoting budget's `charge`: what the request would have cost. */
class Quote {
  readonly rows: number;
  constructor(rows: number) {
    this.rows = rows;
  }
}

/**
 * The media type of a quote (`dry_run=1`): a response of its own, so a typed client's
 * `application/json` is the data alone and never a union with the quote. A `+json` type: any JSON
 * parser reads it as before.
 */
export const QUOTE_MEDIA_TYPE = 'application/vnd.leads.quote+json';

/** The body of a `dry_run=1` answer (schema BudgetQuote in the OpenAPI document). */
export interface BudgetQuoteBody {
  dry_run: true;
  rows: number;
  budget_limit: number | null;
  budget_remaining: number | null;
  would_succeed: boolean;
  resets_at: string;
}

const fmt = (n: number): string => n.toLocaleString('en-IE');
/** `1 row`, `2 rows`. */
const rowsText = (n: number): string => `${fmt(n)} ${n === 1 ? 'row' : 'rows'}`;

/** The key's budget for one request: charges the store, remembers what this request paid. */
class DailyBudget implements RowBudget {
  charged = 0;
  private readonly store: AccessOptions['store'];
  private readonly key: ApiKey;
  private readonly day: string;
  readonly limit: number | null;
  private used: number;
  readonly reset: number;
  private readonly nowMs: number;
  constructor(
    store: AccessOptions['store'],
    key: ApiKey,
    day: string,
    limit: number | null,
    used: number,
    reset: number,
    nowMs: number,
  ) {
    this.store = store;
    this.key = key;
    this.day = day;
    this.limit = limit;
    this.used = used;
    this.reset = reset;
    this.nowMs = nowMs;
  }
  get remaining(): number | null {
    return this.limit === null ? null : Math.max(0, this.limit - this.used);
  }
  async charge(rows: number): Promise<void> {
    if (rows <= 0) return;
    if (this.limit !== null && rows > this.limit)
      throw budgetTooSmall({ rows, limit: this.limit, scope: this.key.scope });
    if (this.limit !== null) {
      const r = await this.store.chargeRows(this.key.id, this.day, rows, this.limit);
      this.used = r.used;
      if (!r.ok)
        throw budgetExhausted({
          rows,
          remaining: this.remaining!,
          limit: this.limit,
          reset: this.reset,
          scope: this.key.scope,
          nowMs: this.nowMs,
        });
    }
    this.charged += rows;
  }
  /** Throw what `charge(rows)` would throw now (403 `budget_too_small`, 429 `budget_exhausted`), charging nothing. */
  check(rows: number): void {
    if (rows <= 0 || this.limit === null) return;
    if (rows > this.limit) throw budgetTooSmall({ rows, limit: this.limit, scope: this.key.scope });
    if (rows > this.remaining!)
      throw budgetExhausted({
        rows,
        remaining: this.remaining!,
        limit: this.limit,
        reset: this.reset,
        scope: this.key.scope,
        nowMs: this.nowMs,
      });
  }
  state(): BudgetState {
    return { limit: this.limit, remaining: this.remaining, reset: this.reset };
  }
}

/** A budget that never charges: `charge(n)` reports `n` as the request's cost. */
const quoting = (b: DailyBudget): RowBudget => ({
  quoting: true,
  get remaining() {
    return b.remaining;
  },
  charge(rows: number) {
    throw new Quote(rows);
  },
});

/**
 * The budget of a `HEAD`: the GET's answer, headers only, so nothing is delivered and nothing is
 * charged (as HTTP means HEAD: the GET without its body). `charge(n)` refuses as the GET's would
 * (so HEAD and GET answer the same status) and adds `n` to `cost`, the `X-Budget-Cost` header.
 */
class HeadBudget implements RowBudget {
  cost = 0;
  private readonly b: DailyBudget;
  constructor(b: DailyBudget) {
    this.b = b;
  }
  get remaining(): number | null {
    return this.b.remaining;
  }
  charge(rows: number): void {
    if (rows <= 0) return;
    this.cost += rows;
    this.b.check(rows);
  }
}

/**
 * 429 `budget_exhausted`: how many rows remain and when they reset. `Retry-After` and
 * `X-RateLimit-Reset` both name the next 00:00 UTC — the time the refused request could next
 * succeed (spec 7: after a 429 a client waits for `X-RateLimit-Reset`), not the end of the hour.
 */
export function budgetExhausted(b: {
  rows: number;
  remaining: number;
  limit: number;
  reset: number;
  scope: string;
  nowMs: number;
}): ApiError {
  const { rows, remaining, limit, reset } = b;
  const resetsAt = new Date(reset * 1000).toISOString();
  return new ApiError(
    429,
    'budget_exhausted',
    `this request would return ${rowsText(rows)} but ${fmt(remaining)} of today's ${fmt(limit)} remain for this ${b.scope} key; ` +
      `the budget resets at ${resetsAt} (00:00 UTC). Ask for fewer rows (page_size) or retry after the reset`,
    {
      headers: { 'Retry-After': String(retryAfter(reset, b.nowMs)), 'X-RateLimit-Reset': String(reset) },
      extra: { rows_requested: rows, rows_remaining: remaining, resets_at: resetsAt },
    },
  );
}

/**
 * 403 `budget_too_small`: the request asks for more rows than the key's whole daily budget, so
 * no reset would let it through — not retryable, no `Retry-After`. Names the rows asked, the
 * budget, and how to ask for what fits (docs/api.md "Budgets", docs/sync.md).
 */
function budgetTooSmall(b: { rows: number; limit: number; scope: string }): ApiError {
  const narrow = [
    'filters that select fewer leads (county, authority, vertical, readiness, min_value, received_from …)',
    'changed_since=<date of your last copy> (or created_since) for only what changed since',
    'GET /v1/events after your last cursor: every change with its before / after, one row per event',
    'a feed licence (ent_feed or custom): no daily row cap',
  ];
  return new ApiError(
    403,
    'budget_too_small',
    `this request would return ${rowsText(b.rows)}, more than the whole daily budget of ${fmt(b.limit)} rows of this ${b.scope} key: ` +
      `it cannot succeed on any day, so do not retry it. Ask for less: ${narrow.join('; or ')}`,
    { extra: { rows_requested: b.rows, budget_limit: b.limit, narrow } },
  );
}

/** The schema of `dry_run` (`schemas/dry-run-query.schema.json`), the parameter every keyed endpoint takes. */
export const DRY_RUN_SCHEMA = querySchema('dry-run-query.schema.json');

/** `dry_run`'s values in any case (the schema lists them lower-case), in this parameter's own wording. */
function dryRunValue(text: string): boolean | ParamError {
  const v = text.toLowerCase();
  const allowed = DRY_RUN_SCHEMA.properties.dry_run.enum as string[];
  if (!allowed.includes(v)) return { name: 'dry_run', reason: 'must be 1/true or 0/false', allowed: [...allowed] };
  return v === '1' || v === 'true';
}

/**
 * Read and remove `dry_run` from the query (so the route's own validation never sees it), parsed
 * by the one query parser against its schema.
 */
function takeDryRun(ctx: Parameters<Middleware>[0]): boolean {
  if (!ctx.querystring.includes('dry_run')) return false;
  const q = new URLSearchParams(ctx.querystring);
  const values = q.getAll('dry_run');
  if (values.length === 0) return false;
  const parsed = parseQuery(
    DRY_RUN_SCHEMA,
    { dry_run: values.length === 1 ? values[0] : values },
    { parsers: { dry_run: dryRunValue } },
  );
  if (parsed.errors.length) throw invalidParams(parsed.errors);
  q.delete('dry_run');
  ctx.querystring = q.toString();
  return parsed.values['dry_run'] as boolean;
}

export function accessMiddleware(opts: AccessOptions): Middleware<AppState> {
  const counts = new RequestLeases(opts.store);
  return async (ctx, next) => {
    const key = ctx.state.key as ApiKey | undefined;
    if (!key) return next(); // public paths
    const nowMs = opts.now();
    const route = opts.routeOf(ctx.method, ctx.path);
    ctx.state.route = route;
    let budget: DailyBudget | null = null;
    let status = 200;
    let quoted: number | null = null;
    let head: HeadBudget | null = null;
    try {
      if (opts.limits) {
        const day = utcDay(nowMs);
        const w = hourWindow(nowMs);
        const limit = requestsPerHour(key.scope);
        const rows = dailyRows(key.scope);
        const { count, rowsUsed } = await counts.hit(key.id, w.start, day, limit, rows !== null, nowMs);
        ctx.set(rateLimitHeaders({ limit, remaining: Math.max(0, limit - count), reset: w.reset }, nowMs));
        budget = new DailyBudget(opts.store, key, day, rows, rowsUsed, budgetReset(nowMs), nowMs);
        if (count > limit) {
          throw new ApiError(
            429,
            'rate_limited',
            `${fmt(limit)} requests per hour are allowed for ${key.scope} keys and this key has used them; the window resets at ${new Date(w.reset * 1000).toISOString()}`,
            { headers: { 'Retry-After': String(retryAfter(w.reset, nowMs)) } },
          );
        }
      } else {
        budget = new DailyBudget(opts.store, key, utcDay(nowMs), null, 0, budgetReset(nowMs), nowMs);
      }
      const dryRun = takeDryRun(ctx);
      if (dryRun) delete ctx.req.headers['if-none-match']; // a quote is never a 304
      head = ctx.method === 'HEAD' && !dryRun ? new HeadBudget(budget) : null;
      ctx.state.budget = dryRun ? quoting(budget) : (head ?? budget);
      try {
        await next();
        if (dryRun) quoted = 0; // the route returned without charging: it costs nothing
      } catch (e) {
        if (!(e instanceof Quote)) throw e;
        quoted = e.rows;
      }
      if (quoted !== null) {
        ctx.status = 200;
        ctx.remove('ETag');
        ctx.remove('Cache-Control');
        ctx.set('X-Budget-Cost', String(quoted));
        const body: BudgetQuoteBody = {
          dry_run: true,
          rows: quoted,
          budget_limit: budget.limit,
          budget_remaining: budget.remaining,
          would_succeed: budget.remaining === null || quoted <= budget.remaining,
          resets_at: new Date(budget.reset * 1000).toISOString(),
        };
        ctx.body = body;
        ctx.type = QUOTE_MEDIA_TYPE; // HEAD with dry_run=1: the quote's headers (Koa sends no body)
      }
      status = ctx.status;
    } catch (e) {
      status =
        e instanceof ApiError
          ? e.status
          : typeof (e as { status?: unknown })?.status === 'number'
            ? (e as { status: number }).status
            : 500;
      throw e;
    } finally {
      if (budget && opts.limits) ctx.set(budgetHeaders(budget.state()));
      if (head) ctx.set('X-Budget-Cost', String(head.cost));
      ctx.state.rowsCharged = budget?.charged ?? 0;
      opts.ledger.record(key.id, route, status, ctx.state.rowsCharged);
    }
  };
}
