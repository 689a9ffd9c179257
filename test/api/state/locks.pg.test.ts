/**
 * Issue 31 faults 1–3: a state store another process or session locks, or that turns read-only,
 * answers keyed requests with 503 `service_degraded` within STATE_BUSY_TIMEOUT_MS (+1 s) while
 * `/healthz` keeps answering without waiting for the store (the event loop stays free: api/state/sqlite.ts waits
 * for the lock on timers, api/state/postgres.ts bounds every operation); `/readyz` is 503 while
 * writes fail and 200 within 5 s after; every counted request reaches the usage ledger.
 *
 * The faults are real: the `sqlite3` command-line shell holding `BEGIN EXCLUSIVE` on the state
 * file; a PostgreSQL session holding `LOCK TABLE rate_counters IN ACCESS EXCLUSIVE MODE`; a
 * PostgreSQL role switched to `default_transaction_read_only` (what a failover to a standby
 * looks like), its connections cut so the pool reconnects read-only.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { utcDay } from '../../../api/access/limits.ts';
import { startTestApi, type TestApi } from '../../helpers/api.ts';
import { pgSchemaUrl, TEST_PG_URL } from '../../helpers/store-backends.ts';
import { testIf } from '../../helpers/skip.ts';

const BUSY_MS = 1500;
const withShell = testIf(
  test,
  spawnSync('sqlite3', ['-version']).status === 0
    ? null
    : 'the sqlite3 command-line shell is not installed (apt-get install sqlite3)',
);
const CLIENTS = 10;
/**
 * How long a fault is held at least, /healthz probed all along: a read-only store answers its 503s
 * in ~0.3 s, and a p95 over the ~30 probes of so short a window is its two slowest (the moments the
 * pool reconnects); the lock cases hold ~3 s (two rounds of 1.5 s timeouts).
 */
const MIN_HOLD_MS = 3000;

/**
 * GET /healthz every 20 ms (after one warm-up request) until `stop()`; the answers' times, ms.
 * The bound is checked on the 95th percentile (< 100 ms) and the slowest (< 500 ms): the shared
 * test box (load average above 10 while other suites run) deschedules a process for 100 ms and
 * more now and then, whereas an event loop blocked by a lock wait (what this guards against)
 * stalls every probe of the fault for seconds.
 */
function sampleHealth(origin: string): { stop: () => Promise<{ p95: number; max: number; n: number }> } {
  let running = true;
  const times: number[] = [];
  const loop = (async () => {
    await (await fetch(`${origin}/healthz`)).arrayBuffer();
    while (running) {
      const t0 = performance.now();
      const res = await fetch(`${origin}/healthz`);
      await res.arrayBuffer();
      times.push(performance.now() - t0);
      assert.is(res.status, 200);
      await sleep(20);
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      times.sort((x, y) => x - y);
      return { p95: times[Math.floor(times.length * 0.95)]!, max: times.at(-1)!, n: times.length };
    },
  };
}

/** GET /readyz until its status is `status` (at most `withinMs`); how long that took, ms. */
async function readyBecomes(origin: string, status: number, withinMs: number): Promise<number> {
  const t0 = performance.now();
  for (;;) {
    const res = await fetch(`${origin}/readyz`);
    await res.arrayBuffer();
    if (res.status === status) return performance.now() - t0;
    if (performance.now() - t0 > withinMs)
      assert.unreachable(`/readyz still ${res.status} after ${withinMs} ms (wanted ${status})`);
    await sleep(100);
  }
}

/** The requests and errors the ledger holds for the key on GET /v1/meta today. */
async function metaUsage(api: TestApi, key: string): Promise<{ requests: number; errors: number }> {
  await api.server.ledger.flush();
  const keyId = (await api.store.listKeys()).find((k) => k.scope === 'custom')!.id;
  assert.ok(key);
  const account = (await api.store.getAccountByName('test'))!;
  const today = utcDay(Date.now());
  const r = (await api.store.accountUsage(account.id, today, today)).routes.find(
    (x) => x.key_id === keyId && x.route === 'GET /v1/meta',
  );
  return { requests: r?.requests ?? 0, errors: r?.errors ?? 0 };
}

/** The access log's lines of keyed GET /v1/meta requests from line `from` on: the key (null when unverified) and the status. */
function accessLines(api: TestApi, from: number): { key_id: string | null; status: number }[] {
  return api.logs
    .slice(from)
    .filter((l) => l.startsWith('{') && l.includes('"route":"GET /v1/meta"'))
    .map((l) => JSON.parse(l) as { key_id: string | null; status: number });
}

/**
 * The acceptance, whatever the fault: with the fault on, CLIENTS concurrent keyed requests (two
 * rounds) each get 503 service_degraded within BUSY_MS + 1 s, /healthz never waits for the store (p95 < BUSY_MS / 4, slowest < BUSY_MS), /readyz
 * turns 503; with it off, /readyz is 200 within 5 s, requests are served, the ledger has every one
 * the server could attribute to the key (the access log names the others: key lookups the fault failed).
 */
async function faultHolds(
  api: TestApi,
  on: () => Promise<void>,
  off: () => Promise<void>,
): Promise<Record<string, number>> {
  const key = api.keys.custom;
  assert.is((await api.request('/v1/meta', { key })).status, 200);
  const before = await metaUsage(api, key);
  const logsBefore = api.logs.length;
  const health = sampleHealth(api.baseUrl);
  let slowest = 0;
  let sent = 0;
  await on();
  const held = performance.now();
  try {
    for (let round = 0; round < 2; round++) {
      const answers = await Promise.all(
        Array.from({ length: CLIENTS }, async () => {
          const t0 = performance.now();
          const res = await api.request('/v1/meta', { key });
          return { res, ms: performance.now() - t0 };
        }),
      );
      sent += CLIENTS;
      for (const { res, ms } of answers) {
        assert.is(res.status, 503, res.text);
        assert.is(res.body.code, 'service_degraded');
        assert.ok(ms < BUSY_MS + 1000, `503 after ${Math.round(ms)} ms (timeout ${BUSY_MS} ms)`);
        slowest = Math.max(slowest, ms);
      }
    }
    await readyBecomes(api.baseUrl, 503, 3000);
    await sleep(Math.max(0, MIN_HOLD_MS - (performance.now() - held)));
  } finally {
    await off();
  }
  const readyAfterMs = await readyBecomes(api.baseUrl, 200, 5000);
  const h = await health.stop();
  // Health never waits for the store: a probe that touched it would take the whole store timeout
  // (BUSY_MS) while the fault holds. Bounds relative to that timeout, not absolute speeds (the
  // suite runs files in parallel on a shared 2-core box; the figures are printed).
  assert.ok(
    h.p95 < BUSY_MS / 4 && h.max < BUSY_MS,
    `/healthz p95 ${Math.round(h.p95)} ms, slowest ${Math.round(h.max)} ms (${h.n} probes; store timeout ${BUSY_MS} ms)`,
  );
  assert.is((await api.request('/v1/meta', { key })).status, 200);
  const after = await metaUsage(api, key);
  // A request whose key could not be read (the store failed the lookup: PostgreSQL's cut also
  // drops the key-change listener, so keys are read again until it is back) is answered 503
  // before the key is known: it is nobody's usage, and the access log says so (key_id null).
  const logged = accessLines(api, logsBefore);
  const unverified = logged.filter((l) => l.key_id === null);
  for (const l of unverified) assert.is(l.status, 503, 'only a failed key lookup goes unattributed');
  assert.is(logged.length, sent + 1, 'every request answered and logged');
  assert.ok(unverified.length <= CLIENTS / 2, `${unverified.length} of ${sent} requests could not read their key`);
  assert.equal(
    { requests: after.requests - before.requests, errors: after.errors - before.errors },
    { requests: sent + 1 - unverified.length, errors: sent - unverified.length },
    'every request of the verified key counted, none lost',
  );
  return {
    slowest503Ms: Math.round(slowest),
    healthzP95Ms: Math.round(h.p95),
    healthzMaxMs: Math.round(h.max),
    healthzProbes: h.n,
    readyAfterMs: Math.round(readyAfterMs),
  };
}

withShell(
  'SQLite: the sqlite3 shell holds BEGIN EXCLUSIVE — 503 within the timeout, /healthz fast, /readyz 503 then 200',
  async () => {
    const api = await startTestApi({ config: { stateBusyTimeoutMs: BUSY_MS } });
    // started before the measurement: spawning a child from this (large) process stalls its event loop
    const shell = spawn('sqlite3', [join(api.dataDir, 'state.sqlite')], { stdio: ['pipe', 'pipe', 'inherit'] });
    const said = (word: string) =>
      new Promise<void>((resolve) => shell.stdout!.on('data', (d: Buffer) => d.toString().includes(word) && resolve()));
    const started = said('started');
    shell.stdin!.write("SELECT 'started';\n");
    await started;
    try {
      const figures = await faultHolds(
        api,
        async () => {
          const locked = said('locked');
          shell.stdin!.write("BEGIN EXCLUSIVE;\nSELECT 'locked';\n");
          await locked;
        },
        async () => {
          const unlocked = said('unlocked');
          shell.stdin!.write("ROLLBACK;\nSELECT 'unlocked';\n");
          await unlocked;
        },
      );
      console.log(`  sqlite lock: ${JSON.stringify(figures)}`);
    } finally {
      shell.stdin!.end('.quit\n');
      await api.close();
    }
  },
);

test('PostgreSQL: another session holds LOCK TABLE rate_counters — 503 within the timeout, /healthz fast, /readyz 503 then 200', async () => {
  const schema = `locks_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: TEST_PG_URL });
  await admin.connect();
  const api = await startTestApi({ config: { stateBusyTimeoutMs: BUSY_MS, databaseUrl: pgSchemaUrl(schema) } });
  try {
    const figures = await faultHolds(
      api,
      async () => {
        await admin.query('BEGIN');
        await admin.query(`LOCK TABLE ${pg.escapeIdentifier(schema)}.rate_counters IN ACCESS EXCLUSIVE MODE`);
      },
      async () => void (await admin.query('ROLLBACK')),
    );
    console.log(`  postgres lock: ${JSON.stringify(figures)}`);
  } finally {
    await api.close();
    await admin.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(schema)} CASCADE`);
    await admin.end();
  }
});

test('PostgreSQL: the store turns read-only (a standby) — 503 service_degraded, /readyz 503, then 200 once writable', async () => {
  const schema = `readonly_${randomBytes(4).toString('hex')}`;
  const role = `leads_${schema}`;
  const admin = new pg.Client({ connectionString: TEST_PG_URL });
  await admin.connect();
  const url = new URL(pgSchemaUrl(schema));
  url.username = role;
  url.password = '';
  const database = url.pathname.slice(1);
  await admin.query(`CREATE ROLE ${pg.escapeIdentifier(role)} LOGIN`);
  await admin.query(`GRANT CREATE ON DATABASE ${pg.escapeIdentifier(database)} TO ${pg.escapeIdentifier(role)}`);
  const cut = () => admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1', [role]);
  const api = await startTestApi({ config: { stateBusyTimeoutMs: BUSY_MS, databaseUrl: url.toString() } });
  try {
    const figures = await faultHolds(
      api,
      async () => {
        await admin.query(`ALTER ROLE ${pg.escapeIdentifier(role)} SET default_transaction_read_only = on`);
        await cut();
        await readyBecomes(api.baseUrl, 503, 5000); // the pool has reconnected read-only
      },
      async () => {
        await admin.query(`ALTER ROLE ${pg.escapeIdentifier(role)} RESET default_transaction_read_only`);
        await cut();
      },
    );
    assert.match(api.logs.join('\n'), /read-only transaction/);
    console.log(`  postgres read-only: ${JSON.stringify(figures)}`);
  } finally {
    await api.close();
    await admin.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(schema)} CASCADE`);
    await admin.query(`REVOKE CREATE ON DATABASE ${pg.escapeIdentifier(database)} FROM ${pg.escapeIdentifier(role)}`);
    await admin.query(`DROP ROLE IF EXISTS ${pg.escapeIdentifier(role)}`);
    await admin.end();
  }
});

test.run();
