/** ETag / If-None-Match / 304 and Cache-Control. */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { CACHE_CONTROL, etagFor, ifNoneMatchHits } from '../../../api/middleware/conditional.ts';
import { assertProblem, startTestApi, type TestApi } from '../../helpers/api.ts';

test('etagFor: weak, stable, sorted query; differs by release, path, query, scope; HEAD = GET', () => {
  const base = { release: 'r1', method: 'GET', path: '/v1/meta', query: 'b=2&a=1', scope: 'ent_api' };
  const e = etagFor(base);
  assert.match(e, /^W\/"[0-9a-f]{16}"$/);
  assert.is(etagFor({ ...base, query: 'a=1&b=2' }), e);
  assert.is(etagFor({ ...base, method: 'HEAD' }), e);
  for (const change of [{ release: 'r2' }, { path: '/v1/leads' }, { query: 'a=1&b=3' }, { scope: 'commonwealth' }]) {
    assert.is.not(etagFor({ ...base, ...change }), e, JSON.stringify(change));
  }
});

test('ifNoneMatchHits: lists, weak/strong forms, *', () => {
  const e = 'W/"abc"';
  assert.ok(ifNoneMatchHits('W/"abc"', e));
  assert.ok(ifNoneMatchHits('"abc"', e));
  assert.ok(ifNoneMatchHits('"x", W/"abc"', e));
  assert.ok(ifNoneMatchHits('*', e));
  assert.not.ok(ifNoneMatchHits('W/"abd"', e));
});

let api: TestApi;
test.before(async () => {
  api = await startTestApi();
});
test.after(async () => {
  await api.close();
});

test('200 GET carries ETag and Cache-Control; If-None-Match → 304 with no body', async () => {
  const first = await api.request('/v1/meta');
  assert.is(first.status, 200);
  const etag = first.headers.get('etag')!;
  assert.match(etag, /^W\/"[0-9a-f]{16}"$/);
  assert.is(first.headers.get('cache-control'), CACHE_CONTROL);
  const again = await api.request('/v1/meta');
  assert.is(again.headers.get('etag'), etag, 'same request, same release → same tag');
  const cached = await api.request('/v1/meta', { headers: { 'If-None-Match': etag } });
  assert.is(cached.status, 304);
  assert.is(cached.text, '');
  assert.is(cached.headers.get('etag'), etag);
  assert.ok(cached.headers.get('x-request-id'));
  const stale = await api.request('/v1/meta', { headers: { 'If-None-Match': 'W/"0000000000000000"' } });
  assert.is(stale.status, 200);
});

test('the tag depends on the scope: another key does not get a 304 for it', async () => {
  const etag = (await api.request('/v1/meta', { key: api.keys.ent_api })).headers.get('etag')!;
  const other = await api.request('/v1/meta', { key: api.keys.commonwealth, headers: { 'If-None-Match': etag } });
  assert.is(other.status, 200);
  assert.is.not(other.headers.get('etag'), etag);
});

test('errors get no ETag and are never answered 304; a missing key is checked before the tag', async () => {
  const err = await api.request('/v1/meta?bogus=1');
  assertProblem(err, 400, 'unknown_parameter');
  assert.is(err.headers.get('etag'), null);
  const etag = (await api.request('/v1/meta')).headers.get('etag')!;
  assertProblem(await api.request('/v1/meta', { key: null, headers: { 'If-None-Match': etag } }), 401, 'missing_key');
});

test.run();
