/**
 * CSV renderer (RFC 4180): a header with every lead column (`CSV_COLUMNS`, the same for every
 * scope: masked enriched columns stay, blank), then one CRLF-terminated line per row: text and
 * lists always quoted (quotes doubled), lists joined with ';', NULL as an empty field, booleans
 * true/false, dates YYYY-MM-DD, numbers as DuckDB prints them (a whole DOUBLE as `1.0`). UTF-8
 * without BOM. Rows in the release's order (newest first).
 *
 * Written by the release's leads engine from its row store (`LeadsEngine.exportLines('csv')`,
 * `RowStore.writeCsv`, streamed by `engine-lines.ts`: no temp file), byte for byte what DuckDB's
 * CSV writer writes for the same rows (test/api/render/engine-lines.test.ts). Where the engine cannot
 * write it (a masked field inside a column's value), DuckDB's own writer does (`COPY … TO … (FORMAT
 * CSV)` into a temp file, streamed while it writes: `copy-stream.ts`). The header is ours (DuckDB
 * would quote the names of force-quoted columns).
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
import type { LeadsFilters, LeadsSource } from '../query/leads-query.ts';
import { copyStream } from './copy-stream.ts';
import { engineLinesStream } from './engine-lines.ts';
import type { Masking } from '../access/masking.ts';
import type { LeadsEngine } from '../engine/leads-engine.ts';

/** The filtered leads as CSV, written by the leads engine; null when it cannot write them for this masking (`csvStream` then). */
export function csvEngineStream(engine: LeadsEngine, filters: LeadsFilters, masking: Masking): Readable | null {
  const next = engine.exportLines('csv', filters, masking);
  return next && engineLinesStream(next, csvHeader() + '\r\n');
}

/** Stream the filtered leads as CSV, written by DuckDB into `file`. */
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
