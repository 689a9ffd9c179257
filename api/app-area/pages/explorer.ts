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
import { lazyExportTempSpace, type ExportTempSpace } from '../../exports/temp-space.ts';
import { budgetExhausted } from '../../access/enforce.ts';
import { budgetReset, dailyRows, utcDay } from '../../access/limits.ts';
import type { UsageLedger } from '../../access/ledger.ts';
import { attribution, maskedFor, maskingFor } from '../../access/masking.ts';
import { parseLeadId, parseLeadsQuery, type PlaceNames } from '../../query/leads-params.ts';
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
import { eventLogTable, leadEvents, stagesOf } from '../../releases/lead-history.ts';
import { CAPABILITIES } from '../../access/scopes.ts';
import type { Release } from '../../releases/release.ts';
import { html } from '../html.ts';
import {
  APP_BASE,
  filterQueryString,
  filterRawQuery,
  fmt,
  givenFilters,
  message,
  notFoundPage,
  pinRelease,
} from './common.ts';
import { customerText, filterPanel, filtersSet } from './filter-panel.ts';
import { landGeoJson } from '../../../common/land.ts';
import { LEADS_SORT_NAMES } from '../../query/lead-filters.ts';
import type { LeadsSort } from '../../query/leads-query.ts';
import { releaseTiles } from '../../gis/tile-cache.ts';
import { MVT_TYPE, validTile } from '../../gis/tiles.ts';
import { createHash } from 'node:crypto';

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

type Lead = Record<string, unknown>;

/** What the explorer's handlers share: config, deps and the per-release caches. */
interface ExplorerEnv {
  config: ApiConfig;
  deps: ExplorerPageDeps;
  sourcesFor: ReturnType<typeof releaseSourcesCache>;
  tilesFor: ReturnType<typeof releaseTiles>;
  tempSpace: ReturnType<typeof lazyExportTempSpace>;
}

/** Charges `rows` to the app's budget (0: only reads the day's use) and says what is left today. */
type Charge = (rows: number) => Promise<Budget>;

/** The explorer, a lead's page, the CSV download and the map's land and tiles. */
export function explorerPage(config: ApiConfig, deps: ExplorerPageDeps): Router<AppAreaState> {
  const router = new Router<AppAreaState>({ prefix: APP_BASE });
  const env: ExplorerEnv = {
    config,
    deps,
    sourcesFor: releaseSourcesCache(deps.db),
    tilesFor: releaseTiles(deps.db),
    tempSpace: lazyExportTempSpace(config, deps.exportTemp, deps.log),
  };
  router.get('/explorer', (ctx) => showExplorer(env, ctx));
  // the map's land and tiles (for the explorer and the lead page), read with the session
  router.get('/map/land.geojson', landLayer);
  router.get('/map/tiles/leads/:z/:x/:y.mvt', (ctx) => leadsTile(env, ctx));
  router.get('/explorer/:id', (ctx) => showLead(env, ctx));
  router.get('/explorer.csv', (ctx) => downloadCsv(env, ctx));
  return router;
}

/**
 * Run `work` as the account's app: it charges rows to the app's ledger entry against the plan
 * scope's daily budget; the request is counted in the usage ledger whatever its outcome.
 */
async function asApp(
  env: ExplorerEnv,
  ctx: AppAreaContext,
  route: string,
  work: (scope: Scope, charge: Charge) => Promise<void>,
): Promise<void> {
  const { account } = ctx.state.app;
  const scope = appScope(account.plan);
  const keyId = await ensureAppKey(env.deps.store, account.id);
  let charged = 0;
  let status = 200;
  // charges `rows` (0: only reads the day's use) and says what is left today
  const charge = async (rows: number): Promise<Budget> => {
    const nowMs = env.deps.clock().getTime();
    const limit = dailyRows(scope);
    const reset = budgetReset(nowMs);
    if (limit === null) {
      charged += Math.max(0, rows);
      return { limit, remaining: null, reset };
    }
    const r = await env.deps.store.chargeRows(keyId, utcDay(nowMs), Math.max(0, rows), limit);
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
    env.deps.ledger.record(keyId, route, status, charged);
  }
}

/** `GET /app/explorer`: the search form, a page of results and their map. */
async function showExplorer(env: ExplorerEnv, ctx: AppAreaContext): Promise<void> {
  const release = pinRelease(ctx, env.deps.releases);
  const places = release.leads.places();
  const query = new URLSearchParams(ctx.querystring);
  const given = givenFilters(query);
  const pageNo = /^\d{1,4}$/.test(String(ctx.query['page'] ?? '')) ? Math.max(1, Number(ctx.query['page'])) : 1;
  const sorts = sortsFor(given);
  const askedSort = query.get('sort') ?? '';
  const sort = sorts.some(([s]) => s === askedSort) ? askedSort : '';
  const filterQs = filterQueryString(given);
  const listQs = [filterQs, sort ? `sort=${sort}` : ''].filter(Boolean).join('&');
  await asApp(env, ctx, 'GET /app/explorer', async (scope, charge) => {
    const { error, found, budget, offset } = await searchPage(
      env,
      ctx,
      release,
      { given, places, sort, pageNo },
      scope,
      charge,
    );
    const pages = found ? Math.min(env.config.pageMax, Math.max(1, Math.ceil(found.total / EXPLORER_PAGE_SIZE))) : 1;
    const href = (p: number): string => `${APP_BASE}/explorer?${listQs}${listQs ? '&' : ''}page=${p}`;
    const cw = attribution(scope);
    const set = filtersSet(given, ['q']);
    env.deps.renderPage(ctx, {
      section: 'explorer',
      title: 'Lead explorer',
      status: ctx.status === 404 ? 200 : ctx.status,
      scripts: [...MAP_SCRIPTS, '/app/assets/explorer-panel.js'],
      body: html`<div class="explorer">
${searchForm(given, places, sorts, sort, set)}
<section class="ex-results" aria-labelledby="ex-results-h">
${message(error)}
${results({ ctx, release, scope, found, offset, pageNo, pages, href, filterQs, budget, cw })}
</section>
${explorerMap(found?.results ?? [], { caption: 'This page’s leads are the red points; grey circles are every lead of the release, grouped where they are close together. Select a point to open its lead; select a group to zoom in.' })}
</div>`,
    });
  });
}

/** A page of results found, or the error to show (the status set to 400, or 429 when the budget is spent). */
interface SearchOutcome {
  error: string | null;
  found: { total: number; results: Lead[] } | null;
  budget: Budget | null;
  offset: number;
}

/** One page of the explorer's query, through the leads parser and engine, charged. */
async function searchPage(
  env: ExplorerEnv,
  ctx: AppAreaContext,
  release: Release,
  q: { given: Map<string, string[]>; places: PlaceNames; sort: string; pageNo: number },
  scope: Scope,
  charge: Charge,
): Promise<SearchOutcome> {
  const { given, places, sort, pageNo } = q;
  let error: string | null = null;
  let found: { total: number; results: Lead[] } | null = null;
  let budget: Budget | null = null;
  let offset = 0;
  try {
    const req = parseLeadsQuery(
      {
        ...filterRawQuery(given),
        ...(sort ? { sort } : {}),
        page: String(pageNo),
        page_size: String(EXPLORER_PAGE_SIZE),
      },
      env.config,
      places,
      release.id,
    );
    offset = req.paging.mode === 'page' ? req.paging.offset : 0;
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
    error = e.status === 429 ? e.message : customerText(e);
  }
  return { error, found, budget, offset };
}

/** The search form: words, sort and the filter panel. */
function searchForm(
  given: Map<string, string[]>,
  places: PlaceNames,
  sorts: ReturnType<typeof sortsFor>,
  sort: string,
  set: number,
): SafeHtml {
  return html`<form method="get" action="${APP_BASE}/explorer" class="ex-form" role="search" aria-label="Search and filter leads">
<div class="field"><label for="ex-q">Search words</label><input type="search" id="ex-q" name="q" maxlength="200" value="${given.get('q')?.[0] ?? ''}" aria-describedby="ex-q-hint"><small id="ex-q-hint">Words in the description, address or council reference. "heat pump" in quotes finds those words together.</small></div>
<div class="field"><label for="ex-sort">Sort by</label><select id="ex-sort" name="sort">${sorts.map(
    ([s, words]) =>
      html`<option value="${s === defaultSort(given) ? '' : s}"${(sort || defaultSort(given)) === s ? html` selected` : ''}>${words}</option>`,
  )}</select></div>
<div class="ex-buttons"><button type="submit">Search</button> <a href="${APP_BASE}/explorer">Clear all</a></div>
<details class="ex-all-filters" open${set ? '' : html` data-close-narrow`}><summary><h2 class="ex-filters-title">Filters${set ? html` <span class="badge">${set} set</span>` : ''}</h2></summary>
${filterPanel(given, places, 'ex', { omit: ['q'] })}
<button type="submit">Apply filters</button>
</details>
</form>`;
}

/** The results: count, list, pager, save and download, the plan's rights; or "No results". */
function results(r: {
  ctx: AppAreaContext;
  release: Release;
  scope: Scope;
  found: SearchOutcome['found'];
  offset: number;
  pageNo: number;
  pages: number;
  href: (p: number) => string;
  filterQs: string;
  budget: Budget | null;
  cw: ReturnType<typeof attribution>;
}): SafeHtml {
  const { ctx, release, scope, found, offset, pageNo, pages, href, filterQs, budget, cw } = r;
  return found
    ? html`<h2 id="ex-results-h" tabindex="-1"${ctx.querystring ? html` data-focus-result` : ''}><span data-total="${found.total}">${countLine(found.total, offset, found.results.length)}</span></h2>
<ol class="ex-list" start="${offset + 1}">${found.results.map((l) => resultItem(l, scope))}</ol>
${pagerNav(pageNo, pages, found.total, href)}
<div class="ex-actions">
<p><a href="${APP_BASE}/searches/new?query=${encodeURIComponent(filterQs)}">Save this search</a> — get new leads like these by e-mail.</p>
${downloadOffer(found.total, budget, `${APP_BASE}/explorer.csv${filterQs ? `?${filterQs}` : ''}`)}
</div>
<p class="ex-rights"><small>You see leads with the rights of your ${ctx.state.app.account.plan} plan${
        CAPABILITIES[scope].enriched ? '' : html`: applicant and contractor names come with the premium plan`
      }. Leads shown count against the plan's daily allowance and appear on the usage page. Data release ${release.id}.</small></p>
${cw ? html`<p class="attribution"><small>${cw.metadata.attribution}</small></p>` : ''}`
    : html`<h2 id="ex-results-h" tabindex="-1">No results</h2><p>Change the search or the filters and try again.</p>`;
}

/** `GET /app/map/land.geojson`: the land layer of the map. */
function landLayer(ctx: AppAreaContext): void {
  const land = landBody();
  ctx.set('Cache-Control', 'private, max-age=86400');
  ctx.set('ETag', land.etag);
  if (ctx.get('If-None-Match') === land.etag) {
    ctx.status = 304;
    return;
  }
  ctx.type = 'application/geo+json';
  ctx.body = land.body;
}

/** `GET /app/map/tiles/leads/{z}/{x}/{y}.mvt`: a vector tile of the leads; its records count as rows. */
async function leadsTile(env: ExplorerEnv, ctx: AppAreaContext): Promise<void> {
  const [z, x, y] = (['z', 'x', 'y'] as const).map((k) => {
    const s = ctx.params[k] ?? '';
    return /^\d{1,9}$/.test(s) ? Number(s) : NaN;
  }) as [number, number, number];
  if (!validTile(z, x, y)) {
    ctx.status = 404;
    return notFoundPage(ctx, env.deps.renderPage, 'explorer', 'map tile');
  }
  const release = pinRelease(ctx, env.deps.releases);
  await asApp(env, ctx, 'GET /app/map/tiles/leads/{z}/{x}/{y}.mvt', async (_scope, charge) => {
    const tile = await env.tilesFor(release).tile('leads', z, x, y);
    await charge(tile?.records ?? 0); // clusters are free, records count as rows (as on /v1/tiles)
    ctx.set('Cache-Control', 'private, no-cache');
    if (!tile) {
      ctx.status = 204;
      return;
    }
    ctx.type = MVT_TYPE;
    ctx.body = tile.mvt;
  });
}

/** `GET /app/explorer/{id}`: a lead's page. */
async function showLead(env: ExplorerEnv, ctx: AppAreaContext): Promise<void> {
  const release = pinRelease(ctx, env.deps.releases);
  await asApp(env, ctx, 'GET /app/explorer/{id}', async (scope, charge) => {
    let id: number;
    try {
      id = parseLeadId(ctx.params['id'] ?? '', {});
    } catch {
      ctx.status = 404;
      return notFoundPage(ctx, env.deps.renderPage, 'explorer', 'lead');
    }
    const detail = release.leads.detail(id, maskingFor(scope));
    if (!detail) {
      ctx.status = 404;
      return notFoundPage(ctx, env.deps.renderPage, 'explorer', 'lead');
    }
    await charge(1);
    const r = detail.record as Record<string, any>;
    env.deps.renderPage(ctx, {
      section: 'explorer',
      title: leadTitle(r),
      scripts: MAP_SCRIPTS,
      body: leadPageBody(r, await seenStages(env.deps.db, release, id, r, scope), {
        enriched: CAPABILITIES[scope].enriched,
        map: explorerMap([r], {
          caption:
            'Grey circles are the other leads nearby (grouped where they are close together). Select one to open it.',
          zoom: 11,
        }),
      }),
    });
  });
}

/** `GET /app/explorer.csv`: the filtered list as CSV, priced and charged before it streams. */
async function downloadCsv(env: ExplorerEnv, ctx: AppAreaContext): Promise<void> {
  const release = pinRelease(ctx, env.deps.releases);
  await asApp(env, ctx, 'GET /app/explorer.csv', async (scope, charge) => {
    const src = await env.sourcesFor(release);
    const given = givenFilters(new URLSearchParams(ctx.querystring));
    const req = parseExportQuery(filterRawQuery(given), 'file', env.config, src.places);
    const maskedSet = new Set(maskedFor('lead', scope).map((m) => m.field));
    const rows = release.leads.count(req.filters);
    const file = await env.tempSpace().acquire('csv', rows); // a refused export (503 busy) costs nothing
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
    ctx.body = csvStream(env.deps.db, src.leads, { filters: req.filters, afterId: null, limit: null }, maskedSet, file);
    ctx.type = EXPORT_FORMATS.csv.type;
  });
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
 * The leads as points on an SVG box of Ireland (equirectangular, scaled by cos(lat) so it is not
 * stretched); each point names its lead. The map without script or WebGL: the MapLibre map
 * (`explorerMap`) draws over it when it can.
 */
export function leadsMap(leads: Lead[]): SafeHtml {
  const w = 300;
  const k = Math.cos((53.4 * Math.PI) / 180);
  const h = Math.round((w * (BOX.north - BOX.south)) / ((BOX.east - BOX.west) * k));
  const pts = leads.filter((l) => typeof l['lat'] === 'number' && typeof l['lon'] === 'number');
  const x = (lon: number): number => ((lon - BOX.west) / (BOX.east - BOX.west)) * w;
  const y = (lat: number): number => ((BOX.north - lat) / (BOX.north - BOX.south)) * h;
  return html`<svg viewBox="0 0 ${w} ${h}" role="img" aria-labelledby="map-title"><title id="map-title">Map of ${pts.length === 1 && leads.length === 1 ? 'the lead' : `${pts.length} leads`}</title><rect x="0" y="0" width="${w}" height="${h}" class="sea"/>${pts.map(
    (l) =>
      html`<circle cx="${x(l['lon'] as number).toFixed(1)}" cy="${y(l['lat'] as number).toFixed(1)}" r="4" class="pt"><title>${String(l['application_number'] ?? l['id'])}: ${String(l['planning_authority'] ?? '')}</title></circle>`,
  )}</svg>`;
}

/** The scripts of a page with the map: MapLibre GL's CSP build (its worker is a file too: no blob: worker) and the page's map script. */
export const MAP_SCRIPTS = ['/app/assets/maplibre-gl-csp.js', '/app/assets/explorer-map.js'] as const;

/**
 * The map of a page: MapLibre GL drawing the land of every authority (common/land.ts, from
 * `/app/map/land.geojson`), every lead of the release from the product's own vector tiles
 * (`/app/map/tiles/leads/{z}/{x}/{y}.mvt`, clustered at low zooms) and the page's leads as red
 * points; selecting a point opens its lead. The data rides in `data-` attributes (no inline
 * script); without script or WebGL the server's SVG of the page's points stays.
 */
export function explorerMap(leads: Lead[], opts: { caption: string; zoom?: number }): SafeHtml {
  const pts = leads
    .filter((l) => typeof l['lat'] === 'number' && typeof l['lon'] === 'number')
    .map((l) => ({
      id: Number(l['id']),
      lon: l['lon'] as number,
      lat: l['lat'] as number,
      title: `${String(l['application_number'] ?? l['id'])}: ${String(l['address'] ?? l['planning_authority'] ?? '')}`,
    }));
  const located =
    leads.length === 1
      ? pts.length === 1
        ? 'The lead is the red point.'
        : 'This lead has no location.'
      : `${pts.length} of the ${leads.length} leads on this page have a location.`;
  return html`<link rel="stylesheet" href="/app/assets/maplibre-gl.css"><figure class="ex-map" aria-labelledby="ex-map-caption"><div class="map-canvas" id="ex-map" data-points="${JSON.stringify(pts)}" data-land="${APP_BASE}/map/land.geojson" data-tiles="${APP_BASE}/map/tiles/leads/{z}/{x}/{y}.mvt" data-lead-base="${APP_BASE}/explorer/"${
    opts.zoom ? html` data-zoom="${opts.zoom}"` : ''
  }>${leadsMap(leads)}</div><figcaption id="ex-map-caption">${located} ${opts.caption}</figcaption></figure>`;
}

/** The sorts of the explorer in words: relevance only with search words, distance only with a point. */
export function sortsFor(given: Map<string, string[]>): [LeadsSort, string][] {
  const words: Record<LeadsSort, string> = {
    relevance: 'Best match for the search words',
    newest: 'Newest applications first',
    oldest: 'Oldest applications first',
    value_desc: 'Highest estimated value first',
    value_asc: 'Lowest estimated value first',
    last_changed: 'Most recently changed first',
    last_changed_asc: 'Least recently changed first',
    distance: 'Nearest to the point first',
  };
  return LEADS_SORT_NAMES.filter(
    (s) => (s !== 'relevance' || given.has('q')) && (s !== 'distance' || given.has('near')),
  ).map((s) => [s, words[s]]);
}

/** The sort a list has when none is asked for (the API's default). */
export const defaultSort = (given: Map<string, string[]>): LeadsSort => (given.has('q') ? 'relevance' : 'newest');

/** "1–25 of 1,177 leads". */
export function countLine(total: number, offset: number, shown: number): string {
  if (total === 0) return 'No leads match';
  if (shown === 0) return `No leads on this page (${fmt(total)} in all)`;
  return `${fmt(offset + 1)}–${fmt(offset + shown)} of ${fmt(total)} ${total === 1 ? 'lead' : 'leads'}`;
}

/** The pages of a list: previous, next, and where this page is. */
function pagerNav(pageNo: number, pages: number, total: number, href: (p: number) => string): SafeHtml {
  if (total <= EXPLORER_PAGE_SIZE) return html``;
  return html`<nav aria-label="Result pages" class="pager">${pageNo > 1 ? html`<a href="${href(1)}">First</a> <a href="${href(pageNo - 1)}" rel="prev">Previous</a>` : ''} <span>Page ${fmt(pageNo)} of ${fmt(pages)}</span> ${
    pageNo < pages ? html`<a href="${href(pageNo + 1)}" rel="next">Next</a>` : ''
  }${pages < Math.ceil(total / EXPLORER_PAGE_SIZE) ? html` <small>(the first ${fmt(pages * EXPLORER_PAGE_SIZE)} are paged here; narrow the search or download the CSV for the rest)</small>` : ''}</nav>`;
}

/** One result: what and where as the link, then stage, value, date and (when the plan has them) the applicant and contractor. */
function resultItem(l: Lead, scope: Scope): SafeHtml {
  const ref = String(l['application_number'] ?? l['id']);
  const where = String(l['address'] ?? l['planning_authority'] ?? '');
  const desc = cell('description', l['description']);
  const facts = [
    l['lead_readiness'] ? labelOf('lead_readiness', String(l['lead_readiness'])) : null,
    typeof l['est_value'] === 'number' ? `€${fmt(l['est_value'])}` : null,
    l['received_date'] ? `received ${String(l['received_date'])}` : null,
    Array.isArray(l['verticals']) && l['verticals'].length
      ? (l['verticals'] as string[])
          .slice(0, 3)
          .map((v) => labelOf('verticals', v))
          .join(', ') + ((l['verticals'] as string[]).length > 3 ? '…' : '')
      : null,
  ].filter((x): x is string => x !== null);
  const who = CAPABILITIES[scope].enriched
    ? [
        l['applicant_org'] ? `Applicant: ${String(l['applicant_org'])}` : null,
        l['main_contractor'] ? `Contractor: ${String(l['main_contractor'])}` : null,
      ].filter((x): x is string => x !== null)
    : [];
  return html`<li><h3><a href="${APP_BASE}/explorer/${String(l['id'])}">${where || ref}</a></h3><p class="meta">${ref} · ${String(l['planning_authority'] ?? '')}${
    l['county'] && l['county'] !== l['planning_authority'] ? html`, ${String(l['county'])}` : ''
  }</p><p class="meta">${facts.join(' · ')}</p>${desc ? html`<p class="desc">${desc}</p>` : ''}${who.length ? html`<p class="meta">${who.join(' · ')}</p>` : ''}</li>`;
}

/** The land layer's body, built once (the cells do not change while the server runs). */
let land: { body: string; etag: string } | null = null;
function landBody(): { body: string; etag: string } {
  if (land) return land;
  const body = JSON.stringify(landGeoJson());
  return (land = { body, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` });
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
  const table = eventLogTable(release);
  if (table === null) return [];
  const events = await leadEvents(db, table, id, scope);
  const p = (r['project'] as Record<string, any> | undefined) ?? r;
  return stagesOf(events, {
    lead_readiness: String(p['lead_readiness']),
    status: String(p['status']),
    first_seen: String(r['first_seen']),
  });
}
