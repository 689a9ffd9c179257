/**
 * `make bench` section `access`: what the access model costs per request, and how many requests
 * per second the usage ledger keeps up with.
 *
 * On a small generated release (SCALES.small, built once under data/bench-access-small), the API
 * runs in a child process (bench/access-server.ts) three times, one after the other:
 *   off         auth, limits and ledger switched off (the baseline, same endpoint, same run)
 *   on/sqlite   Bearer auth + hourly limit + daily budget + usage ledger on the SQLite file
 *   on/postgres the same on PostgreSQL (a fresh schema, dropped afterwards)
 * (off and on/sqlite alternate twice; the better run of each is reported.)
 * The load generator (bench/load.ts) drives `GET /v1/meta` (a keyed endpoint that returns no records, so the route's own
 * work is small and the access work shows) with 16 connections for `seconds` each, after a
 * warm-up. Per-request overhead = 1000/rps(on) − 1000/rps(off) ms: the server's extra time per
 * request at saturation. The key is a `custom` key (120,000 requests/hour), so no request is
 * refused. After each run the server is stopped with SIGTERM and the ledger's count of requests
 * is compared with the requests autocannon got answers to (warm-up included).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, rmSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { generateKey } from '../api/access/keys.ts';
import { openStateStore } from '../api/state/open.ts';
import { loadPipelineConfig } from '../pipeline/config.ts';
import { runPipeline } from '../pipeline/run.ts';
import { generateRaw, SCALES } from '../pipeline/synth/generate.ts';
import type { BenchRow } from './api.ts';
import { runLoad } from './load.ts';
import { loaderArgs } from '../api/startup/loader-args.ts';

export const ACCESS_TARGETS = { overheadMs: 0.3 };

export interface AccessBenchOptions {
  root: string;
  seconds: number;
  connections: number;
  pgUrl?: string;
  log?: (line: string) => void;
}

const PG_DEFAULT = `postgres://${encodeURIComponent(process.env['PGUSER'] ?? userInfo().username)}@127.0.0.1:5432/test`;

/** Build (once) the small release the section runs on (the compression section uses it too). */
export async function smallRelease(root: string, log: (l: string) => void): Promise<string> {
  const dir = join(root, 'data', 'bench-access-small');
  if (existsSync(join(dir, 'current', 'manifest.json'))) return dir;
  const t = performance.now();
  const raw = join(dir, 'raw');
  await generateRaw({ outDir: raw, scale: SCALES.small, seed: 1, week: 1 });
  const s = await runPipeline(loadPipelineConfig({}, { dataDir: dir, rawDir: raw, progress: false }), {
    now: () => new Date(),
    log: () => {},
  });
  if (s.status !== 'published') throw new Error(`the small bench release was not published: ${s.message}`);
  log(`access bench: built the small release in ${((performance.now() - t) / 1000).toFixed(1)} s`);
  return dir;
}

/** Start bench/access-server.ts with `args` (after this process's loader flags and `nodeArgs`); resolves once it listens. */
export function serve(
  root: string,
  args: string[],
  nodeArgs: readonly string[] = [],
): Promise<{ child: ChildProcess; origin: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...loaderArgs(), ...nodeArgs, 'bench/access-server.ts', ...args], {
      cwd: root,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let err = '';
    child.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      const m = /listening on (\S+)\/v1/.exec(err);
      if (m) resolve({ child, origin: m[1]! });
    });
    child.once('exit', (code) => reject(new Error(`access bench server exited (${code}): ${err.slice(-2000)}`)));
  });
}

export const stop = (child: ChildProcess): Promise<void> =>
  new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });

async function load(
  origin: string,
  key: string | null,
  seconds: number,
  connections: number,
): Promise<{ rps: number; p50: number; p99: number; total: number; non2xx: number }> {
  const r = await runLoad({
    url: origin,
    connections,
    seconds,
    headers: key ? { authorization: `Bearer ${key}` } : {},
    requests: [{ method: 'GET', path: '/v1/meta' }],
  });
  return { rps: r.rps, p50: r.p50, p99: r.p99, total: r.total, non2xx: r.non2xx + r.errors };
}

export async function accessBench(opts: AccessBenchOptions): Promise<BenchRow[]> {
  const log = opts.log ?? ((l: string) => void process.stderr.write(l + '\n'));
  const data = await smallRelease(opts.root, log);
  const sqliteUrl = `file:${join(data, 'state-access-bench.sqlite')}`;
  for (const s of ['', '-wal', '-shm']) rmSync(join(data, `state-access-bench.sqlite${s}`), { force: true });
  const schema = `bench_access_${randomBytes(4).toString('hex')}`;
  const pgBase = opts.pgUrl ?? PG_DEFAULT;
  const pgUrl = `${pgBase}${pgBase.includes('?') ? '&' : '?'}schema=${schema}`;

  /** A custom key in the store at `url` (the bench is an operator: it writes the store directly). */
  const makeKey = async (url: string): Promise<{ raw: string; ledger: () => Promise<number> }> => {
    const store = openStateStore(url);
    await store.ready;
    const a = await store.createAccount('bench', 'premium');
    const k = generateKey('custom');
    await store.insertKey({
      id: k.id,
      account_id: a.id,
      scope: 'custom',
      name: 'bench',
      display_prefix: k.displayPrefix,
      hash: k.hash,
    });
    await store.close();
    return {
      raw: k.raw,
      ledger: async () => {
        const s = openStateStore(url);
        try {
          const u = await s.accountUsage(a.id, '2000-01-01', '2999-12-31');
          return u.days.reduce((n, d) => n + d.requests, 0);
        } finally {
          await s.close();
        }
      },
    };
  };

  /** One server run: warm-up, then the measured load; `sent` counts both (what the ledger must hold). */
  const run = async (
    name: string,
    args: string[],
    key: string | null,
  ): Promise<Awaited<ReturnType<typeof load>> & { sent: number }> => {
    const s = await serve(opts.root, args);
    try {
      const warm = await load(s.origin, key, Math.min(2, opts.seconds), opts.connections);
      const m = await load(s.origin, key, opts.seconds, opts.connections);
      log(
        `access ${name.padEnd(12)} ${m.rps.toFixed(0).padStart(6)} req/s  p50 ${m.p50} ms  p99 ${m.p99} ms  (${m.total} requests${m.non2xx ? `, ${m.non2xx} not 2xx` : ''})`,
      );
      return { ...m, sent: warm.total + m.total };
    } finally {
      await stop(s.child);
    }
  };
  const best = <T extends { rps: number }>(a: T, b: T): T => (a.rps >= b.rps ? a : b);

  // off and on alternate twice and the better run of each counts: the machine is shared, so a
  // burst of someone else's work during one run does not decide the comparison
  const sqliteKey = await makeKey(sqliteUrl);
  const offArgs = ['--data', data, '--db', sqliteUrl, '--without-access'];
  const onArgs = ['--data', data, '--db', sqliteUrl];
  const off1 = await run('off', offArgs, null);
  const on1 = await run('on/sqlite', onArgs, sqliteKey.raw);
  const off2 = await run('off', offArgs, null);
  const on2 = await run('on/sqlite', onArgs, sqliteKey.raw);
  const off = best(off1, off2);
  const onSqlite = best(on1, on2);
  const sqliteSent = on1.sent + on2.sent;
  const sqliteLedger = await sqliteKey.ledger();
  let onPg: (Awaited<ReturnType<typeof load>> & { sent: number }) | null = null;
  let pgLedger = 0;
  try {
    const pgKey = await makeKey(pgUrl);
    onPg = await run('on/postgres', ['--data', data, '--db', pgUrl], pgKey.raw);
    pgLedger = await pgKey.ledger();
  } catch (e) {
    log(`access bench: PostgreSQL run failed: ${(e as Error).message}`);
  } finally {
    const admin = new pg.Client({ connectionString: pgBase });
    await admin.connect().then(
      () => admin.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(schema)} CASCADE`).finally(() => admin.end()),
      () => {},
    );
  }

  const perReq = (rps: number): number => 1000 / rps;
  /**
   * The ledger holds every request the server answered: those autocannon counted, plus up to one
   * per connection still in flight when each load stopped (answered, but not waited for).
   */
  const ledgerRow = (store: string, ledger: number, answered: number, loads: number): BenchRow => ({
    metric: `ledger count after SIGTERM (${store})`,
    value: ledger,
    unit: 'reqs',
    baseline: answered,
    target: `answered + ≤ ${opts.connections * loads} in flight`,
    ok: ledger >= answered && ledger - answered <= opts.connections * loads,
  });
  const overhead = perReq(onSqlite.rps) - perReq(off.rps);
  const rows: BenchRow[] = [
    { metric: 'GET /v1/meta, access off', value: off.rps, unit: 'req/s', target: 'baseline (no auth, limits, ledger)' },
    { metric: 'GET /v1/meta, access on (SQLite)', value: onSqlite.rps, unit: 'req/s', baseline: off.rps },
    {
      metric: 'access overhead per request (SQLite)',
      value: overhead,
      unit: 'ms',
      target: `≤ ${ACCESS_TARGETS.overheadMs} ms`,
      ok: overhead <= ACCESS_TARGETS.overheadMs,
    },
    { metric: 'p50 latency on / off (16 conns)', value: onSqlite.p50, unit: 'ms', baseline: off.p50 },
    { metric: 'ledger throughput, 16 conns, SQLite', value: onSqlite.rps, unit: 'req/s' },
    ledgerRow('SQLite', sqliteLedger, sqliteSent, 4),
  ];
  if (onPg) {
    const pgOverhead = perReq(onPg.rps) - perReq(off.rps);
    rows.push(
      { metric: 'ledger throughput, 16 conns, PostgreSQL', value: onPg.rps, unit: 'req/s', baseline: off.rps },
      {
        metric: 'access overhead per request (PostgreSQL)',
        value: pgOverhead,
        unit: 'ms',
        target: 'information (one round trip per request)',
      },
      ledgerRow('PostgreSQL', pgLedger, onPg.sent, 2),
    );
  }
  return rows;
}
