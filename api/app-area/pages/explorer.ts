/**
 * /app/explorer — the lead explorer: free-text search and every filter of `GET /v1/leads` (the
 * form generated from the filter table, values from the current release), results with paging,
 * a lead's detail page, a map of the page's leads (a server-rendered SVG of their points;
 * MapLibre and tiles come later), and "Download CSV" of the whole filtered list.
 *
 * The API's machinery, not a copy of it: the query is parsed by `parseLeadsQuery` /
 * `parseExportQuery` (api/query/leads-params.ts, api/query/export-query.ts), answered by the release's leads
 * engine (`page` / `detail` / `count`, masked by api/access/masking.ts), and the CSV is written by the
 * export's own DuckDB writer (api/render/csv.ts) with masked columns blank, never dropped.
 *
 * Rights: the app acts with the account's plan — the scope `appScope(plan)` (ent_api on premium,
 * commonwealth otherwise), so on basic and pro the applicant and company columns are present and
 * blank (spec 1.4). Rows are charged to the account's app ledger entry (`key_app_<id>`) against
 * that scope's daily row budget, and every page, detail and download is counted in the usage
 * ledger under routes `GET /app/explorer`, `GET /app/explorer/{id}`, `GET /app/explorer.csv`.
 */
import Router from '@koa/router';
import type { ApiConfig } from '../../config.ts';
import type { ApiDb } from '../../duckdb/db.ts';
import { ApiError } from '../../http/errors.ts';
import { ExportTempSpace } from '../../exports/temp-space.ts';
import { budgetExhausted } from '../../access/enforce.ts';
import { budgetReset, dailyRows, utcDay } from '../../access/limits.ts';
import type { UsageLedger } from '../../access/ledger.ts';
import { attribution, maskedFor, maskingFor } from '../../access/masking.ts';
import { parseLeadId, parseLeadsQuery } from '../../query/leads-params.ts';
import { parseExportQuery, EXPORT_FORMATS } from '../../query/export-query.ts';
import type { ReleaseManager } from '../../releases/release.ts';
import { releaseSourcesCache } from '../../releases/release-lookups.ts';
import { csvStream } from '../../render/csv.ts';
import type { Scope } from '../../access/scopes.ts';
import type { StateStore } from '../../state/store-interface.ts';
import { appScope, ensureAppKey } from '../account-service.ts';
import type { AppAreaContext, AppAreaState, RenderPage, SafeHtml } from '../contract.ts';
import { leadPageBody, leadTitle, type SeenStage } from './lead-page.ts';
import { labelOf } from '../../../common/labels.ts';
import { servedEvent, stagesOf } from '../../routes/events.ts';
import { leadEventsQuery, type EventRow } from '../../query/events-query.ts';
import { CAPABILITIES } from '../../access/scopes.ts';
import type { Release } from '../../releases/release.ts';
import { existsSync } from 'node:fs';
import { html } from '../html.ts';
import {
  APP_BASE,
  filterFields,
  filterQueryString,
  filterRawQuery,
  fmt,
  givenFilters,
  message,
  notFoundPage,
  pinRelease,
} from './common.ts';
import { problemText } from './webhooks.ts';

export interface ExplorerPageDeps {
  store: StateStore;
  db: ApiDb;
  releases: ReleaseManager;
  clock: () => Date;
  log: (line: string) => void;
  ledger: Pick<UsageLedger, 'record'>;
  exportTemp?: ExportTempSpace;
  renderPage: RenderPage;
}

/** Leads per explorer page. */
export const EXPLORER_PAGE_SIZE = 25;

/** The columns of the results table (enriched ones included: blank when the plan's scope may not see them). */
const COLUMNS: [string, string][] = [
  ['received_date', 'Received'],
  ['description', 'Description'],
  ['planning_authority', 'Authority'],
  ['lead_readiness', 'Stage'],
  ['est_value', 'Est. value (€)'],
  ['applicant_org', 'Applicant'],
  ['main_contractor', 'Main contractor'],
];

type Lead = Record<string, unknown>;

export function explorerPage(config: ApiConfig, deps: ExplorerPageDeps): Router<AppAreaState> {
  const router = new Router<AppAreaState>({ prefix: APP_BASE });
  const sourcesFor = releaseSourcesCache(deps.db);
  let temp = deps.exportTemp ?? null;
  const tempSpace = (): ExportTempSpace =>
    (temp ??= new ExportTempSpace({
      root: config.exportTempDir,
      maxBytes: config.exportTempMaxMb * 1e6,
      waitMs: config.exportTempWaitMs,
      log: deps.log,
    }));

  /**
   * Run `work` as the account's app: it charges rows to the app's ledger entry against the plan
   * scope's daily budget; the request is counted in the usage ledger whatever its outcome.
   */
  async function asApp(
    ctx: AppAreaContext,
    route: string,
    work: (scope: Scope, charge: (rows: number) => Promise<Budget>) => Promise<void>,
  ): Promise<void> {
    const { account } = ctx.state.app;
    const scope = appScope(account.plan);
    const keyId = await ensureAppKey(deps.store, account.id);
    let charged = 0;
    let status = 200;
    // charges `rows` (0: only reads the day's use) and says what is left today
    const charge = async (rows: number): Promise<Budget> => {
      const nowMs = deps.clock().getTime();
      const limit = dailyRows(scope);
      const reset = budgetReset(nowMs);
      if (limit === null) {
        charged += Math.max(0, rows);
        return { limit, remaining: null, reset };
      }
      const r = await deps.store.chargeRows(keyId, utcDay(nowMs), Math.max(0, rows), limit);
      if (!r.ok) throw budgetExhausted({ rows, remaining: Math.max(0, limit - r.used), limit, reset, scope, nowMs });
      charged += Math.max(0, rows);
      return { limit, remaining: Math.max(0, limit - r.used), reset };
    };
    try {
      await work(scope, charge);
      status = ctx.status;
    } catch (e) {
      status = e instanceof ApiError ? e.status : 500;
      throw e;
    } finally {
      deps.ledger.record(keyId, route, status, charged);
    }
  }

  router.get('/explorer', async (ctx) => {
    const release = pinRelease(ctx, deps.releases);
    const places = release.leads.places();
    const given = givenFilters(new URLSearchParams(ctx.querystring));
    const pageNo = /^\d{1,4}$/.test(String(ctx.query['page'] ?? '')) ? Math.max(1, Number(ctx.query['page'])) : 1;
    const filterQs = filterQueryString(given);
    await asApp(ctx, 'GET /app/explorer', async (scope, charge) => {
      let error: string | null = null;
      let found: { total: number; results: Lead[] } | null = null;
      let budget: Budget | null = null;
      try {
        const req = parseLeadsQuery(
          { ...filterRawQuery(given), page: String(pageNo), page_size: String(EXPLORER_PAGE_SIZE) },
          config,
          places,
          release.id,
        );
        const offset = req.paging.mode === 'page' ? req.paging.offset : 0;
        const page = release.leads.page(
          { filters: req.filters, sort: req.sort, pageSize: EXPLORER_PAGE_SIZE, offset, after: null },
          maskingFor(scope),
        );
        budget = await charge(page.count);
        const body = page.json({ page: pageNo, next_cursor: null });
        try {
          found = JSON.parse(body.bytes.toString('utf8')) as { total: number; results: Lead[] };
        } finally {
          body.done();
        }
      } catch (e) {
        if (!(e instanceof ApiError) || !e.expose) throw e;
        ctx.status = e.status === 429 ? 429 : 400;
        error = e.status === 429 ? e.message : problemText(e);
      }
      const pages = found ? Math.min(config.pageMax, Math.max(1, Math.ceil(found.total / EXPLORER_PAGE_SIZE))) : 1;
      const href = (p: number): string => `${APP_BASE}/explorer?${filterQs}${filterQs ? '&' : ''}page=${p}`;
      const cw = attribution(scope);
      deps.renderPage(ctx, {
        section: 'explorer',
        title: 'Lead explorer',
        status: ctx.status === 404 ? 200 : ctx.status,
        body: html`<p>Release ${release.id}. You see leads with the rights of your ${ctx.state.app.account.plan} plan (${scope})${
          scope === 'commonwealth' ? html`: applicant and company columns are blank` : ''
        }. Rows shown count against the plan's daily budget and appear on the usage page.</p>
${message(error)}
<form method="get" action="${APP_BASE}/explorer" class="explorer-form" role="search" aria-label="Search and filter leads"><div class="filters">${filterFields(given, places, 'ex')}</div><button type="submit">Search</button> <a href="${APP_BASE}/explorer">Clear</a></form>
${
  found
    ? html`<section aria-labelledby="ex-results"><h2 id="ex-results"><span data-total="${found.total}">${fmt(found.total)}</span> leads</h2>
${downloadOffer(found.total, budget, `${APP_BASE}/explorer.csv${filterQs ? `?${filterQs}` : ''}`)}
${cw ? html`<p class="attribution"><small>${cw.metadata.attribution}</small></p>` : ''}
${leadsMap(found.results)}
<div class="table-wrap"><table><caption>Page ${pageNo} of ${pages}</caption><thead><tr><th scope="col">Lead</th>${COLUMNS.map(([, h]) => html`<th scope="col">${h}</th>`)}</tr></thead><tbody>${found.results.map(
        (l) =>
          html`<tr><td><a href="${APP_BASE}/explorer/${String(l['id'])}">${String(l['application_number'] ?? l['id'])}</a></td>${COLUMNS.map(([c]) => html`<td>${cell(c, l[c])}</td>`)}</tr>`,
      )}</tbody></table></div>
<nav aria-label="Result pages" class="pager">${pageNo > 1 ? html`<a href="${href(pageNo - 1)}" rel="prev">Previous page</a>` : ''} <span>Page ${pageNo} of ${pages}</span> ${
        pageNo < pages ? html`<a href="${href(pageNo + 1)}" rel="next">Next page</a>` : ''
      }</nav></section>`
    : ''
}`,
      });
    });
  });

  router.get('/explorer/:id', async (ctx) => {
    const release = pinRelease(ctx, deps.releases);
    await asApp(ctx, 'GET /app/explorer/{id}', async (scope, charge) => {
      let id: number;
      try {
        id = parseLeadId(ctx.params['id'] ?? '', {});
      } catch {
        ctx.status = 404;
        return notFoundPage(ctx, deps.renderPage, 'explorer', 'lead');
      }
      const detail = release.leads.detail(id, maskingFor(scope));
      if (!detail) {
        ctx.status = 404;
        return notFoundPage(ctx, deps.renderPage, 'explorer', 'lead');
      }
      await charge(1);
      const r = detail.record as Record<string, any>;
      deps.renderPage(ctx, {
        section: 'explorer',
        title: leadTitle(r),
        body: leadPageBody(r, await seenStages(deps.db, release, id, r, scope), {
          enriched: CAPABILITIES[scope].enriched,
          map: leadsMap([r]),
        }),
      });
    });
  });

  router.get('/explorer.csv', async (ctx) => {
    const release = pinRelease(ctx, deps.releases);
    await asApp(ctx, 'GET /app/explorer.csv', async (scope, charge) => {
      const src = await sourcesFor(release);
      const given = givenFilters(new URLSearchParams(ctx.querystring));
      const req = parseExportQuery(filterRawQuery(given), 'file', config, src.places);
      const maskedSet = new Set(maskedFor('lead', scope).map((m) => m.field));
      const rows = release.leads.count(req.filters);
      const file = await tempSpace().acquire('csv', rows); // a refused export (503 busy) costs nothing
      try {
        await charge(rows);
      } catch (e) {
        file.release();
        throw e;
      }
      ctx.set('Content-Disposition', `attachment; filename="leads-${release.id}.csv"`);
      ctx.set('X-Export-Rows', String(rows));
      ctx.set('Cache-Control', 'no-store');
      const cw = attribution(scope);
      if (cw) ctx.set(cw.headers);
      ctx.body = csvStream(deps.db, src.leads, { filters: req.filters, afterId: null, limit: null }, maskedSet, file);
      ctx.type = EXPORT_FORMATS.csv.type;
    });
  });

  return router;
}

/** What the plan's daily row budget allows now: null `limit` / `remaining` when the scope has no cap; `reset` in epoch seconds. */
interface Budget {
  limit: number | null;
  remaining: number | null;
  reset: number;
}

/**
 * The CSV download of a result list, priced before the link: its rows against what is left of
 * today's budget. A list that does not fit gets no link — it would only fail — but what to do:
 * narrow it, or wait for the reset when it would fit a whole day's budget.
 */
export function downloadOffer(rows: number, budget: Budget | null, href: string): SafeHtml {
  if (rows === 0) return html`<p>No leads to download.</p>`;
  const reset = budget ? new Date(budget.reset * 1000).toISOString().slice(11, 16) : '00:00';
  if (!budget || budget.remaining === null) {
    return html`<p class="download"><a href="${href}" download>Download CSV</a> of these ${fmt(rows)} leads (your plan has no daily row limit).</p>`;
  }
  if (rows <= budget.remaining) {
    return html`<p class="download"><a href="${href}" download>Download CSV</a> of these ${fmt(rows)} leads — counts ${fmt(rows)} rows; ${fmt(budget.remaining)} of your ${fmt(budget.limit)} rows left today.</p>`;
  }
  const why =
    rows > (budget.limit ?? 0)
      ? html`more than your plan's ${fmt(budget.limit)} rows a day, so it cannot be downloaded in one go`
      : html`more than the ${fmt(budget.remaining)} rows left today (${fmt(budget.limit)} a day; the count starts again at ${reset} UTC)`;
  return html`<p class="download" role="note"><strong>Download not available:</strong> these ${fmt(rows)} leads are ${why}. Narrow the search — a county, a trade, a stage or leads received since a date — to download fewer.</p>`;
}

/** A value as table text: lists joined, numbers formatted, null blank. */
function cell(column: string, v: unknown): string {
  if (v === null || v === undefined) return '';
  if (column === 'verticals' && Array.isArray(v)) return v.map((x) => labelOf('verticals', String(x))).join(', ');
  if (Array.isArray(v)) return v.map(String).join(', ');
  if (column === 'lead_readiness' || column === 'status' || column === 'use_class' || column === 'works_kind')
    return labelOf(column, String(v));
  if (typeof v === 'number') return column === 'id' || column.endsWith('_year') ? String(v) : fmt(v);
  if (typeof v === 'boolean') return v ? 'yes' : 'no';
  const s = String(v);
  return column === 'description' && s.length > 140 ? s.slice(0, 139) + '…' : s;
}

/** Ireland's bounding box (lon/lat) for the SVG map. */
const BOX = { west: -10.7, east: -5.3, south: 51.3, north: 55.5 };

/**
 * The leads of the page as points on an SVG outline box of Ireland (equirectangular, scaled by
 * cos(lat) so it is not stretched); each point names its lead. A map with tiles (MapLibre) is a later issue.
 */
export function leadsMap(leads: Lead[]): SafeHtml {
  const w = 300;
  const k = Math.cos((53.4 * Math.PI) / 180);
  const h = Math.round((w * (BOX.north - BOX.south)) / ((BOX.east - BOX.west) * k));
  const pts = leads.filter((l) => typeof l['lat'] === 'number' && typeof l['lon'] === 'number');
  const x = (lon: number): number => ((lon - BOX.west) / (BOX.east - BOX.west)) * w;
  const y = (lat: number): number => ((BOX.north - lat) / (BOX.north - BOX.south)) * h;
  return html`<figure class="map"><svg viewBox="0 0 ${w} ${h}" role="img" aria-labelledby="map-title"><title id="map-title">Map of ${pts.length} leads on this page</title><rect x="0" y="0" width="${w}" height="${h}" class="sea"/>${pts.map(
    (l) =>
      html`<circle cx="${x(l['lon'] as number).toFixed(1)}" cy="${y(l['lat'] as number).toFixed(1)}" r="4" class="pt"><title>${String(l['application_number'] ?? l['id'])}: ${String(l['planning_authority'] ?? '')}</title></circle>`,
  )}</svg><figcaption>${pts.length} of ${leads.length} leads on this page have a location (points by latitude and longitude).</figcaption></figure>`;
}

/**
 * The stages the weekly releases saw for a lead (its event log, as `GET /v1/leads/{id}/history`
 * reads it); none for a release built before the log existed.
 */
async function seenStages(
  db: ApiDb,
  release: Release,
  id: number,
  r: Record<string, any>,
  scope: Scope,
): Promise<SeenStage[]> {
  if (!existsSync(release.path('events.parquet'))) return [];
  const q = leadEventsQuery(release.tables.events, id);
  const events = (await db.all<EventRow>(q.sql, q.params)).map((e) => servedEvent(e, scope));
  const p = (r['project'] as Record<string, any> | undefined) ?? r;
  return stagesOf(events, {
    lead_readiness: String(p['lead_readiness']),
    status: String(p['status']),
    first_seen: String(r['first_seen']),
  });
}
