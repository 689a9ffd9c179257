import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { join } from 'node:path';
import {
  copyToParquetSql,
  duckdbType,
  openCsvTableSink,
  writeTable,
  writeTableFromSink,
} from '../../../pipeline/release/tables.ts';
import { openDb } from '../../../pipeline/lib/duckdb.ts';
import { tempDir } from '../../helpers/tmp.ts';

const types: [object, string][] = [
  [{ type: 'integer' }, 'BIGINT'],
  [{ type: ['integer', 'null'] }, 'BIGINT'],
  [{ type: 'number' }, 'DOUBLE'],
  [{ type: 'number', multipleOf: 0.01 }, 'DECIMAL(14,2)'],
  [{ type: 'string', format: 'date' }, 'DATE'],
  [{ type: ['string', 'null'], format: 'date' }, 'DATE'],
  [{ type: 'string' }, 'VARCHAR'],
  [{ type: 'boolean' }, 'BOOLEAN'],
  [{ type: 'array', items: { type: 'string' } }, 'VARCHAR[]'],
  [{ enum: ['a', 'b', null] }, 'VARCHAR'],
];
for (const [schema, expected] of types) {
  test(`duckdbType ${JSON.stringify(schema)} → ${expected}`, () => assert.is(duckdbType(schema), expected));
}

test('copyToParquetSql quotes paths and identifiers and keeps column order', () => {
  const sql = copyToParquetSql(
    {
      name: 't',
      columns: [
        ['id', 'BIGINT'],
        ['table', 'VARCHAR'],
      ],
      orderBy: 'id',
      rowGroupRows: 10,
    },
    "/tmp/o'k.ndjson",
    '/tmp/t.parquet',
  );
  assert.match(sql, /SELECT "id", "table" FROM read_json\('\/tmp\/o''k\.ndjson'/);
  assert.match(sql, /columns = \{'id': 'BIGINT', 'table': 'VARCHAR'\}/);
  assert.match(sql, /ORDER BY id\) TO '\/tmp\/t\.parquet' \(FORMAT PARQUET, COMPRESSION ZSTD, ROW_GROUP_SIZE 10\)/);
});

test('writeTable round-trips exact decimals, dates, lists, nulls and accents through Parquet, sorted', async () => {
  const dir = tempDir();
  const db = await openDb();
  try {
    const n = await writeTable(
      db,
      dir,
      {
        name: 'sales',
        columns: [
          ['id', 'BIGINT'],
          ['price_eur', 'DECIMAL(14,2)'],
          ['d', 'DATE'],
          ['tags', 'VARCHAR[]'],
          ['address', 'VARCHAR'],
        ],
        orderBy: 'id DESC',
      },
      [
        { id: 1, price_eur: 458150.0, d: '2023-02-01', tags: ['a'], address: 'Dún Laoghaire' },
        { id: 2, price_eur: 1234567.89, d: null, tags: [], address: null },
      ],
    );
    assert.is(n, 2);
    const rows = await db.all(
      `SELECT id, price_eur::VARCHAR AS p, d, tags, address FROM read_parquet('${join(dir, 'sales.parquet')}')`,
    );
    assert.equal(rows, [
      { id: 2, p: '1234567.89', d: null, tags: [], address: null },
      { id: 1, p: '458150.00', d: '2023-02-01', tags: ['a'], address: 'Dún Laoghaire' },
    ]);
    const [meta] = await db.all<{ c: string }>(
      `SELECT compression AS c FROM parquet_metadata('${join(dir, 'sales.parquet')}') LIMIT 1`,
    );
    assert.is(meta!.c, 'ZSTD');
  } finally {
    db.close();
  }
});

test('a CSV staging file round-trips text with quotes, commas and line breaks, empty strings, nulls, booleans and numbers', async () => {
  const dir = tempDir('tables-csv');
  const spec = {
    name: 't',
    columns: [
      ['id', 'BIGINT'],
      ['text', 'VARCHAR'],
      ['flag', 'BOOLEAN'],
      ['price', 'DECIMAL(14,2)'],
      ['day', 'DATE'],
    ] as [string, string][],
    orderBy: 'id',
  };
  const rows = [
    { id: 1, text: 'Seán\'s "Yard", Unit 4\nRear', flag: true, price: 325000.5, day: '2026-03-01' },
    { id: 2, text: '', flag: false, price: 0.05, day: null },
    { id: 3, text: null, flag: false, price: 12, day: '2024-02-29' },
    { id: 4, text: 'tab\there, \r\n and a "', flag: true, price: 99999999.99, day: '1999-12-31' },
  ];
  const sink = openCsvTableSink(
    dir,
    't',
    spec.columns.map(([n]) => n),
  );
  for (const r of rows) sink.write(r);
  assert.is(sink.close(), 4);
  const db = await openDb();
  try {
    await writeTableFromSink(db, dir, spec, sink);
    const back = await db.all(
      `SELECT id, text, flag, price::DOUBLE AS price, day FROM read_parquet('${join(dir, 't.parquet')}') ORDER BY id`,
    );
    assert.equal(back, rows);
  } finally {
    db.close();
  }
  assert.throws(() => openCsvTableSink(dir, 'u', ['list']).write({ list: ['a'] }), /must be a scalar/);
});

test.run();
