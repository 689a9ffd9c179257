/**
 * JSON Lines renderer (`GET /v1/export/applications.jsonl`): one lead object per line (`\n`)
 * with the keys (schema order) and values of a `GET /v1/leads` result, masked enriched fields
 * null; rows in the release's order (newest first).
 *
 * Written by the release's leads engine from its row store (`LeadsEngine.exportLines`: each
 * lead's JSON text as a list page writes it) and streamed chunk by chunk (`engine-lines.ts`). It
 * was DuckDB's JSON writer over the release's Parquet until 2026-12-06 (docs/performance.md,
 * "JSON Lines from the leads engine").
 */
import type { Readable } from 'node:stream';
import type { Masking } from '../access/masking.ts';
import type { LeadsEngine } from '../engine/leads-engine.ts';
import type { LeadsFilters } from '../query/leads-query.ts';
import { engineLinesStream } from './engine-lines.ts';

/** Stream the leads matching `filters` as JSON Lines, masked by `masking`. */
export function jsonlStream(engine: LeadsEngine, filters: LeadsFilters, masking: Masking): Readable {
  return engineLinesStream(engine.exportLines('json', filters, masking)!);
}
