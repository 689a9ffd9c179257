/**
 * `/metrics` (api/observability/metrics.ts, api/routes/health.ts) over real HTTP: a scrape after
 * requests shows the counters and histograms moved by exactly those requests (by route template
 * and status class), rows served, 429s by reason, exports running back to 0, the webhook queue,
 * release age, index build time, state-store latency and the usage ledger's backlog; and the
 * endpoint's protection (METRICS_TOKEN on the main port, a token-less METRICS_PORT listener on
 * 127.0.0.1, 404 without either). The usage ledger's flush lag is checked on a real SQLite store
 * whose write lock another connection holds.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { createApp } from '../../../api/app.ts';
import { loadApiConfig } from '../../../api/config.ts';
import { UsageLedger } from '../../../api/access/ledger.ts';
import { generateKey } from '../../../api/access/keys.ts';
import { aggregateMetrics, ApiMetrics, cumulativeMetrics, mergeSnapshots } from '../../../api/observability/metrics.ts';
import { openStateStore } from '../../../api/state/open.ts';
import { assertProblem, startTestApi, type TestApi } from '../../helpers/api.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { waitUntil } from '../../helpers/wait.ts';
import { sample } from '../../helpers/prometheus.ts';

const TOKEN = 'metrics-token-for-the-tests-0123456789abcdef';
const T = Date.parse('2026-11-20T10:00:00Z');
let api: TestApi;

test.before(async () => {
  api = await startTestApi({
    clock: () => new Date(T),
    freshEngine: true, // the index build time is reported: a reused engine has none to report
    config: { metricsToken: TOKEN, metricsPort: 0, authFailLimit: 2, webhookAllowHosts: ['127.0.0.1'] },
  });
});
test.after(async () => {
  await api?.close();
});

/** A scrape through the main port with the token. */
async function scrape(): Promise<string> {
  const res = await fetch(`${api.baseUrl}/metrics`, { headers: { Authorization: `Bearer ${TOKEN}` } });
  assert.is(res.status, 200);
  return res.text();
}

/**
 * Requests are counted when their response is done (the access log line and the metrics are
 * written together): wait for the log lines of these request ids before scraping.
 */
async function counted(...ids: (string | null)[]): Promise<void> {
  await waitUntil(`the requests ${ids.join(', ')} are logged`, () =>
    ids.every((id) => api.logs.some((l) => l.includes(`"request_id":"${id}"`))),
  );
}

const delta = (before: string, after: string, name: string, labels: Record<string, string>): number =>
  (sample(after, name, labels) ?? 0) - (sample(before, name, labels) ?? 0);

test('a scrape after requests shows the request counters, latency histograms and rows served moving by exactly those requests', async () => {
  const before = await scrape();
  const ids: (string | null)[] = [];
  for (let i = 0; i < 3; i++) {
    const res = await api.request('/v1/leads?page_size=2');
    assert.is(res.status, 200);
    ids.push(res.headers.get('x-request-id'));
  }
  const missing = await api.request('/v1/leads/999999999');
  assertProblem(missing, 404, 'not_found');
  const nowhere = await api.request('/v1/nowhere/12345');
  assertProblem(nowhere, 404, 'not_found');
  await counted(...ids, missing.headers.get('x-request-id'), nowhere.headers.get('x-request-id'));
  const after = await scrape();

  const leads = { route: 'GET /v1/leads', status_class: '2xx' };
  assert.is(delta(before, after, 'leads_api_http_requests_total', leads), 3);
  assert.is(delta(before, after, 'leads_api_http_request_duration_seconds_count', leads), 3);
  assert.ok(delta(before, after, 'leads_api_http_request_duration_seconds_sum', leads) > 0);
  assert.is(delta(before, after, 'leads_api_http_request_duration_seconds_bucket', { ...leads, le: '+Inf' }), 3);
  assert.is(delta(before, after, 'leads_api_rows_served_total', { route: 'GET /v1/leads' }), 6, '3 pages of 2');
  assert.is(
    delta(before, after, 'leads_api_http_requests_total', { route: 'GET /v1/leads/{id}', status_class: '4xx' }),
    1,
  );
  assert.is(
    delta(before, after, 'leads_api_http_requests_total', { route: 'other', status_class: '4xx' }),
    1,
    'an unknown path is `other`, never its raw path',
  );
  assert.not.match(after, /\{[^}]*(nowhere|999999999)[^}]*\}/, 'no raw path in a label'); // in the labels (a sample's value may hold those digits)
  // the scrape itself is counted under its own route
  assert.ok((sample(after, 'leads_api_http_requests_total', { route: 'GET /metrics', status_class: '2xx' }) ?? 0) >= 1);
  // every store operation is timed: each keyed request counted its hourly window
  assert.ok(
    delta(before, after, 'leads_api_state_store_operation_duration_seconds_count', {
      operation: 'hitRateLimit',
      outcome: 'ok',
    }) >= 5,
  );
  // the default process metrics are there, with the prefix
  assert.ok(sample(after, 'leads_api_process_cpu_user_seconds_total') !== undefined);
});

test('429s are counted by reason', async () => {
  const before = await scrape();
  // AUTH_FAIL_LIMIT=2: the third unknown key from this address is a 429
  const guesses = ['lk_ea_' + 'A'.repeat(43), 'lk_ea_' + 'B'.repeat(43), 'lk_ea_' + 'C'.repeat(43)];
  const answers = [];
  for (const g of guesses) answers.push(await api.request('/v1/meta', { key: g }));
  assert.equal(
    answers.map((r) => r.status),
    [401, 401, 429],
  );
  // a commonwealth key asking for more rows than are left today (a file larger than the whole
  // budget is a 403 budget_too_small, not counted here): 600 rows spent, then a 500-row file
  const head = await api.request('/v1/export/applications.csv', { method: 'HEAD', key: api.keys.commonwealth });
  const rows = Number(head.headers.get('x-export-rows'));
  assert.ok(rows > 1000, `the tiny release holds more than a commonwealth day's 1,000 rows (${rows})`);
  const spent = await api.request('/v1/export/applications?limit=600', { key: api.keys.commonwealth });
  assert.is(spent.status, 200, spent.text.slice(0, 200));
  const refused = await api.request('/v1/export/applications?limit=500', { key: api.keys.commonwealth });
  assertProblem(refused, 429, 'budget_exhausted');
  await counted(
    ...answers.map((r) => r.headers.get('x-request-id')),
    head.headers.get('x-request-id'),
    spent.headers.get('x-request-id'),
    refused.headers.get('x-request-id'),
  );
  const after = await scrape();
  assert.is(delta(before, after, 'leads_api_http_429_total', { reason: 'too_many_failed_attempts' }), 1);
  assert.is(delta(before, after, 'leads_api_http_429_total', { reason: 'budget_exhausted' }), 1);
  assert.is(delta(before, after, 'leads_api_http_requests_total', { route: 'GET /v1/meta', status_class: '4xx' }), 3);
  assert.is(
    delta(before, after, 'leads_api_rows_served_total', { route: 'GET /v1/export/applications.csv' }),
    0,
    'a quote serves nothing',
  );
  assert.is(
    delta(before, after, 'leads_api_rows_served_total', { route: 'GET /v1/export/applications' }),
    600,
    'the refused page serves nothing',
  );
});

test('a file export runs, is counted with its rows, and exports_running is back to 0', async () => {
  const before = await scrape();
  const res = await api.request('/v1/export/applications.jsonl?county=Cork', { key: api.keys.custom });
  assert.is(res.status, 200);
  const rows = Number(res.headers.get('x-export-rows'));
  assert.ok(rows > 0);
  await counted(res.headers.get('x-request-id'));
  const after = await scrape();
  assert.is(
    delta(before, after, 'leads_api_http_requests_total', {
      route: 'GET /v1/export/applications.jsonl',
      status_class: '2xx',
    }),
    1,
  );
  assert.is(delta(before, after, 'leads_api_rows_served_total', { route: 'GET /v1/export/applications.jsonl' }), rows);
  assert.is(sample(after, 'leads_api_exports_running'), 0);
});

test('release age and index build time, the webhook queue and the usage ledger backlog are reported at scrape time', async () => {
  const created = await api.request('/v1/webhooks', {
    method: 'POST',
    body: { url: 'http://127.0.0.1:9/hook', filter: 'county=Cork' },
  });
  assert.is(created.status, 201, created.text);
  const queuedAt = new Date(T - 90_000).toISOString();
  assert.ok(
    await api.store.webhooks.enqueue(created.body.id, [
      { id: 'evt_' + '0'.repeat(24), type: 'lead.new', created_at: queuedAt, body: '{}', lead_count: 0 },
    ]),
  );
  const text = await scrape();
  const release = api.server.releases.current();
  assert.is(
    sample(text, 'leads_api_release_age_seconds', { release: release.id }),
    (T - Date.parse(release.manifest.built_at)) / 1000,
  );
  assert.ok((sample(text, 'leads_api_release_index_build_seconds') ?? 0) > 0, 'the index build took some time');
  assert.is(sample(text, 'leads_api_webhook_queue_depth', { state: 'queued' }), 1);
  assert.is(sample(text, 'leads_api_webhook_queue_depth', { state: 'held' }), 0);
  assert.is(sample(text, 'leads_api_webhook_oldest_pending_seconds'), 90);
  assert.is(sample(text, 'leads_api_usage_ledger_pending_requests'), api.server.ledger.pendingRequests);
  assert.ok(sample(text, 'leads_api_usage_ledger_flush_lag_seconds') !== undefined);
});

test('the usage ledger flush lag grows while the store cannot be written and is 0 once the counts are written', async () => {
  const dir = tempDir('leads-obs-ledger-');
  const store = openStateStore(`file:${join(dir, 'state.sqlite')}`, { busyTimeoutMs: 0 });
  const account = await store.createAccount('acme', 'premium');
  const key = generateKey('ent_api');
  await store.insertKey({
    id: key.id,
    account_id: account.id,
    scope: 'ent_api',
    name: null,
    display_prefix: key.displayPrefix,
    hash: key.hash,
  });
  let t = T;
  const ledger = new UsageLedger(store, { flushMs: 3_600_000, now: () => t });
  const metrics = new ApiMetrics();
  metrics.observe({ now: () => t, ledger: () => ({ pendingRequests: ledger.pendingRequests, lagMs: ledger.lagMs }) });
  const lag = async (): Promise<number | undefined> =>
    sample((await metrics.scrape()).body, 'leads_api_usage_ledger_flush_lag_seconds');
  const lock = new Database(join(dir, 'state.sqlite'));
  try {
    assert.is(await lag(), 0, 'nothing pending');
    ledger.record(key.id, 'GET /v1/meta', 200, 0);
    t += 4_000;
    ledger.record(key.id, 'GET /v1/meta', 200, 0);
    assert.is(await lag(), 4, 'since the oldest count');
    lock.exec('BEGIN EXCLUSIVE');
    await ledger.flush(); // SQLITE_BUSY: the counts stay in memory
    t += 6_000;
    assert.is(await lag(), 10, 'a failed flush keeps the age of what it could not write');
    lock.exec('ROLLBACK');
    await ledger.flush();
    assert.is(await lag(), 0, 'written');
    assert.is(ledger.pendingRequests, 0);
  } finally {
    lock.close();
    await ledger.stop();
    await store.close();
  }
});

test('/metrics on the main port needs the METRICS_TOKEN (401 otherwise); the METRICS_PORT listener on 127.0.0.1 needs none', async () => {
  const refused: Record<string, string>[] = [
    {},
    { Authorization: 'Bearer wrong-token-of-the-same-kind-0123456789abcde' },
    { Authorization: TOKEN },
  ];
  for (const headers of refused) {
    const res = await fetch(`${api.baseUrl}/metrics`, { headers });
    assertProblem({ status: res.status, headers: res.headers, body: await res.json() }, 401, 'invalid_metrics_token');
    assert.is(res.headers.get('www-authenticate'), 'Bearer realm="metrics"');
  }
  const ok = await fetch(`${api.baseUrl}/metrics`, { headers: { Authorization: `Bearer ${TOKEN}` } });
  assert.is(ok.status, 200);
  assert.match(ok.headers.get('content-type')!, /^text\/plain; version=0\.0\.4/);
  assert.is(ok.headers.get('cache-control'), 'no-store');
  assert.match(await ok.text(), /^# HELP leads_api_/m);
  assert.match(api.server.metricsUrl!, /^http:\/\/127\.0\.0\.1:\d+$/);
  const side = await fetch(`${api.server.metricsUrl}/metrics`);
  assert.is(side.status, 200);
  assert.match(await side.text(), /leads_api_http_requests_total\{route="GET \/metrics",status_class="2xx"\}/);
  assert.is((await fetch(`${api.server.metricsUrl}/v1/meta`)).status, 404, 'the metrics listener serves nothing else');
});

test('without METRICS_TOKEN the main port has no /metrics (404)', async () => {
  const config = loadApiConfig({}, { publicBaseUrl: 'http://localhost/v1' });
  assert.is(config.metricsToken, '');
  const app = createApp(config, {
    db: null as never,
    releases: null as never,
    store: { app: null } as never,
    clock: () => new Date(T),
    log: () => {},
  });
  const server = http.createServer(app.callback()).listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  try {
    const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/metrics`, {
      headers: { Authorization: `Bearer ${TOKEN}` },
    });
    assertProblem({ status: res.status, headers: res.headers, body: await res.json() }, 404, 'not_found');
  } finally {
    await new Promise((r) => server.close(r));
  }
});

test("several processes' metrics in one scrape (API_WORKERS): counters and histograms summed, a release age or a ledger lag not", async () => {
  const now = Date.parse('2026-11-20T10:00:00Z');
  const workers = [new ApiMetrics(), new ApiMetrics()];
  for (const [i, m] of workers.entries()) {
    m.observe({
      release: () => ({ id: 'r1', builtAt: '2026-11-20T09:00:00Z' }),
      ledger: () => ({ pendingRequests: 2, lagMs: 1000 * (i + 1) }),
      now: () => now,
    });
    for (let n = 0; n <= i; n++) m.request('GET /v1/meta', 200, 0.003, 1, null);
  }
  const { body } = await aggregateMetrics(await Promise.all(workers.map((m) => m.registry.getMetricsAsJSON())));
  assert.is(sample(body, 'leads_api_http_requests_total', { route: 'GET /v1/meta', status_class: '2xx' }), 3);
  assert.is(
    sample(body, 'leads_api_http_request_duration_seconds_count', { route: 'GET /v1/meta', status_class: '2xx' }),
    3,
  );
  assert.is(
    sample(body, 'leads_api_http_request_duration_seconds_bucket', {
      route: 'GET /v1/meta',
      status_class: '2xx',
      le: '0.005',
    }),
    3,
  );
  assert.is(sample(body, 'leads_api_rows_served_total', { route: 'GET /v1/meta' }), 3);
  assert.is(sample(body, 'leads_api_release_age_seconds', { release: 'r1' }), 3600, 'the age, not twice it');
  assert.is(sample(body, 'leads_api_usage_ledger_pending_requests'), 4, 'pending requests add up');
  assert.is(sample(body, 'leads_api_usage_ledger_flush_lag_seconds'), 2, 'the longest lag');
  // a dead worker's counters stay in the totals; its gauges go
  const dead = cumulativeMetrics(await workers[1]!.registry.getMetricsAsJSON());
  assert.ok(dead.some((m) => m.name === 'leads_api_http_requests_total'));
  assert.not.ok(dead.some((m) => m.name === 'leads_api_release_age_seconds'));
  const retired = await mergeSnapshots([dead, dead]);
  const kept = (await aggregateMetrics([await workers[0]!.registry.getMetricsAsJSON(), retired])).body;
  assert.is(sample(kept, 'leads_api_http_requests_total', { route: 'GET /v1/meta', status_class: '2xx' }), 5);
  assert.is(sample(kept, 'leads_api_release_age_seconds', { release: 'r1' }), 3600);
  assert.is(sample(kept, 'leads_api_usage_ledger_pending_requests'), 2);
});

test('a metrics object with a scrape source answers from it (a cluster worker asks its primary)', async () => {
  const m = new ApiMetrics({
    scrape: async () => ({ body: 'from the primary\n', contentType: 'text/plain; version=0.0.4; charset=utf-8' }),
  });
  m.request('GET /v1/meta', 200, 0.001, 0, null);
  assert.is((await m.scrape()).body, 'from the primary\n');
});

test('METRICS_TOKEN shorter than 32 characters, a bad METRICS_PORT or LOG_LEVEL stop the start', () => {
  assert.throws(() => loadApiConfig({ METRICS_TOKEN: 'short' }), /METRICS_TOKEN must be at least 32 characters/);
  assert.throws(() => loadApiConfig({ METRICS_PORT: '70000' }), /METRICS_PORT must be an integer between 0 and 65535/);
  assert.throws(
    () => loadApiConfig({ LOG_LEVEL: 'loud' }),
    /LOG_LEVEL must be one of trace, debug, info, warn, error, fatal, silent/,
  );
  const c = loadApiConfig({ METRICS_PORT: '9464', LOG_LEVEL: 'warn' });
  assert.equal([c.metricsPort, c.metricsHost, c.logLevel], [9464, '127.0.0.1', 'warn']);
  assert.is(loadApiConfig({}).metricsPort, null, 'no metrics listener unless asked for');
});

test.run();
