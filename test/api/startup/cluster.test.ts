/**
 * API_WORKERS (api/startup/cluster.ts): the real command `node api/server.ts` (with the test
 * process's loader flags, test/helpers/topology.ts) with API_WORKERS=2 on a tiny release, a SQLite state file and keys made by the operators' CLI.
 * Both workers answer on the one port (which worker served a request is read from the access
 * log's `pid`, no public header); a key revoked with the CLI is refused by every worker at once;
 * the aggregated metrics (METRICS_PORT on the primary, /metrics on the API port) count every
 * request once, and keep counting across a worker's death; a SIGKILLed worker is replaced;
 * SIGTERM to the primary stops every worker and exits 0; a SIGKILLed primary leaves no worker
 * behind. Also API_WORKERS's validation.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import http from 'node:http';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { readdirSync } from 'node:fs';
import { workerConfig } from '../../../api/startup/cluster.ts';
import { ApiConfigError, loadApiConfig } from '../../../api/config.ts';
import { assertProblem, tinyDataDir } from '../../helpers/api.ts';
import { startReplica, type Replica } from '../../helpers/topology.ts';
import { waitUntil } from '../../helpers/wait.ts';
import { sample } from '../../helpers/prometheus.ts';
import { leads as runLeads } from '../../helpers/cli.ts';

const TOKEN = 'metrics-token-for-the-cluster-test-0123456789';

let dataDir: string;
let primary: Replica;
/** Every JSON line the primary and its workers wrote to stderr. */
const lines: Record<string, any>[] = [];
let metricsOrigin: string;
/** A second server, started while the first one's tests run, for the SIGKILLed primary; its lines. */
let second: Promise<Replica>;
const secondLines: Record<string, any>[] = [];

function leads(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return runLeads(args, { ...process.env, DATA_DIR: dataDir, DATABASE_URL: '' });
}

async function newKey(name: string): Promise<{ id: string; key: string }> {
  const r = await leads('keys', 'create', '--account', 'acme', '--scope', 'ent_api', '--name', name, '--json');
  assert.is(r.code, 0, r.stderr);
  return JSON.parse(r.stdout);
}

/** GET on a connection of its own (no keep-alive): the primary hands each new connection to the next worker. */
function fresh(
  origin: string,
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Headers; body: any; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.get(origin + path, { agent: false, headers: { Connection: 'close', ...headers } }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (c: string) => (text += c));
      res.on('end', () => {
        const h = new Headers();
        for (const [k, v] of Object.entries(res.headers)) if (typeof v === 'string') h.set(k, v);
        const json = /json/.test(res.headers['content-type'] ?? '');
        resolve({ status: res.statusCode!, headers: h, body: json && text ? JSON.parse(text) : null, text });
      });
    });
    req.on('error', reject);
  });
}

/** The pids of the access-log lines of these request ids, once all are logged (a request is logged when its response is done). */
async function servedBy(requestIds: string[]): Promise<Set<number>> {
  const logged = (): Record<string, any>[] =>
    lines.filter((l) => l.msg === 'request' && requestIds.includes(l.request_id));
  await waitUntil(`access-log lines of ${requestIds.length} requests`, () => logged().length === requestIds.length, {
    attempts: 400,
    intervalMs: 25,
  });
  return new Set(logged().map((l) => l.pid as number));
}

/** `n` requests for /v1/meta with `key`, each on a new connection: their statuses, and the pids that served them. */
async function burst(
  n: number,
  key: string,
): Promise<{ statuses: number[]; pids: Set<number>; last: Awaited<ReturnType<typeof fresh>> }> {
  const res = [];
  for (let i = 0; i < n; i++) res.push(await fresh(primary.origin, '/v1/meta', { Authorization: `Bearer ${key}` }));
  return {
    statuses: res.map((r) => r.status),
    pids: await servedBy(res.map((r) => r.headers.get('x-request-id')!)),
    last: res.at(-1)!,
  };
}

/** The workers' pids, from the primary's `worker <i> (pid <p>) listening` lines (the latest per worker). */
function workerPids(): Map<number, number> {
  const m = new Map<number, number>();
  for (const l of lines) {
    const w = /^worker (\d+) \(pid (\d+)\) listening$/.exec(l.msg ?? '');
    if (w && l.pid === primary.pid) m.set(Number(w[1]), Number(w[2]));
  }
  return m;
}

const scrapePort = async (): Promise<string> => {
  const res = await fetch(`${metricsOrigin}/metrics`);
  assert.is(res.status, 200);
  return res.text();
};

/** Access-log lines of GET /v1/meta with this status class, from every worker that ever ran. */
const loggedMeta = (cls: string): number =>
  lines.filter((l) => l.msg === 'request' && l.route === 'GET /v1/meta' && `${Math.floor(l.status / 100)}xx` === cls)
    .length;

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Start `api/server.ts` with API_WORKERS=2 on `dataDir`, collecting its lines into `into`. */
function startCluster(into: Record<string, any>[], env: Record<string, string> = {}): Promise<Replica> {
  return startReplica(
    {
      DATA_DIR: dataDir,
      PORT: '0',
      API_WORKERS: '2',
      DUCKDB_CONNECTIONS: '1',
      DUCKDB_THREADS: '1',
      KEY_CACHE_MS: '60000',
      ...env,
    },
    {
      onLine: (l) => {
        try {
          into.push(JSON.parse(l));
        } catch {
          into.push({ msg: l }); // a stack trace, say
        }
      },
      enginePacks: true,
    },
  );
}

test.before(async () => {
  dataDir = await tinyDataDir();
  const r = await leads('accounts', 'create', '--name', 'acme', '--plan', 'premium', '--json');
  assert.is(r.code, 0, r.stderr);
  primary = await startCluster(lines, { METRICS_PORT: '0', METRICS_TOKEN: TOKEN });
  metricsOrigin = /metrics: +(http:\/\/\S+)\/metrics/.exec(lines.map((l) => l.msg).join('\n'))![1]!;
  second = startCluster(secondLines); // boots while the tests below wait on requests and CLI calls
  second.catch(() => {});
});

test.after(async () => {
  if (primary && alive(primary.pid)) await primary.stop('SIGKILL');
  const p = await second?.catch(() => null);
  if (p && alive(p.pid)) await p.stop('SIGKILL');
  for (const l of [...lines, ...secondLines]) {
    const pid = Number(/^worker \d+ \(pid (\d+)\) listening$/.exec(l.msg ?? '')?.[1]);
    if (pid && alive(pid)) process.kill(pid, 'SIGKILL');
  }
});

test('API_WORKERS: a whole number 1…64 or auto (one per core); default 1', () => {
  assert.is(loadApiConfig({}).apiWorkers, 1);
  assert.is(loadApiConfig({ API_WORKERS: '3' }).apiWorkers, 3);
  assert.is(loadApiConfig({ API_WORKERS: 'auto' }).apiWorkers, Math.min(64, availableParallelism()));
  for (const bad of ['0', '65', '1.5', 'two', '-1']) {
    assert.throws(
      () => loadApiConfig({ API_WORKERS: bad }),
      (e: unknown) =>
        e instanceof ApiConfigError &&
        /API_WORKERS must be a whole number between 1 and 64 or auto/.test((e as Error).message),
      bad,
    );
  }
});

test('each worker runs without a METRICS_PORT listener (the primary has it); only worker 0 runs the webhook scheduler', () => {
  const config = loadApiConfig({ METRICS_PORT: '9464', WEBHOOK_INTERVAL_MS: '60000', API_WORKERS: '2' });
  assert.equal(
    [0, 1, 2].map((i) => [workerConfig(config, i).metricsPort, workerConfig(config, i).webhookIntervalMs]),
    [
      [null, 60_000],
      [null, 0],
      [null, 0],
    ],
  );
  assert.is(workerConfig(config, 1).databaseUrl, config.databaseUrl);
});

test('the primary prints the listening line once, naming its 2 workers; both workers answer on the one port', async () => {
  const listening = lines.filter((l) => /listening on/.test(l.msg ?? ''));
  assert.is(listening.length, 1, 'one listening line');
  assert.match(
    listening[0]!.msg,
    /^leads API listening on http:\/\/127\.0\.0\.1:\d+\/v1 \(2 workers, serving release \d{8}T\d{6}Z\)$/,
  );
  assert.is(listening[0]!.pid, primary.pid, 'printed by the primary');
  const pids = workerPids();
  assert.equal([...pids.keys()].sort(), [0, 1]);
  const key = await newKey('both');
  const b = await burst(12, key.key);
  assert.equal(b.statuses, Array(12).fill(200));
  assert.equal(
    [...b.pids].sort(),
    [...pids.values()].sort(),
    'requests on new connections were served by both workers',
  );
  assert.is(b.last.body._meta.scope, 'ent_api');
});

test('a key revoked with the CLI is refused by every worker at once', async () => {
  const key = await newKey('to revoke');
  const before = await burst(8, key.key); // cached in both workers now (KEY_CACHE_MS 60 s)
  assert.equal(before.statuses, Array(8).fill(200));
  assert.is(before.pids.size, 2);
  const r = await leads('keys', 'revoke', key.id);
  assert.is(r.code, 0, r.stderr);
  const after = await burst(8, key.key);
  assert.equal(after.statuses, Array(8).fill(401), 'refused on the very next requests, whichever worker answers');
  assert.equal([...after.pids].sort(), [...workerPids().values()].sort(), 'by both workers');
  assertProblem(after.last, 401, 'revoked_key');
});

test('the metrics of the whole server: every request counted once, on METRICS_PORT and on /metrics with the token', async () => {
  const key = await newKey('metrics');
  await burst(6, key.key);
  const text = await scrapePort();
  assert.is(
    sample(text, 'leads_api_http_requests_total', { route: 'GET /v1/meta', status_class: '2xx' }),
    loggedMeta('2xx'),
    'the 2xx of every worker, once each',
  );
  assert.is(
    sample(text, 'leads_api_http_requests_total', { route: 'GET /v1/meta', status_class: '4xx' }),
    loggedMeta('4xx'),
  );
  assert.ok(loggedMeta('2xx') >= 26);
  assert.is(sample(text, 'leads_api_cluster_workers'), 2);
  assert.is(sample(text, 'leads_api_cluster_worker_restarts_total'), 0);
  // a gauge every worker reads alike is not summed: the release age is one worker's, not two
  const age = sample(text, 'leads_api_release_age_seconds', {
    release: /serving release (\S+)\)/.exec(lines.find((l) => /listening on/.test(l.msg ?? ''))!.msg)![1]!,
  })!;
  const built = Date.parse('2026-11-09T06:00:00Z');
  assert.ok(Math.abs(age - (Date.now() - built) / 1000) < 120, `release age ${age}`);
  // the API port's /metrics, whichever worker answers, asks the primary: the same totals
  for (let i = 0; i < 2; i++) {
    const res = await fresh(primary.origin, '/metrics', { Authorization: `Bearer ${TOKEN}` });
    assert.is(res.status, 200);
    assert.is(
      sample(res.text, 'leads_api_http_requests_total', { route: 'GET /v1/meta', status_class: '2xx' }),
      loggedMeta('2xx'),
    );
  }
});

test('a SIGKILLed worker is logged and replaced; requests keep being answered, the totals do not drop', async () => {
  const key = await newKey('kill');
  const before = workerPids();
  const totalBefore = sample(await scrapePort(), 'leads_api_http_requests_total', {
    route: 'GET /v1/meta',
    status_class: '2xx',
  })!;
  const victim = before.get(1)!;
  // each worker exports in a folder of its own under EXPORT_TEMP_DIR (<host>-<pid>-<random>)
  const tempOf = (pid: number): string[] =>
    readdirSync(join(dataDir, 'export-tmp')).filter((f) => new RegExp(`-${pid}-[0-9a-f]{8}$`).test(f));
  for (const pid of before.values()) assert.is(tempOf(pid).length, 1, `the export temp folder of ${pid}`);
  process.kill(victim, 'SIGKILL');
  await waitUntil(
    'the primary to log the death',
    () =>
      lines.some(
        (l) => l.pid === primary.pid && (l.msg ?? '').startsWith(`worker 1 (pid ${victim}) was killed by SIGKILL`),
      ),
    { attempts: 200, intervalMs: 25 },
  );
  const meanwhile = await burst(6, key.key);
  assert.equal(meanwhile.statuses, Array(6).fill(200), 'the other worker answers meanwhile');
  assert.equal([...meanwhile.pids], [before.get(0)!]);
  // a worker's start builds the release's indexes in a child at low priority: on a loaded machine
  // (the test runner's parallel files) that takes well over the 30 s this waited before
  await waitUntil('a new worker 1', () => (workerPids().get(1) ?? victim) !== victim, {
    attempts: 2400,
    intervalMs: 50,
  });
  const replacement = workerPids().get(1)!;
  assert.ok(!alive(victim));
  // the replacement's start removed the dead worker's folder, not the live one's
  assert.equal(tempOf(victim), []);
  assert.is(tempOf(before.get(0)!).length, 1);
  assert.is(tempOf(replacement).length, 1);
  const after = await burst(8, key.key);
  assert.equal(after.statuses, Array(8).fill(200));
  assert.equal([...after.pids].sort(), [before.get(0)!, replacement].sort(), 'the replacement serves too');
  const text = await scrapePort();
  const total = sample(text, 'leads_api_http_requests_total', { route: 'GET /v1/meta', status_class: '2xx' })!;
  // the killed worker's counts (as of the last scrape) stay in the totals; what it answered after that scrape is lost with it
  assert.is(total, totalBefore + 14);
  assert.is(sample(text, 'leads_api_cluster_worker_restarts_total'), 1);
  assert.is(sample(text, 'leads_api_cluster_workers'), 2);
});

test('SIGTERM to the primary: every worker stops gracefully, the primary exits 0, no worker is left', async () => {
  const pids = [...workerPids().values()];
  assert.is(pids.length, 2);
  const exit = await primary.stop('SIGTERM');
  assert.equal(exit, { code: 0, signal: null }, primary.tail());
  for (const pid of pids) assert.not.ok(alive(pid), `worker ${pid} still running`);
  for (const pid of pids)
    assert.ok(
      lines.some((l) => l.pid === pid && /stop \(the cluster primary is stopping\)/.test(l.msg ?? '')),
      `worker ${pid} stopped on the primary's word`,
    );
});

test('a SIGKILLed primary leaves no worker running: they see the IPC channel close and stop', async () => {
  const p = await second;
  const pids = secondLines.flatMap((l) => {
    const m = l.pid === p.pid ? /^worker \d+ \(pid (\d+)\) listening$/.exec(l.msg ?? '') : null;
    return m ? [Number(m[1])] : [];
  });
  assert.is(pids.length, 2);
  await p.stop('SIGKILL');
  await waitUntil('both workers to stop', () => pids.every((pid) => !alive(pid)), { attempts: 300, intervalMs: 50 });
  for (const pid of pids)
    assert.ok(
      secondLines.some((l) => l.pid === pid && /the cluster primary is gone/.test(l.msg ?? '')),
      `worker ${pid} stopped gracefully`,
    );
});

test.run();
