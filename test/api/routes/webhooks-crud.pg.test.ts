/**
 * `PATCH` and `DELETE /v1/webhooks/{id}`, `Idempotency-Key` on `POST /v1/webhooks` and the
 * `Location` it names, over real HTTP on both state stores: a real SQLite file (PUBLIC_BASE_URL
 * left unset: `Location` is under the request's origin) and the local PostgreSQL server (a schema
 * of its own, PUBLIC_BASE_URL set: `Location` is under it). Every documented answer is validated
 * against the OpenAPI document by the test helper.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { API_DEFAULTS } from '../../../api/config.ts';
import { IDEMPOTENCY_TTL_MS } from '../../../api/middleware/idempotency-key.ts';
import { addKey, assertProblem, startTestApi, type TestApi } from '../../helpers/api.ts';
import { pgSchemaUrl, TEST_PG_URL } from '../../helpers/store-backends.ts';

interface Backend {
  name: string;
  /** Config of the server: its store and its PUBLIC_BASE_URL. */
  config: () => { databaseUrl?: string; publicBaseUrl: string };
  /** The origin-and-/v1 `Location` must start with, given the server. */
  base: (api: TestApi) => string;
  cleanup: () => Promise<void>;
}

const sqlite: Backend = {
  name: 'sqlite',
  config: () => ({ publicBaseUrl: API_DEFAULTS.publicBaseUrl.value }), // unset: the default
  base: (api) => `${api.baseUrl}/v1`,
  cleanup: async () => {},
};

const schema = `webhooks_crud_${randomBytes(4).toString('hex')}`;
const postgres: Backend = {
  name: 'postgres',
  config: () => ({ databaseUrl: pgSchemaUrl(schema), publicBaseUrl: 'https://api.example.ie/v1' }),
  base: () => 'https://api.example.ie/v1',
  async cleanup() {
    const admin = new pg.Client({ connectionString: TEST_PG_URL });
    await admin.connect();
    await admin.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(schema)} CASCADE`);
    await admin.end();
  },
};

for (const backend of [sqlite, postgres]) {
  const test = suite(`webhooks CRUD on ${backend.name}`);
  let api: TestApi;
  let otherKey: string;
  let now = new Date('2026-11-20T10:00:00Z');

  test.before(async () => {
    api = await startTestApi({ config: { webhookAllowHosts: ['127.0.0.1'], ...backend.config() }, clock: () => now });
    const other = await api.store.createAccount('other', 'premium');
    const k = await addKey(api.store, other.id, 'ent_api');
    otherKey = k.raw;
  });
  test.after(async () => {
    await api?.close();
    await backend.cleanup();
  });

  const send = (
    method: string,
    path: string,
    body?: unknown,
    o: { key?: string; headers?: Record<string, string> } = {},
  ) =>
    api.request(path, {
      method,
      ...(body !== undefined ? { body } : {}),
      ...(o.key ? { key: o.key } : {}),
      ...(o.headers ? { headers: o.headers } : {}),
    });
  const create = async (body: Record<string, unknown> = { url: 'https://127.0.0.1:9/hook' }, key?: string) => {
    const res = await send('POST', '/v1/webhooks', body, key ? { key } : {});
    assert.is(res.status, 201, res.text);
    return res.body as { id: string; secret: string } & Record<string, unknown>;
  };
  const ids = async (key?: string): Promise<string[]> =>
    (await api.request('/v1/webhooks', key ? { key } : {})).body.results.map((w: { id: string }) => w.id);

  test("Location names the webhook under PUBLIC_BASE_URL, or the request's origin when it is unset", async () => {
    const res = await send('POST', '/v1/webhooks', { url: 'https://127.0.0.1:9/located' });
    assert.is(res.status, 201, res.text);
    assert.is(res.headers.get('location'), `${backend.base(api)}/webhooks/${res.body.id}`);
    assert.not.match(res.headers.get('location')!, /localhost:8080/);
  });

  test('PATCH changes the members given, checked as on creation; the others stay', async () => {
    const w = await create({ url: 'https://127.0.0.1:9/a', filter: 'county=cork', description: 'first' });
    const res = await send('PATCH', `/v1/webhooks/${w.id}`, {
      filter: 'vertical=solar&county=galway',
      types: ['lead.new', 'lead.removed'],
    });
    assert.is(res.status, 200, res.text);
    assert.equal(
      [res.body.filter, res.body.types, res.body.url, res.body.description],
      ['vertical=solar&county=Galway', ['lead.new', 'lead.removed'], 'https://127.0.0.1:9/a', 'first'],
    );
    assert.is(res.headers.get('cache-control'), 'no-store');
    assert.not.ok('secret' in res.body, 'never the secret');
    const moved = await send('PATCH', `/v1/webhooks/${w.id}`, {
      url: 'https://127.0.0.1:9/b',
      description: null,
      status: 'disabled',
    });
    assert.is(moved.status, 200, moved.text);
    assert.equal(
      [moved.body.url, moved.body.description, moved.body.status, moved.body.filter],
      ['https://127.0.0.1:9/b', null, 'disabled', 'vertical=solar&county=Galway'],
    );
    assert.match(moved.body.disabled_reason, /disabled by its owner/);
    assert.equal((await api.request(`/v1/webhooks/${w.id}`)).body, moved.body, 'GET shows the change');
    const back = await send('PATCH', `/v1/webhooks/${w.id}`, { status: 'active' });
    assert.equal([back.body.status, back.body.disabled_reason], ['active', null]);
    assert.equal(back.body.watermark, w['watermark'], 'the watermarks stay');
  });

  test('PATCH refuses what POST refuses, every bad member named; unknown members and an empty body are 400', async () => {
    const w = await create();
    const query = 'county=Atlantis&min_value=abc';
    const leads = await api.request(`/v1/leads?${query}`);
    const badFilter = await send('PATCH', `/v1/webhooks/${w.id}`, { filter: query });
    assertProblem(badFilter, 400, leads.body.code);
    assert.equal(badFilter.body.errors, leads.body.errors, 'the same problems as /v1/leads');
    const bad = await send('PATCH', `/v1/webhooks/${w.id}`, {
      url: 'https://10.1.2.3/hook',
      types: ['lead.created'],
      status: 'paused',
      description: 7,
    });
    assertProblem(bad, 400, 'invalid_parameter');
    assert.equal(bad.body.errors.map((e: { name: string }) => e.name).sort(), [
      'description',
      'status',
      'types',
      'url',
    ]);
    assertProblem(await send('PATCH', `/v1/webhooks/${w.id}`, { colour: 'red' }), 400, 'unknown_parameter');
    assertProblem(await send('PATCH', `/v1/webhooks/${w.id}`, { secret: 'whsec_x' }), 400, 'unknown_parameter');
    assertProblem(await send('PATCH', `/v1/webhooks/${w.id}`, {}), 400, 'invalid_body');
    assertProblem(await send('PATCH', `/v1/webhooks/${w.id}?x=1`, { status: 'active' }), 400, 'unknown_parameter');
    const unchanged = await api.request(`/v1/webhooks/${w.id}`);
    assert.equal(
      [unchanged.body.url, unchanged.body.filter, unchanged.body.types, unchanged.body.status],
      [w['url'], '', ['lead.new'], 'active'],
      'nothing was written',
    );
  });

  test("PATCH and DELETE are scoped to the key's account (another account's webhook is a 404) and need the webhooks capability", async () => {
    const w = await create();
    assertProblem(
      await send('PATCH', `/v1/webhooks/${w.id}`, { status: 'disabled' }, { key: otherKey }),
      404,
      'not_found',
    );
    assertProblem(await send('DELETE', `/v1/webhooks/${w.id}`, undefined, { key: otherKey }), 404, 'not_found');
    const forbidden = await send('DELETE', `/v1/webhooks/${w.id}`, undefined, { key: api.keys.commonwealth });
    assertProblem(forbidden, 403, 'insufficient_scope');
    assertProblem(
      await send('PATCH', `/v1/webhooks/${w.id}`, { status: 'disabled' }, { key: api.keys.commonwealth }),
      403,
      'insufficient_scope',
    );
    assert.is((await api.request(`/v1/webhooks/${w.id}`)).body.status, 'active', 'untouched');
    assertProblem(await send('PATCH', '/v1/webhooks/wh_0000000000000000', { status: 'disabled' }), 404, 'not_found');
  });

  test('dry_run=1 on a change answers a quote and changes nothing', async () => {
    const w = await create();
    const before = (await ids()).length;
    for (const [method, path, body] of [
      ['DELETE', `/v1/webhooks/${w.id}?dry_run=1`, undefined],
      ['PATCH', `/v1/webhooks/${w.id}?dry_run=1`, { status: 'disabled' }],
      ['POST', '/v1/webhooks?dry_run=1', { url: 'https://127.0.0.1:9/dry' }],
    ] as const) {
      const res = await send(method, path, body);
      assert.is(res.status, 200, `${method} ${path}: ${res.text}`);
      assert.is(res.body.dry_run, true);
      assert.is(res.body.rows, 0);
    }
    assert.is((await api.request(`/v1/webhooks/${w.id}`)).body.status, 'active');
    assert.is((await ids()).length, before, 'nothing created or deleted');
  });

  test('DELETE → 204 without a body; then GET, its delivery log and a second DELETE are 404', async () => {
    const w = await create();
    const keep = await create();
    const res = await send('DELETE', `/v1/webhooks/${w.id}`);
    assert.is(res.status, 204, res.text);
    assert.is(res.text, '');
    assertProblem(await api.request(`/v1/webhooks/${w.id}`), 404, 'not_found');
    assertProblem(await api.request(`/v1/webhooks/${w.id}/deliveries`), 404, 'not_found');
    assertProblem(await send('DELETE', `/v1/webhooks/${w.id}`), 404, 'not_found');
    const listed = await ids();
    assert.not.ok(listed.includes(w.id));
    assert.ok(listed.includes(keep.id), 'only that one');
    assert.is(await api.store.webhooks.getWebhook(w.id), null, 'gone from the store');
  });

  test('Idempotency-Key: a retry gets the first answer, no second webhook; another body is 422; other accounts have their own keys', async () => {
    const key = `retry-${backend.name}-1`;
    const body = { url: 'https://127.0.0.1:9/idem', filter: 'county=cork', description: 'once' };
    const before = (await ids()).length;
    const first = await send('POST', '/v1/webhooks', body, { headers: { 'Idempotency-Key': key } });
    assert.is(first.status, 201, first.text);
    assert.is(first.headers.get('idempotent-replayed'), null);
    const again = await send(
      'POST',
      '/v1/webhooks',
      { description: 'once', filter: 'county=cork', url: 'https://127.0.0.1:9/idem' },
      { headers: { 'Idempotency-Key': key } },
    );
    assert.is(again.status, 201, again.text);
    assert.is(again.headers.get('idempotent-replayed'), 'true');
    assert.equal(again.body, first.body, 'the same webhook and secret');
    assert.is(again.headers.get('location'), first.headers.get('location'));
    assert.is((await ids()).length, before + 1, 'one webhook');
    const reused = await send(
      'POST',
      '/v1/webhooks',
      { ...body, description: 'twice' },
      { headers: { 'Idempotency-Key': key } },
    );
    assertProblem(reused, 422, 'idempotency_key_reused');
    assert.is((await ids()).length, before + 1);
    const theirs = await send('POST', '/v1/webhooks', body, { key: otherKey, headers: { 'Idempotency-Key': key } });
    assert.is(theirs.status, 201, theirs.text);
    assert.is(theirs.headers.get('idempotent-replayed'), null, 'keys are per account');
    assert.is.not(theirs.body.id, first.body.id);
    // another scope of the same account with the same key and body is another request
    const custom = await send('POST', '/v1/webhooks', body, {
      key: api.keys.custom,
      headers: { 'Idempotency-Key': key },
    });
    assertProblem(custom, 422, 'idempotency_key_reused');
  });

  test('Idempotency-Key: a failed request is not remembered; malformed keys are 400 naming the header', async () => {
    const key = `retry-${backend.name}-2`;
    const bad = await send(
      'POST',
      '/v1/webhooks',
      { url: 'https://10.0.0.1/x' },
      { headers: { 'Idempotency-Key': key } },
    );
    assertProblem(bad, 400, 'invalid_parameter');
    const fixed = await send(
      'POST',
      '/v1/webhooks',
      { url: 'https://127.0.0.1:9/fixed' },
      { headers: { 'Idempotency-Key': key } },
    );
    assert.is(fixed.status, 201, fixed.text);
    assert.is(fixed.headers.get('idempotent-replayed'), null);
    for (const v of ['x'.repeat(256), 'caf\u00e9', '   ']) {
      const res = await send(
        'POST',
        '/v1/webhooks',
        { url: 'https://127.0.0.1:9/m' },
        { headers: { 'Idempotency-Key': v } },
      );
      assertProblem(res, 400, 'invalid_parameter');
      assert.equal(
        res.body.errors.map((e: { name: string }) => e.name),
        ['Idempotency-Key'],
      );
    }
  });

  test('Idempotency-Key: concurrent requests with one key make one webhook; the others wait (409) or get its answer', async () => {
    const key = `race-${backend.name}`;
    const before = (await ids()).length;
    const body = { url: 'https://127.0.0.1:9/race' };
    const answers = await Promise.all(
      Array.from({ length: 8 }, () => send('POST', '/v1/webhooks', body, { headers: { 'Idempotency-Key': key } })),
    );
    const created = answers.filter((r) => r.status === 201);
    assert.ok(created.length >= 1, answers.map((r) => r.status).join(' '));
    assert.is(new Set(created.map((r) => r.body.id)).size, 1, 'one webhook id in every 201');
    assert.is(created.filter((r) => r.headers.get('idempotent-replayed') === null).length, 1, 'one of them made it');
    for (const r of answers.filter((x) => x.status !== 201)) assertProblem(r, 409, 'idempotency_key_in_use');
    assert.is((await ids()).length, before + 1);
    const late = await send('POST', '/v1/webhooks', body, { headers: { 'Idempotency-Key': key } });
    assert.equal(
      [late.status, late.body.id, late.headers.get('idempotent-replayed')],
      [201, created[0]!.body.id, 'true'],
    );
  });

  test('Idempotency-Key: forgotten after 24 hours (the same key then creates anew)', async () => {
    const key = `ttl-${backend.name}`;
    const body = { url: 'https://127.0.0.1:9/ttl' };
    const first = await send('POST', '/v1/webhooks', body, { headers: { 'Idempotency-Key': key } });
    now = new Date(now.getTime() + IDEMPOTENCY_TTL_MS - 1000);
    assert.is(
      (await send('POST', '/v1/webhooks', body, { headers: { 'Idempotency-Key': key } })).body.id,
      first.body.id,
      'still remembered just before',
    );
    now = new Date(now.getTime() + 2000);
    const later = await send('POST', '/v1/webhooks', body, { headers: { 'Idempotency-Key': key } });
    assert.is(later.status, 201, later.text);
    assert.is(later.headers.get('idempotent-replayed'), null);
    assert.is.not(later.body.id, first.body.id);
  });

  test.run();
}
