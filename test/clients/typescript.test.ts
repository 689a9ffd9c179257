/**
 * The TypeScript SDK (clients/typescript/) against a real server on port 0: its types are the
 * ones generated from the served document, lists page to the end, details, quotes, an export
 * streamed to a file, a real 429 retried after its reset, problems with their code, the budget
 * headers, and a real signed webhook delivery verified.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { LeadsClient, LeadsProblem, verifyWebhook } from '../../clients/typescript/src/index.ts';
import { GENERATED_FILE, typesOf } from '../../clients/typescript/scripts/generate-types.ts';
import { startTestApi, type TestApi } from '../helpers/api.ts';
import { freshKey, MovableClock, spendHourlyLimit } from '../helpers/clients.ts';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.ts';
import { tempDir } from '../helpers/tmp.ts';

const clock = new MovableClock();
let api: TestApi;
let rx: Receiver;
let client: LeadsClient;

/** The error a promise rejects with (fails when it resolves). */
async function rejection(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    (v) => assert.unreachable(`resolved with ${JSON.stringify(v).slice(0, 200)}`),
    (e: unknown) => e,
  );
}

test.before(async () => {
  api = await startTestApi({ clock: clock.now, config: { webhookAllowHosts: ['127.0.0.1'] } });
  rx = await startReceiver();
  client = new LeadsClient({ apiKey: api.keys.ent_api, baseUrl: `${api.baseUrl}/v1` });
});
test.after(async () => {
  await rx?.close();
  await api?.close();
});

test("the SDK's types are generated from the served OpenAPI document (the file on disk is current)", async () => {
  const served = (await api.request('/v1/openapi.json')).body;
  assert.is(
    readFileSync(GENERATED_FILE, 'utf8'),
    await typesOf(served),
    'run `make typecheck` (scripts/generate-types.ts) to regenerate',
  );
});

test('paginate: every lead of a filter, page by page to the end, equals the total; then the detail of one', async () => {
  const first = await client.get('/leads', { query: { page_size: 1, county: ['Cork', 'Dublin'] } });
  const total = first.data.total;
  assert.ok(total > 40, `enough Cork and Dublin leads to page (${total})`);
  const ids: number[] = [];
  let pages = 0;
  for await (const page of client.pages('/leads', { query: { page_size: 40, county: ['Cork', 'Dublin'] } })) {
    pages++;
    ids.push(...page.data.results.map((l) => l.id));
  }
  assert.is(ids.length, total);
  assert.is(new Set(ids).size, total, 'no lead twice');
  assert.is(pages, Math.ceil(total / 40));
  const items: number[] = [];
  for await (const lead of client.paginate('/leads', { query: { page_size: 100, county: ['Cork', 'Dublin'] } }))
    items.push(lead.id);
  assert.equal(items, ids);
  const detail = await client.get('/leads/{id}', { path: { id: ids[0]! } });
  assert.is(detail.data.id, ids[0]);
  assert.is(detail.limits.rateLimit?.limit, 5000);
});

test('paginate over the other paged lists: export cursor pages and infrastructure', async () => {
  const exported: number[] = [];
  for await (const lead of client.paginate('/export/applications', { query: { limit: 50 } })) exported.push(lead.id);
  const total = (await client.get('/leads', { query: { page_size: 1 } })).data.total;
  assert.is(exported.length, total);
  assert.is(new Set(exported).size, total);
  const infra = await client.get('/infrastructure', { query: { page_size: 1 } });
  let n = 0;
  for await (const p of client.paginate('/infrastructure', { query: { page_size: 7 } })) n += p.id ? 1 : 0;
  assert.is(n, infra.data.total);
});

test('budget headers on every answer, and a quote (its own media type) that charges nothing', async () => {
  const key = await freshKey(api, 'commonwealth');
  const cw = new LeadsClient({ apiKey: key, baseUrl: `${api.baseUrl}/v1` });
  const q = await cw.quote('/leads', { query: { page_size: 10 } });
  assert.equal([q.data.dry_run, q.data.rows, q.data.budget_limit, q.data.budget_remaining], [true, 10, 1000, 1000]);
  assert.is(q.headers.get('content-type'), 'application/vnd.leads.quote+json');
  const page = await cw.get('/leads', { query: { page_size: 10 } });
  assert.equal(page.limits.budget, { limit: 1000, remaining: 990, reset: page.limits.budget!.reset, cost: null });
  assert.is(cw.lastLimits?.rateLimit?.remaining, 598);
  assert.ok(
    page.data.results.every((l) => l.applicant_org === null && l.main_contractor === null),
    'a commonwealth key sees no enriched value',
  );
});

test('problems: a bad parameter throws LeadsProblem with its code, detail, errors and request id', async () => {
  const err = await rejection(client.get('/leads', { query: { page_size: 0 } }));
  assert.instance(err, LeadsProblem);
  const p = err as LeadsProblem;
  assert.equal([p.status, p.code, p.errors[0]?.name], [400, 'invalid_parameter', 'page_size']);
  assert.match(p.detail, /page_size/);
  assert.ok(p.requestId);
  const missing = await rejection(client.get('/leads/{id}', { path: { id: 999999999 } }));
  assert.ok(missing instanceof LeadsProblem && missing.code === 'not_found' && missing.status === 404, String(missing));
});

test('exportToFile streams the CSV and JSON Lines of a filter to a file', async () => {
  const dir = tempDir('sdk-export-');
  const total = (await client.get('/leads', { query: { page_size: 1, county: ['Cork'] } })).data.total;
  const csv = await client.exportToFile('csv', join(dir, 'cork.csv'), { query: { county: ['Cork'] } });
  const lines = readFileSync(join(dir, 'cork.csv'), 'utf8').trimEnd().split('\n');
  assert.ok(csv.bytes > 0 && csv.bytes === readFileSync(join(dir, 'cork.csv')).length);
  assert.match(csv.filename ?? '', /^applications-.*\.csv$/);
  assert.is(lines.length - 1 >= total, true, 'a header and at least one line per lead');
  await client.exportToFile('jsonl', join(dir, 'cork.jsonl'), { query: { county: ['Cork'] } });
  const records = readFileSync(join(dir, 'cork.jsonl'), 'utf8')
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l) as { county: string });
  assert.is(records.length, total);
  assert.ok(records.every((r) => r.county === 'Cork'));
});

test('a 429 is retried after its Retry-After, across the real reset of the hourly window', async () => {
  const key = await freshKey(api, 'commonwealth');
  await spendHourlyLimit(api, key, clock, 1500);
  const waits: number[] = [];
  const sdk = new LeadsClient({
    apiKey: key,
    baseUrl: `${api.baseUrl}/v1`,
    sleep: (ms) => (waits.push(ms), new Promise((r) => setTimeout(r, ms))),
  });
  const res = await sdk.get('/meta');
  assert.is(res.status, 200);
  assert.is(waits.length, 1, 'one retry');
  assert.ok(waits[0]! >= 1000 && waits[0]! <= 3000, `waited Retry-After (${waits[0]} ms)`);
  assert.is(res.limits.rateLimit?.remaining, 599, 'a fresh window');
  // a wait longer than maxRetryWaitMs is not waited: the problem is thrown with its Retry-After
  await spendHourlyLimit(api, key, clock, 600_000);
  const impatient = new LeadsClient({ apiKey: key, baseUrl: `${api.baseUrl}/v1`, maxRetryWaitMs: 5000 });
  const e = await rejection(impatient.get('/meta'));
  assert.ok(
    e instanceof LeadsProblem && e.code === 'rate_limited' && e.status === 429 && (e.retryAfterS ?? 0) >= 590,
    String(e),
  );
  clock.runFrom(Date.now());
});

test('verifyWebhook: a real signed delivery verifies; a tampered body, another secret or a stale one do not', async () => {
  const made = await api.request('/v1/webhooks', {
    method: 'POST',
    body: { url: rx.url('/sdk'), filter: 'county=Cork' },
  });
  assert.is(made.status, 201, made.text);
  const sent = await api.request(`/v1/webhooks/${made.body.id}/test`, { method: 'POST' });
  assert.is(sent.status, 200, sent.text);
  const [delivery] = rx.requests('/sdk');
  assert.ok(delivery, 'the receiver got the delivery');
  const secret = made.body.secret as string;
  const nowS = Number(delivery!.headers['webhook-timestamp']);
  assert.ok(verifyWebhook(secret, delivery!.body, delivery!.headers, { nowS }));
  assert.ok(
    verifyWebhook(secret, delivery!.body, new Headers(delivery!.headers as Record<string, string>), { nowS }),
    'fetch Headers too',
  );
  assert.not.ok(verifyWebhook(secret, Buffer.concat([delivery!.body, Buffer.from(' ')]), delivery!.headers, { nowS }));
  assert.not.ok(
    verifyWebhook('whsec_' + Buffer.alloc(32, 1).toString('base64'), delivery!.body, delivery!.headers, { nowS }),
  );
  assert.not.ok(verifyWebhook(secret, delivery!.body, delivery!.headers, { nowS: nowS + 301 }));
});

test.run();
