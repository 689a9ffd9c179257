/**
 * Words of the leads' descriptions that are on only a few leads (2–6 of the tiny release's), for
 * the tests of the engine's rare-word paths: below n/128 leads a `q` word's postings are walked
 * instead of its set being read (api/engine/search-index.ts). Five letters or more, lower-cased,
 * `[a-z]` only (so they can be written into SQL as they are), in alphabetical order.
 *
 * @example const rare = await rareWords(db, `read_parquet('${dir}/leads.parquet')`);
 */
import type { ApiDb } from '../../api/duckdb/db.ts';

export async function rareWords(db: ApiDb, leads: string, limit = 14): Promise<string[]> {
  const rows = await db.all<{ w: string }>(
    `SELECT lower(w) AS w, count(*) AS n
       FROM (SELECT unnest(regexp_extract_all(description, '[A-Za-z]{5,}')) AS w FROM ${leads})
      GROUP BY 1 HAVING n BETWEEN 2 AND 6 ORDER BY w LIMIT ${limit}`,
  );
  return rows.map((r) => r.w);
}
