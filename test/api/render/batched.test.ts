/** Whole-export batching: id ranges cover the filtered set exactly once, in id order, for any batch size. */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { openApiDb } from '../../../api/db.ts';
import { batchedRows } from '../../../api/render/batched.ts';

test('batches of any size give every filtered row once, in id order', async () => {
  const db = await openApiDb({ connections: 1, threads: 1, memoryLimit: '64MB' });
  try {
    // ids shuffled in storage order, like the release's date-ordered leads table
    await db.run(`CREATE TABLE leads AS SELECT (i * 7919) % 1009 + 1 AS id, CASE WHEN i % 3 = 0 THEN 'Cork' ELSE 'Kerry' END AS county FROM range(1009) t(i)`);
    const src = { leads: 'leads', search: null };
    const expected = (await db.all<{ id: number }>(`SELECT id FROM leads WHERE county = 'Cork' ORDER BY id`)).map((r) => r.id);
    assert.ok(expected.length > 300);
    for (const batch of [1, 7, 100, 336, 337, 10_000]) {
      const got: number[] = [];
      for await (const cols of batchedRows(db, src, { filters: { county: ['Cork'] }, afterId: null, limit: null }, `CAST(l.id AS VARCHAR)`, batch)) {
        got.push(...(cols[0] as string[]).map(Number));
      }
      assert.equal(got, expected, `batch ${batch}`);
    }
  } finally {
    db.close();
  }
});

test.run();
