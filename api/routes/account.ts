/**
 * `GET /v1/account/usage?from=YYYY-MM-DD&to=YYYY-MM-DD`: the usage ledger of the calling key's
 * account — every key it ever held (revoked and expired ones too, with their status), per UTC
 * day: requests, errors (4xx/5xx answers) and rows returned, with the per-route breakdown for
 * days inside the detail window (USAGE_DETAIL_DAYS, default 90; older days carry `routes: null`,
 * their daily totals are kept forever).
 *
 * This replica's pending counts are flushed before reading; other replicas' reach the store
 * within a second. The request itself is counted after it is answered.
 */
import Router from '@koa/router';
import type { ApiConfig } from '../config.ts';
import type { AppDeps } from '../http/app-deps.ts';
import type { AppContext, AppState } from '../http/context.ts';
import { daysBefore, utcDay } from '../access/limits.ts';
import type { UsageLedger } from '../access/ledger.ts';
import { pageHref, setPageLinks } from '../render/link-header.ts';
import type { UsageCounts } from '../state/store-interface.ts';
import { DEFAULT_USAGE_DAYS, MAX_USAGE_DAYS, parseUsageQuery, USAGE_QUERY_SCHEMA } from '../query/usage-query.ts';
import { mount, type Operation } from './operation.ts';
import { schemaRef } from '../openapi/endpoint.ts';

const zero = (): UsageCounts => ({ requests: 0, errors: 0, rows: 0 });
const add = (a: UsageCounts, b: UsageCounts): void =>
  void ((a.requests += b.requests), (a.errors += b.errors), (a.rows += b.rows));

/** What the account operation shares. */
interface AccountEnv {
  config: ApiConfig;
  deps: Pick<AppDeps, 'store' | 'clock'> & { ledger: Pick<UsageLedger, 'flush'> };
}

/** `GET /v1/account/usage`: the account's ledger per key and day, with the links to the periods before and after. */
async function accountUsage(ctx: AppContext, { config, deps }: AccountEnv): Promise<void> {
  const today = utcDay(deps.clock().getTime());
  const { from, to } = parseUsageQuery(ctx.query, today);
  const { key } = ctx.state;
  await deps.ledger.flush();
  const [account, usage] = await Promise.all([
    deps.store.getAccountById(key.account_id),
    deps.store.accountUsage(key.account_id, from, to),
  ]);
  const detailFrom = daysBefore(today, config.usageDetailDays - 1);
  const totals = zero();
  const keys = usage.keys.map((k) => {
    const days = usage.days.filter((d) => d.key_id === k.id);
    const kt = zero();
    for (const d of days) add(kt, d);
    add(totals, kt);
    return {
      id: k.id,
      name: k.name,
      scope: k.scope,
      display_prefix: k.display_prefix,
      status: k.status,
      created_at: k.created_at,
      revoked_at: k.revoked_at,
      licence_id: k.licence_id,
      expires_at: k.expires_at,
      totals: kt,
      days: days.map((d) => ({
        date: d.day,
        requests: d.requests,
        errors: d.errors,
        rows: d.rows,
        routes:
          d.day < detailFrom
            ? null
            : usage.routes
                .filter((r) => r.key_id === k.id && r.day === d.day)
                .map((r) => ({ route: r.route, requests: r.requests, errors: r.errors, rows: r.rows })),
      })),
    };
  });
  // the periods of the same length before and (up to today) after this one, as RFC 8288 links
  const days = Math.round((Date.parse(to) - Date.parse(from)) / 86_400_000) + 1;
  const prevTo = daysBefore(from, 1);
  const nextFrom = daysBefore(to, -1);
  const nextTo = daysBefore(to, -days) > today ? today : daysBefore(to, -days);
  setPageLinks(ctx, {
    next: to < today ? pageHref(ctx, { from: nextFrom, to: nextTo }) : null,
    prev: daysBefore(from, days) >= '1970-01-01' ? pageHref(ctx, { from: daysBefore(from, days), to: prevTo }) : null,
  });
  ctx.body = {
    account: { id: account!.id, name: account!.name, plan: account!.plan },
    from,
    to,
    detail_days: config.usageDetailDays,
    totals,
    keys,
  };
}

export const ACCOUNT_OPERATIONS: readonly Operation<AccountEnv>[] = [
  {
    method: 'get',
    path: '/account/usage',
    tag: 'Account',
    summary: 'Usage ledger of your account',
    description:
      `Per key (every key of the calling key's account, revoked and expired included, with status) and UTC day: requests, errors and rows returned, with a per-route breakdown inside the detail window (90 days by default). ` +
      `Defaults: the last ${DEFAULT_USAGE_DAYS} days up to today; at most ${MAX_USAGE_DAYS} days per request. Counts of other replicas reach the ledger within a second. Never cached (no ETag).`,
    query: USAGE_QUERY_SCHEMA,
    ok: { schema: schemaRef('AccountUsage'), description: 'The ledger.' },
    errors: [400],
    handler: accountUsage,
  },
];

/** The account router (paths relative to the /v1 mount). */
export function accountRouter(
  config: ApiConfig,
  deps: Pick<AppDeps, 'store' | 'clock'> & { ledger: Pick<UsageLedger, 'flush'> },
): Router<AppState> {
  return mount(ACCOUNT_OPERATIONS, { config, deps });
}
