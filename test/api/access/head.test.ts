/**
 * Issue 31, item 17b: `HEAD` of every GET route answers as the GET does — same status, same
 * headers (Content-Type, ETag, Link, Content-Length where the GET has one), no body — needs a key
 * where the GET does, and charges no rows (it delivers none; `X-Budget-Cost` says what the GET
 * would charge). The quote stays reachable as `dry_run=1`.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { buildOpenApi } from '../../../api/openapi/document.ts';
import { assertProblem, startTestApi, type TestApi } from '../../helpers/api.ts';

let api: TestApi;
test.before(async () => {
  api = await startTestApi({ config: { webhookAllowHosts: ['127.0.0.1'], metricsToken: 'm'.repeat(32) } });
});
test.after(async () => {
  await api?.close();
});

/** Headers that differ from one request to the next whatever the method. */
const VOLATILE = new Set([
  'date',
  'x-request-id',
  'x-ratelimit-remaining',
  'ratelimit',
  'x-budget-remaining',
  'x-budget-cost',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'content-length',
  'content-encoding',
  'vary',
]);

/** A concrete request path for each GET path template of the OpenAPI document. */
async function samples(): Promise<Record<string, string>> {
  const key = api.keys.ent_feed;
  const lead = (await api.request('/v1/leads?page_size=1', { key })).body.results[0].id;
  const project = (await api.request('/v1/infrastructure?page_size=1', { key })).body.results[0].id;
  const feature = (await api.request('/v1/ogc/collections/leads/items?limit=1', { key })).body.features[0].id;
  const hook = await api.request('/v1/webhooks', {
    key,
    method: 'POST',
    body: { url: 'http://127.0.0.1:9/h', filter: 'vertical=solar' },
  });
  assert.is(hook.status, 201, hook.text.slice(0, 200));
  const asset = /docs\/assets\/([A-Za-z0-9._-]+\.css)/.exec((await api.request('/v1/docs')).text)![1];
  return {
    '/leads': '/v1/leads?page_size=3&vertical=solar',
    '/leads/{id}': `/v1/leads/${lead}`,
    '/leads/{id}/history': `/v1/leads/${lead}/history`,
    '/events': '/v1/events?page_size=3',
    '/infrastructure': '/v1/infrastructure?page_size=2',
    '/infrastructure/renewables': '/v1/infrastructure/renewables?page_size=2',
    '/infrastructure/{id}': `/v1/infrastructure/${project}`,
    '/intel/analytics': '/v1/intel/analytics?section=yields&page_size=2',
    '/intel/analytics/price-index.svg': '/v1/intel/analytics/price-index.svg',
    '/meta': '/v1/meta',
    '/account/usage': '/v1/account/usage',
    '/claim': '/v1/claim',
    '/openapi.json': '/v1/openapi.json',
    '/docs': '/v1/docs',
    '/reference': '/v1/reference',
    '/docs/assets/{file}': `/v1/docs/assets/${asset}`,
    '/webhooks': '/v1/webhooks',
    '/webhooks/{id}': `/v1/webhooks/${hook.body.id}`,
    '/webhooks/{id}/deliveries': `/v1/webhooks/${hook.body.id}/deliveries`,
    '/export/applications': '/v1/export/applications?limit=2',
    '/export/applications.csv': '/v1/export/applications.csv?county=Cork',
    '/export/applications.jsonl': '/v1/export/applications.jsonl?county=Cork',
    '/export/applications.parquet': '/v1/export/applications.parquet?county=Cork',
    '/feeds/leads.geojson': '/v1/feeds/leads.geojson?page_size=2',
    '/feeds/infrastructure.geojson': '/v1/feeds/infrastructure.geojson?page_size=2',
    '/feeds/token': '/v1/feeds/token',
    '/ogc': '/v1/ogc',
    '/ogc/conformance': '/v1/ogc/conformance',
    '/ogc/collections': '/v1/ogc/collections',
    '/ogc/collections/{collectionId}': '/v1/ogc/collections/leads',
    '/ogc/collections/{collectionId}/items': '/v1/ogc/collections/leads/items?limit=2',
    '/ogc/collections/{collectionId}/items/{featureId}': `/v1/ogc/collections/leads/items/${feature}`,
    '/ogc/collections/{collectionId}/queryables': '/v1/ogc/collections/leads/queryables',
    '/healthz': '/healthz',
    '/readyz': '/readyz',
    '/metrics': '/metrics',
    '/tiles/{layer}.json': '/v1/tiles/leads.json',
    '/tiles/{layer}/{z}/{x}/{y}.mvt': '/v1/tiles/leads/7/63/42.mvt',
    '/authorities': '/v1/authorities',
    '/problems': '/v1/problems',
    '/problems/{code}': '/v1/problems/not_found',
    '/': '/v1',
  };
}

/** The headers that must agree (a CSP nonce is fresh per response). */
const headersOf = (h: Headers): Record<string, string> =>
  Object.fromEntries(
    [...h].filter(([k]) => !VOLATILE.has(k)).map(([k, v]) => [k, v.replace(/'nonce-[^']+'/g, "'nonce-…'")]),
  );

test("HEAD of every GET operation of the OpenAPI document: the GET's status and headers, no body", async () => {
  const paths = await samples();
  const doc = buildOpenApi(api.config);
  const gets = Object.entries(doc.paths as Record<string, Record<string, unknown>>)
    .filter(([, ops]) => 'get' in ops)
    .map(([p]) => p);
  const missing = gets.filter((p) => !(p in paths));
  assert.equal(missing, [], 'every GET operation has a sample here');
  for (const template of gets) {
    const path = paths[template]!;
    const headers = template === '/metrics' ? { Authorization: `Bearer ${'m'.repeat(32)}` } : undefined;
    const key = template === '/metrics' ? null : api.keys.ent_feed;
    const get = await api.request(path, { key, ...(headers ? { headers } : {}) });
    const head = await api.request(path, { key, method: 'HEAD', ...(headers ? { headers } : {}) });
    assert.is(head.status, get.status, `${path}: status`);
    assert.ok(get.status < 300, `${path}: GET ${get.status} ${get.text.slice(0, 200)}`);
    assert.is(head.text, '', `${path}: no body`);
    const g = headersOf(get.headers);
    if (template === '/metrics' || template === '/readyz' || template === '/healthz') delete g['etag'];
    const h = headersOf(head.headers);
    if (template === '/metrics' || template === '/readyz' || template === '/healthz') delete h['etag'];
    assert.equal(h, g, `${path}: headers`);
    const length = get.headers.get('content-length');
    // their bodies count the requests before them; a Parquet file's size is known once written, and HEAD writes none
    const changing = ['/account/usage', '/metrics', '/readyz', '/healthz', '/export/applications.parquet'].includes(
      template,
    );
    if (length !== null && !changing && get.headers.get('content-encoding') === null)
      assert.is(head.headers.get('content-length'), length, `${path}: Content-Length`);
  }
});

test('HEAD charges no rows, says what the GET would charge, and answers 304 to a matching If-None-Match', async () => {
  const key = api.keys.commonwealth;
  const remaining = async (): Promise<string | null> =>
    (await api.request('/v1/meta', { key })).headers.get('x-budget-remaining');
  const before = await remaining();
  const head = await api.request('/v1/leads?page_size=40', { key, method: 'HEAD' });
  assert.is(head.status, 200);
  assert.match(head.headers.get('content-type')!, /^application\/json/, "the data's type, not a quote");
  assert.ok(head.headers.get('etag'), "the GET's ETag");
  assert.match(head.headers.get('link') ?? '', /rel="next"/);
  assert.is(head.headers.get('x-budget-cost'), '40');
  assert.is(await remaining(), before, 'nothing charged');
  const get = await api.request('/v1/leads?page_size=40', { key });
  assert.is(get.headers.get('etag'), head.headers.get('etag'));
  assert.is(Number(head.headers.get('content-length')), Buffer.byteLength(get.text));
  const again = await api.request('/v1/leads?page_size=40', {
    key,
    method: 'HEAD',
    headers: { 'If-None-Match': get.headers.get('etag')! },
  });
  assert.is(again.status, 304);
  // the quote is still there, as dry_run=1 (also on HEAD: its headers)
  const dry = await api.request('/v1/leads?page_size=40&dry_run=1', { key });
  assert.is(dry.body.rows, 40);
  assert.match(dry.headers.get('content-type')!, /^application\/vnd\.leads\.quote\+json/);
});

test('HEAD needs a key where the GET does, and refuses what the GET would refuse', async () => {
  const noKey = await api.request('/v1/leads', { key: null, method: 'HEAD' });
  assert.is(noKey.status, 401);
  assert.match(noKey.headers.get('www-authenticate') ?? '', /^Bearer/);
  assert.is((await api.request('/v1/openapi.json', { key: null, method: 'HEAD' })).status, 200);
  // a whole file larger than a commonwealth day: the GET is 403 budget_too_small, so is the HEAD
  const get = await api.request('/v1/export/applications.csv', { key: api.keys.commonwealth });
  assertProblem(get, 403, 'budget_too_small');
  const head = await api.request('/v1/export/applications.csv', { key: api.keys.commonwealth, method: 'HEAD' });
  assert.is(head.status, 403);
  assert.is(head.headers.get('content-type'), get.headers.get('content-type'));
  assert.ok(Number(head.headers.get('x-budget-cost')) > 1000, 'what the GET would cost');
  assert.ok(Number(head.headers.get('x-export-rows')) > 1000);
});

test.run();
