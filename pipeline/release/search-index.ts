/**
 * The release's full-text search index: an inverted index over each lead's text, written as two
 * Parquet files the API queries with DuckDB (docs/search.md).
 *
 * - `search_terms.parquet`    (term, df, idf), sorted by term: one row per distinct term.
 * - `search_postings.parquet` (term, lead_id, tf, dl), sorted by term then lead_id, in row
 *   groups of 100,000 rows, so `WHERE term IN (…)` reads only the row groups whose min/max
 *   statistics can hold the terms instead of scanning the file.
 *
 * Both files carry the corpus size and mean document length as Parquet key/value metadata
 * (`n_docs`, `avgdl`), which BM25 needs and which `searchQuery` reads from the terms file's
 * footer. Terms come from `tokenize` in common/search-text.ts, which the API uses for `q`.
 */
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { tokenize } from '../../common/search-text.ts';
import { sqlString, type Db } from '../lib/duckdb.ts';
import { openLineSink } from './tables.ts';

/** One document: a lead id and its text (description + address + authority + application number). */
export interface SearchDoc {
  id: number;
  text: string;
}

export interface SearchIndexStats {
  docs: number;
  terms: number;
  postings: number;
  /** Mean document length in tokens (0 for an empty corpus). */
  avgdl: number;
}

/** Rows per Parquet row group of the postings file: the unit the API skips or reads. */
export const POSTINGS_ROW_GROUP_SIZE = 100_000;

/**
 * A corpus staged one document at a time: each doc is tokenised in JS (the same `tokenize` the
 * API uses) as it is added and written as one line `id,dl,term:tf term:tf …` (terms are
 * [a-z0-9]+, so neither ',' nor ' ' nor ':' needs quoting; a doc without terms gets no line).
 * The refresh adds each lead as it streams past; `writeSearchIndex` builds the index from it.
 */
export class SearchStaging {
  readonly path: string;
  /** Documents added. */
  n = 0;
  /** Tokens over every document. */
  totalLength = 0;
  private readonly seen = new Set<number>();
  private readonly sink: { write(line: string): void; close(): number };

  constructor(path: string) {
    this.path = path;
    this.sink = openLineSink<string>(path, (line) => line);
  }

  /** Stage one document. Throws on a non-integer or repeated id. */
  add(doc: SearchDoc): void {
    if (!Number.isSafeInteger(doc.id)) throw new Error(`search doc id must be an integer, got ${doc.id}`);
    if (this.seen.has(doc.id)) throw new Error(`search doc id ${doc.id} appears twice`);
    this.seen.add(doc.id);
    this.n++;
    const tokens = tokenize(doc.text);
    this.totalLength += tokens.length;
    if (tokens.length === 0) return;
    const tf = new Map<string, number>();
    for (const t of tokens) tf.set(t, (tf.get(t) ?? 0) + 1);
    let pairs = '';
    for (const [term, count] of tf) pairs += pairs === '' ? `${term}:${count}` : ` ${term}:${count}`;
    this.sink.write(`${doc.id},${tokens.length},${pairs}`);
  }

  /** Finish the staging file. */
  close(): void {
    this.sink.close();
  }
}

/** The staging file of a release's search index, in its build folder. */
export function searchStagingPath(outDir: string): string {
  return join(outDir, '.search_docs.staging.csv');
}

/**
 * Build the inverted index of `docs` and write `outDir/search_terms.parquet` and
 * `outDir/search_postings.parquet` (`SearchStaging`, then `writeStagedSearchIndex`).
 * Throws on a non-integer or repeated id.
 */
export async function writeSearchIndex(db: Db, docs: Iterable<SearchDoc>, outDir: string): Promise<SearchIndexStats> {
  await mkdir(outDir, { recursive: true });
  const staging = new SearchStaging(searchStagingPath(outDir));
  try {
    for (const doc of docs) staging.add(doc);
  } catch (err) {
    staging.close();
    await rm(staging.path, { force: true });
    throw err;
  }
  staging.close();
  return writeStagedSearchIndex(db, staging, outDir);
}

/**
 * Write the index of a closed staging: DuckDB counts term frequencies, sorts and writes the
 * Parquet files; the staging file is removed afterwards.
 *
 * idf = ln(1 + (N - df + 0.5) / (df + 0.5)), the BM25 idf that is never negative.
 */
export async function writeStagedSearchIndex(
  db: Db,
  staging: SearchStaging,
  outDir: string,
): Promise<SearchIndexStats> {
  const postingsPath = join(outDir, 'search_postings.parquet');
  const termsPath = join(outDir, 'search_terms.parquet');
  try {
    const { n, totalLength } = staging;
    const avgdl = n === 0 ? 0 : totalLength / n;
    const meta = `KV_METADATA {n_docs: ${sqlString(String(n))}, avgdl: ${sqlString(String(avgdl))}}`;
    // One staged line per doc ("id,dl,term:tf term:tf"); DuckDB unnests and sorts, which is
    // far cheaper than building millions of small posting strings in JS.
    await db.run(
      `COPY (
         SELECT split_part(pair, ':', 1) AS term, lead_id,
                CAST(split_part(pair, ':', 2) AS INTEGER) AS tf, dl
         FROM (
           SELECT id AS lead_id, dl, unnest(string_split(terms, ' ')) AS pair
           FROM ${csvSource(staging.path, { id: 'INTEGER', dl: 'INTEGER', terms: 'VARCHAR' })}
         )
         ORDER BY term, lead_id
       ) TO ${sqlString(postingsPath)}
       (FORMAT PARQUET, COMPRESSION ZSTD, ROW_GROUP_SIZE ${POSTINGS_ROW_GROUP_SIZE}, ${meta})`,
    );
    await db.run(
      `COPY (
         SELECT term, CAST(count(*) AS INTEGER) AS df,
                ln(1 + (${n} - count(*) + 0.5) / (count(*) + 0.5)) AS idf
         FROM read_parquet(${sqlString(postingsPath)})
         GROUP BY term
         ORDER BY term
       ) TO ${sqlString(termsPath)}
       (FORMAT PARQUET, COMPRESSION ZSTD, ${meta})`,
    );
    const [counts] = await db.all<{ terms: number; postings: number }>(
      `SELECT (SELECT count(*) FROM read_parquet(${sqlString(termsPath)})) AS terms,
              (SELECT count(*) FROM read_parquet(${sqlString(postingsPath)})) AS postings`,
    );
    return { docs: n, terms: Number(counts!.terms), postings: Number(counts!.postings), avgdl };
  } finally {
    await rm(staging.path, { force: true });
  }
}

function csvSource(path: string, columns: Record<string, string>): string {
  const cols = Object.entries(columns)
    .map(([name, type]) => `${sqlString(name)}: ${sqlString(type)}`)
    .join(', ');
  return `read_csv(${sqlString(path)}, header = false, auto_detect = false, delim = ',', quote = '', escape = '', columns = {${cols}})`;
}

// The pure query builder lives in common/ so the API can use it without importing pipeline/.
export { searchQuery, type SearchQueryOptions } from '../../common/search-query.ts';
