/**
 * CORS (api/middleware/cors.ts): preflights answered without a key, the allowed origin and the
 * exposed headers on keyed answers and on problems (401, 429), a configured list of origins
 * echoed with `Vary: Origin`, and none of it on the account area, the claim page or /healthz.
 * A real browser on another origin: test/api/cors.browser.test.ts.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ApiConfigError, corsOrigins, loadApiConfig } from '../../../api/config.ts';
import { CORS_ALLOW_HEADERS, CORS_EXPOSE_HEADERS, CORS_MAX_AGE_S } from '../../../api/middleware/cors.ts';
import { buildOpenApi } from '../../../api/openapi/document.ts';
import { assertProblem, startTestApi, type TestApi } from '../../helpers/api.ts';

const PAGE = 'https://maps.example.org';

/** A browser's preflight for a keyed GET. */
const preflight = (api: TestApi, path: string, origin = PAGE, headers = 'authorization') =>
  api.request(path, {
    key: null,
    method: 'OPTIONS',
    headers: { Origin: origin, 'Access-Control-Request-Method': 'GET', 'Access-Control-Request-Headers': headers },
  });

const list = (h: string | null): string[] =>
  (h ?? '')
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter((s) => s !== '');

let api: TestApi;

test.before(async () => {
  api = await startTestApi({ config: { authFailLimit: 2 } });
});
test.after(() => api.close());

test('a preflight without a key is 204 with the allowed origin, methods, headers and max age; no credentials', async () => {
  for (const path of ['/v1/leads', '/v1/tiles/leads/6/31/21.mvt', '/v1/webhooks', '/v1/no-such-thing']) {
    const res = await preflight(api, path, PAGE, 'authorization, content-type, idempotency-key');
    assert.is(res.status, 204, path);
    assert.is(res.text, '');
    assert.is(res.headers.get('access-control-allow-origin'), '*', path);
    for (const m of ['get', 'head', 'post', 'put', 'patch', 'delete'])
      assert.ok(list(res.headers.get('access-control-allow-methods')).includes(m), `${m} on ${path}`);
    const allowed = list(res.headers.get('access-control-allow-headers'));
    for (const h of ['authorization', 'content-type', 'idempotency-key', 'if-none-match'])
      assert.ok(allowed.includes(h), `${h} allowed on ${path}`);
    assert.is(res.headers.get('access-control-max-age'), String(CORS_MAX_AGE_S));
    assert.is(res.headers.get('access-control-allow-credentials'), null);
    assert.is(res.headers.get('www-authenticate'), null, 'no key asked for');
  }
  // a bare OPTIONS (not a preflight) is still the API's own: keyed, then 204 with Allow
  assertProblem(await api.request('/v1/leads', { key: null, method: 'OPTIONS' }), 401, 'missing_key');
  const own = await api.request('/v1/leads', { method: 'OPTIONS' });
  assert.is(own.status, 204);
  assert.match(own.headers.get('allow') ?? '', /GET/);
});

test('a keyed GET carries the allowed origin and exposes ETag, Link, rate-limit and budget headers', async () => {
  const res = await api.request('/v1/leads?page_size=2', { headers: { Origin: PAGE } });
  assert.is(res.status, 200);
  assert.is(res.headers.get('access-control-allow-origin'), '*');
  assert.is(res.headers.get('access-control-allow-credentials'), null);
  assert.is(
    res.headers.get('vary')?.toLowerCase().includes('origin') ?? false,
    false,
    'with * nothing varies by origin',
  );
  const exposed = list(res.headers.get('access-control-expose-headers'));
  for (const h of [
    'etag',
    'link',
    'x-request-id',
    'x-ratelimit-remaining',
    'ratelimit',
    'x-budget-remaining',
    'retry-after',
    'deprecation',
    'sunset',
  ]) {
    assert.ok(exposed.includes(h), `${h} exposed`);
  }
  // every header the API sends that a script could want is exposed (Cache-Control is safelisted)
  for (const name of res.headers.keys()) {
    if (
      /^(access-control-|cache-control|content-(type|length)$|date|connection|keep-alive|vary|x-content-type-options|referrer-policy|transfer-encoding|content-encoding)/.test(
        name,
      )
    )
      continue;
    assert.ok(exposed.includes(name), `${name} (sent on /v1/leads) is exposed`);
  }
  // also without an Origin (a browser cache may hand this answer to a cross-origin fetch)
  assert.is((await api.request('/v1/meta')).headers.get('access-control-allow-origin'), '*');
});

test('every response header of the OpenAPI document is exposed', () => {
  const doc = buildOpenApi(api.config) as { components: { headers: Record<string, unknown> } };
  const exposed = CORS_EXPOSE_HEADERS.map((h) => h.toLowerCase());
  const safelisted = [
    'cache-control',
    'content-language',
    'content-length',
    'content-type',
    'expires',
    'last-modified',
    'pragma',
  ];
  for (const name of Object.keys(doc.components.headers)) {
    if (safelisted.includes(name.toLowerCase())) continue;
    assert.ok(exposed.includes(name.toLowerCase()), `${name} is in CORS_EXPOSE_HEADERS`);
  }
  assert.ok(CORS_ALLOW_HEADERS.includes('Authorization'));
});

test('a 401 and a 429 problem carry the allowed origin, so the page can read them', async () => {
  const missing = await api.request('/v1/leads', { key: null, headers: { Origin: PAGE } });
  assertProblem(missing, 401, 'missing_key');
  assert.is(missing.headers.get('access-control-allow-origin'), '*');
  assert.ok(list(missing.headers.get('access-control-expose-headers')).includes('www-authenticate'));
  // AUTH_FAIL_LIMIT=2: the third unknown key from this address is throttled
  const bad = `lk_ea_${'A'.repeat(43)}`;
  let last = missing;
  for (let i = 0; i < 3; i++) last = await api.request('/v1/leads', { key: bad, headers: { Origin: PAGE } });
  assertProblem(last, 429, 'too_many_failed_attempts');
  assert.is(last.headers.get('access-control-allow-origin'), '*');
  assert.ok(last.headers.get('retry-after'));
  assert.ok(list(last.headers.get('access-control-expose-headers')).includes('retry-after'));
});

test('no CORS on the account area, the claim page and its calls, or /healthz', async () => {
  for (const path of ['/app', '/app/sign-in', '/v1/claim', '/v1/claim/lookup', '/healthz']) {
    const get = await api.request(path, { key: null, headers: { Origin: PAGE } });
    assert.is(get.headers.get('access-control-allow-origin'), null, `GET ${path}`);
    const pre = await preflight(api, path, PAGE, 'content-type');
    assert.is(pre.headers.get('access-control-allow-origin'), null, `preflight ${path}`);
    assert.is(pre.headers.get('access-control-allow-methods'), null, `preflight ${path}`);
  }
});

test('CORS_ALLOW_ORIGINS: a listed origin is echoed with Vary: Origin; any other gets nothing', async () => {
  const other = 'https://evil.example.net';
  const listed = await startTestApi({ config: { corsAllowOrigins: [PAGE, 'http://localhost:3000'] } });
  try {
    const ok = await listed.request('/v1/leads?page_size=1', { headers: { Origin: PAGE } });
    assert.is(ok.status, 200);
    assert.is(ok.headers.get('access-control-allow-origin'), PAGE);
    assert.ok(list(ok.headers.get('vary')).includes('origin'));
    assert.ok(list(ok.headers.get('access-control-expose-headers')).includes('etag'));
    const no = await listed.request('/v1/leads?page_size=1', { headers: { Origin: other } });
    assert.is(no.status, 200, 'the request itself is answered; the browser keeps the answer from the page');
    assert.is(no.headers.get('access-control-allow-origin'), null);
    assert.is(no.headers.get('access-control-expose-headers'), null);
    assert.ok(list(no.headers.get('vary')).includes('origin'));
    const pre = await preflight(listed, '/v1/leads', 'http://localhost:3000');
    assert.is(pre.status, 204);
    assert.is(pre.headers.get('access-control-allow-origin'), 'http://localhost:3000');
    const refused = await preflight(listed, '/v1/leads', other);
    assert.is(refused.status, 204);
    assert.is(refused.headers.get('access-control-allow-origin'), null);
    assert.is(refused.headers.get('access-control-allow-methods'), null);
    const err = await listed.request('/v1/leads', { key: null, headers: { Origin: PAGE } });
    assertProblem(err, 401, 'missing_key');
    assert.is(err.headers.get('access-control-allow-origin'), PAGE);
  } finally {
    await listed.close();
  }
});

test('CORS_ALLOW_ORIGINS is parsed and checked at start', () => {
  assert.equal(corsOrigins(undefined), ['*']);
  assert.equal(corsOrigins(' * '), ['*']);
  assert.equal(corsOrigins('none'), []);
  assert.equal(corsOrigins('https://Maps.Example.org:443, http://localhost:3000/'), [
    'https://maps.example.org',
    'http://localhost:3000',
  ]);
  assert.equal(loadApiConfig({ CORS_ALLOW_ORIGINS: 'https://a.example' }).corsAllowOrigins, ['https://a.example']);
  assert.equal(loadApiConfig({}).corsAllowOrigins, ['*']);
  for (const bad of [
    'https://a.example/path',
    'ftp://a.example',
    'a.example',
    '*, https://a.example',
    'https://user@a.example',
    ',',
  ]) {
    assert.throws(
      () => corsOrigins(bad),
      (e: unknown) => e instanceof ApiConfigError && /CORS_ALLOW_ORIGINS/.test((e as Error).message),
      bad,
    );
  }
});

test.run();
