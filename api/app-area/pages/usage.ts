/**
 * /app/usage — the account's usage ledger (the same rows as `GET /v1/account/usage` and
 * `leads usage`): per key, day and route, as server-rendered SVG charts and tables, revoked and
 * expired keys kept, each key against its hourly request limit and daily row budget
 * (api/access/limits.ts). `/app/usage.csv` downloads the same rows. The lead explorer's reads
 * appear under the app's own entry, "Lead explorer (app)" (api/app-area/account-service.ts).
 *
 * Pending counts of this replica are flushed before reading (other replicas' reach the store
 * within a second), as the API's usage endpoint does.
 */
import Router from '@koa/router';
import type { ApiConfig } from '../../config.ts';
import { ApiError } from '../../http/errors.ts';
import { daysBefore, utcDay } from '../../access/limits.ts';
import type { UsageLedger } from '../../access/ledger.ts';
import { parseUsageQuery } from '../../query/usage-query.ts';
import type { StateStore } from '../../state/store-interface.ts';
import { accountService, appScope } from '../account-service.ts';
import type { AppAreaContext, AppAreaState, RenderPage, SafeHtml } from '../contract.ts';
import { html } from '../html.ts';
import { dailyRows, requestsPerHour } from '../../access/limits.ts';
import { APP_BASE, barChart, fmt, message } from './common.ts';

export interface UsagePageDeps {
  store: StateStore;
  clock: () => Date;
  ledger: Pick<UsageLedger, 'flush'>;
  renderPage: RenderPage;
}

/** The CSV columns of /app/usage.csv: one row per key, day and route (days outside the detail window: route `(all)`). */
export const USAGE_CSV_COLUMNS = [
  'key_id',
  'key_name',
  'scope',
  'status',
  'date',
  'route',
  'requests',
  'errors',
  'rows',
] as const;

/** A CSV cell (RFC 4180 quoting; a leading = + - @ is neutralised against spreadsheet formulas). */
export function csvCell(v: unknown): string {
  const t = v === null || v === undefined ? '' : String(v);
  const guarded = /^[=+\-@]/.test(t) ? `'${t}` : t;
  return /[",\n\r]/.test(guarded) || guarded !== t ? `"${guarded.replace(/"/g, '""')}"` : guarded;
}

/** What the usage pages share: config, deps and the account service. */
interface UsageEnv {
  config: Pick<ApiConfig, 'usageDetailDays'>;
  deps: UsagePageDeps;
  svc: ReturnType<typeof accountService>;
}

/** /app/usage and /app/usage.csv. */
export function usagePage(config: Pick<ApiConfig, 'usageDetailDays'>, deps: UsagePageDeps): Router<AppAreaState> {
  const router = new Router<AppAreaState>({ prefix: APP_BASE });
  const env: UsageEnv = { config, deps, svc: accountService(deps) };
  router.get('/usage', (ctx) => showUsage(env, ctx));
  router.get('/usage.csv', (ctx) => downloadUsage(env, ctx));
  return router;
}

/** The account's usage over the query's `from` / `to`, pending counts flushed first; the app's entry with its plan's limits. */
async function readUsage(env: UsageEnv, ctx: AppAreaContext) {
  const today = utcDay(env.deps.clock().getTime());
  const q = Object.fromEntries(Object.entries(ctx.query).filter(([k]) => k === 'from' || k === 'to'));
  const range = parseUsageQuery(q, today);
  await env.deps.ledger.flush();
  const u = await env.svc.usage(ctx.state.app.account.id, range.from, range.to);
  // the app's entry stands against the limits of the scope it acts with (the plan's)
  const scope = appScope(ctx.state.app.account.plan);
  const keys = u.keys.map((k) =>
    k.app ? { ...k, hourlyLimit: requestsPerHour(scope), dailyRows: dailyRows(scope) } : k,
  );
  return { ...u, keys };
}

type Usage = Awaited<ReturnType<typeof readUsage>>;
type UsageKey = Usage['keys'][number];

/** A key's name in the tables (the app's entry by what it is). */
const keyLabel = (k: UsageKey): string => (k.app ? 'Lead explorer (app)' : (k.key.name ?? `${k.key.display_prefix}…`));

/** `GET /app/usage`: charts, each key against its limits, and the ledger (the last 30 days when the dates are bad). */
async function showUsage(env: UsageEnv, ctx: AppAreaContext): Promise<void> {
  let u: Usage & { error?: string };
  try {
    u = await readUsage(env, ctx);
  } catch (e) {
    if (!(e instanceof ApiError) || e.status !== 400) throw e;
    ctx.query = {};
    u = await readUsage(env, ctx);
    u = { ...u, error: 'Dates must be YYYY-MM-DD, from not after to; showing the last 30 days.' };
  }
  env.deps.renderPage(ctx, {
    section: 'usage',
    title: 'Usage',
    body: html`${message('error' in u ? (u.error as string) : null)}
<form method="get" action="${APP_BASE}/usage" class="row"><div class="field"><label for="u-from">From</label><input type="date" id="u-from" name="from" value="${u.from}"></div><div class="field"><label for="u-to">To</label><input type="date" id="u-to" name="to" value="${u.to}"></div><button type="submit">Show</button></form>
<p><a href="${APP_BASE}/usage.csv?from=${u.from}&amp;to=${u.to}" download>Download CSV</a> (every key, day and route of this period).</p>
${usageCharts(u)}
${keyLimits(ctx, u)}
${ledgerTable(env, u)}`,
  });
}

/** Requests and rows per day, and requests per route, as bar charts. */
function usageCharts(u: Usage): SafeHtml {
  const days: string[] = [];
  for (let d = u.from; d <= u.to; d = daysBefore(d, -1)) days.push(d);
  const perDay = (field: 'requests' | 'rows'): number[] =>
    days.map((d) => u.keys.reduce((n, k) => n + (k.days.find((x) => x.day === d)?.[field] ?? 0), 0));
  const routes = new Map<string, number>();
  for (const k of u.keys) for (const r of k.routes) routes.set(r.route, (routes.get(r.route) ?? 0) + r.requests);
  const routeList = [...routes].sort((a, b) => b[1] - a[1]);
  return html`<section aria-labelledby="u-charts"><h2 id="u-charts">Requests and rows per day</h2>
${barChart(`Requests per day, ${u.from} to ${u.to}`, days, perDay('requests'), { x: 'Day', y: 'Requests' })}
${barChart(`Leads returned per day, ${u.from} to ${u.to}`, days, perDay('rows'), { x: 'Day', y: 'Leads (rows)' })}
${
  routeList.length
    ? barChart(
        'Requests per route',
        routeList.map((r) => r[0]),
        routeList.map((r) => r[1]),
        { height: 180, x: 'Route', y: 'Requests' },
      )
    : ''
}
</section>`;
}

/** Each key's use today against its hourly request limit and daily row budget. */
function keyLimits(ctx: AppAreaContext, u: Usage): SafeHtml {
  return html`<section aria-labelledby="u-limits"><h2 id="u-limits">Keys against their limits (today, ${u.today})</h2>
<div class="table-wrap" role="region" tabindex="0" aria-label="Keys against their limits table"><table><caption>Each key's use today against its hourly request limit and daily row budget</caption><thead><tr><th scope="col">Key</th><th scope="col">Scope</th><th scope="col">Status</th><th scope="col">Requests today</th><th scope="col">Hourly limit</th><th scope="col">Rows today</th><th scope="col">Daily row budget</th><th scope="col">Requests in period</th><th scope="col">Errors</th><th scope="col">Rows in period</th></tr></thead><tbody>${u.keys.map(
    (k) =>
      html`<tr><th scope="row">${keyLabel(k)}</th><td>${k.app ? appScope(ctx.state.app.account.plan) : k.key.scope}</td><td>${k.app ? 'app' : k.key.status}</td><td>${fmt(k.today.requests)}</td><td>${fmt(k.hourlyLimit)} / hour</td><td>${fmt(k.today.rows)}${
        k.dailyRows
          ? html` <meter min="0" max="${k.dailyRows}" value="${Math.min(k.today.rows, k.dailyRows)}" aria-label="${keyLabel(k)}: rows used today of the budget">${Math.round((100 * k.today.rows) / k.dailyRows)}%</meter>`
          : ''
      }</td><td>${k.dailyRows === null ? 'uncapped' : fmt(k.dailyRows)}</td><td>${fmt(k.totals.requests)}</td><td>${fmt(k.totals.errors)}</td><td>${fmt(k.totals.rows)}</td></tr>`,
  )}</tbody></table></div>
</section>`;
}

/** The ledger per key, day and route (days outside the detail window: all routes in one row). */
function ledgerTable(env: UsageEnv, u: Usage): SafeHtml {
  const detailFrom = daysBefore(u.today, env.config.usageDetailDays - 1);
  return html`<section aria-labelledby="u-ledger"><h2 id="u-ledger">Ledger per key, day and route</h2>
${
  u.keys.some((k) => k.days.length)
    ? html`<div class="table-wrap" role="region" tabindex="0" aria-label="Usage ledger table"><table><caption>Usage ledger ${u.from} to ${u.to} (per-route detail is kept ${env.config.usageDetailDays} days, from ${detailFrom})</caption><thead><tr><th scope="col">Date</th><th scope="col">Key</th><th scope="col">Route</th><th scope="col">Requests</th><th scope="col">Errors</th><th scope="col">Rows</th></tr></thead><tbody>${u.keys.flatMap(
        (k) =>
          k.days.flatMap((d) => {
            const rs = k.routes.filter((r) => r.day === d.day);
            return rs.length
              ? rs.map(
                  (r) =>
                    html`<tr><td>${d.day}</td><td>${keyLabel(k)}</td><td><code>${r.route}</code></td><td>${fmt(r.requests)}</td><td>${fmt(r.errors)}</td><td>${fmt(r.rows)}</td></tr>`,
                )
              : [
                  html`<tr><td>${d.day}</td><td>${keyLabel(k)}</td><td>(all routes)</td><td>${fmt(d.requests)}</td><td>${fmt(d.errors)}</td><td>${fmt(d.rows)}</td></tr>`,
                ];
          }),
      )}</tbody></table></div>`
    : html`<p>No requests in this period.</p>`
}
</section>`;
}

/** `GET /app/usage.csv`: the same rows, one per key, day and route. */
async function downloadUsage(env: UsageEnv, ctx: AppAreaContext): Promise<void> {
  const u = await readUsage(env, ctx);
  const lines = [USAGE_CSV_COLUMNS.join(',')];
  for (const k of u.keys) {
    for (const d of k.days) {
      const rs = k.routes.filter((r) => r.day === d.day);
      const base = [
        k.key.id,
        k.app ? 'Lead explorer (app)' : k.key.name,
        k.app ? 'app' : k.key.scope,
        k.app ? 'app' : k.key.status,
        d.day,
      ];
      if (rs.length)
        for (const r of rs) lines.push([...base, r.route, r.requests, r.errors, r.rows].map(csvCell).join(','));
      else lines.push([...base, '(all)', d.requests, d.errors, d.rows].map(csvCell).join(','));
    }
  }
  ctx.set('Content-Disposition', `attachment; filename="usage-${u.from}-${u.to}.csv"`);
  ctx.set('Cache-Control', 'no-store');
  ctx.type = 'text/csv; charset=utf-8; header=present';
  ctx.body = lines.join('\r\n') + '\r\n';
}
