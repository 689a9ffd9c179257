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
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { tokenize } from '../../common/search-text.ts';
import { sqlString, type Db } from '../lib/duckdb.ts';

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

/** Staged lines (one per doc) buffered before a write. */
const CHUNK_PIECES = 2_000;

/**
 * Build the inverted index of `docs` and write `outDir/search_terms.parquet` and
 * `outDir/search_postings.parquet`. Documents are tokenised in JS (the same `tokenize` the API
 * uses) and staged as CSV next to the output; DuckDB counts term frequencies, sorts and writes
 * the Parquet files; the staging file is removed afterwards. Throws on a non-integer or repeated id.
 *
 * idf = ln(1 + (N - df + 0.5) / (df + 0.5)), the BM25 idf that is never negative.
 */
export async function writeSearchIndex(db: Db, docs: Iterable<SearchDoc>, outDir: string): Promise<SearchIndexStats> {
  await mkdir(outDir, { recursive: true });
  const staging = join(outDir, '.search_docs.staging.csv');
  const postingsPath = join(outDir, 'search_postings.parquet');
  const termsPath = join(outDir, 'search_terms.parquet');
  try {
    const { n, totalLength } = await stageTokens(docs, staging);
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
           FROM ${csvSource(staging, { id: 'INTEGER', dl: 'INTEGER', terms: 'VARCHAR' })}
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
    await rm(staging, { force: true });
  }
}

/**
 * Tokenise every doc and write one CSV line per doc, `id,dl,term:tf term:tf …`, to `path`
 * (terms are [a-z0-9]+, so neither ',' nor ' ' nor ':' needs quoting). Docs without terms get
 * no line. Returns the doc count and the total token count.
 */
async function stageTokens(docs: Iterable<SearchDoc>, path: string): Promise<{ n: number; totalLength: number }> {
  const staged = { n: 0, totalLength: 0 };
  const seen = new Set<number>();
  function* lines(): Generator<string> {
    for (const doc of docs) {
      if (!Number.isSafeInteger(doc.id)) throw new Error(`search doc id must be an integer, got ${doc.id}`);
      if (seen.has(doc.id)) throw new Error(`search doc id ${doc.id} appears twice`);
      seen.add(doc.id);
      staged.n++;
      const tokens = tokenize(doc.text);
      staged.totalLength += tokens.length;
      if (tokens.length === 0) continue;
      const tf = new Map<string, number>();
      for (const t of tokens) tf.set(t, (tf.get(t) ?? 0) + 1);
      let pairs = '';
      for (const [term, count] of tf) pairs += pairs === '' ? `${term}:${count}` : ` ${term}:${count}`;
      yield `${doc.id},${tokens.length},${pairs}\n`;
    }
  }
  await writeLines(path, lines());
  return staged;
}

/** Write text pieces to a file in large chunks, honouring back-pressure; closes the file on error. */
async function writeLines(path: string, pieces: Iterable<string>): Promise<void> {
  const out = createWriteStream(path, { encoding: 'utf8' });
  const closed = once(out, 'close');
  try {
    let chunk: string[] = [];
    for (const piece of pieces) {
      chunk.push(piece);
      if (chunk.length >= CHUNK_PIECES) {
        if (!out.write(chunk.join(''))) await once(out, 'drain');
        chunk = [];
      }
    }
    if (chunk.length > 0) out.write(chunk.join(''));
  } catch (err) {
    out.destroy();
    await closed;
    throw err;
  }
  out.end();
  await closed;
}

function csvSource(path: string, columns: Record<string, string>): string {
  const cols = Object.entries(columns)
    .map(([name, type]) => `${sqlString(name)}: ${sqlString(type)}`)
    .join(', ');
  return `read_csv(${sqlString(path)}, header = false, auto_detect = false, delim = ',', quote = '', escape = '', columns = {${cols}})`;
}

// The pure query builder lives in common/ so the API can use it without importing pipeline/.
export { searchQuery, type SearchQueryOptions } from '../../common/search-query.ts';
