/**
 * CSV renderer (RFC 4180): a header with every lead column (`CSV_COLUMNS`, the same for every
 * scope: masked enriched columns stay, blank), then one CRLF-terminated line per row, rendered
 * by DuckDB (`csvLineSql`): text quoted with doubled quotes, NULL as an empty field, lists joined
 * with ';', booleans true/false, dates YYYY-MM-DD. UTF-8 without BOM.
 */
import type { Readable } from 'node:stream';
import type { ApiDb } from '../db.ts';
import { csvHeader, csvLineSql, type ExportRowsRequest } from '../query/export-query.ts';
import type { LeadsSource } from '../query/leads-query.ts';
import { batchedRows } from './batched.ts';
import { linesStream } from './lines.ts';

/** Stream the filtered leads as CSV. */
export function csvStream(db: ApiDb, src: LeadsSource, req: ExportRowsRequest, masked: ReadonlySet<string>): Readable {
  return linesStream(batchedRows(db, src, req, csvLineSql(masked)), { head: csvHeader(), eol: '\r\n' });
}
