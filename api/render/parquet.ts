/**
 * Parquet renderer: DuckDB writes the filtered leads, in the release's order (newest first), (every column, masked ones as typed NULLs)
 * to a temporary ZSTD Parquet file (`0600`, in the server's private folder: `api/exports/temp-space.ts`)
 * with `COPY … TO` on a connection of its own; the file is then streamed from disk and released
 * (deleted, its space given back) when the response ends (or the client goes away). Parquet's
 * footer is written last, so the file cannot be streamed while DuckDB writes it.
 */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { sqlIdent, sqlString, type ApiDb } from '../duckdb/db.ts';
import { exportTooLarge, type TempFile } from '../exports/temp-space.ts';
import { exportColumnsSql, exportRowsQuery, type ExportRowsRequest } from '../query/export-query.ts';
import type { LeadsSource } from '../query/leads-query.ts';

/**
 * Write the Parquet file into `file` and return a stream of it (the file is removed once the
 * stream closes) and its size. `metadata`: key-value pairs written into the file's footer (the
 * attribution a commonwealth export must carry: `attribution`, `license`).
 */
export async function parquetStream(
  db: ApiDb,
  src: LeadsSource,
  req: ExportRowsRequest,
  masked: ReadonlySet<string>,
  file: TempFile,
  metadata: Readonly<Record<string, string>> | null = null,
): Promise<{ body: Readable; bytes: number }> {
  // No ORDER BY: a sort of every wide row would hold them all in DuckDB's memory; the file keeps
  // the release's order (newest first), which a warehouse load does not care about.
  const q = exportRowsQuery(src, { ...req, ordered: false }, exportColumnsSql(masked));
  const { path } = file;
  try {
    const kv =
      metadata && Object.keys(metadata).length > 0
        ? `, KV_METADATA {${Object.entries(metadata)
            .map(([k, v]) => `${sqlIdent(k)}: ${sqlString(v)}`)
            .join(', ')}}`
        : '';
    // USE_TMP_FILE false: DuckDB writes into the file we created (keeping its 0600), never beside it
    await db.runAlone(
      `COPY (${q.sql}) TO ${sqlString(path)} (FORMAT PARQUET, COMPRESSION ZSTD, ROW_GROUP_SIZE 100000, USE_TMP_FILE false${kv})`,
      q.params,
    );
    const { size } = await stat(path);
    if (size > file.limitBytes) throw exportTooLarge('parquet', size, file.limitBytes); // written whole before the answer: refused, not cut
    const body = createReadStream(path);
    body.once('close', () => file.release());
    return { body, bytes: size };
  } catch (e) {
    file.release();
    throw e;
  }
}
