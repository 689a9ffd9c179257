/**
 * The release's row store (`buildRowStore`): every lead of the tiny release round-trips to the
 * same values `ApiDb.all` reads from DuckDB, in `LEAD_COLUMNS` order; unknown ids give null.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { join } from 'node:path';
import { openApiDb, sqlString, type ApiDb } from '../../api/db.ts';
import { LEAD_COLUMNS } from '../../api/query/leads-query.ts';
import { buildRowStore, type RowStore } from '../../api/release.ts';
import { tinyRelease } from '../helpers/api.ts';

let db: ApiDb;
let store: RowStore;
let expected: Record<string, unknown>[];

test.before(async () => {
  const rel = await tinyRelease();
  db = await openApiDb({ connections: 1, threads: 1, memoryLimit: '128MB' });
  await db.run(`CREATE TABLE leads AS SELECT * FROM read_parquet(${sqlString(join(rel.dir, 'leads.parquet'))})`);
  store = await buildRowStore(db, 'leads');
  expected = await db.all(`SELECT ${LEAD_COLUMNS.join(', ')} FROM leads`);
});
test.after(() => db.close());

test('every lead round-trips: same values and column order as the DuckDB row', () => {
  assert.ok(expected.length > 100, 'several compressed blocks');
  assert.is(store.size, expected.length);
  assert.ok(store.bytes > 0 && store.bytes < expected.length * 1024, `compressed: ${store.bytes} bytes`);
  for (const row of expected) {
    const got = store.get(row['id'] as number);
    assert.equal(got, row);
    assert.equal(Object.keys(got!), [...LEAD_COLUMNS]);
  }
  assert.ok(expected.some((r) => Array.isArray(r['verticals']) && (r['verticals'] as unknown[]).length > 0), 'lists are covered');
  assert.ok(expected.some((r) => typeof r['received_date'] === 'string'), 'dates are covered');
});

test('getMany keeps the order asked for, repeats included; unknown ids give null', () => {
  const ids = [expected.at(-1)!['id'], expected[0]!['id'], expected[57]!['id'], expected[0]!['id']] as number[];
  assert.equal(store.getMany(ids), [expected.at(-1), expected[0], expected[57], expected[0]]);
  const maxId = Math.max(...expected.map((r) => r['id'] as number));
  assert.is(store.get(maxId + 1), null);
  assert.is(store.get(-1), null);
  assert.is(store.get(1.5), null);
  assert.equal(store.getMany([maxId + 1, ids[0]!]), [null, expected.at(-1)]);
});

test('rows are fresh objects: changing one does not change the store', () => {
  const id = expected[3]!['id'] as number;
  const a = store.get(id)!;
  a['description'] = 'changed';
  assert.equal(store.get(id), expected[3]);
});

test.run();
