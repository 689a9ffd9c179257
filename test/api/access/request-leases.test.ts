/**
 * The hourly counter in blocks (api/access/request-leases.ts) on real SQLite state files: two
 * `RequestLeases` over two connections to one file are two processes (replicas, cluster workers)
 * sharing the store. What must hold: every request gets its own number of the window and none
 * passes the limit, in one process and across two; a quiet key, a frozen clock and a key with a
 * daily budget are counted per request as before; a process refuses before the limit by at most
 * the numbers another process holds unused (`LEASE.max - 1`); a failed reservation fails its
 * request. Time is injected: requests "arrive" every `gapMs`.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { LEASE, RequestLeases, type RequestCount } from '../../../api/access/request-leases.ts';
import { openSqliteStore } from '../../../api/state/sqlite.ts';
import type { StateStore } from '../../../api/state/store-interface.ts';
import { tempDir } from '../../helpers/tmp.ts';

const W = 1_795_000_000 - (1_795_000_000 % 3600);
const DAY = '2026-11-20';
const T0 = W * 1000 + 60_000;

/** A state file and a store on it, whose store calls are counted. */
function processOn(file: string): { store: StateStore; calls: { hit: number; reserve: number } } {
  const store = openSqliteStore(file);
  const calls = { hit: 0, reserve: 0 };
  const counted = Object.create(store) as StateStore;
  counted.hitRateLimit = (...a) => (calls.hit++, store.hitRateLimit(...a));
  counted.reserveRequests = (...a) => (calls.reserve++, store.reserveRequests(...a));
  return { store: counted, calls };
}

/** The window's count in the store, read on a connection of its own. */
function stored(file: string, keyId: string, window = W): number {
  const db = new Database(file, { readonly: true });
  try {
    const r = db.prepare('SELECT count FROM rate_counters WHERE key_id = ? AND window_start = ?').get(keyId, window) as
      { count: number } | undefined;
    return r?.count ?? 0;
  } finally {
    db.close();
  }
}

/** `n` requests of `keyId`, one after another, `gapMs` apart from `t` on. */
async function burst(
  leases: RequestLeases,
  keyId: string,
  n: number,
  o: { t: number; gapMs: number; limit: number; budgeted?: boolean },
): Promise<RequestCount[]> {
  const out: RequestCount[] = [];
  for (let i = 0; i < n; i++)
    out.push(await leases.hit(keyId, W, DAY, o.limit, o.budgeted ?? false, o.t + i * o.gapMs));
  return out;
}

const file = (): string => join(tempDir('leads-leases-'), 'state.sqlite');

test('a frozen clock, a quiet key and a key with a daily budget: counted per request in the store, as before', async () => {
  const f = file();
  const p = processOn(f);
  const frozen = await burst(new RequestLeases(p.store), 'key_frozen', 200, { t: T0, gapMs: 0, limit: 1000 });
  assert.equal(
    frozen.map((c) => c.count),
    Array.from({ length: 200 }, (_, i) => i + 1),
  );
  const quiet = await burst(new RequestLeases(p.store), 'key_quiet', 50, { t: T0, gapMs: LEASE.spanMs, limit: 1000 });
  assert.equal(quiet.at(-1)!.count, 50);
  const budgeted = await burst(new RequestLeases(p.store), 'key_budget', 300, {
    t: T0,
    gapMs: 0.01,
    limit: 1000,
    budgeted: true,
  });
  assert.equal(budgeted.at(-1)!.count, 300);
  assert.equal(p.calls, { hit: 550, reserve: 0 }, 'one store write per request');
  for (const [k, n] of [
    ['key_frozen', 200],
    ['key_quiet', 50],
    ['key_budget', 300],
  ] as const)
    assert.is(stored(f, k), n, k);
});

test('a busy key: numbers 1, 2, 3 … in order from blocks of up to LEASE.max; the store ahead by fewer than LEASE.max', async () => {
  const f = file();
  const p = processOn(f);
  const leases = new RequestLeases(p.store);
  // 10,000 requests a second: 100 per 10 ms span
  const counts = await burst(leases, 'key_busy', 3000, { t: T0, gapMs: 0.1, limit: 120_000 });
  assert.equal(
    counts.map((c) => c.count),
    Array.from({ length: 3000 }, (_, i) => i + 1),
  );
  const ahead = stored(f, 'key_busy') - 3000;
  assert.ok(ahead >= 0 && ahead < LEASE.max, `the store counts ${ahead} numbers not handed out`);
  // the first span's 100 requests one by one (nothing is known of the key yet), then blocks of 64
  assert.ok(p.calls.hit <= 101, `per-request writes: ${p.calls.hit}`);
  assert.ok(
    p.calls.reserve >= 2900 / LEASE.max && p.calls.reserve <= 2900 / LEASE.max + 2,
    `blocks: ${p.calls.reserve}`,
  );
});

test('two processes sharing a key past its limit: no number over the limit, none twice; draining both admits exactly the limit', async () => {
  const f = file();
  const [a, b] = [processOn(f), processOn(f)];
  const [la, lb] = [new RequestLeases(a.store), new RequestLeases(b.store)];
  const limit = 1000;
  const admitted: number[] = [];
  const refused = [0, 0];
  let t = T0;
  // alternating bursts of 37 and 23 requests, 0.05 ms apart, until each process has been refused
  // (a refused process has handed out all its numbers: it counts per request from then on)
  for (let round = 0; refused[0] === 0 || refused[1] === 0; round++) {
    const [leases, n] = round % 2 === 0 ? [la, 37] : [lb, 23];
    for (const c of await burst(leases, 'key_shared', n, { t, gapMs: 0.05, limit })) {
      if (c.count <= limit) admitted.push(c.count);
      else refused[round % 2]!++;
    }
    t += n * 0.05;
  }
  assert.is(Math.max(...admitted), limit, 'the limit-th request passes');
  assert.is(new Set(admitted).size, admitted.length, 'every request its own number');
  assert.is(admitted.length, limit, 'nothing refused before the limit once both drain their blocks');
  assert.ok(a.calls.reserve > 0 && b.calls.reserve > 0, 'both took blocks');
});

test('a process holding unused numbers: the other is refused at most LEASE.max − 1 before the limit', async () => {
  const f = file();
  const [a, b] = [processOn(f), processOn(f)];
  const [la, lb] = [new RequestLeases(a.store), new RequestLeases(b.store)];
  const limit = 2000;
  // a takes a few blocks, then stops (holding what it reserved last)
  const first = await burst(la, 'key_idle', 300, { t: T0, gapMs: 0.05, limit });
  const held = stored(f, 'key_idle') - first.length;
  assert.ok(held > 0 && held < LEASE.max, `a holds ${held}`);
  // b runs until refused
  const rest = await burst(lb, 'key_idle', 2000, { t: T0 + 20, gapMs: 0.05, limit });
  const passed = first.length + rest.filter((c) => c.count <= limit).length;
  assert.ok(
    rest.some((c) => c.count > limit),
    'b is refused in the end',
  );
  assert.is(passed, limit - held, `refused early: exactly the ${held} numbers a holds`);
  assert.ok(limit - passed <= LEASE.max - 1);
});

test('concurrent requests of one key (an asynchronous store): one reservation at a time, no number twice', async () => {
  const f = file();
  const store = openSqliteStore(f);
  let inFlight = 0;
  let most = 0;
  const slow = Object.create(store) as StateStore;
  slow.reserveRequests = async (...a) => {
    most = Math.max(most, ++inFlight);
    await new Promise((r) => setTimeout(r, 2));
    try {
      return await store.reserveRequests(...a);
    } finally {
      inFlight--;
    }
  };
  const leases = new RequestLeases(slow);
  await burst(leases, 'key_conc', 300, { t: T0, gapMs: 0.05, limit: 10_000 }); // busy: blocks from the 201st on
  const t = T0 + 16;
  const counts = await Promise.all(
    Array.from({ length: 400 }, (_, i) => leases.hit('key_conc', W, DAY, 10_000, false, t + i * 0.001)),
  );
  const all = counts.map((c) => c.count);
  assert.is(new Set(all).size, 400);
  assert.ok(Math.min(...all) > 300 && Math.max(...all) <= stored(f, 'key_conc'));
  assert.is(most, 1, 'never two reservations of a key in flight');
});

test('a reservation the store fails fails the requests waiting for it too: one attempt, one wait', async () => {
  const f = file();
  const store = openSqliteStore(f);
  let attempts = 0;
  let failing = false;
  const locked = Object.create(store) as StateStore;
  locked.reserveRequests = async (...a) => {
    if (!failing) return store.reserveRequests(...a);
    attempts++;
    await new Promise((r) => setTimeout(r, 20)); // (a lock waited for, then given up)
    throw Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });
  };
  const leases = new RequestLeases(locked);
  let t = T0;
  let last = 0;
  for (let i = 0; i < 400 || stored(f, 'key_w') !== last; i++)
    last = (await leases.hit('key_w', W, DAY, 10_000, false, (t += 0.05))).count; // busy, its block used up
  failing = true;
  const answers = await Promise.allSettled(
    Array.from({ length: 10 }, () => leases.hit('key_w', W, DAY, 10_000, false, (t += 0.01))),
  );
  assert.ok(
    answers.every((a) => a.status === 'rejected' && (a.reason as { code?: string }).code === 'SQLITE_BUSY'),
    JSON.stringify(answers.map((a) => a.status)),
  );
  assert.is(attempts, 1, 'the waiting requests did not try again one after another');
});

test('a new hour starts afresh; a failed reservation fails its request and the next one tries again', async () => {
  const f = file();
  const store = openSqliteStore(f);
  let fail = false;
  const flaky = Object.create(store) as StateStore;
  flaky.reserveRequests = (...a) =>
    fail
      ? Promise.reject(Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' }))
      : store.reserveRequests(...a);
  const leases = new RequestLeases(flaky);
  const before = await burst(leases, 'key_h', 500, { t: T0, gapMs: 0.05, limit: 10_000 });
  assert.is(before.at(-1)!.count, 500);
  const next = await leases.hit('key_h', W + 3600, DAY, 10_000, false, (W + 3600) * 1000);
  assert.is(next.count, 1, 'the next window counts from 1');
  // exhaust the block of the new window, then make reservations fail
  let t = (W + 3600) * 1000;
  let lastOk = 1;
  for (let i = 0; i < 200; i++) lastOk = (await leases.hit('key_h', W + 3600, DAY, 10_000, false, (t += 0.05))).count;
  fail = true;
  let failed = 0;
  for (let i = 0; i < LEASE.max + 1; i++) {
    try {
      lastOk = (await leases.hit('key_h', W + 3600, DAY, 10_000, false, (t += 0.05))).count;
    } catch (e) {
      assert.is((e as { code?: string }).code, 'SQLITE_BUSY');
      failed++;
    }
  }
  assert.ok(failed >= 1, 'a reservation that fails fails its request');
  fail = false;
  const after = await leases.hit('key_h', W + 3600, DAY, 10_000, false, (t += 0.05));
  assert.is(
    after.count,
    lastOk + 1,
    'the next one counts on from the last number given (a failed reservation counted nothing)',
  );
});

test.run();
