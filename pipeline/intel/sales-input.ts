/**
 * The analytics stage's private copy of the sales: one tab-separated line per sale, written
 * while the PPR files stream through `read:ppr` (so they are read once) and removed when the
 * stage has read it. It holds what the published `sales` table must not: an Eircode hash for
 * the repeat-sale matcher. Every field is a code, a date, a number or an address key made only
 * of `[a-z0-9 ]`, so no quoting is needed. The file never reaches a release.
 */
import { join } from 'node:path';
import { sqlString } from '../lib/duckdb.ts';
import { openLineSink } from '../release/tables.ts';
import type { SaleRow } from '../types.ts';
import { addressFacts } from './address.ts';

/** Columns of the staging file, in order, with their DuckDB types. */
export const INTEL_SALE_COLUMNS: readonly [string, string][] = [
  ['date_of_sale', 'DATE'],
  ['county', 'VARCHAR'],
  ['routing_key', 'VARCHAR'],
  ['eircode_hash', 'VARCHAR'],
  ['address_key', 'VARCHAR'],
  ['dwelling', 'VARCHAR'],
  ['price_cents', 'BIGINT'],
  ['market', 'BOOLEAN'],
  ['second_hand', 'BOOLEAN'],
];

/** One sale as a staging line (no newline). */
export function intelSaleLine(row: SaleRow): string {
  const a = addressFacts(row.address);
  return `${row.date_of_sale}\t${row.county}\t${row.eircode_routing_key ?? ''}\t${row.eircode_hash ?? ''}\t${a.key}\t${a.dwelling}\t${row.price_cents}\t${
    row.not_full_market_price ? 'false' : 'true'
  }\t${row.is_new_dwelling || row.vat_exclusive ? 'false' : 'true'}`;
}

export interface IntelSalesSink {
  readonly path: string;
  write(row: SaleRow): void;
  /** Flush and close; returns the lines written. */
  close(): number;
}

/** Open `<dir>/.intel-sales.tsv` for writing. */
export function openIntelSalesSink(dir: string): IntelSalesSink {
  return openLineSink(join(dir, '.intel-sales.tsv'), intelSaleLine);
}

/** SQL that reads a staging file as a relation with `INTEL_SALE_COLUMNS`. */
export function readIntelSalesSql(path: string): string {
  const cols = INTEL_SALE_COLUMNS.map(([n, t]) => `${sqlString(n)}: ${sqlString(t)}`).join(', ');
  return `read_csv(${sqlString(path)}, delim = '\t', header = false, quote = '', escape = '', nullstr = '', columns = {${cols}})`;
}
