/**
 * A property sale as published in `sales.parquet`: exact decimal price, a stable id per sale,
 * no line number and no Eircode hash (that one goes to the analytics stage's private copy only).
 *
 * The id is the sha256 of home, date and price and the occurrence number of that triple in read
 * order (`saleId`), so two identical sales get two ids and the same files always give the same
 * ids. Counting occurrences needs every sale seen so far (~800,000 keys at the default scale), so
 * the refresh stages each sale with its key and read position (`stagedSale`) and DuckDB numbers
 * them when it writes the table (`salesCopySql`): the same ids, in bounded memory.
 */
import { hash } from 'node:crypto';
import { sqlIdent, sqlString } from '../lib/duckdb.ts';
import type { SaleRow } from '../types.ts';
import { stagingSource, type TableSpec } from './tables.ts';

/** A sale as staged: its published fields but the id, with `_key` (home|date|price cents) and `_seq` (read order). */
export type StagedSale = Record<string, unknown> & { _key: string; _seq: number };

/** The id of the `occurrence`-th sale (1-based, in read order) whose key is `key`. */
export function saleId(key: string, occurrence: number): string {
  return hash('sha256', `${key}|${occurrence}`).slice(0, 16);
}

/** What a sale's id is made from: its home, date and exact price. */
export function saleKey(row: Pick<SaleRow, 'home_key' | 'date_of_sale' | 'price_cents'>): string {
  return `${row.home_key}|${row.date_of_sale}|${row.price_cents}`;
}

/** The sale as published, without its id (`salesCopySql` adds it), staged with its key and read position `seq`. */
export function stagedSale(row: SaleRow, seq: number): StagedSale {
  const { line: _l, price_cents, eircode_hash: _e, ...s } = row;
  const cents = String(price_cents).padStart(3, '0');
  return { _key: saleKey(row), _seq: seq, ...s, price_eur: Number(`${cents.slice(0, -2)}.${cents.slice(-2)}`) };
}

/** The published row of a staged sale given its id (what `salesCopySql` writes; tests and validation). */
export function publishedRow(staged: StagedSale, id: string): Record<string, unknown> {
  const { _key: _k, _seq: _s, ...s } = staged;
  return { sale_id: id, ...s };
}

/** The staged sales' columns, in order: the table's but the id, then `_key` and `_seq`. */
export function stagedSaleColumns(spec: TableSpec): [string, string][] {
  return [...spec.columns.filter(([n]) => n !== 'sale_id'), ['_key', 'VARCHAR'], ['_seq', 'BIGINT']];
}

/**
 * The statements that turn the staged sales (CSV of `stagedSaleColumns`) into `sales.parquet`:
 * each sale's id made as `saleId` does, its occurrence number counted in read order, then the
 * table's columns in its order. Only the keys that occur more than once are numbered by
 * `row_number()` (a small table, `repeated_sale`); every other sale is its key's first. Numbering
 * all of them in one window held every sale's row in DuckDB's memory at once: at 20× the default
 * data (16 million sales) it ran out of its 512 MB, where the aggregate, the join and the sort
 * spill to disk. Pure: SQL only.
 */
export function salesCopySql(spec: TableSpec, stagingPath: string, parquetPath: string): string[] {
  const source = stagingSource('csv', stagingPath, stagedSaleColumns(spec));
  const occurrence = `coalesce(repeated_sale.n, 1)`;
  const id = `substr(sha256(staged._key || '|' || CAST(${occurrence} AS VARCHAR)), 1, 16)`;
  const select = spec.columns.map(([n]) => (n === 'sale_id' ? `${id} AS sale_id` : `staged.${sqlIdent(n)}`)).join(', ');
  return [
    `CREATE OR REPLACE TABLE repeated_sale AS SELECT _seq, row_number() OVER (PARTITION BY _key ORDER BY _seq) AS n ` +
      `FROM ${source} WHERE _key IN (SELECT _key FROM ${source} GROUP BY _key HAVING count(*) > 1)`,
    `COPY (SELECT ${select} FROM ${source} AS staged LEFT JOIN repeated_sale USING (_seq) ORDER BY ${spec.orderBy}) ` +
      `TO ${sqlString(parquetPath)} (FORMAT PARQUET, COMPRESSION ZSTD, ROW_GROUP_SIZE ${spec.rowGroupRows ?? 100_000})`,
    `DROP TABLE repeated_sale`,
  ];
}
