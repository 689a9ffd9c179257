/**
 * CSV renderer (RFC 4180), written by DuckDB's own CSV writer (`COPY … TO … (FORMAT CSV)`, see
 * `copy-stream.ts`): a header with every lead column (`CSV_COLUMNS`, the same for every scope:
 * masked enriched columns stay, blank), then one CRLF-terminated line per row: text and lists
 * always quoted (quotes doubled), lists joined with ';', NULL as an empty field, booleans
 * true/false, dates YYYY-MM-DD. UTF-8 without BOM. Rows in the release's order (newest first).
 * The header is ours (DuckDB would quote the names of force-quoted columns).
 */
import type { Readable } from 'node:stream';
import type { ApiDb } from '../duckdb/db.ts';
import type { TempFile } from '../exports/temp-space.ts';
import {
  csvColumnsSql,
  csvForceQuote,
  csvHeader,
  exportRowsQuery,
  type ExportRowsRequest,
} from '../query/export-query.ts';
import type { LeadsSource } from '../query/leads-query.ts';
import { copyStream } from './copy-stream.ts';

/** Stream the filtered leads as CSV. */
export function csvStream(
  db: ApiDb,
  src: LeadsSource,
  req: ExportRowsRequest,
  masked: ReadonlySet<string>,
  file: TempFile,
): Readable {
  const q = exportRowsQuery(src, { ...req, ordered: false }, csvColumnsSql(masked));
  const quote = csvForceQuote()
    .map((c) => `"${c}"`)
    .join(', ');
  return copyStream(db, {
    sql: q.sql,
    params: q.params,
    options: `FORMAT CSV, HEADER false, NEW_LINE '\r\n', FORCE_QUOTE (${quote})`,
    head: csvHeader() + '\r\n',
    file,
  });
}
