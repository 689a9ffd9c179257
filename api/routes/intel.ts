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
import { served, type Served } from '../access/budget.ts';
import { mount, type Operation } from './operation.ts';
import { schemaRef } from '../openapi/endpoint.ts';
import { CAPABILITIES, scopesWith } from '../access/scopes.ts';
import {
  INTEL_SECTIONS,
  intelPageQuery,
  intelQuerySchema,
  parseIntelQuery,
  priceIndexSeriesQuery,
  SECTION_TABLE,
  type IntelSection,
} from '../query/intel-query.ts';
import { priceIndexSvg, type ChartPoint, type ChartSeries } from '../render/price-index-svg.ts';
import { pageHref, setPageLinks } from '../render/link-header.ts';
import { encodeCursor } from '../query/paging.ts';

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

/** What the intelligence operations share. */
interface IntelEnv {
  config: ApiConfig;
  deps: Pick<AppDeps, 'db'>;
}

/** The market-intelligence operations (paths relative to the /v1 mount). */
export const INTEL_OPERATIONS: readonly Operation<IntelEnv>[] = [
  {
    method: 'get',
    path: '/intel/analytics',
    tag: 'Intelligence',
    summary: 'Market intelligence: price index, yields, emerging zones, material costs',
    description:
      'Enriched scopes only (ent_api, ent_feed, custom): a commonwealth key gets 403 `insufficient_scope`. `section` picks the analysis; each has one row type. ' +
      '`price_index`: the quarterly repeat-sale index (weighted repeat-sales regression on Property Price Register pairs) of Ireland, plus each `county` asked for, with standard errors, 95% intervals and pair counts. ' +
      '`yields`: gross rental yields (RTB rent × 12 / median sale price) by area and dwelling class, latest quarter unless `from`/`to`. ' +
      '`emerging_zones`: counties ranked by growth of planning applications and commencements and by price momentum, every component shown. ' +
      '`material_costs`: CSO building-material price indices with year-on-year change, latest month unless `from`/`to`. ' +
      'A parameter a section does not take is a 400. Page with `page` + `page_size`. A release built before the analytics existed answers 503 `analytics_unavailable`. ' +
      'Without any parameter: an IntelAnalyticsSummary listing every section with its row count and the link that pages it (no rows charged). Methods: docs/intel.md.',
    query: { ...intelQuerySchema(), required: [] },
    ok: {
      schema: { oneOf: [schemaRef('IntelAnalyticsPage'), schemaRef('IntelAnalyticsSummary')] },
      description: "A page of the section's rows; without parameters, the summary of the sections.",
    },
    errors: [400],
    cached: true,
    handler: (ctx, { config, deps }) => analytics(ctx, config, deps),
  },
  {
    method: 'get',
    path: '/intel/analytics/price-index.svg',
    tag: 'Intelligence',
    summary: 'Price index chart (SVG)',
    description:
      "The national repeat-sale price index and, with `county`, one county's, as an SVG line chart with 95% confidence bands (hollow dots: quarters with few pairs). " +
      'Takes `county` (one), `from` and `to` as /intel/analytics does. Enriched scopes only; each point drawn counts as a record served.',
    query: intelQuerySchema(true),
    ok: {
      schema: { type: 'string', description: 'An SVG document.' },
      type: 'image/svg+xml',
      description: 'The chart.',
    },
    errors: [400],
    cached: true,
    handler: (ctx, { config, deps }) => chart(ctx, config, deps),
  },
];

/** The market-intelligence router (paths relative to the /v1 mount). */
export function intelRouter(config: ApiConfig, deps: Pick<AppDeps, 'db'>): Router<AppState> {
  return mount(INTEL_OPERATIONS, { config, deps });
}
