/**
 * Pure SQL builders for `GET /v1/leads`: one function per clause (where, order, keyset cursor,
 * page), composed by `leadsPageQuery` and `leadsCountQuery`. They return `{ sql, params }` and
 * never see a connection; every value is a bound parameter and table names come from the
 * release's `tables.*` fragments.
 *
 * `q` uses the release's search index (docs/search.md): the BM25 query of `searchQuery`
 * (common/search-query.ts) yields (lead_id, score) for every lead holding a query term; it is
 * joined with the leads table, so the other filters, the count and every sort apply to it.
 */
import { searchQuery } from '../../common/search-query.ts';
import { LEAD_COLUMNS } from '../../common/lead-record.ts';
import type { ReleaseTables } from '../releases/tables.ts';
import { FILTER_BY_NAME, filterClauses, filtersOfKind, LEADS_SORT_NAMES, type LeadsFilters } from './lead-filters.ts';

export type { LeadsFilters };

export interface SqlQuery {
  sql: string;
  params: unknown[];
}

/**
 * Every sort of `GET /v1/leads` (the filter table's `LEADS_SORT_NAMES`). SQL runs all but
 * `distance` (only with `near`), which only the lead index answers — its distances are the
 * geometry module's (api/gis/geometry.ts), never SQL's.
 */
export type LeadsSort = (typeof LEADS_SORT_NAMES)[number];
type SqlSort = Exclude<LeadsSort, 'distance'>;
/** The sorts SQL can run (the reference semantics of the lead index). */
export const LEADS_SORTS: readonly SqlSort[] = LEADS_SORT_NAMES.filter((s): s is SqlSort => s !== 'distance');

/** The release's search index as the builders need it (avgdl read once per release). */
export interface SearchSource {
  termsTable: string;
  postingsTable: string;
  avgdl: number;
}

/** Where the builders read from: the leads table and, for `q`, the search index. */
export interface LeadsSource {
  leads: string;
  search: SearchSource | null;
}

/** The sort key of a row: the sort column's value and the id (keyset). */
export type SortKey = [value: string | number, id: number];

/** Columns of a lead, in schema order (the SELECT list; `score` is never returned): the lead schema's properties. */
export { LEAD_COLUMNS };

/** The column of each sort, its direction and the id's direction (ties). */
const SORT_SPEC: Record<SqlSort, { column: string; desc: boolean; idDesc: boolean; cast: string }> = {
  newest: { column: 'l.received_date', desc: true, idDesc: true, cast: 'DATE' },
  oldest: { column: 'l.received_date', desc: false, idDesc: false, cast: 'DATE' },
  value_desc: { column: 'l.est_value', desc: true, idDesc: true, cast: 'BIGINT' },
  value_asc: { column: 'l.est_value', desc: false, idDesc: false, cast: 'BIGINT' },
  last_changed: { column: 'l.last_changed', desc: true, idDesc: true, cast: 'DATE' },
  last_changed_asc: { column: 'l.last_changed', desc: false, idDesc: false, cast: 'DATE' },
  relevance: { column: 's.score', desc: true, idDesc: false, cast: 'DOUBLE' },
};

/** Result column holding the sort value of each row (for `next_cursor`). */
export const SORT_VALUE_COLUMN = '_sort_value';

/**
 * Result column holding the filter set's total (`count(*) OVER ()`), present on `q` pages
 * without a cursor: the BM25 scores are then computed once for page and count.
 */
export const TOTAL_COLUMN = '_total';

/** Whether `leadsPageQuery` returns `TOTAL_COLUMN` for this request (`q` given, offset paging). */
export function pageCarriesTotal(req: Pick<LeadsPageRequest, 'filters' | 'after'>): boolean {
  return req.filters.q !== undefined && req.after === null;
}

/**
 * The WHERE conditions of the filters (AND across filters, OR within a list), over the leads
 * table aliased `l`, as the filter table derives them (api/query/lead-filters.ts). `q` is not
 * here: it is the join with the search CTE (`leadsFrom`). Returns `TRUE` when there is no filter.
 *
 * @example leadsWhere({ county: ['Cork'], min_value: 1e6 })
 *   // { sql: 'l.county IN (?) AND l.est_value >= ?', params: ['Cork', 1000000] }
 */
export function leadsWhere(f: LeadsFilters, areaIds?: readonly number[]): SqlQuery {
  const { clauses, params } = filterClauses(f, 'duckdb', 1, areaIds);
  return clauses.length === 0 ? { sql: 'TRUE', params: [] } : { sql: clauses.join(' AND '), params };
}

/**
 * FROM clause: the leads table `l`, joined with the BM25 scores `s` when `q` is given (only
 * leads holding a query term remain). A `q` without index terms (only stopwords) matches nothing.
 */
export function leadsFrom(src: LeadsSource, q: string | undefined): SqlQuery {
  if (q === undefined) return { sql: `${src.leads} AS l`, params: [] };
  if (!src.search) throw new Error('this release has no search index');
  const s = searchQuery(q, {
    termsPath: '',
    postingsPath: '',
    termsTable: src.search.termsTable,
    postingsTable: src.search.postingsTable,
    avgdl: src.search.avgdl,
    leadsTable: src.leads,
    limit: null,
  });
  // Scores are rounded so that a score recomputed for the next page (summation order may vary
  // between runs) compares equal to the one in the cursor.
  return {
    sql: `(SELECT lead_id, round(score, 9) AS score FROM (\n${s.sql}\n)) AS s JOIN ${src.leads} AS l ON l.id = s.lead_id`,
    params: s.params,
  };
}

/** The SQL of a sort; `distance` has none (the lead index answers it). */
function sqlSort(sort: LeadsSort): (typeof SORT_SPEC)[SqlSort] {
  if (sort === 'distance') throw new Error('sort=distance is answered by the lead index, not SQL');
  return SORT_SPEC[sort];
}

/** ORDER BY of a sort: the sort column then id (unique, so the order is total). */
export function leadsOrder(sort: LeadsSort): SqlQuery {
  const s = sqlSort(sort);
  return { sql: `ORDER BY ${s.column} ${s.desc ? 'DESC' : 'ASC'}, l.id ${s.idDesc ? 'DESC' : 'ASC'}`, params: [] };
}

/**
 * Keyset condition: rows strictly after `key` in the order of `sort`. Row-value comparison
 * when both columns run the same way; expanded for relevance (score DESC, id ASC).
 */
export function leadsCursorWhere(sort: LeadsSort, key: SortKey): SqlQuery {
  const s = sqlSort(sort);
  const v = `CAST(? AS ${s.cast})`;
  if (s.desc === s.idDesc) {
    return { sql: `(${s.column}, l.id) ${s.desc ? '<' : '>'} (${v}, CAST(? AS BIGINT))`, params: [key[0], key[1]] };
  }
  const after = s.desc ? '<' : '>';
  const idAfter = s.idDesc ? '<' : '>';
  return {
    sql: `(${s.column} ${after} ${v} OR (${s.column} = ${v} AND l.id ${idAfter} CAST(? AS BIGINT)))`,
    params: [key[0], key[0], key[1]],
  };
}

/** LIMIT / OFFSET of a page. */
export function leadsLimit(limit: number, offset = 0): SqlQuery {
  return offset > 0 ? { sql: 'LIMIT ? OFFSET ?', params: [limit, offset] } : { sql: 'LIMIT ?', params: [limit] };
}

export interface LeadsPageRequest {
  filters: LeadsFilters;
  sort: LeadsSort;
  /** Rows to return (callers ask for page_size + 1 to learn whether more exist). */
  limit: number;
  /** Offset paging (0 with a cursor). */
  offset: number;
  /** Keyset paging: rows after this key. */
  after: SortKey | null;
  /** The ids of the leads in the request's areas, when it has geometry filters (see `filterClauses`). */
  areaIds?: readonly number[];
}

/**
 * One page of leads: the lead columns plus `_sort_value` (the sort column, for `next_cursor`)
 * and, for `q` without a cursor, `_total` (see `pageCarriesTotal`).
 *
 * @example
 * leadsPageQuery(src, { filters: { county: ['Cork'] }, sort: 'newest', limit: 26, offset: 0, after: null })
 */
export function leadsPageQuery(src: LeadsSource, req: LeadsPageRequest): SqlQuery {
  return pageQuery(src, req, LEAD_COLUMNS.map((c) => `l.${c}`).join(', '));
}

/**
 * The same page as `leadsPageQuery`, narrow: only `id`, `_sort_value` and (as there) `_total`.
 * DuckDB's top-N on the narrow key is 5–10× cheaper than on 52 columns; the route takes the
 * full rows from the release's row store (`Release.rows`) in this order.
 *
 * @example
 * leadsPageIdsQuery(src, { filters: {}, sort: 'newest', limit: 26, offset: 0, after: null })
 *   // SELECT l.id, l.received_date AS _sort_value FROM … ORDER BY l.received_date DESC, l.id DESC LIMIT ?
 */
export function leadsPageIdsQuery(src: LeadsSource, req: LeadsPageRequest): SqlQuery {
  return pageQuery(src, req, 'l.id');
}

function pageQuery(src: LeadsSource, req: LeadsPageRequest, columns: string): SqlQuery {
  const from = leadsFrom(src, req.filters.q);
  const where = leadsWhere(req.filters, req.areaIds);
  const conds = [where];
  if (req.after) conds.push(leadsCursorWhere(req.sort, req.after));
  const order = leadsOrder(req.sort);
  const limit = leadsLimit(req.limit, req.offset);
  const total = pageCarriesTotal(req) ? `, count(*) OVER () AS ${TOTAL_COLUMN}` : '';
  const sql = [
    `SELECT ${columns}, ${sqlSort(req.sort).column} AS ${SORT_VALUE_COLUMN}${total}`,
    `FROM ${from.sql}`,
    `WHERE ${conds.map((c) => c.sql).join(' AND ')}`,
    order.sql,
    limit.sql,
  ].join('\n');
  return { sql, params: [...from.params, ...conds.flatMap((c) => c.params), ...limit.params] };
}

/** `SELECT count(*) AS total` over the same FROM and WHERE as the page (no cursor). */
export function leadsCountQuery(src: LeadsSource, filters: LeadsFilters, areaIds?: readonly number[]): SqlQuery {
  const from = leadsFrom(src, filters.q);
  const where = leadsWhere(filters, areaIds);
  return {
    sql: `SELECT count(*) AS total FROM ${from.sql} WHERE ${where.sql}`,
    params: [...from.params, ...where.params],
  };
}

/**
 * Distinct values of the release-valued (`multi`) filters' columns — authority, county, … — for
 * the folded-name maps (api/query/leads-params.ts `placeNames`).
 */
export function leadsPlacesQuery(leadsTable: string): SqlQuery {
  const columns = [...new Set(filtersOfKind('multi').map((f) => f.column))];
  return { sql: `SELECT DISTINCT ${columns.join(', ')} FROM ${leadsTable}`, params: [] };
}

/** The mean document length of the search index, from the terms file's Parquet metadata. */
export function searchAvgdlQuery(termsParquetPath: string): SqlQuery {
  return {
    sql: `SELECT max(CASE WHEN decode(key) = 'avgdl' THEN CAST(decode(value) AS DOUBLE) END) AS avgdl FROM parquet_kv_metadata(?)`,
    params: [termsParquetPath],
  };
}

/** The source tables of a release. */
export function leadsSource(
  release: { tables: Pick<ReleaseTables, 'leads' | 'search_terms' | 'search_postings'> },
  avgdl: number | null,
): LeadsSource {
  return {
    leads: release.tables.leads,
    search:
      avgdl === null
        ? null
        : { termsTable: release.tables.search_terms, postingsTable: release.tables.search_postings, avgdl },
  };
}

/** The filters with list values de-duplicated and sorted: equal queries hash equally (cursors). A bbox keeps its order. */
export function normalisedFilters(f: LeadsFilters): LeadsFilters {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(f)) {
    if (v === undefined) continue;
    const kind = FILTER_BY_NAME.get(k)?.kind;
    out[k] = Array.isArray(v) && (kind === 'enum' || kind === 'multi') ? [...new Set(v as string[])].sort() : v;
  }
  return out as LeadsFilters;
}

/** Whether a decoded cursor key fits a sort: [date string, id] or [number, id]. */
export function sortKeyValid(sort: LeadsSort, key: readonly unknown[]): key is SortKey {
  if (key.length !== 2 || !Number.isSafeInteger(key[1])) return false;
  const v = key[0];
  return sort !== 'distance' && SORT_SPEC[sort].cast === 'DATE'
    ? typeof v === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(v)
    : typeof v === 'number' && Number.isFinite(v);
}
