/**
 * `GET /v1/intel/analytics`: parameter parsing (`parseQuery` against `schemas/intel-analytics-query.schema.json`)
 * and pure SQL builders over the release's analytics tables (`price_index`, `yields`,
 * `emerging_zones`, `material_costs`). Builders return `{ sql, params }`; every value is bound.
 */
import { foldPlace, REASONS } from './query-common.ts';
import { invalidParams } from '../http/errors.ts';
import { parseQuery, querySchema, schemaVariant, type RawQuery } from './parse-query.ts';
import { decodeCursor, filtersHash, type CursorSecrets } from './paging.ts';

export const INTEL_SECTIONS = ['price_index', 'yields', 'emerging_zones', 'material_costs'] as const;
export type IntelSection = (typeof INTEL_SECTIONS)[number];

/** The release table behind each section. */
export const SECTION_TABLE = {
  price_index: 'price_index',
  yields: 'yields',
  emerging_zones: 'emerging_zones',
  material_costs: 'material_costs',
} as const satisfies Record<IntelSection, string>;

export interface IntelRequest {
  section: IntelSection;
  counties: string[];
  /** Inclusive ISO dates, or null. */
  from: string | null;
  to: string | null;
  /** The page number asked for; null when asked by `cursor`. */
  page: number | null;
  pageSize: number;
  /** Rows skipped: the cursor's, else `(page - 1) × pageSize`. */
  offset?: number;
  /** Hash of the section and filters, which a cursor must carry (`filtersHash`). */
  hash?: string;
}

type Json = Record<string, any>;
let chartSchema: Json | null = null;

/**
 * The query schema (`schemas/intel-analytics-query.schema.json`); `chart`: the variant of the
 * price-index chart, which takes only `county`, `from` and `to`.
 */
export function intelQuerySchema(chart = false): Json {
  const s = querySchema('intel-analytics-query.schema.json');
  if (!chart) return s;
  chartSchema ??= schemaVariant(s, 'chart', (name) => ['county', 'from', 'to'].includes(name));
  return chartSchema;
}

/**
 * A period parameter as an inclusive date: `YYYY`, `YYYY-MM`, `YYYY-MM-DD`, `YYYYQn`, `YYYY-Qn`.
 * `end` picks the period's last day. Undefined when not a real date.
 * @example periodDate('2024Q2', true) // '2024-06-30'
 */
export function periodDate(raw: string, end: boolean): string | undefined {
  const m = /^(\d{4})(?:-(\d{2})(?:-(\d{2}))?|-?Q([1-4]))?$/.exec(raw);
  if (!m) return undefined;
  const y = Number(m[1]);
  let from: [number, number, number];
  let to: [number, number, number];
  if (m[3]) from = to = [y, Number(m[2]), Number(m[3])];
  else if (m[2]) ((from = [y, Number(m[2]), 1]), (to = [y, Number(m[2]) + 1, 0]));
  else if (m[4]) ((from = [y, (Number(m[4]) - 1) * 3 + 1, 1]), (to = [y, Number(m[4]) * 3 + 1, 0]));
  else ((from = [y, 1, 1]), (to = [y, 12, 31]));
  const [yy, mm, dd] = end ? to : from;
  const d = new Date(Date.UTC(yy, mm - 1, dd));
  if (m[3] && (d.getUTCMonth() !== mm - 1 || d.getUTCDate() !== dd)) return undefined;
  if (mm < 1 || (m[2] && Number(m[2]) > 12)) return undefined;
  return d.toISOString().slice(0, 10);
}

/** Which parameters each section refuses (a 400 naming them beats silently ignoring them). */
const NOT_FOR: Record<IntelSection, string[]> = {
  price_index: [],
  yields: [],
  emerging_zones: ['from', 'to'],
  material_costs: ['county'],
};

/**
 * Parse and validate the query. Unknown parameters, repeats, bad values and parameters the
 * section does not take all become one 400 listing each problem. `svg`: the chart's variant
 * (no section, paging or county list: at most one county).
 */
export function parseIntelQuery(
  query: RawQuery,
  opts: {
    pageSizeDefault: number;
    pageSizeMax: number;
    pageMax: number;
    svg?: boolean;
    cursorSecrets?: CursorSecrets;
    releaseId?: string;
  },
): IntelRequest {
  const q = parseQuery(intelQuerySchema(opts.svg === true), query, {
    listAllowed: true,
    mapItems: { county: canonicalCounty },
  });
  const { errors } = q;
  const value = q.values;
  const section = (opts.svg ? 'price_index' : value.section) as IntelSection | undefined;
  if (section && INTEL_SECTIONS.includes(section)) {
    for (const p of NOT_FOR[section])
      if (q.shaped[p] !== undefined) errors.push({ name: p, reason: `does not apply to section ${section}` });
  }
  const from = typeof value.from === 'string' ? periodDate(value.from, false) : null;
  const to = typeof value.to === 'string' ? periodDate(value.to, true) : null;
  if (from === undefined) errors.push({ name: 'from', reason: 'not a real date' });
  if (to === undefined) errors.push({ name: 'to', reason: 'not a real date' });
  if (from && to && from > to) errors.push({ name: 'to', reason: REASONS.notBefore('from') });
  const counties = (value.county as string[] | undefined) ?? [];
  if (opts.svg && counties.length > 1)
    errors.push({ name: 'county', reason: 'the chart draws one county beside the national series' });
  const pageSize = typeof value.page_size === 'number' ? value.page_size : opts.pageSizeDefault;
  const page = typeof value.page === 'number' ? value.page : 1;
  if (pageSize > opts.pageSizeMax) errors.push({ name: 'page_size', reason: REASONS.atMost(opts.pageSizeMax) });
  if (page > opts.pageMax) errors.push({ name: 'page', reason: REASONS.atMost(opts.pageMax) });
  const cursor = typeof value.cursor === 'string' ? value.cursor : undefined;
  if (cursor !== undefined && value.page !== undefined)
    errors.push({ name: 'page', reason: 'not with cursor (the cursor says where the page starts)' });
  if (errors.length) throw invalidParams(errors);
  const filters = { section: section!, counties: [...new Set(counties)], from: from ?? null, to: to ?? null };
  const hash = filtersHash('intel', filters, '');
  let offset = (page - 1) * pageSize;
  if (cursor !== undefined) {
    if (!opts.cursorSecrets) throw invalidParams([{ name: 'cursor', reason: REASONS.unknownParameter }]);
    const c = decodeCursor(cursor, hash, opts.cursorSecrets);
    if (c.release !== opts.releaseId) {
      throw invalidParams([
        {
          name: 'cursor',
          reason: `made on release ${c.release}; intelligence pages are counted per release: start again without cursor`,
        },
      ]);
    }
    offset = Number(c.key[0]);
    if (!Number.isInteger(offset) || offset < 0)
      throw invalidParams([{ name: 'cursor', reason: 'not a cursor of this endpoint' }]);
  }
  return { ...filters, page: cursor === undefined ? page : null, pageSize, offset, hash };
}

const COUNTY_BY_FOLD = new Map<string, string>(
  (intelQuerySchema().properties.county.items.enum as string[]).map((c) => [foldPlace(c), c]),
);
/** `cork`, `Co. Cork` → `Cork` (the API's place-name folder); anything unknown is returned as given (the schema then rejects it). */
function canonicalCounty(c: string): string {
  return COUNTY_BY_FOLD.get(foldPlace(c)) ?? c;
}

/**
 * The page query of a section over `table` (a release table expression): rows in the section's
 * order with `_total` (the count of matching rows) on each, `LIMIT`/`OFFSET` bound.
 */
export function intelPageQuery(table: string, req: IntelRequest): { sql: string; params: unknown[] } {
  const where: string[] = [];
  const params: unknown[] = [];
  const periodRange = (): void => {
    if (req.from) (where.push('period_start >= CAST(? AS DATE)'), params.push(req.from));
    if (req.to) (where.push('period_start <= CAST(? AS DATE)'), params.push(req.to));
  };
  const countyIn = (includeNational: boolean): void => {
    if (!req.counties.length) return;
    const list = req.counties.map(() => '?').join(', ');
    where.push(includeNational ? `(county IS NULL OR county IN (${list}))` : `county IN (${list})`);
    params.push(...req.counties);
  };
  let order: string;
  switch (req.section) {
    case 'price_index':
      if (req.counties.length) countyIn(true);
      else where.push('county IS NULL');
      periodRange();
      order = 'county IS NOT NULL, area, period_start';
      break;
    case 'yields':
      countyIn(false);
      if (req.from || req.to) periodRange();
      else where.push(`period_start = (SELECT max(period_start) FROM ${table})`);
      order = 'county IS NOT NULL, area, property_type, period_start';
      break;
    case 'emerging_zones':
      countyIn(false);
      order = 'rank';
      break;
    case 'material_costs':
      if (req.from || req.to) periodRange();
      else where.push('latest');
      order = "material <> 'All materials', material, period_start";
      break;
  }
  params.push(req.pageSize, req.offset ?? ((req.page ?? 1) - 1) * req.pageSize);
  return {
    sql: `SELECT *, count(*) OVER () AS _total FROM ${table}${where.length ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY ${order} LIMIT ? OFFSET ?`,
    params,
  };
}

/** The series of the price-index chart: national plus at most one county, within the range. */
export function priceIndexSeriesQuery(
  table: string,
  req: Pick<IntelRequest, 'counties' | 'from' | 'to'>,
): { sql: string; params: unknown[] } {
  return intelPageQuery(table, {
    section: 'price_index',
    counties: req.counties.slice(0, 1),
    from: req.from,
    to: req.to,
    page: 1,
    pageSize: 10_000,
  });
}
