/**
 * JSON Lines renderer, written by DuckDB's own JSON writer (`COPY … TO … (FORMAT JSON)`:
 * newline-delimited objects, see `copy-stream.ts`): one lead object per line (`\n`) with the keys
 * (schema order) and values of a `GET /v1/leads` result; masked enriched fields are null (typed
 * NULL columns). Rows in the release's order (newest first).
 */
import type { Readable } from 'node:stream';
import type { ApiDb } from '../duckdb/db.ts';
import type { TempFile } from '../exports/temp-space.ts';
import { exportColumnsSql, exportRowsQuery, type ExportRowsRequest } from '../query/export-query.ts';
import type { LeadsSource } from '../query/leads-query.ts';
import { copyStream } from './copy-stream.ts';

/** Stream the filtered leads as JSON Lines. */
export function jsonlStream(
  db: ApiDb,
  src: LeadsSource,
  req: ExportRowsRequest,
  masked: ReadonlySet<string>,
  file: TempFile,
): Readable {
  const q = exportRowsQuery(src, { ...req, ordered: false }, exportColumnsSql(masked));
  return copyStream(db, { sql: q.sql, params: q.params, options: 'FORMAT JSON', file });
}
