/**
 * `/v1/webhooks` over real HTTP (every documented answer is validated against the OpenAPI
 * document by the test helper), delivering to a real receiver on loopback.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createHmac } from 'node:crypto';
import { addKey, assertProblem, startTestApi, type TestApi } from '../../helpers/api.ts';
import { startReceiver, type Receiver } from '../../helpers/webhook-receiver.ts';
import { DELIVERY_STATUSES } from '../../../api/state/webhook-interface.ts';
import { DELIVERIES_QUERY_SCHEMA } from '../../../api/webhooks/service.ts';

let api: TestApi;
let rx: Receiver;
let otherKey: string;

test.before(async () => {
  api = await startTestApi({ config: { webhookAllowHosts: ['127.0.0.1'] } });
  rx = await startReceiver();
  const other = await api.store.createAccount('other', 'premium');
  const k = await addKey(api.store, other.id, 'ent_api');
  otherKey = k.raw;
});
test.after(async () => {
  await rx?.close();
  await api?.close();
});

const post = (path: string, body?: unknown, key?: string) =>
  api.request(path, { method: 'POST', ...(body !== undefined ? { body } : {}), ...(key ? { key } : {}) });

test("commonwealth keys get 403 naming the scopes that have webhooks on every change; they may read the account's webhooks", async () => {
  for (const [method, path] of [
    ['POST', '/v1/webhooks'],
    ['POST', '/v1/webhooks/wh_0000000000000000/test'],
    ['POST', '/v1/webhooks/wh_0000000000000000/enable'],
  ] as const) {
    const res = await api.request(path, {
      method,
      key: api.keys.commonwealth,
      ...(path === '/v1/webhooks' ? { body: { url: rx.url('/x') } } : {}),
    });
    assertProblem(res, 403, 'insufficient_scope');
    assert.match(res.body.detail, /ent_api, ent_feed or custom/);
  }
  const list = await api.request('/v1/webhooks', { key: api.keys.commonwealth });
  assert.equal([list.status, list.body], [200, { results: [], next_cursor: null }]);
  assertProblem(
    await api.request('/v1/webhooks/wh_0000000000000000', { key: api.keys.commonwealth }),
    404,
    'not_found',
  );
  assertProblem(await api.request('/v1/webhooks', { key: null }), 401, 'missing_key');
});

test('create: 201 with the secret once and Location; listed without it; never cached', async () => {
  const res = await post('/v1/webhooks', {
    url: rx.url('/hook'),
    filter: 'vertical=solar,roofing&county=cork',
    description: 'cork trades',
  });
  assert.is(res.status, 201, res.text);
  assert.match(res.body.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
  assert.is(res.body.filter, 'vertical=roofing,solar&county=Cork');
  assert.equal(
    [res.body.scope, res.body.account, res.body.status, res.body.description],
    ['ent_api', 'test', 'active', 'cork trades'],
  );
  assert.is(res.headers.get('location'), `http://localhost/v1/webhooks/${res.body.id}`);
  assert.is(res.headers.get('cache-control'), 'no-store');
  const list = await api.request('/v1/webhooks');
  assert.is(list.status, 200);
  assert.equal(
    list.body.results.map((w: { id: string }) => w.id),
    [res.body.id],
  );
  assert.not.ok(list.text.includes(res.body.secret), 'the secret is never listed');
  assert.is(list.headers.get('etag'), null);
  const one = await api.request(`/v1/webhooks/${res.body.id}`);
  assert.equal(one.body, list.body.results[0]);
  assert.equal(
    one.body.access,
    { state: 'ok', scope: 'ent_api', reason: null, detail: null, suspended_at: null },
    'sends now, as ent_api',
  );
  assert.equal(
    (await api.request(`/v1/webhooks/${res.body.id}`, { key: api.keys.commonwealth })).body,
    one.body,
    'any key of the account may read it',
  );
  assert.not.ok(api.logs.join('\n').includes(res.body.secret), 'nor logged');
  // another account cannot see it
  assertProblem(await api.request(`/v1/webhooks/${res.body.id}`, { key: otherKey }), 404, 'not_found');
  assert.equal((await api.request('/v1/webhooks', { key: otherKey })).body.results, []);
  // event types: lead.new unless chosen; unknown ones are a 400 naming `types`
  assert.equal([res.body.types, typeof res.body.watermark.event_id], [['lead.new'], 'number']);
  const bad = await post('/v1/webhooks', { url: rx.url('/typed'), types: ['lead.new', 'lead.created'] }, otherKey);
  assertProblem(bad, 400, 'invalid_parameter');
  assert.equal(
    bad.body.errors.map((e: { name: string }) => e.name),
    ['types'],
  );
  const typed = await post(
    '/v1/webhooks',
    { url: rx.url('/typed'), types: ['lead.stage_changed', 'lead.removed'] },
    otherKey,
  );
  assert.is(typed.status, 201, typed.text);
  assert.equal(typed.body.types, ['lead.stage_changed', 'lead.removed']);
  assert.equal((await api.request(`/v1/webhooks/${typed.body.id}`, { key: otherKey })).body.types, [
    'lead.stage_changed',
    'lead.removed',
  ]);
});

test('saved filters with the received_date range and application_type: canonical form, round trip, same problems as /v1/leads', async () => {
  const res = await post('/v1/webhooks', {
    url: rx.url('/dated'),
    filter: 'received_to=2025-12-31&application_type=retention,permission%20and%20retention&received_from=2025-01-01',
  });
  assert.is(res.status, 201, res.text);
  const canonical =
    'application_type=PERMISSION%20AND%20RETENTION,RETENTION&received_from=2025-01-01&received_to=2025-12-31';
  assert.is(res.body.filter, canonical);
  const again = await post('/v1/webhooks', { url: rx.url('/dated2'), filter: canonical });
  assert.is(again.body.filter, canonical, 'the canonical form parses to itself');
  assert.is((await api.request(`/v1/webhooks/${res.body.id}`)).body.filter, canonical);
  const query = 'received_from=2025-13-01&application_type=nope';
  const leads = await api.request(`/v1/leads?${query}`);
  const hook = await post('/v1/webhooks', { url: rx.url('/x'), filter: query });
  assertProblem(hook, 400, 'invalid_parameter');
  assert.equal(hook.body.errors, leads.body.errors);
  assert.equal(hook.body.errors.map((e: { name: string }) => e.name).sort(), ['application_type', 'received_from']);
});

test('a bad filter gets the same problem details as GET /v1/leads; bad bodies are named', async () => {
  const query = 'county=Atlantis&min_value=abc&colour=red';
  const leads = await api.request(`/v1/leads?${query}`);
  const hook = await post('/v1/webhooks', { url: rx.url('/x'), filter: query });
  assertProblem(hook, 400, leads.body.code);
  assert.equal(hook.body.errors, leads.body.errors);
  assert.is(hook.body.detail, leads.body.detail);
  assertProblem(
    await post('/v1/webhooks', { url: rx.url('/x'), filter: 'county=Cork&page_size=5' }),
    400,
    'invalid_parameter',
  );
  const priv = await post('/v1/webhooks', { url: 'https://10.1.2.3/hook' });
  assertProblem(priv, 400, 'invalid_parameter');
  assert.equal(
    priv.body.errors.map((e: { name: string }) => e.name),
    ['url'],
  );
  assertProblem(await post('/v1/webhooks', { url: 'ftp://hooks.example.com/' }), 400, 'invalid_parameter');
  assertProblem(await post('/v1/webhooks', {}), 400, 'invalid_parameter');
  assertProblem(await post('/v1/webhooks', { url: rx.url('/x'), colour: 'red' }), 400, 'unknown_parameter');
  assertProblem(
    await api.request('/v1/webhooks', { method: 'POST', body: 'url=x', headers: { 'Content-Type': 'text/plain' } }),
    415,
    'unsupported_media_type',
  );
  assertProblem(
    await api.request('/v1/webhooks', {
      method: 'POST',
      body: '{"url":',
      headers: { 'Content-Type': 'application/json' },
    }),
    400,
    'invalid_body',
  );
  assertProblem(
    await post('/v1/webhooks', { url: rx.url('/x'), description: 'x'.repeat(20_000) }),
    413,
    'body_too_large',
  );
  const del = await api.request('/v1/webhooks', { method: 'DELETE' });
  assertProblem(del, 405, 'method_not_allowed');
  assert.match(del.headers.get('allow')!, /GET.*POST/);
});

test('delivery log query (schemas/webhook-deliveries-query.schema.json): unknown and repeated parameters before the ownership check, values after it', async () => {
  const own = (await post('/v1/webhooks', { url: rx.url('/log-query') })).body.id as string;
  const foreign = 'wh_0000000000000000';
  const errors = async (path: string, status: number, code: string) => {
    const res = await api.request(path);
    assertProblem(res, status, code);
    return res.body.errors;
  };
  const statuses = [...DELIVERY_STATUSES];
  assert.equal(
    DELIVERIES_QUERY_SCHEMA.properties.status.enum,
    statuses,
    'the schema lists the delivery states of the store',
  );
  for (const id of [own, foreign]) {
    // the query's shape: every unknown parameter (query order); else the first of status / limit given twice
    assert.equal(await errors(`/v1/webhooks/${id}/deliveries?page=2&status=a&status=b&q=1`, 400, 'unknown_parameter'), [
      { name: 'page', reason: 'unknown parameter' },
      { name: 'q', reason: 'unknown parameter' },
    ]);
    assert.equal(
      await errors(`/v1/webhooks/${id}/deliveries?limit=1&limit=2&status=a&status=b`, 400, 'invalid_parameter'),
      [{ name: 'status', reason: 'given more than once' }],
    );
    assert.equal(await errors(`/v1/webhooks/${id}/deliveries?limit=1&limit=2&status=x`, 400, 'invalid_parameter'), [
      { name: 'limit', reason: 'given more than once' },
    ]);
  }
  // its values: only for a webhook of the account (404 first), both named, status then limit
  for (const q of ['status=lost', 'limit=0', 'limit=0&status=lost', 'status=DEAD']) {
    assert.equal(await errors(`/v1/webhooks/${foreign}/deliveries?${q}`, 404, 'not_found'), undefined, q);
  }
  assert.equal(await errors(`/v1/webhooks/${own}/deliveries?limit=0&status=lost`, 400, 'invalid_parameter'), [
    { name: 'status', reason: 'not an allowed value', allowed: statuses },
    { name: 'limit', reason: 'must be an integer between 1 and 1000' },
  ]);
  for (const limit of ['0', '1001', 'abc', '', '-1', '1.5', '99999999999999999999']) {
    assert.equal(
      await errors(`/v1/webhooks/${own}/deliveries?limit=${limit}`, 400, 'invalid_parameter'),
      [{ name: 'limit', reason: 'must be an integer between 1 and 1000' }],
      limit,
    );
  }
  // limit as this endpoint has always read it (Number): spaces, exponents, a trailing .0
  for (const limit of ['%2012', '1e2', '12.0', '1000'])
    assert.is((await api.request(`/v1/webhooks/${own}/deliveries?limit=${limit}`)).status, 200, limit);
  for (const status of statuses)
    assert.is((await api.request(`/v1/webhooks/${own}/deliveries?status=${status}`)).status, 200, status);
});

test('test event, delivery log, rotation, disable / enable, replay', async () => {
  const created = await post('/v1/webhooks', { url: rx.url('/life') });
  const id = created.body.id as string;
  const sent = await post(`/v1/webhooks/${id}/test`);
  assert.is(sent.status, 200, sent.text);
  assert.equal(
    [sent.body.type, sent.body.status, sent.body.attempts, sent.body.last_status_code],
    ['webhook.test', 'delivered', 1, 204],
  );
  const [got] = rx.requests('/life');
  assert.is(got!.headers['webhook-id'], sent.body.id);
  const hmac = createHmac('sha256', Buffer.from(created.body.secret.slice(6), 'base64'))
    .update(got!.body)
    .digest('hex');
  assert.is(got!.headers['x-service-signature'], `sha256=${hmac}`);
  const log = await api.request(`/v1/webhooks/${id}/deliveries?status=delivered&limit=5`);
  assert.equal(
    log.body.results.map((d: { id: string }) => d.id),
    [sent.body.id],
  );
  assertProblem(await api.request(`/v1/webhooks/${id}/deliveries?status=lost`), 400, 'invalid_parameter');
  assertProblem(await api.request(`/v1/webhooks/${id}/deliveries?page=2`), 400, 'unknown_parameter');
  const rotated = await post(`/v1/webhooks/${id}/rotate-secret`, { overlap_seconds: 60 });
  assert.is(rotated.status, 200);
  assert.is.not(rotated.body.secret, created.body.secret);
  assert.ok(rotated.body.previous_secret_expires_at);
  assertProblem(await post(`/v1/webhooks/${id}/rotate-secret`, { overlap_seconds: -1 }), 400, 'invalid_parameter');
  const off = await post(`/v1/webhooks/${id}/disable`);
  assert.equal([off.status, off.body.status], [200, 'disabled']);
  assert.match(off.body.disabled_reason, /owner/);
  const on = await post(`/v1/webhooks/${id}/enable`);
  assert.equal([on.body.status, on.body.disabled_reason], ['active', null]);
  assertProblem(await post(`/v1/webhooks/${id}/replay`, { delivery_ids: [sent.body.id] }), 400, 'invalid_parameter');
  const replay = await post(`/v1/webhooks/${id}/replay`);
  assert.equal([replay.status, replay.body], [200, { replayed: [] }]);
  assertProblem(await post(`/v1/webhooks/${id}/test`, undefined, otherKey), 404, 'not_found');
});

test.run();
