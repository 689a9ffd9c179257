/**
 * JSON Lines renderer: one lead object per line (`\n`), rendered by DuckDB (`jsonLineSql`) with
 * the keys and values of a `GET /v1/leads` result; masked enriched fields are null.
 */
import type { Readable } from 'node:stream';
import type { ApiDb } from '../db.ts';
import { jsonLineSql, type ExportRowsRequest } from '../query/export-query.ts';
import type { LeadsSource } from '../query/leads-query.ts';
import { batchedRows } from './batched.ts';
import { linesStream } from './lines.ts';

/** Stream the filtered leads as JSON Lines. */
export function jsonlStream(db: ApiDb, src: LeadsSource, req: ExportRowsRequest, masked: ReadonlySet<string>): Readable {
  return linesStream(batchedRows(db, src, req, jsonLineSql(masked)), { eol: '\n' });
}
