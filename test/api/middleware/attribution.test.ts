/**
 * Attribution in every format (spec 1.5, issue 14.9), over real HTTP on the tiny release: a
 * commonwealth response carries `Link: <licence>; rel="license"` and `X-Attribution` whatever
 * its format (JSON, CSV, JSON Lines, Parquet, HEAD), JSON bodies `_meta.attribution`, and the
 * Parquet export its key-value metadata; the CSV and JSON Lines are unchanged for their parsers
 * (DuckDB's read_csv, JSON.parse per line, the row count of `X-Export-Rows`). Other scopes carry
 * none of it.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openApiDb, sqlString, type ApiDb } from '../../../api/duckdb/db.ts';
import { LEAD_COLUMNS } from '../../../api/query/leads-query.ts';
import { ATTRIBUTION, LICENCE_URL } from '../../../api/access/scopes.ts';
import { startTestApi, type TestApi } from '../../helpers/api.ts';
import { tempDir } from '../../helpers/tmp.ts';

let api: TestApi;
let db: ApiDb;
const tmp = tempDir('attribution-');
const LINK = `<${LICENCE_URL}>; rel="license"`;
const Q = 'county=Cork,Galway'; // well under the commonwealth daily budget

test.before(async () => {
  api = await startTestApi();
  db = await openApiDb({ connections: 1, threads: 1, memoryLimit: '256MB' });
});
test.after(async () => {
  db?.close();
  await api?.close();
});

/**
 * The licence link and attribution text of a response, or nulls. The `Link` header may list other
 * relations too (`rel="next"` on paged answers): only the licence relation is picked out.
 */
const carried = (h: Headers): [string | null, string | null] => [
  (h.get('link') ?? '').split(/,\s*(?=<)/).find((l) => /;\s*rel="license"/.test(l)) ?? null,
  h.get('x-attribution'),
];

test('commonwealth: every format carries the licence link and the attribution; the files still parse', async () => {
  const key = api.keys.commonwealth;
  const json = await api.request(`/v1/leads?${Q}&page_size=5`, { key });
  assert.is(json.status, 200);
  assert.equal(carried(json.headers), [LINK, ATTRIBUTION]);
  assert.is(json.body._meta.attribution, ATTRIBUTION);
  for (const path of ['/v1/meta', '/v1/infrastructure', `/v1/export/applications?${Q}&limit=5`]) {
    assert.equal(carried((await api.request(path, { key })).headers), [LINK, ATTRIBUTION], path);
  }

  const csv = await api.request(`/v1/export/applications.csv?${Q}`, { key });
  assert.is(csv.status, 200);
  assert.equal(carried(csv.headers), [LINK, ATTRIBUTION]);
  const rows = Number(csv.headers.get('x-export-rows'));
  assert.ok(rows > 10);
  assert.equal(csv.text.split('\r\n')[0]!.split(','), [...LEAD_COLUMNS], 'the first line is still the header');
  const csvFile = join(tmp, 'cw.csv');
  writeFileSync(csvFile, csv.text);
  const [c] = await db.all<{ n: number; ids: number }>(
    `SELECT count(*)::INT AS n, count(DISTINCT id)::INT AS ids FROM read_csv(${sqlString(csvFile)}, header = true, all_varchar = true)`,
  );
  assert.equal(c, { n: rows, ids: rows }, 'DuckDB reads exactly the rows announced');

  const jsonl = await api.request(`/v1/export/applications.jsonl?${Q}`, { key });
  assert.is(jsonl.status, 200);
  assert.equal(carried(jsonl.headers), [LINK, ATTRIBUTION]);
  const lines = jsonl.text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  assert.is(lines.length, rows);
  assert.ok(
    lines.every((l) => typeof l['id'] === 'number' && Object.keys(l).length === LEAD_COLUMNS.length),
    'every line a lead, nothing else',
  );

  const parquet = await fetch(`${api.baseUrl}/v1/export/applications.parquet?${Q}`, {
    headers: { Authorization: `Bearer ${key}` },
  });
  assert.is(parquet.status, 200);
  assert.equal(carried(parquet.headers), [LINK, ATTRIBUTION]);
  const pqFile = join(tmp, 'cw.parquet');
  writeFileSync(pqFile, Buffer.from(await parquet.arrayBuffer()));
  const kv = await db.all<{ k: string; v: string }>(
    `SELECT decode(key) AS k, decode(value) AS v FROM parquet_kv_metadata(${sqlString(pqFile)}) ORDER BY k`,
  );
  assert.equal(kv, [
    { k: 'attribution', v: ATTRIBUTION },
    { k: 'license', v: LICENCE_URL },
  ]);
  const [p] = await db.all<{ n: number }>(`SELECT count(*)::INT AS n FROM read_parquet(${sqlString(pqFile)})`);
  assert.is(p!.n, rows);

  const head = await api.request(`/v1/export/applications.csv?${Q}`, { key, method: 'HEAD' });
  assert.equal(carried(head.headers), [LINK, ATTRIBUTION], 'HEAD too');
});

test('other scopes: no licence link, no attribution header, no Parquet attribution metadata', async () => {
  for (const scope of ['ent_api', 'ent_feed', 'custom'] as const) {
    const key = api.keys[scope];
    for (const path of [
      `/v1/leads?${Q}&page_size=5`,
      `/v1/export/applications.csv?${Q}`,
      `/v1/export/applications.jsonl?${Q}`,
    ]) {
      const res = await api.request(path, { key });
      assert.is(res.status, 200, `${scope} ${path}`);
      assert.equal(carried(res.headers), [null, null], `${scope} ${path}`);
    }
  }
  const parquet = await fetch(`${api.baseUrl}/v1/export/applications.parquet?${Q}`, {
    headers: { Authorization: `Bearer ${api.keys.ent_api}` },
  });
  const file = join(tmp, 'ea.parquet');
  writeFileSync(file, Buffer.from(await parquet.arrayBuffer()));
  const kv = await db.all<{ k: string }>(`SELECT decode(key) AS k FROM parquet_kv_metadata(${sqlString(file)})`);
  assert.not.ok(
    kv.some((r) => r.k === 'attribution' || r.k === 'license'),
    JSON.stringify(kv),
  );
});

test.run();
