/**
 * The BM25 query over a release's search index (docs/search.md), shared by the pipeline (tests,
 * tools) and the API: a pure builder returning `{ sql, params }` that never sees a connection.
 * Moved here from `pipeline/release/search-index.ts` (which re-exports it) so that `api/` can use
 * it without importing `pipeline/`.
 */
import { BM25 } from './search-text.ts';
import {
  exactTerms,
  hasPhrase,
  parseSearchQuery,
  phrasePattern,
  queryPrefixes,
  SEARCH_TEXT_COLUMNS,
} from './search-syntax.ts';
import { sqlString } from './sql.ts';

export interface SearchQueryOptions {
  postingsPath: string;
  termsPath: string;
  /**
   * Rows returned at most, ordered by score. `null` (API use): every matching lead, unordered,
   * for the caller to join with filters and order itself.
   */
  limit: number | null;
  /** Also match index terms starting with the last word of `q` (search as you type). */
  prefix?: boolean;
  /** SQL table expression to read terms from instead of `read_parquet(termsPath)` (e.g. a table loaded in memory). */
  termsTable?: string;
  /** SQL table expression to read postings from instead of `read_parquet(postingsPath)`. */
  postingsTable?: string;
  /** The index's mean document length when already known (saves reading the Parquet footer). */
  avgdl?: number;
  /** The leads table (SQL table expression): needed by phrases, which are checked on each lead's text. */
  leadsTable?: string;
}

/**
 * Build the BM25 query for `q` over the index files: returns rows (lead_id, score) ordered by
 * score descending then lead_id ascending. Pure: the caller runs `{ sql, params }`. `q` is parsed
 * by `parseSearchQuery` (common/search-syntax.ts: every word required, "phrases", prefix*, OR);
 * a malformed `q` throws a `SearchSyntaxError` (the API's parameter parser refuses it first).
 * Query words go through `tokenize` exactly as the documents did and are bound parameters; the
 * file paths are SQL string literals because `read_parquet` takes no binds. Postings are
 * selected with `term IN (…)` (plus a `starts_with` and a term range per prefix) so DuckDB
 * prunes row groups by their min/max statistics; each lead's postings give its score and, per
 * item of the query, whether it holds it (`bool_or`); the groups are then required (AND of ORs),
 * a phrase also by a regular expression over the lead's folded search text. A `q` with no terms
 * gives a query returning no rows.
 *
 * score(d) = Σ_t idf(t) · tf·(k1+1) / (tf + k1·(1 − b + b·dl/avgdl)) over every term of the
 * query the lead holds, avgdl from the terms file's key/value metadata.
 *
 * @example
 * const { sql, params } = searchQuery('roof extension', { postingsPath, termsPath, limit: 50 });
 * const rows = await db.all(sql, params); // [{ lead_id: 17, score: 3.2 }, …]
 */
export function searchQuery(q: string, opts: SearchQueryOptions): { sql: string; params: unknown[] } {
  if (opts.limit !== null && (!Number.isSafeInteger(opts.limit) || opts.limit < 0))
    throw new RangeError(`limit must be a non-negative integer, got ${opts.limit}`);
  const parsed = parseSearchQuery(q, { lastWordPrefix: opts.prefix === true });
  if (parsed.error !== undefined) throw new SearchSyntaxError(parsed.error);
  const ast = parsed.ast;
  const terms = exactTerms(ast);
  const prefixes = queryPrefixes(ast);
  if (ast.groups.length === 0) {
    return { sql: 'SELECT CAST(NULL AS INTEGER) AS lead_id, CAST(NULL AS DOUBLE) AS score LIMIT 0', params: [] };
  }
  if (hasPhrase(ast) && opts.leadsTable === undefined)
    throw new Error("searchQuery: a phrase needs opts.leadsTable (it is checked on the leads' text)");
  const { where, params } = termFilter('term', terms, prefixes);
  // per item: whether the lead holds it (m0, m1, …), from its postings
  const items = ast.groups.flat();
  const holds: string[] = [];
  const holdParams: string[] = [];
  items.forEach((it, n) => {
    const parts =
      it.kind === 'prefix'
        ? [`bool_or(${it.prefixes.map(() => 'starts_with(hits.term, ?)').join(' OR ')})`]
        : it.terms.map(() => 'bool_or(hits.term = ?)');
    holdParams.push(...(it.kind === 'prefix' ? it.prefixes : it.terms));
    holds.push(`  ${parts.join(' AND ')} AS m${n},`);
  });
  const text = `strip_accents(lower(concat_ws(' ', ${SEARCH_TEXT_COLUMNS.map((c) => `l.${c}`).join(', ')})))`;
  const groupSql: string[] = [];
  const phraseParams: string[] = [];
  let n = 0;
  for (const g of ast.groups) {
    const alts = g.map((it) => {
      const m = `s.m${n++}`;
      if (it.kind !== 'phrase') return m;
      phraseParams.push(phrasePattern(it.words));
      return `(${m} AND regexp_matches(${text}, ?))`;
    });
    groupSql.push(alts.length === 1 ? alts[0]! : `(${alts.join(' OR ')})`);
  }
  const sql = [
    'WITH meta AS (',
    ...(opts.avgdl !== undefined
      ? [`  SELECT CAST(${finite(opts.avgdl)} AS DOUBLE) AS avgdl`]
      : [
          `  SELECT max(CASE WHEN decode(key) = 'avgdl' THEN CAST(decode(value) AS DOUBLE) END) AS avgdl`,
          `  FROM parquet_kv_metadata(${sqlString(opts.termsPath)})`,
        ]),
    '), qt AS (',
    `  SELECT term, idf FROM ${opts.termsTable ?? `read_parquet(${sqlString(opts.termsPath)})`} WHERE ${where}`,
    '), hits AS (',
    `  SELECT term, lead_id, tf, dl FROM ${opts.postingsTable ?? `read_parquet(${sqlString(opts.postingsPath)})`} WHERE ${where}`,
    '), scored AS (',
    'SELECT hits.lead_id AS lead_id,',
    ...holds,
    `  sum(qt.idf * (hits.tf * ${BM25.k1 + 1}) / (hits.tf + ${BM25.k1} * (1 - ${BM25.b} + ${BM25.b} * hits.dl / greatest(meta.avgdl, 1e-9)))) AS score`,
    'FROM hits JOIN qt ON qt.term = hits.term CROSS JOIN meta',
    'GROUP BY hits.lead_id',
    ')',
    `SELECT s.lead_id AS lead_id, s.score AS score FROM scored AS s${phraseParams.length ? ` JOIN ${opts.leadsTable} AS l ON l.id = s.lead_id` : ''}`,
    `WHERE ${groupSql.join(' AND ')}`,
    ...(opts.limit === null ? [] : ['ORDER BY score DESC, lead_id ASC', 'LIMIT ?']),
  ].join('\n');
  const all = [...params, ...params, ...holdParams, ...phraseParams];
  return { sql, params: opts.limit === null ? all : [...all, opts.limit] };
}

/** A malformed `q` (unbalanced quote, lone OR, a bad prefix): `message` says what, for a 400 naming `q`. */
export class SearchSyntaxError extends Error {}

/** A number as a SQL literal; throws on NaN / Infinity (never interpolate anything else). */
function finite(n: number): string {
  if (!Number.isFinite(n)) throw new RangeError(`avgdl must be a finite number, got ${n}`);
  return String(n);
}

/**
 * `term IN (?, …)` or-ed with, per prefix, `(term >= ? AND term < ? AND starts_with(term, ?))`:
 * the range lets DuckDB prune row groups, `starts_with` states the intent exactly.
 */
function termFilter(column: string, terms: string[], prefixes: string[]): { where: string; params: string[] } {
  const parts: string[] = [];
  const params: string[] = [];
  if (terms.length > 0) {
    parts.push(`${column} IN (${terms.map(() => '?').join(', ')})`);
    params.push(...terms);
  }
  for (const p of prefixes) {
    parts.push(`(${column} >= ? AND ${column} < ? AND starts_with(${column}, ?))`);
    params.push(p, prefixUpperBound(p), p);
  }
  return { where: parts.length === 1 ? parts[0]! : `(${parts.join(' OR ')})`, params };
}

/** The smallest string greater than every string starting with `p` (terms are [a-z0-9]). */
function prefixUpperBound(p: string): string {
  return p.slice(0, -1) + String.fromCharCode(p.charCodeAt(p.length - 1) + 1);
}
