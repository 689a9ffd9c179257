/** Sales as published: decimal prices, stable ids that tell identical sales apart, no internals. */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { join } from 'node:path';
import { openDb } from '../../../pipeline/lib/duckdb.ts';
import {
  publishedRow,
  saleId,
  saleKey,
  salesCopySql,
  stagedSale,
  stagedSaleColumns,
} from '../../../pipeline/release/published-sale.ts';
import { tableSpec } from '../../../pipeline/release/table-specs.ts';
import { openCsvTableSink } from '../../../pipeline/release/tables.ts';
import type { SaleRow } from '../../../pipeline/types.ts';
import { tempDir } from '../../helpers/tmp.ts';

const sale = (over: Partial<SaleRow> = {}): SaleRow => ({
  date_of_sale: '2026-03-01',
  address: '1 Main Street, Ennis',
  county: 'Clare',
  eircode_routing_key: 'V95',
  home_key: 'h1',
  eircode_hash: '0123456789abcdef',
  price_cents: 32_500_050,
  not_full_market_price: false,
  vat_exclusive: false,
  description: 'Second-Hand Dwelling house /Apartment',
  is_new_dwelling: false,
  property_size: null,
  line: 12,
  ...over,
});

test('price in euro with the cents exact, no line number or Eircode hash, id first', () => {
  const s = publishedRow(stagedSale(sale(), 0), saleId(saleKey(sale()), 1));
  assert.is(s['price_eur'], 325000.5);
  assert.is(Object.keys(s)[0], 'sale_id');
  assert.match(String(s['sale_id']), /^[0-9a-f]{16}$/);
  for (const k of ['line', 'eircode_hash', 'price_cents', '_key', '_seq']) assert.not.ok(k in s, k);
  assert.is(stagedSale(sale({ price_cents: 5 }), 0)['price_eur'], 0.05);
});

test('ids: the same sale gets the same id in every run; a second identical sale in one run gets another', () => {
  const key = saleKey(sale());
  assert.is(key, saleKey(sale({ line: 99 })), 'line numbers do not change the key');
  assert.is.not(saleId(key, 2), saleId(key, 1));
  assert.is.not(saleKey(sale({ price_cents: 32_500_051 })), key);
});

test('salesCopySql: DuckDB numbers each key in read order and makes the ids saleId makes', async () => {
  const dir = tempDir('published-sale');
  // three identical sales (read 1st, 4th and 5th), one other home, one other price of the same home
  const rows = [sale(), sale({ home_key: 'h2' }), sale({ price_cents: 1 }), sale({ line: 40 }), sale({ line: 41 })];
  const sink = openCsvTableSink(
    dir,
    'sales',
    stagedSaleColumns(tableSpec('sales')).map(([n]) => n),
  );
  rows.forEach((r, i) => sink.write(stagedSale(r, i)));
  sink.close();
  const staging = sink.path;
  const db = await openDb();
  try {
    const out = join(dir, 'sales.parquet');
    for (const sql of salesCopySql(tableSpec('sales'), staging, out)) await db.run(sql);
    const ids = (await db.all<{ sale_id: string }>(`SELECT sale_id FROM read_parquet('${out}')`)).map((r) => r.sale_id);
    const expected = [
      saleId(saleKey(rows[0]!), 1),
      saleId(saleKey(rows[1]!), 1),
      saleId(saleKey(rows[2]!), 1),
      saleId(saleKey(rows[3]!), 2),
      saleId(saleKey(rows[4]!), 3),
    ];
    assert.equal([...ids].sort(), [...expected].sort());
    const [cols] = await db.all<{ n: number }>(
      `SELECT count(*)::INT AS n FROM (DESCRIBE SELECT * FROM read_parquet('${out}')) WHERE column_name LIKE '\\_%' ESCAPE '\\'`,
    );
    assert.is(cols!.n, 0, 'no staging column reaches the table');
  } finally {
    db.close();
  }
});

test.run();
