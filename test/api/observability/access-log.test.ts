/**
 * The structured access log (api/middleware/access-log.ts, api/observability/log.ts): one JSON
 * line per request with the request id, method, route template, status, duration, key id,
 * account, rows charged and bytes — and the redaction test: requests carrying API keys (valid,
 * unknown, in the header and in the query string), a GIS `access_token`, a paging cursor, a
 * person's name in `q`, and the creation of a webhook (whose secret is answered once) — then
 * every captured log line is searched for each of those values: none may appear.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { createLogger } from '../../../api/observability/log.ts';
import type { NameTruthFile } from '../../../pipeline/synth/truth.ts';
import { startTestApi, tinyRelease, type TestApi, type TestResponse } from '../../helpers/api.ts';
import { waitUntil } from '../../helpers/wait.ts';

let api: TestApi;
test.before(async () => {
  api = await startTestApi({ config: { webhookAllowHosts: ['127.0.0.1'] } });
});
test.after(async () => {
  await api?.close();
});

interface AccessEntry {
  level: string;
  time: string;
  msg: string;
  request_id: string;
  method: string;
  route: string;
  status: number;
  duration_ms: number;
  key_id: string | null;
  account_id: number | null;
  rows: number;
  bytes: number | null;
  problem?: string;
}

/** The access log entry of a response (waits until it is written: entries are written once the response is done). */
async function entryOf(res: TestResponse): Promise<AccessEntry> {
  const id = res.headers.get('x-request-id')!;
  let found: AccessEntry | undefined;
  await waitUntil(`the access log line of ${id}`, () => {
    for (const l of api.logs) {
      if (!l.startsWith('{')) continue;
      const e = JSON.parse(l) as AccessEntry;
      if (e.msg === 'request' && e.request_id === id) found = e;
    }
    return found !== undefined;
  });
  return found!;
}

test('one JSON line per request: request id, method, route template, status, duration, key id, account, rows, bytes', async () => {
  const keys = await api.store.listKeys();
  const entApi = keys.find((k) => k.scope === 'ent_api')!;
  // identity: `bytes` is what went on the wire (a compressed answer logs its encoded length)
  const res = await api.request('/v1/leads?page_size=3&county=Cork', { headers: { 'Accept-Encoding': 'identity' } });
  assert.is(res.status, 200);
  const e = await entryOf(res);
  assert.equal(
    {
      level: e.level,
      method: e.method,
      route: e.route,
      status: e.status,
      key_id: e.key_id,
      account_id: e.account_id,
      rows: e.rows,
      bytes: e.bytes,
    },
    {
      level: 'info',
      method: 'GET',
      route: 'GET /v1/leads',
      status: 200,
      key_id: entApi.id,
      account_id: entApi.account_id,
      rows: res.body.results.length,
      bytes: Buffer.byteLength(res.text),
    },
  );
  assert.match(e.time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  assert.type(e.duration_ms, 'number');
  assert.ok(e.duration_ms >= 0);
  assert.not.ok('problem' in e);
  const gz = await api.request('/v1/leads?page_size=50', { headers: { 'Accept-Encoding': 'gzip' } });
  const logged = (await entryOf(gz)).bytes!;
  assert.ok(
    logged > 0 && logged * 3 < Buffer.byteLength(gz.text),
    `a gzipped answer logs its ${logged} encoded bytes, not ${Buffer.byteLength(gz.text)}`,
  );

  const detail = await api.request(`/v1/leads/${res.body.results[0].id}`);
  assert.equal(
    [(await entryOf(detail)).route, (await entryOf(detail)).rows],
    ['GET /v1/leads/{id}', 1],
    'the template, not the id',
  );

  const bad = await api.request('/v1/meta', { key: null });
  const b = await entryOf(bad);
  assert.equal(
    { status: b.status, key_id: b.key_id, account_id: b.account_id, rows: b.rows, problem: b.problem },
    { status: 401, key_id: null, account_id: null, rows: 0, problem: 'missing_key' },
  );

  const health = await entryOf(await api.request('/healthz', { key: null }));
  assert.equal([health.route, health.status], ['GET /healthz', 200]);
});

test("redaction: no key, GIS token, webhook secret, cursor or person's name reaches the log", async () => {
  const truth = JSON.parse(readFileSync((await tinyRelease()).truthFile, 'utf8')) as NameTruthFile;
  const person = truth.individuals[0]!;
  const unknownKey = 'lk_ea_' + 'Z'.repeat(43);
  const responses: TestResponse[] = [];
  const call = async (path: string, opts: Parameters<TestApi['request']>[1] = {}): Promise<TestResponse> => {
    const res = await api.request(path, opts);
    responses.push(res);
    return res;
  };

  // keys: every scope's, in the header; one in the query string; an unknown one
  for (const key of Object.values(api.keys)) assert.is((await call('/v1/meta', { key })).status, 200);
  await call(`/v1/meta?api_key=${api.keys.custom}`, { key: null });
  assert.is((await call('/v1/meta', { key: unknownKey })).status, 401);
  // a GIS token, minted and used in the query string
  const minted = await call('/v1/feeds/token?ttl=3600', { key: api.keys.ent_feed });
  const token: string = minted.body.access_token;
  assert.match(token, /^gt_/);
  const gis = await call(`/v1/ogc/collections/leads/items?limit=2&access_token=${encodeURIComponent(token)}`, {
    key: null,
  });
  assert.is(gis.status, 200);
  // a webhook: its secret is answered once
  const created = await call('/v1/webhooks', {
    method: 'POST',
    body: { url: 'http://127.0.0.1:9/hook', filter: 'county=Cork' },
  });
  assert.is(created.status, 201, created.text);
  const secret: string = created.body.secret;
  assert.match(secret, /^whsec_/);
  const rotated = await call(`/v1/webhooks/${created.body.id}/rotate-secret`, { method: 'POST', body: {} });
  assert.is(rotated.status, 200, rotated.text);
  assert.match(rotated.body.secret, /^whsec_/);
  const secrets = [secret, rotated.body.secret as string];
  // a paging cursor, sent back
  const page = await call('/v1/leads?page_size=2');
  const cursor: string = page.body.next_cursor;
  assert.ok(cursor, 'the first page has a next_cursor');
  assert.is((await call(`/v1/leads?page_size=2&cursor=${encodeURIComponent(cursor)}`)).status, 200);
  // a person's name searched for
  await call(`/v1/leads?q=${encodeURIComponent(person)}`);

  for (const r of responses) await entryOf(r); // every request has been logged
  const secretValues: [string, string][] = [
    ...Object.entries(api.keys).map(([scope, k]): [string, string] => [`${scope} key`, k]),
    ['unknown key', unknownKey],
    ['GIS access_token', token],
    ...secrets.map((s, i): [string, string] => [`webhook secret ${i}`, s]),
    ['cursor', cursor],
    ["a person's name", person],
  ];
  const g = await entryOf(gis);
  assert.equal(
    [g.route, g.key_id],
    [
      'GET /v1/ogc/collections/{collectionId}/items',
      (await api.store.listKeys()).find((k) => k.scope === 'ent_feed')!.id,
    ],
    'the GIS request: its template, the key behind the token',
  );
  const log = api.logs.join('\n');
  for (const [what, value] of secretValues) {
    assert.ok(value.length >= 8, `${what} is a real value`);
    assert.not.ok(log.includes(value), `${what} reached the log`);
    assert.not.ok(log.includes(encodeURIComponent(value)), `${what} (URL-encoded) reached the log`);
  }
  assert.not.match(log, /Bearer /i, 'no Authorization header');
  assert.not.match(log, /access_token=|api_key=|cursor=/, 'no query string');
});

test('the logger blanks secret-named fields whatever logs them, and honours LOG_LEVEL', () => {
  const lines: string[] = [];
  const logger = createLogger('info', (l) => lines.push(l));
  logger.info(
    { authorization: 'Bearer lk_ea_x', webhook: { secret: 'whsec_x', id: 'wh_1' }, access_token: 'gt_x' },
    'oops',
  );
  logger.debug('not at info');
  assert.is(lines.length, 1);
  const e = JSON.parse(lines[0]!);
  assert.equal(
    [e.authorization, e.webhook.secret, e.webhook.id, e.access_token, e.msg, e.level],
    ['[redacted]', '[redacted]', 'wh_1', '[redacted]', 'oops', 'info'],
  );
  const quiet: string[] = [];
  createLogger('warn', (l) => quiet.push(l)).info('dropped');
  assert.is(quiet.length, 0);
});

test.run();
