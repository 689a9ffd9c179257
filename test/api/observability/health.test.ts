/**
 * `/healthz` and `/readyz` (api/routes/health.ts) over real HTTP: public, never cached, at the
 * origin; `/readyz` is ready only while a release is loaded and the state store can be written — a
 * server with no release, and one whose store has stopped answering (its SQLite connection
 * closed under it), answer `503 not_ready` naming what is not ready. Every body is checked
 * against the OpenAPI document.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { loadApiConfig } from '../../../api/config.ts';
import { buildOpenApi } from '../../../api/openapi/document.ts';
import { startServer } from '../../../api/server.ts';
import { READY_PROBE_CACHE_MS } from '../../../api/routes/health.ts';
import { assertProblem, startTestApi, type TestApi, type TestResponse } from '../../helpers/api.ts';
import { validateResponse } from '../../helpers/openapi.ts';
import { tempDir } from '../../helpers/tmp.ts';

let api: TestApi;
test.before(async () => {
  api = await startTestApi();
});
test.after(async () => {
  await api?.close();
});

/** GET `path` at `origin` without a key; the body checked against the document's operation at the origin. */
async function get(origin: string, path: string, method = 'GET'): Promise<TestResponse> {
  const res = await fetch(origin + path, { method });
  const text = await res.text();
  const body = /json/.test(res.headers.get('content-type') ?? '') && text !== '' ? JSON.parse(text) : null;
  if (method === 'GET') {
    const doc = buildOpenApi(api.config);
    assert.equal(
      validateResponse(doc, 'get', path, res.status, body),
      [],
      `${path} ${res.status} matches the OpenAPI document`,
    );
  }
  return { status: res.status, headers: res.headers, body, text };
}

test('GET /healthz: 200 without a key, never cached, with a request id; other methods 405', async () => {
  const res = await get(api.baseUrl, '/healthz');
  assert.is(res.status, 200);
  assert.equal(res.body, { status: 'ok' });
  assert.is(res.headers.get('cache-control'), 'no-store');
  assert.ok(res.headers.get('x-request-id'));
  assert.is((await get(api.baseUrl, '/healthz', 'HEAD')).status, 200);
  const post = await fetch(`${api.baseUrl}/healthz`, { method: 'POST' });
  assertProblem({ status: post.status, headers: post.headers, body: await post.json() }, 405, 'method_not_allowed');
  assert.is(post.headers.get('allow'), 'GET, HEAD, OPTIONS');
  assert.is((await fetch(`${api.baseUrl}/v1/healthz`)).status, 401, 'not under /v1: there it is an unknown keyed path');
});

test('GET /readyz: 200 naming the release while it is loaded and the store answers', async () => {
  const res = await get(api.baseUrl, '/readyz');
  assert.is(res.status, 200, res.text);
  assert.equal(res.body, { status: 'ready', release: api.release(), checks: { release: 'ok', state_store: 'ok' } });
  assert.is(res.headers.get('cache-control'), 'no-store');
});

test('GET /readyz: 503 not_ready without a release (while /healthz stays 200)', async () => {
  const dataDir = tempDir('leads-obs-norelease-');
  mkdirSync(join(dataDir, 'releases'));
  const config = loadApiConfig(
    {},
    {
      dataDir,
      port: 0,
      host: '127.0.0.1',
      duckdbConnections: 1,
      duckdbThreads: 1,
      releasePollMs: 3_600_000,
      webhookIntervalMs: 0,
    },
  );
  const s = await startServer(config, { log: () => {} });
  try {
    const res = await get(s.url, '/readyz');
    assertProblem(res, 503, 'not_ready');
    assert.is(res.body.detail, 'not ready: release: no release is loaded');
    assert.not.ok(res.text.includes(dataDir), 'no server path in the public answer');
    assert.is(res.headers.get('cache-control'), 'no-store');
    assert.is(res.headers.get('retry-after'), '5');
    assert.is((await get(s.url, '/healthz')).status, 200);
  } finally {
    await s.close();
  }
});

test('GET /readyz: 503 not_ready when the state store stops answering', async () => {
  const broken = await startTestApi();
  try {
    assert.is((await get(broken.baseUrl, '/readyz')).status, 200);
    await broken.server.store.close(); // the SQLite connection is gone: every query fails
    await new Promise((r) => setTimeout(r, READY_PROBE_CACHE_MS)); // the last probe's answer is reused for this long
    const res = await get(broken.baseUrl, '/readyz');
    assertProblem(res, 503, 'not_ready');
    assert.is(res.body.detail, 'not ready: state_store: not answering');
    assert.ok(
      broken.logs.some((l) => l.startsWith('readyz: not ready, the state store failed:')),
      broken.logs.join('\n'),
    );
    assert.is((await get(broken.baseUrl, '/healthz')).status, 200, 'alive all the same');
  } finally {
    await broken.close();
  }
});

test.run();
