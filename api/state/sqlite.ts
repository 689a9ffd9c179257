/**
 * The SQLite backend of the state store (the default): one file, WAL mode so the server reads
 * while the operators' CLI writes from another process. Only the driver set-up and SQLite's
 * entries of the `Dialect` table live here; every query, method and migration is shared
 * (api/state/accounts-store.ts, migrations.ts).
 *
 * Statements run synchronously on better-sqlite3 (prepared once per SQL text), and an `atomic`
 * operation runs whole inside one `BEGIN IMMEDIATE` transaction: the write lock is taken first,
 * so another process cannot interleave, and nothing else of this process runs while it is held
 * (an await inside it could let a second connection of the process wait for the lock this
 * thread holds).
 *
 * A lock held by another process (a backup, an operator's CLI transaction) is waited for
 * WITHOUT blocking the event loop: better-sqlite3 is synchronous, so SQLite's own busy handler
 * would freeze every request of the process (and `/healthz`) for as long as it waits, and
 * queued requests would wait one after another (issue 31: 25 s for a 503 with a 5 s timeout).
 * So SQLite's busy handler spins for at most `SQLITE_BUSY_SPIN_MS`, and a statement (`plain`)
 * or a whole transaction (`atomic`, `counter`) that still finds the lock held is retried on a
 * timer with backoff until `busyTimeoutMs` after the operation started; then the SQLITE_BUSY
 * error is thrown (503 `service_degraded` on the request path, api/state/degraded.ts). A retry
 * is exact: a `plain` statement is atomic on its own, and a failed transaction was rolled back.
 */
import Database from 'better-sqlite3';
import { Kysely, sql, SqliteDialect, type CompiledQuery } from 'kysely';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { driveSync, type Backend, type Dialect, type Mode, type Op, type Row } from './backend.ts';
import { migrate } from './migrations.ts';
import { createStateStore } from './accounts-store.ts';
import { sqliteChangeStamp } from './revocations.ts';
import type { StateStore } from './store-interface.ts';
import type { Tables } from './tables.ts';

export interface SqliteStoreOptions {
  /** Clock for created_at / revoked_at (tests inject one). */
  now?: () => Date;
  /** How long an operation waits for the lock held by another process (at open: the migrations' wait). */
  busyTimeoutMs?: number;
}

/** How long SQLite's own (synchronous, event-loop blocking) busy handler may wait per attempt. */
export const SQLITE_BUSY_SPIN_MS = 2;
/** Backoff of the asynchronous retries of a busy operation: first and largest pause. */
const RETRY_FIRST_MS = 5;
const RETRY_MAX_MS = 100;

/** Whether `e` is SQLite's "the lock is held" (SQLITE_BUSY or SQLITE_LOCKED, extended codes included). */
const isBusy = (e: unknown): boolean =>
  /^SQLITE_(BUSY|LOCKED)(_|$)/.test(String((e as { code?: unknown } | null)?.code));

/**
 * Run `attempt` (synchronous) until it does not fail with a held lock, pausing on a timer between
 * attempts (5 ms doubling to 100 ms) until `deadline` (epoch ms); then its last error is thrown.
 * The first attempt runs at once, so an unlocked store costs no timer and no extra tick.
 */
export async function retryWhileBusy<T>(attempt: () => T, deadline: number): Promise<T> {
  for (let pause = RETRY_FIRST_MS; ; pause = Math.min(pause * 2, RETRY_MAX_MS)) {
    try {
      return attempt();
    } catch (e) {
      const left = deadline - Date.now();
      if (!isBusy(e) || left <= 0) throw e;
      await sleep(Math.min(pause, left));
    }
  }
}

/** SQLite's side of the dialect differences (api/state/backend.ts). */
export const SQLITE_DIALECT: Dialect = {
  instantType: 'text',
  bigintType: 'integer',
  autoId: (c) => c.primaryKey().autoIncrement(),
  keyedTable: (t) => t.modifyEnd(sql`without rowid`) as typeof t,
  insertionOrder: { addColumn: (t) => t, ref: 'd.rowid' },
  bytewise: (ref) => sql.ref(ref),
  lockRows: (q) => q,
  migrationPrologue: [],
  keyChangeNotice: () => [],
};

/** Prepared statements by SQL text (bounded: batch inserts vary in length). */
const STATEMENT_CACHE_MAX = 500;

/**
 * Drive a `plain` operation: synchronously while no statement finds the lock held (the common
 * case: no timer, no extra tick); from the first busy statement on, each statement is retried
 * alone on timers (`retryWhileBusy`) until `deadline`.
 */
function drivePlain<T>(it: Op<T>, exec: (q: CompiledQuery) => Row[], deadline: number): Promise<T> {
  let step = it.next(undefined as never);
  while (!step.done) {
    let r: Row[];
    try {
      r = exec(step.value);
    } catch (e) {
      if (!isBusy(e)) throw e;
      const busy = step.value;
      return retryWhileBusy(() => exec(busy), deadline).then(async (first) => {
        let s = it.next(first);
        while (!s.done) {
          const q = s.value;
          s = it.next(await retryWhileBusy(() => exec(q), deadline));
        }
        return s.value;
      });
    }
    step = it.next(r);
  }
  return Promise.resolve(step.value);
}

/** Open (creating and migrating if needed) the SQLite state file at `path`. */
export function openSqliteStore(path: string, opts: SqliteStoreOptions = {}): StateStore {
  const now = opts.now ?? (() => new Date());
  mkdirSync(dirname(path), { recursive: true });
  const file = new Database(path);
  file.pragma('journal_mode = WAL');
  // WAL + NORMAL: a commit survives a crash of the process (what the per-request counters need);
  // only a power loss may lose the last commits.
  file.pragma('synchronous = NORMAL');
  const busyTimeoutMs = opts.busyTimeoutMs ?? 5000;
  file.pragma(`busy_timeout = ${busyTimeoutMs}`); // at open the migrations may wait (nothing else runs yet)
  file.pragma('foreign_keys = ON');

  const statements = new Map<string, Database.Statement>();
  const exec = (q: CompiledQuery): Row[] => {
    let s = statements.get(q.sql);
    if (!s) {
      if (statements.size >= STATEMENT_CACHE_MAX) statements.clear();
      statements.set(q.sql, (s = file.prepare(q.sql)));
    }
    const params = q.parameters as unknown[];
    if (s.reader) return s.all(params) as Row[];
    s.run(params);
    return [];
  };
  const immediate = file.transaction(<T>(op: Op<T>): T => driveSync(op, exec)).immediate;
  const runSync = <T>(mode: Mode, op: Op<T>): T => (mode === 'plain' ? driveSync(op, exec) : (immediate(op) as T));

  const db = new Kysely<Tables>({ dialect: new SqliteDialect({ database: file }) }); // compiles only; `exec` runs
  try {
    runSync('atomic', migrate(db, SQLITE_DIALECT, now().toISOString()));
  } catch (e) {
    file.close();
    throw e;
  }
  file.pragma(`busy_timeout = ${Math.min(SQLITE_BUSY_SPIN_MS, busyTimeoutMs)}`); // from here a held lock is waited for on timers

  const changeStamp = sqliteChangeStamp(file);
  const backend: Backend = {
    db,
    dialect: SQLITE_DIALECT,
    ready: Promise.resolve(), // migrated synchronously above
    changeStamp,
    keyChangeSent: () => Promise.resolve(), // another connection sees data_version move once the commit is done
    run<T>(mode: Mode, op: () => Op<T>): Promise<T> {
      const deadline = Date.now() + busyTimeoutMs;
      if (mode !== 'plain') return retryWhileBusy(() => immediate(op()) as T, deadline);
      try {
        return drivePlain(op(), exec, deadline);
      } catch (e) {
        return Promise.reject(e);
      }
    },
    async close() {
      if (!file.open) return;
      changeStamp.close();
      file.close();
    },
  };
  return createStateStore(backend, now);
}
