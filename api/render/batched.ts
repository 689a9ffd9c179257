/**
 * The rendered rows of a whole export, streamed in id order without sorting the wide rows all at
 * once: one narrow query finds the id ending every batch of 10,000 rows
 * (`exportBatchBoundsQuery`, a sort of the id column only), then each batch is an id range
 * (`l.id > a AND l.id <= b`) rendered and sorted on its own — DuckDB holds one batch of rendered
 * rows per export. One `ORDER BY id` over 200,000 wide rows would hold them all: four concurrent
 * exports ran the server's 256 MB DuckDB out of memory.
 */
import type { ApiDb } from '../db.ts';
import { exportBatchBoundsQuery, exportRowsQuery, type ExportRowsRequest } from '../query/export-query.ts';
import type { LeadsSource } from '../query/leads-query.ts';

/** Rows per batch. */
export const EXPORT_BATCH_ROWS = 10_000;

/** Column-major chunks (as `ApiDb.stream` yields them) of `select` over the filtered leads, in id order. */
export async function* batchedRows(db: ApiDb, src: LeadsSource, req: ExportRowsRequest, select: string, batch = EXPORT_BATCH_ROWS): AsyncGenerator<unknown[][], void, undefined> {
  const b = exportBatchBoundsQuery(src, req.filters, batch);
  const bounds = (await db.all<{ id: number }>(b.sql, b.params)).map((r) => r.id);
  let after = req.afterId;
  for (const upTo of [...bounds, undefined]) {
    const q = exportRowsQuery(src, { filters: req.filters, afterId: after, limit: null, ...(upTo === undefined ? {} : { upToId: upTo }) }, select);
    yield* db.stream(q.sql, q.params);
    if (upTo !== undefined) after = upTo;
  }
}
