/**
 * Bulk exports over real HTTP on the tiny release: cursor pages walk the whole filtered set once
 * (count = /v1/leads total), CSV / JSON Lines / Parquet read back by DuckDB with the same rows,
 * enriched columns blank (not dropped) for commonwealth, gzip, download names, releases
 * published mid-export, expired cursors (410), budget refusal and accounting.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import http from 'node:http';
import { gunzipSync } from 'node:zlib';
import { cpSync, renameSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openApiDb, sqlString, type ApiDb } from '../../../api/duckdb/db.ts';
import { LEAD_COLUMNS } from '../../../api/query/leads-query.ts';
import { LEAD_COLUMN_KINDS } from '../../../api/query/export-query.ts';
import { enrichedFields } from '../../../api/access/masking.ts';
import { assertProblem, startTestApi, type TestApi } from '../../helpers/api.ts';
import { recordInManifest } from '../../helpers/manifest.ts';
import { generateKey } from '../../../api/access/keys.ts';
import { dailyRows } from '../../../api/access/limits.ts';
import type { Scope } from '../../../api/access/scopes.ts';
import { tempDir } from '../../helpers/tmp.ts';

let api: TestApi;
let db: ApiDb;
let tmp: string;
let leadsFile: string;

test.before(async () => {
  api = await startTestApi();
  db = await openApiDb({ connections: 1, threads: 1, memoryLimit: '256MB' });
  tmp = tempDir('leads-exports-');
  leadsFile = `read_parquet(${sqlString(join(api.dataDir, 'current', 'leads.parquet'))})`;
});
test.after(async () => {
  db.close();
  await api.close();
});

/** Walk every cursor page of an export; returns the records. */
async function walk(query: string, key: string, limit: number): Promise<{ rows: any[]; pages: number }> {
  const rows: any[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const res = await api.request(
      `/v1/export/applications?${query}&limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`,
      { key },
    );
    assert.is(res.status, 200, res.text.slice(0, 300));
    assert.is(res.body.count, res.body.results.length);
    assert.ok(res.body.count <= limit);
    rows.push(...res.body.results);
    cursor = res.body.next_cursor;
    pages++;
  } while (cursor);
  return { rows, pages };
}

/** Every column of the expected rows as text, the way the CSV writes it (for EXCEPT comparisons). */
function asText(masked: readonly string[]): string {
  return LEAD_COLUMNS.map((c) => {
    if (masked.includes(c)) return `NULL::VARCHAR AS "${c}"`;
    // an empty list is written "" (quoted: not NULL); DuckDB's reader reads that field back as NULL
    if (LEAD_COLUMN_KINDS[c] === 'list') return `nullif(array_to_string("${c}", ';'), '') AS "${c}"`;
    return `CAST("${c}" AS VARCHAR) AS "${c}"`;
  }).join(', ');
}

test('cursor export walks the whole filtered set once, in id order, with the count of /v1/leads', async () => {
  for (const q of ['county=Cork,Dublin', 'vertical=solar', 'min_value=1000000&scale=large,major', '']) {
    const total = (await api.request(`/v1/leads?${q}&page_size=1`)).body.total as number;
    const { rows, pages } = await walk(q, api.keys.ent_api, 37);
    assert.is(rows.length, total, `rows of ${q}`);
    assert.ok(total > 0, q);
    const ids = rows.map((r) => r.id);
    assert.is(new Set(ids).size, ids.length, 'no duplicates');
    assert.equal(
      ids,
      [...ids].sort((a, b) => a - b),
      'id order',
    );
    assert.is(pages, Math.max(1, Math.ceil(total / 37)));
  }
  // the records are the /v1/leads records
  const { rows } = await walk('county=Kerry', api.keys.ent_api, 1000);
  const list = (await api.request('/v1/leads?county=Kerry&page_size=100')).body.results as any[];
  for (const r of list)
    assert.equal(
      rows.find((x) => x.id === r.id),
      r,
    );
});

test('export pages: limit bounds, unknown and bad parameters, cursors bound to their filters', async () => {
  assertProblem(await api.request('/v1/export/applications?limit=0'), 400, 'invalid_parameter');
  assertProblem(await api.request('/v1/export/applications?limit=10001'), 400, 'invalid_parameter');
  const bad = await api.request('/v1/export/applications?page=2&sort=oldest&county=Atlantis');
  assertProblem(bad, 400, 'invalid_parameter');
  assert.equal(bad.body.errors.map((e: any) => e.name).sort(), ['county', 'page', 'sort']);
  assertProblem(await api.request('/v1/export/applications.csv?cursor=abc'), 400, 'unknown_parameter');
  const first = await api.request('/v1/export/applications?county=Cork&limit=5');
  const other = await api.request(`/v1/export/applications?county=Kerry&limit=5&cursor=${first.body.next_cursor}`);
  assertProblem(other, 400, 'invalid_parameter');
  assert.match(other.body.errors[0].reason, /other filters/);
  const def = await api.request('/v1/export/applications');
  assert.is(def.body.count, 1000, 'default limit 1000');
});

test('the received_date range and application_type filter exports as they filter /v1/leads', async () => {
  const q = 'application_type=permission,Retention&received_from=2024-01-01&received_to=2025-12-31';
  const [n] = await db.all<{ n: number }>(
    `SELECT count(*)::INT AS n FROM ${leadsFile} WHERE application_type IN ('PERMISSION', 'RETENTION') AND received_date BETWEEN DATE '2024-01-01' AND DATE '2025-12-31'`,
  );
  assert.ok(n!.n > 10);
  const key = await freshKey('ent_api'); // (a budget of its own: the files are charged)
  const csv = await api.request(`/v1/export/applications.csv?${q}`, { key });
  assert.is(csv.status, 200);
  assert.is(Number(csv.headers.get('x-export-rows')), n!.n);
  const { rows } = await walk(q, key, 10_000);
  assert.is(rows.length, n!.n);
  assert.ok(
    rows.every(
      (r: any) =>
        ['PERMISSION', 'RETENTION'].includes(r.application_type) &&
        r.received_date >= '2024-01-01' &&
        r.received_date <= '2025-12-31',
    ),
  );
  assert.is((await api.request(`/v1/leads?${q}&page_size=1`, { key })).body.total, n!.n);
  const bad = await api.request('/v1/export/applications?received_from=2025-06-02&received_to=2025-06-01', { key });
  assertProblem(bad, 400, 'invalid_parameter');
  assert.equal(bad.body.errors, [{ name: 'received_to', reason: 'must not be before received_from' }]);
});

test('CSV and JSON Lines stream the filtered set; DuckDB reads them back with the same rows', async () => {
  const q = 'county=Cork,Galway&min_units=1';
  for (const scope of ['commonwealth', 'ent_api'] as const) {
    const masked = scope === 'commonwealth' ? [...enrichedFields('lead')] : [];
    const csv = await api.request(`/v1/export/applications.csv?${q}`, { key: api.keys[scope] });
    assert.is(csv.status, 200);
    assert.match(csv.headers.get('content-type')!, /^text\/csv/);
    assert.is(csv.headers.get('content-disposition'), `attachment; filename="applications-${api.release()}.csv"`);
    assert.is(csv.headers.get('content-length'), null, 'streamed (chunked)');
    const [header] = csv.text.split('\r\n');
    assert.equal(header!.split(','), [...LEAD_COLUMNS], 'every column, enriched ones included');
    const emptyList = csv.text.split('\r\n').find((l) => /,"",/.test(l));
    assert.ok(emptyList !== undefined, 'a lead with an empty list (explicit_verticals) is exported with "" for it');
    const file = join(tmp, `${scope}.csv`);
    writeFileSync(file, csv.text);
    const expected = `SELECT ${asText(masked)} FROM ${leadsFile} WHERE county IN ('Cork', 'Galway') AND num_units >= 1`;
    const got = `SELECT * FROM read_csv(${sqlString(file)}, header = true, all_varchar = true)`;
    const [n] = await db.all<{ n: number }>(
      `SELECT count(*) AS n FROM read_csv(${sqlString(file)}, header = true, all_varchar = true)`,
    );
    assert.is(n!.n, Number(csv.headers.get('x-export-rows')));
    assert.ok(n!.n > 10);
    assert.equal(await db.all(`(${expected}) EXCEPT ALL (${got})`), [], `${scope}: every expected row is in the CSV`);
    assert.equal(await db.all(`(${got}) EXCEPT ALL (${expected})`), [], `${scope}: the CSV has no other row`);
    if (scope === 'commonwealth') {
      const [blank] = await db.all<{ n: number }>(
        `SELECT count(*) AS n FROM (${got}) WHERE applicant_org IS NOT NULL OR main_contractor IS NOT NULL`,
      );
      assert.is(blank!.n, 0, 'enriched columns blank for commonwealth');
    } else {
      const [seen] = await db.all<{ n: number }>(`SELECT count(*) AS n FROM (${got}) WHERE applicant_org IS NOT NULL`);
      assert.ok(seen!.n > 0, 'ent_api sees applicant organisations');
    }

    const jsonl = await api.request(`/v1/export/applications.jsonl?${q}`, { key: api.keys[scope] });
    assert.is(jsonl.status, 200);
    assert.match(jsonl.headers.get('content-type')!, /^application\/x-ndjson/);
    const lines = jsonl.text
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    const { rows } = await walk(q, api.keys[scope], 10_000);
    const byId = (a: any, b: any): number => a.id - b.id;
    assert.equal([...lines].sort(byId), rows, 'JSON Lines = the cursor export records');
    const fileOrder = (
      await db.all<{ id: number }>(`SELECT id FROM ${leadsFile} WHERE county IN ('Cork', 'Galway') AND num_units >= 1`)
    ).map((r) => r.id);
    assert.equal(
      lines.map((l) => l.id),
      fileOrder,
      'JSON Lines in the release order (newest first)',
    );
    const csvIds = csv.text
      .trimEnd()
      .split('\r\n')
      .slice(1)
      .map((l) => Number(l.split(',')[0]));
    assert.equal(csvIds, fileOrder, 'CSV in the release order (newest first)');
    for (const l of lines) for (const f of masked) assert.is(l[f], null);
    const jfile = join(tmp, `${scope}.jsonl`);
    writeFileSync(jfile, jsonl.text);
    const [j] = await db.all<{ n: number; ids: number }>(
      `SELECT count(*) AS n, count(DISTINCT id) AS ids FROM read_json(${sqlString(jfile)}, format = 'newline_delimited')`,
    );
    assert.equal(j, { n: lines.length, ids: lines.length });
  }
});

test('Parquet export reads back in DuckDB with the same rows and column types', async () => {
  const res = await fetch(`${api.baseUrl}/v1/export/applications.parquet?vertical=roofing`, {
    headers: { Authorization: `Bearer ${api.keys.commonwealth}` },
  });
  assert.is(res.status, 200);
  assert.is(res.headers.get('content-type'), 'application/vnd.apache.parquet');
  assert.match(res.headers.get('content-disposition')!, /filename="applications-\d{8}T\d{6}Z\.parquet"/);
  const bytes = Buffer.from(await res.arrayBuffer());
  assert.is(Number(res.headers.get('content-length')), bytes.length);
  const file = join(tmp, 'export.parquet');
  writeFileSync(file, bytes);
  const masked = [...enrichedFields('lead')];
  const cols = LEAD_COLUMNS.map((c) => (masked.includes(c) ? `NULL AS "${c}"` : `"${c}"`)).join(', ');
  const expected = `SELECT ${cols} FROM ${leadsFile} WHERE list_contains(verticals, 'roofing')`;
  const got = `SELECT * FROM read_parquet(${sqlString(file)})`;
  assert.equal(await db.all(`(${expected}) EXCEPT ALL (${got})`), []);
  assert.equal(await db.all(`(${got}) EXCEPT ALL (${expected})`), []);
  const types = await db.all<{ column_name: string; column_type: string }>(`DESCRIBE ${got}`);
  const source = await db.all<{ column_name: string; column_type: string }>(`DESCRIBE SELECT * FROM ${leadsFile}`);
  assert.equal(types, source, 'same columns and types (masked columns typed NULL)');
});

/** GET with Accept-Encoding: gzip over raw HTTP (fetch would decode it for us). */
function rawGet(
  path: string,
  headers: Record<string, string>,
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    http
      .get(api.baseUrl + path, { headers }, (res) => {
        const parts: Buffer[] = [];
        res.on('data', (d: Buffer) => parts.push(d));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(parts) }));
      })
      .on('error', reject);
  });
}

test('gzip when the client accepts it, still streamed; the same bytes decoded', async () => {
  const auth = { Authorization: `Bearer ${api.keys.ent_api}` };
  const plain = await rawGet('/v1/export/applications.jsonl', { ...auth, 'Accept-Encoding': 'identity' });
  const gz = await rawGet('/v1/export/applications.jsonl', { ...auth, 'Accept-Encoding': 'gzip, deflate' });
  assert.is(plain.headers['content-encoding'], undefined);
  assert.is(gz.headers['content-encoding'], 'gzip');
  assert.is(gz.headers['transfer-encoding'], 'chunked');
  assert.match(String(gz.headers['vary']), /Accept-Encoding/);
  assert.ok(gz.body.length < plain.body.length / 3, `${gz.body.length} vs ${plain.body.length}`);
  assert.ok(gunzipSync(gz.body).equals(plain.body));
});

/** A key of its own (a fresh daily budget) on a new account. */
async function freshKey(scope: Scope): Promise<string> {
  const account = await api.store.createAccount(`exports-${scope}-${Math.random().toString(36).slice(2)}`, 'premium');
  const k = generateKey(scope);
  await api.store.insertKey({
    id: k.id,
    account_id: account.id,
    scope,
    name: null,
    display_prefix: k.displayPrefix,
    hash: k.hash,
  });
  return k.raw;
}

test('HEAD and dry_run=1 quote a file without charging; a file is charged whole, up front; over budget → 429 before any byte; cursor pages charge their rows', async () => {
  const key = await freshKey('commonwealth');
  const limit = dailyRows('commonwealth')!;
  const total = (await api.request('/v1/leads?page_size=1', { key: api.keys.ent_feed })).body.total as number;
  const [{ n: cork } = { n: 0 }] = await db.all<{ n: number }>(
    `SELECT count(*) AS n FROM ${leadsFile} WHERE county = 'Cork'`,
  );
  assert.ok(total > limit && cork < limit / 2 && cork > 20, `the tiny release has ${total} leads, ${cork} in Cork`);
  const remaining = async (): Promise<number> =>
    (await api.request('/v1/export/applications.csv?county=Cork&dry_run=1', { key })).body.budget_remaining as number;

  const head = await api.request('/v1/export/applications.csv?county=Cork', { key, method: 'HEAD' });
  assert.is(head.status, 200);
  assert.is(head.text, '');
  assert.is(head.headers.get('x-export-rows'), String(cork));
  assert.is(head.headers.get('x-budget-cost'), String(cork), 'HEAD quotes the whole file');
  const quote = await api.request('/v1/export/applications.jsonl?county=Cork&dry_run=1', { key });
  assert.is(quote.status, 200);
  assert.equal([quote.body.rows, quote.body.budget_limit, quote.body.would_succeed], [cork, limit, true]);
  const before = quote.body.budget_remaining as number;
  assert.is(await remaining(), before, 'quotes charge nothing');

  // more than the whole daily budget: never retryable, so no 429 / Retry-After but how to narrow it
  const whole = await api.request('/v1/export/applications.csv', { key });
  assertProblem(whole, 403, 'budget_too_small');
  assert.is(whole.headers.get('retry-after'), null);
  assert.equal([whole.body.rows_requested, whole.body.budget_limit], [total, limit]);
  assert.ok(
    ['changed_since', '/v1/events', 'ent_feed'].every((w) => whole.body.narrow.join(' ').includes(w)),
    whole.body.narrow.join(' | '),
  );
  assert.match(whole.body.detail, String(limit.toLocaleString('en-IE')));
  assert.not.match(whole.text, /lead_key/, 'no CSV byte was sent');
  assert.is(await remaining(), before, 'a refused file charges nothing');

  const file = await api.request('/v1/export/applications.jsonl?county=Cork', { key });
  assert.is(file.status, 200);
  assert.is(file.text.trimEnd().split('\n').length, cork);
  assert.is(await remaining(), before - cork, 'the whole file charged once');

  const page = await api.request('/v1/export/applications?county=Cork&limit=20', { key });
  assert.is(page.body.count, 20);
  assert.is(await remaining(), before - cork - 20, 'a cursor page charges its rows');
  // spend down to fewer rows than a page: the next page is refused and charges nothing
  const left = before - cork - 20;
  const spend = await api.request(`/v1/export/applications?limit=${left - 5}`, { key });
  assert.is(spend.status, 200);
  const over = await api.request(`/v1/export/applications?county=Cork&limit=20&cursor=${page.body.next_cursor}`, {
    key,
  });
  assertProblem(over, 429, 'budget_exhausted');
  assert.is(await remaining(), 5);
});

test('a release published mid-export changes neither a cursor export nor a streaming file; a cursor of a release no longer kept → 410', async () => {
  const before = api.release();
  const expected = (await walk('', api.keys.ent_feed, 10_000)).rows.map((r) => r.id);
  const fileOrder = (await db.all<{ id: number }>(`SELECT id FROM ${leadsFile}`)).map((r) => r.id);
  const first = await api.request('/v1/export/applications?limit=100', { key: api.keys.ent_feed });
  // a streaming CSV started on the old release, read slowly
  const stream = await fetch(`${api.baseUrl}/v1/export/applications.csv`, {
    headers: { Authorization: `Bearer ${api.keys.ent_feed}` },
  });
  const reader = stream.body!.getReader();
  const head = await reader.read();
  // and a JSON Lines one (written by the old release's leads engine)
  const lines = await fetch(`${api.baseUrl}/v1/export/applications.jsonl`, {
    headers: { Authorization: `Bearer ${api.keys.ent_feed}`, 'Accept-Encoding': 'identity' },
  });
  const linesReader = lines.body!.getReader();
  const linesHead = await linesReader.read();

  // publish a new release without a third of the leads
  const next = '20261116T060000Z';
  const dir = join(api.dataDir, 'releases', next);
  cpSync(join(api.dataDir, 'releases', before), dir, { recursive: true, dereference: true });
  const file = join(dir, 'leads.parquet');
  await db.run(
    `COPY (SELECT * FROM read_parquet(${sqlString(file)}) WHERE id % 3 <> 0) TO ${sqlString(file + '.tmp')} (FORMAT PARQUET)`,
  );
  renameSync(file + '.tmp', file);
  recordInManifest(dir, 'leads.parquet');
  symlinkSync(`releases/${next}`, join(api.dataDir, '.current-next'));
  renameSync(join(api.dataDir, '.current-next'), join(api.dataDir, 'current')); // the pipeline's atomic switch
  await api.checkRelease();
  assert.is(api.release(), next);

  /** The text of a stream whose first chunk was read before the switch: that chunk and the rest. */
  const whole = async (
    first: { value?: Uint8Array },
    rest: { read(): Promise<{ done: boolean; value?: Uint8Array }> },
  ): Promise<string> => {
    const parts = [Buffer.from(first.value ?? new Uint8Array())];
    for (let r = await rest.read(); !r.done; r = await rest.read()) parts.push(Buffer.from(r.value!));
    return Buffer.concat(parts).toString('utf8');
  };
  const csvIds = (await whole(head, reader))
    .trimEnd()
    .split('\r\n')
    .slice(1)
    .map((l) => Number(l.split(',')[0]));
  assert.equal(csvIds, fileOrder, 'the streaming file is the old release, whole, in its order');
  const jsonlIds = (await whole(linesHead, linesReader))
    .trimEnd()
    .split('\n')
    .map((l) => (JSON.parse(l) as { id: number }).id);
  assert.equal(jsonlIds, fileOrder, 'the streaming JSON Lines are the old release, whole, in its order');

  const ids = first.body.results.map((r: any) => r.id);
  let cursor = first.body.next_cursor;
  while (cursor) {
    const res = await api.request(`/v1/export/applications?limit=100&cursor=${cursor}`, { key: api.keys.ent_feed });
    assert.is(res.status, 200);
    assert.is(res.body._meta.release, before, 'pages come from the release the export started on');
    ids.push(...res.body.results.map((r: any) => r.id));
    cursor = res.body.next_cursor;
  }
  assert.equal(ids, expected);
  const fresh = (await walk('', api.keys.ent_feed, 10_000)).rows;
  assert.is(fresh.length, expected.filter((id) => id % 3 !== 0).length, 'a new export runs on the new release');

  // the old release is removed by retention: its cursors expire
  unlinkSync(join(api.dataDir, 'releases', before));
  const gone = await api.request(`/v1/export/applications?limit=100&cursor=${first.body.next_cursor}`, {
    key: api.keys.ent_feed,
  });
  assertProblem(gone, 410, 'cursor_expired');
  assert.match(gone.body.detail, new RegExp(`release ${before}.*no longer kept.*start the export again`));
  rmSync(join(api.dataDir, 'releases', next), { recursive: true, force: true });
});

test.run();
