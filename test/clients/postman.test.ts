/**
 * The Postman collection generated from the OpenAPI document (clients/postman/): one request per
 * operation, the key a collection variable, and its requests — resolved as Postman resolves them
 * (variables, enabled query parameters, collection auth) — answered by a real server with a
 * status the document lists.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { collectionOf } from '../../clients/postman/generate-collection.ts';
import { startTestApi, type TestApi } from '../helpers/api.ts';

type Json = Record<string, any>;
let api: TestApi;
let doc: Json;
let collection: Json;

test.before(async () => {
  api = await startTestApi();
  doc = (await api.request('/v1/openapi.json')).body;
  collection = collectionOf(doc);
});
test.after(async () => {
  await api?.close();
});

const requests = (): Json[] => collection.item.flatMap((f: Json) => f.item.map((i: Json) => i.request));

test('one request per operation, in folders by tag; the key is the collection variable apiKey', () => {
  const ops: string[] = [];
  for (const item of Object.values<Json>(doc.paths))
    for (const m of ['get', 'post', 'put', 'patch', 'delete'])
      if (item[m]) ops.push(`${m.toUpperCase()} ${item[m].operationId}`);
  const listed = requests().map((r) => `${r.method} ${/OpenAPI: `([^`]+)`/.exec(r.description)![1]}`);
  assert.equal(listed.sort(), ops.sort());
  assert.is(collection.info.schema, 'https://schema.getpostman.com/json/collection/v2.1.0/collection.json');
  assert.equal(collection.auth, { type: 'bearer', bearer: [{ key: 'token', value: '{{apiKey}}', type: 'string' }] });
  assert.equal(
    collection.variable.map((v: Json) => v.key),
    ['baseUrl', 'origin', 'apiKey'],
  );
  assert.is(collection.variable[0].value, doc.servers[0].url);
  assert.not.ok(JSON.stringify(collection).includes('lk_'), 'no key in the collection');
});

/** A request as Postman sends it with these variable values. */
function resolve(r: Json, vars: Record<string, string>): { url: string; headers: Record<string, string> } {
  const sub = (s: string) => s.replace(/\{\{(\w+)\}\}/g, (_, k: string) => vars[k] ?? '');
  const pathVars: Record<string, string> = Object.fromEntries(
    r.url.variable.map((v: Json) => [v.key, vars[`:${v.key}`] ?? v.value]),
  );
  const path = r.url.path.map((s: string) => s.replace(/:(\w+)/g, (_, k: string) => pathVars[k] ?? '')).join('/');
  const q = r.url.query
    .filter((p: Json) => !p.disabled)
    .map((p: Json) => `${encodeURIComponent(p.key)}=${encodeURIComponent(sub(p.value))}`);
  const headers: Record<string, string> = {};
  if (r.auth?.type !== 'noauth') headers['Authorization'] = `Bearer ${sub('{{apiKey}}')}`;
  for (const h of r.header) if (!h.disabled) headers[h.key] = sub(h.value);
  return { url: `${sub(r.url.host[0])}/${path}${q.length ? '?' + q.join('&') : ''}`, headers };
}

test('every GET of the collection, sent as Postman sends it, gets a status the document lists for it', async () => {
  const lead = (await api.request('/v1/leads?page_size=1')).body.results[0].id;
  const vars = { baseUrl: `${api.baseUrl}/v1`, origin: api.baseUrl, apiKey: api.keys.ent_api, ':id': String(lead) };
  let ok = 0;
  for (const r of requests().filter((x) => x.method === 'GET')) {
    const { url, headers } = resolve(r, vars);
    const res = await fetch(url, { headers });
    await res.arrayBuffer();
    const [, operationId] = /OpenAPI: `([^`]+)` \(GET ([^)]+)\)/.exec(r.description)!;
    const op = Object.values<Json>(doc.paths).find((i) => i.get?.operationId === operationId)!.get;
    assert.ok(String(res.status) in op.responses, `${url} → ${res.status}, not listed for ${operationId}`);
    if (res.status === 200) ok++;
  }
  assert.ok(ok >= 20, `${ok} GETs answered 200 (20 on the tiny release: the others need a body, a token or a real id)`);
  const search = resolve(
    requests().find((r) => r.url.path.join('/') === 'leads' && r.method === 'GET')!,
    vars,
  );
  const page = (await (await fetch(search.url, { headers: search.headers })).json()) as { total: number };
  assert.is(page.total, (await api.request('/v1/leads')).body.total);
});

test.run();
