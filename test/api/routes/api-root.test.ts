/**
 * Issue 31, item 17e: `GET /v1` is the API's index of links (GitHub's API root), without a key;
 * every link it gives answers.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { API_ROOT_LINKS } from '../../../api/routes/api-root.ts';
import { startTestApi, type TestApi } from '../../helpers/api.ts';

let api: TestApi;
test.before(async () => {
  api = await startTestApi();
});
test.after(async () => {
  await api?.close();
});

test('GET /v1 and /v1/ answer the links without a key', async () => {
  for (const path of ['/v1', '/v1/']) {
    const res = await api.request(path, { key: null });
    assert.is(res.status, 200, `${path}: ${res.text.slice(0, 200)}`);
    assert.match(res.headers.get('content-type')!, /^application\/json/);
    assert.equal(
      Object.keys(res.body),
      API_ROOT_LINKS.map((l) => l.name),
    );
    for (const l of API_ROOT_LINKS) assert.is(res.body[l.name], `${api.config.publicBaseUrl}${l.path}`);
  }
  for (const name of [
    'openapi_url',
    'docs_url',
    'leads_url',
    'events_url',
    'export_csv_url',
    'export_jsonl_url',
    'export_parquet_url',
    'ogc_url',
    'feeds_leads_url',
    'tiles_leads_url',
    'meta_url',
    'problems_url',
  ]) {
    assert.ok(
      API_ROOT_LINKS.some((l) => l.name === name),
      name,
    );
  }
  const post = await api.request('/v1', { method: 'POST' });
  assert.is(post.status, 405);
  assert.is(post.headers.get('allow'), 'GET, HEAD, OPTIONS');
});

test('every link of the index answers (templates filled with real ids)', async () => {
  const key = api.keys.ent_feed;
  const root = (await api.request('/v1', { key: null })).body as Record<string, string>;
  const lead = (await api.request('/v1/leads?page_size=1', { key })).body.results[0].id;
  const project = (await api.request('/v1/infrastructure?page_size=1', { key })).body.results[0].id;
  const fill = (url: string): string =>
    url
      .replace('{code}', 'not_found')
      .replace('/leads/{id}', `/leads/${lead}`)
      .replace('/infrastructure/{id}', `/infrastructure/${project}`);
  for (const [name, url] of Object.entries(root)) {
    const path = new URL(fill(url)).pathname;
    assert.ok(!path.includes('{'), `${name}: every template filled`);
    if (name === 'leads_search_url') {
      const res = await api.request(path, { key, method: 'POST', body: { page_size: 1 } });
      assert.is(res.status, 200, name);
      continue;
    }
    const q = name.startsWith('export_') && name !== 'export_url' ? '?county=Cork' : '';
    const res = await api.request(path + q, { key });
    assert.is(res.status, 200, `${name} ${path}: ${res.status} ${res.text.slice(0, 200)}`);
  }
});

test.run();
