/**
 * The usage ledger is durable: the real server process (`node api/server.ts`) is stopped with
 * SIGTERM after a known set of requests and started again; the ledger it serves then equals the
 * requests actually made. A SIGKILL loses at most the last second (the flush interval). And the
 * in-memory buffer keeps its counts when a write fails.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { UsageLedger } from '../../../api/access/ledger.ts';
import { loaderArgs } from '../../../api/startup/loader-args.ts';
import { openSqliteStore } from '../../../api/state/sqlite.ts';
import type { UsageDelta } from '../../../api/state/store-interface.ts';
import { addKey, tinyRelease } from '../../helpers/api.ts';
import { REPO_ROOT, tempDir } from '../../helpers/tmp.ts';
import { waitUntil } from '../../helpers/wait.ts';
import { enginePackPreload } from '../../helpers/engine-pack-preload.ts';

let dataDir: string;
let key: { id: string; raw: string };

test.before(async () => {
  const rel = await tinyRelease(7);
  dataDir = tempDir('leads-ledger-');
  mkdirSync(join(dataDir, 'releases'));
  symlinkSync(rel.dir, join(dataDir, 'releases', rel.id));
  symlinkSync(`releases/${rel.id}`, join(dataDir, 'current'));
  const store = openSqliteStore(join(dataDir, 'state.sqlite'));
  const a = await store.createAccount('durable', 'premium');
  const k = await addKey(store, a.id, 'ent_api');
  await store.close();
  key = { id: k.id, raw: k.raw };
});

/**
 * Start `node api/server.ts` on the data folder (with the test process's loader flags: none in the
 * test runner's workers, which strip the types themselves; what is tested is the process's stop
 * and start, not how its TypeScript is loaded), its indexes from the tests' packs
 * (test/helpers/engine-pack-preload.ts); resolves with its origin once it listens.
 */
function serve(): Promise<{ child: ChildProcess; url: string; exited: Promise<number | null> }> {
  const child = spawn(process.execPath, [...loaderArgs(), ...enginePackPreload(), 'api/server.ts'], {
    cwd: REPO_ROOT,
    env: { ...process.env, DATA_DIR: dataDir, DATABASE_URL: '', PORT: '0', HOST: '127.0.0.1', DUCKDB_CONNECTIONS: '1' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  return new Promise((resolve, reject) => {
    let err = '';
    child.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      const m = /listening on (\S+)\/v1/.exec(err);
      if (m) resolve({ child, url: m[1]!, exited });
    });
    exited.then((code) => reject(new Error(`server exited (${code}) before listening: ${err}`)));
  });
}

/** Requests of the key the state file holds (read-only, beside the running server: WAL mode). */
function requestsInStore(): number {
  const db = new Database(join(dataDir, 'state.sqlite'), { readonly: true, fileMustExist: true });
  try {
    return (
      db.prepare('SELECT coalesce(sum(requests), 0) AS n FROM usage_daily WHERE key_id = ?').get(key.id) as {
        n: number;
      }
    ).n;
  } finally {
    db.close();
  }
}

const get = (url: string, path: string) =>
  fetch(url + path, { headers: { Authorization: `Bearer ${key.raw}` } }).then(async (r) => ({
    status: r.status,
    body: (await r.json().catch(() => null)) as any,
  }));

test('SIGTERM: every request made is in the ledger after a restart (per route, errors, rows)', async () => {
  const s = await serve();
  const made = { meta: 0, list: 0, rows: 0, errors: 0 };
  const batch: Promise<unknown>[] = [];
  for (let i = 0; i < 120; i++) {
    if (i % 4 === 0) {
      made.list++;
      made.rows += 3;
      batch.push(get(s.url, '/v1/leads?page_size=3'));
    } else if (i % 10 === 1) {
      made.errors++;
      batch.push(get(s.url, '/v1/leads?bogus=1'));
    } else {
      made.meta++;
      batch.push(get(s.url, '/v1/meta'));
    }
    if (batch.length === 16) await Promise.all(batch.splice(0));
  }
  await Promise.all(batch);
  s.child.kill('SIGTERM'); // at once: the last second of counts is still in memory
  assert.is(await s.exited, 0, 'clean exit on SIGTERM');
  const again = await serve();
  try {
    const u = await get(again.url, '/v1/account/usage');
    assert.is(u.status, 200);
    const routes = u.body.keys[0].days[0].routes as { route: string; requests: number; errors: number; rows: number }[];
    assert.equal(u.body.totals, { requests: 120, errors: made.errors, rows: made.rows });
    assert.equal(routes, [
      { route: 'GET /v1/leads', requests: made.list + made.errors, errors: made.errors, rows: made.rows },
      { route: 'GET /v1/meta', requests: made.meta, errors: 0, rows: 0 },
    ]);
    // SIGKILL: what was flushed (every second) survives
    for (let i = 0; i < 10; i++) await get(again.url, '/v1/meta');
    // the ledger's timer writes them within a second: read the state file until its rows hold them
    await waitUntil(
      'the usage ledger rows hold the 131 requests made so far',
      () => requestsInStore() === 120 + 1 + 10,
      { attempts: 120, intervalMs: 50 },
    );
    again.child.kill('SIGKILL');
    await again.exited;
  } finally {
    again.child.kill('SIGKILL');
  }
  const third = await serve();
  try {
    const u = await get(third.url, '/v1/account/usage');
    assert.is(
      u.body.totals.requests,
      120 + 1 + 10,
      'the usage call and the 10 requests before the SIGKILL were flushed',
    );
  } finally {
    third.child.kill('SIGTERM');
    await third.exited;
  }
});

test('UsageLedger: aggregates in memory, keeps counts when a write fails, writes them on stop', async () => {
  const writes: UsageDelta[][] = [];
  let fail = true;
  const logs: string[] = [];
  const ledger = new UsageLedger(
    {
      async addUsage(d) {
        if (fail) throw new Error('store down');
        writes.push(d);
      },
      async prune() {},
    },
    { flushMs: 60_000, now: () => Date.parse('2026-11-20T10:00:00Z'), log: (l) => void logs.push(l) },
  );
  ledger.record('key_a', 'GET /v1/meta', 200, 0);
  ledger.record('key_a', 'GET /v1/meta', 404, 0);
  ledger.record('key_a', 'GET /v1/leads', 200, 25);
  await ledger.flush();
  assert.equal(writes, []);
  assert.match(logs.join('\n'), /flush failed, 2 rows kept/);
  ledger.record('key_a', 'GET /v1/meta', 200, 0);
  assert.is(ledger.pendingRequests, 4);
  fail = false;
  await ledger.stop();
  assert.equal(writes, [
    [
      { key_id: 'key_a', day: '2026-11-20', route: 'GET /v1/meta', requests: 3, errors: 1, rows: 0 },
      { key_id: 'key_a', day: '2026-11-20', route: 'GET /v1/leads', requests: 1, errors: 0, rows: 25 },
    ],
  ]);
  assert.is(ledger.pendingRequests, 0);
});

test.run();
