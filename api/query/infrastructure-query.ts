/**
 * Pure query building for `GET /v1/infrastructure` and `GET /v1/infrastructure/renewables`:
 * parameter parsing (`parseQuery` against `schemas/infrastructure-query.schema.json`) and
 * `{ sql, params }` builders, one function per clause. Nothing here sees a connection; the
 * route runs the SQL. Every value is a bound parameter; the table comes from the release
 * (`release.tables.infrastructure`).
 */
import { invalidParams } from '../http/errors.ts';
import { foldPlace, REASONS } from './query-common.ts';
import { parseQuery, querySchema, schemaFile, schemaVariant, type RawQuery } from './parse-query.ts';

export interface SqlQuery {
  sql: string;
  params: unknown[];
}

/** The verticals `/v1/infrastructure/renewables` serves (and the only ones it accepts). */
export const RENEWABLE_VERTICALS = ['wind', 'solar', 'battery_storage'] as const;

export type InfraSort = 'id' | 'capacity_desc' | 'newest';

/** Parsed, validated filters (absent = no condition). */
export interface InfraFilters {
  vertical?: string[];
  technology?: string[];
  county?: string[];
  authority?: string[];
  min_mw?: number;
  max_mw?: number;
  consenting_route?: string[];
  fast_lane?: boolean;
  auction_round?: string[];
  auction_winner?: boolean;
  status?: string[];
  since?: string;
  updated_since?: string;
}

/** A parsed request: filters, order and paging (either `page` or a decoded `cursor`). */
export interface InfraRequest {
  filters: InfraFilters;
  sort: InfraSort;
  page: number | null;
  pageSize: number;
  /** Raw cursor text, when paging by cursor (decoded by the route against the filters hash). */
  cursor: string | null;
}

const readSchema = schemaFile;

/** The query-parameter schema (`schemas/infrastructure-query.schema.json`), as read from disk. */
export const INFRA_QUERY_SCHEMA: Readonly<Record<string, any>> = querySchema('infrastructure-query.schema.json');

/**
 * The parameter schema of one endpoint: the file's schema, with `vertical` restricted to the
 * renewable verticals for `/infrastructure/renewables`. The OpenAPI generator uses the same.
 */
export function infrastructureQuerySchema(renewables: boolean): Record<string, any> {
  if (!renewables) return INFRA_QUERY_SCHEMA;
  return schemaVariant(
    INFRA_QUERY_SCHEMA,
    'renewables',
    () => true,
    (props) => {
      props.vertical = {
        ...props.vertical,
        description: 'Renewable verticals, comma-separated (any of them; default all three).',
        items: { type: 'string', enum: [...RENEWABLE_VERTICALS] },
      };
    },
  );
}

const RENEWABLES_QUERY_SCHEMA = infrastructureQuerySchema(true);

/** fold(name) → canonical name, from an enum of the lead schema (31 authorities, 26 counties). */
function canonicalMap(prop: 'county' | 'planning_authority'): Map<string, string> {
  const values = readSchema('lead.schema.json').properties[prop].enum as string[];
  return new Map(values.map((v) => [foldPlace(v), v]));
}
const CANONICAL = { county: canonicalMap('county'), authority: canonicalMap('planning_authority') };

/** Auction rounds compare without case or spaces: "RESS 3" = "ress3". */
export function foldRound(s: string): string {
  return s.toLowerCase().replace(/\s+/g, '');
}

export interface ParseOptions {
  renewables: boolean;
  pageSizeDefault: number;
  pageSizeMax: number;
  pageMax: number;
}

/**
 * Parse and validate the query string of an infrastructure list request (`parseQuery`; county and
 * authority names mapped to their canonical spelling first). Throws a 400 `ApiError`
 * (`unknown_parameter` / `invalid_parameter`) naming every bad parameter, with the allowed values
 * of enumerations.
 *
 * @example
 *   parseInfrastructureQuery({ vertical: 'wind,solar', min_mw: '10' }, opts)
 *   // → { filters: { vertical: ['wind', 'solar'], min_mw: 10 }, sort: 'id', page: 1, pageSize: 25, cursor: null }
 */
export function parseInfrastructureQuery(query: RawQuery, opts: ParseOptions): InfraRequest {
  const canonical =
    (name: 'county' | 'authority') =>
    (s: string): string =>
      CANONICAL[name].get(foldPlace(s)) ?? s;
  const q = parseQuery(opts.renewables ? RENEWABLES_QUERY_SCHEMA : INFRA_QUERY_SCHEMA, query, {
    listAllowed: true,
    mapItems: { county: canonical('county'), authority: canonical('authority') },
  });
  const { errors } = q;
  const value = q.values;
  const num = (k: string): number | undefined => (typeof value[k] === 'number' ? (value[k] as number) : undefined);
  if (num('min_mw') !== undefined && num('max_mw') !== undefined && num('min_mw')! > num('max_mw')!) {
    errors.push({ name: 'max_mw', reason: REASONS.notBelow('min_mw') });
  }
  if (num('page_size') !== undefined && num('page_size')! > opts.pageSizeMax) {
    errors.push({ name: 'page_size', reason: REASONS.atMost(opts.pageSizeMax) });
  }
  if (num('page') !== undefined && num('page')! > opts.pageMax) {
    errors.push({ name: 'page', reason: REASONS.pageBeyond(opts.pageMax) });
  }
  if (q.shaped['page'] !== undefined && q.shaped['cursor'] !== undefined) {
    errors.push({ name: 'cursor', reason: REASONS.pageAndCursor });
  }
  if (errors.length > 0) throw invalidParams(errors);

  const filters: InfraFilters = {};
  for (const k of FILTER_KEYS) if (value[k] !== undefined) (filters as Record<string, unknown>)[k] = value[k];
  if (opts.renewables && !filters.vertical) filters.vertical = [...RENEWABLE_VERTICALS];
  const cursor = (value['cursor'] as string | undefined) ?? null;
  return {
    filters,
    sort: (value['sort'] as InfraSort | undefined) ?? 'id',
    page: cursor ? null : ((value['page'] as number | undefined) ?? 1),
    pageSize: (value['page_size'] as number | undefined) ?? opts.pageSizeDefault,
    cursor,
  };
}

/**
 * The filters with every list sorted and de-duplicated (auction rounds folded): equal sets of
 * values give equal objects, so `vertical=wind,solar` and `vertical=solar,wind` share cursors.
 */
export function normalisedInfraFilters(f: InfraFilters): InfraFilters {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(f)) {
    if (v === undefined) continue;
    out[k] = Array.isArray(v) ? [...new Set(k === 'auction_round' ? v.map(foldRound) : v)].sort() : v;
  }
  return out as InfraFilters;
}

/** The query parameters that are filters (the rest are order and paging), as `InfraFilters` keys. */
export const FILTER_KEYS = [
  'vertical',
  'technology',
  'county',
  'authority',
  'min_mw',
  'max_mw',
  'consenting_route',
  'fast_lane',
  'auction_round',
  'auction_winner',
  'status',
  'since',
  'updated_since',
] as const satisfies readonly (keyof InfraFilters)[];

/** Columns served, in schema order (the record shape of `infrastructure-project`). */
export const INFRA_COLUMNS: readonly string[] = Object.keys(
  readSchema('infrastructure-project.schema.json').properties,
);

const inList = (col: string, values: readonly unknown[], params: unknown[]): string => {
  params.push(...values);
  return `${col} IN (${values.map(() => '?').join(', ')})`;
};

/** `WHERE …` for the filters (empty string when there are none). AND across filters, OR within. */
export function infraWhere(f: InfraFilters): SqlQuery {
  const params: unknown[] = [];
  const c: string[] = [];
  if (f.vertical) c.push(inList('vertical', f.vertical, params));
  if (f.technology) c.push(inList('technology', f.technology, params));
  if (f.county) c.push(inList('county', f.county, params));
  if (f.authority) c.push(inList('planning_authority', f.authority, params));
  if (f.min_mw !== undefined) (c.push('capacity_mw >= ?'), params.push(f.min_mw));
  if (f.max_mw !== undefined) (c.push('capacity_mw <= ?'), params.push(f.max_mw));
  if (f.consenting_route) c.push(inList('consenting_route', f.consenting_route, params));
  if (f.fast_lane !== undefined) (c.push('eu_fast_lane = ?'), params.push(f.fast_lane));
  if (f.auction_round) c.push(inList(`lower(replace(auction_round, ' ', ''))`, f.auction_round.map(foldRound), params));
  if (f.auction_winner !== undefined) (c.push('auction_winner = ?'), params.push(f.auction_winner));
  if (f.status) c.push(inList('status', f.status, params));
  if (f.since) (c.push('first_seen >= CAST(? AS DATE)'), params.push(f.since));
  if (f.updated_since) (c.push('last_changed >= CAST(? AS DATE)'), params.push(f.updated_since));
  return { sql: c.length ? `WHERE ${c.join(' AND ')}` : '', params };
}

/** The sort key of each order: SQL expressions, directions, and how to read it from a served row. */
const SORTS: Record<InfraSort, { exprs: string[]; desc: boolean[]; key: (row: Record<string, unknown>) => unknown[] }> =
  {
    id: { exprs: ['id'], desc: [false], key: (r) => [r['id']] },
    capacity_desc: {
      exprs: ['coalesce(capacity_mw, -1)', 'id'],
      desc: [true, false],
      key: (r) => [r['capacity_mw'] ?? -1, r['id']],
    },
    newest: { exprs: ['first_seen', 'id'], desc: [true, true], key: (r) => [r['first_seen'], r['id']] },
  };

/** `ORDER BY …` of a sort. */
export function infraOrder(sort: InfraSort): string {
  const s = SORTS[sort];
  return `ORDER BY ${s.exprs.map((e, i) => `${e} ${s.desc[i] ? 'DESC' : 'ASC'}`).join(', ')}`;
}

/** The cursor key of a served row for a sort (what `next_cursor` encodes). */
export function infraSortKey(sort: InfraSort, row: Record<string, unknown>): unknown[] {
  return SORTS[sort].key(row);
}

/** True when a decoded cursor key has the shape of `sort`'s key (so nothing odd is ever bound). */
export function infraSortKeyValid(sort: InfraSort, key: readonly unknown[]): boolean {
  const int = (v: unknown): boolean => Number.isSafeInteger(v);
  switch (sort) {
    case 'id':
      return key.length === 1 && int(key[0]);
    case 'capacity_desc':
      return key.length === 2 && typeof key[0] === 'number' && Number.isFinite(key[0]) && int(key[1]);
    case 'newest':
      return key.length === 2 && typeof key[0] === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(key[0]) && int(key[1]);
  }
}

/**
 * Keyset condition "after the row whose sort key is `after`": rows strictly later in the
 * order. Written as an OR chain (a > x OR (a = x AND b > y)) so it works for mixed directions.
 */
export function infraKeyset(sort: InfraSort, after: readonly unknown[]): SqlQuery {
  const s = SORTS[sort];
  if (after.length !== s.exprs.length)
    throw new Error(`cursor key has ${after.length} values, sort ${sort} needs ${s.exprs.length}`);
  const params: unknown[] = [];
  const val = (i: number): string => (sort === 'newest' && i === 0 ? 'CAST(? AS DATE)' : '?');
  const ors: string[] = [];
  for (let i = 0; i < s.exprs.length; i++) {
    const parts: string[] = [];
    for (let j = 0; j < i; j++) {
      parts.push(`${s.exprs[j]} = ${val(j)}`);
      params.push(after[j]);
    }
    parts.push(`${s.exprs[i]} ${s.desc[i] ? '<' : '>'} ${val(i)}`);
    params.push(after[i]);
    ors.push(parts.length > 1 ? `(${parts.join(' AND ')})` : parts[0]!);
  }
  return { sql: ors.length > 1 ? `(${ors.join(' OR ')})` : ors[0]!, params };
}

/** `SELECT count(*) AS total` with the filters. */
export function infraCountQuery(table: string, f: InfraFilters): SqlQuery {
  const w = infraWhere(f);
  return { sql: [`SELECT count(*)::BIGINT AS total FROM ${table}`, w.sql].filter(Boolean).join(' '), params: w.params };
}

/** One project by id (`GET /v1/infrastructure/{id}`): every published column, at most one row. */
export function infraByIdQuery(table: string, id: number): SqlQuery {
  const cols = INFRA_COLUMNS.map((c) => `"${c}"`).join(', ');
  return { sql: `SELECT ${cols} FROM ${table} WHERE id = ?`, params: [id] };
}

/**
 * One page of projects: the filters, then the keyset condition (cursor paging) or OFFSET (page
 * paging). Asks for `pageSize + 1` rows so the caller knows whether there is a next page.
 */
export function infraPageQuery(
  table: string,
  req: { filters: InfraFilters; sort: InfraSort; pageSize: number; offset?: number; after?: readonly unknown[] | null },
): SqlQuery {
  const w = infraWhere(req.filters);
  const params = [...w.params];
  let where = w.sql;
  if (req.after) {
    const k = infraKeyset(req.sort, req.after);
    where = where ? `${where} AND ${k.sql}` : `WHERE ${k.sql}`;
    params.push(...k.params);
  }
  const cols = INFRA_COLUMNS.map((c) => `"${c}"`).join(', ');
  const parts = [`SELECT ${cols} FROM ${table}`, where, infraOrder(req.sort), 'LIMIT ?'];
  params.push(req.pageSize + 1);
  if (!req.after && req.offset) {
    parts.push('OFFSET ?');
    params.push(req.offset);
  }
  return { sql: parts.filter(Boolean).join(' '), params };
}
