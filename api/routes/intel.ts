/**
 * `GET /v1/intel/analytics` (market intelligence: price index, yields, emerging zones, material
 * costs) and `GET /v1/intel/analytics/price-index.svg` (the price index as a chart). Enriched
 * scopes only (spec 4): a key without the `enriched` capability gets a 403 problem naming the
 * scopes that may. The SQL comes from `api/query/intel-query.ts`, the chart from
 * `api/render/price-index-svg.ts`.
 */
import { existsSync } from 'node:fs';
import Router from '@koa/router';
import type { ApiConfig } from '../config.ts';
import type { AppDeps } from '../http/app-deps.ts';
import type { AppContext, AppState } from '../http/context.ts';
import { ApiError } from '../http/errors.ts';
import { responseMeta } from '../access/masking.ts';
import { charging, served, type Served } from '../access/budget.ts';
import { CAPABILITIES, scopesWith } from '../access/scopes.ts';
import {
  INTEL_SECTIONS,
  intelPageQuery,
  parseIntelQuery,
  priceIndexSeriesQuery,
  SECTION_TABLE,
  type IntelSection,
} from '../query/intel-query.ts';
import { priceIndexSvg, type ChartPoint, type ChartSeries } from '../render/price-index-svg.ts';
import { pageHref, setPageLinks } from '../render/link-header.ts';
import { encodeCursor } from '../query/paging.ts';

/** The market-intelligence router (paths relative to the /v1 mount). */
export function intelRouter(config: ApiConfig, deps: Pick<AppDeps, 'db'>): Router<AppState> {
  const router = new Router<AppState>();
  router.get(
    '/intel/analytics',
    charging((ctx: AppContext) => analytics(ctx, config, deps)),
  );
  router.get(
    '/intel/analytics/price-index.svg',
    charging((ctx: AppContext) => chart(ctx, config, deps)),
  );
  return router;
}

/** 403 unless the key's scope has the enriched capability. */
function requireEnriched(ctx: AppContext): void {
  const scope = ctx.state.key.scope;
  if (CAPABILITIES[scope].enriched) return;
  const may = scopesWith('enriched');
  throw new ApiError(
    403,
    'insufficient_scope',
    `scope ${scope} cannot read market intelligence (needs ${may.slice(0, -1).join(', ')} or ${may.at(-1)})`,
  );
}

/** The release's table of a section, or a 503 when the release was built before the analytics existed. */
function sectionTable(ctx: AppContext, section: IntelSection): string {
  const { release } = ctx.state;
  const name = SECTION_TABLE[section];
  if (!existsSync(release.path(`${name}.parquet`))) {
    throw new ApiError(
      503,
      'analytics_unavailable',
      `release ${release.id} has no ${section} table (built before the analytics stage); the next refresh adds it`,
    );
  }
  return release.tables[name];
}

async function analytics(ctx: AppContext, config: ApiConfig, deps: Pick<AppDeps, 'db'>): Promise<Served | void> {
  requireEnriched(ctx);
  if (Object.keys(ctx.query).length === 0) return summary(ctx, deps);
  const { release } = ctx.state;
  const req = parseIntelQuery(ctx.query, {
    pageSizeDefault: config.pageSizeDefault,
    pageSizeMax: config.pageSizeMax,
    pageMax: config.pageMax,
    cursorSecrets: config,
    releaseId: release.id,
  });
  const q = intelPageQuery(sectionTable(ctx, req.section), req);
  const rows = await deps.db.all(q.sql, q.params);
  const results = rows.map(({ _total: _t, ...r }) => r);
  const total = Number(rows[0]?._total ?? 0);
  return served(results.length, () => {
    const end = req.offset! + results.length;
    const nextCursor = end < total ? encodeCursor([end], release.id, req.hash!, config) : null;
    setPageLinks(ctx, { next: nextCursor && pageHref(ctx, { cursor: nextCursor, page: null }) });
    ctx.body = {
      section: req.section,
      total,
      page: req.page,
      page_size: req.pageSize,
      next_page: req.page !== null && end < total ? req.page + 1 : null,
      next_cursor: nextCursor,
      results,
      _meta: responseMeta(ctx.state.release.id, ctx.state.key.scope, []),
    };
  });
}

/**
 * `GET /v1/intel/analytics` without any parameter: every section with its row count and the link
 * that pages it (no records are returned, so nothing is charged). With other parameters but no
 * `section`, the parser's 400 names `section` as required.
 */
async function summary(ctx: AppContext, deps: Pick<AppDeps, 'db'>): Promise<void> {
  const { release } = ctx.state;
  const sections = [];
  for (const section of INTEL_SECTIONS) {
    const name = SECTION_TABLE[section];
    const available = existsSync(release.path(`${name}.parquet`));
    let total: number | null = null;
    if (available) {
      // the total the section's first page reports (its default filters: Ireland, the latest period…)
      const q = intelPageQuery(
        release.tables[name],
        parseIntelQuery({ section, page_size: '1' }, { pageSizeDefault: 1, pageSizeMax: 1, pageMax: 1 }),
      );
      const rows = await deps.db.all(q.sql, q.params);
      total = Number(rows[0]?._total ?? 0);
    }
    sections.push({
      section,
      available,
      total,
      href: `${ctx.protocol}://${ctx.host}/v1/intel/analytics?section=${section}`,
    });
  }
  ctx.body = { sections, _meta: responseMeta(release.id, ctx.state.key.scope, []) };
}

async function chart(ctx: AppContext, config: ApiConfig, deps: Pick<AppDeps, 'db'>): Promise<Served> {
  requireEnriched(ctx);
  const req = parseIntelQuery(ctx.query, {
    pageSizeDefault: config.pageSizeDefault,
    pageSizeMax: config.pageSizeMax,
    pageMax: config.pageMax,
    svg: true,
  });
  const q = priceIndexSeriesQuery(sectionTable(ctx, 'price_index'), req);
  const rows = (await deps.db.all(q.sql, q.params)) as unknown as (ChartPoint & {
    area: string;
    base_quarter: string;
  })[];
  const series: ChartSeries[] = [];
  for (const area of ['Ireland', ...req.counties.slice(0, 1)]) {
    series.push({ area, points: rows.filter((r) => r.area === area) });
  }
  // the points drawn are records served
  return served(rows.length, () => {
    const base = rows[0]?.base_quarter;
    ctx.type = 'image/svg+xml';
    ctx.body = priceIndexSvg(series, `Release ${ctx.state.release.id}${base ? `, base ${base} = 100` : ''}`);
  });
}
