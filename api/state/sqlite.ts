/**
 * The SQLite backend of the state store (the default): one file, WAL mode so the server reads
 * while the operators' CLI writes from another process. Only the driver set-up and SQLite's
 * entries of the `Dialect` table live here; every query, method and migration is shared
 * (api/state/state-store.ts, migrations.ts).
 *
 * Statements run synchronously on better-sqlite3 (prepared once per SQL text), and an `atomic`
 * operation runs whole inside one `BEGIN IMMEDIATE` transaction: the write lock is taken first,
 * so another process cannot interleave, and nothing else of this process runs while it is held
 * (an await inside it could let a second connection of the process wait for the lock this
 * thread holds).
 */
import Database from 'better-sqlite3';
import { Kysely, sql, SqliteDialect, type CompiledQuery } from 'kysely';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { driveSync, type Backend, type Dialect, type Mode, type Op, type Row } from './backend.ts';
import { migrate } from './migrations.ts';
import { createStateStore } from './state-store.ts';
import { sqliteChangeStamp } from './revocations.ts';
import type { StateStore } from './store.ts';
import type { Tables } from './tables.ts';

export interface SqliteStoreOptions {
  /** Clock for created_at / revoked_at (tests inject one). */
  now?: () => Date;
  /** How long a writer waits for the lock held by another process. */
  busyTimeoutMs?: number;
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

/** Open (creating and migrating if needed) the SQLite state file at `path`. */
export function openSqliteStore(path: string, opts: SqliteStoreOptions = {}): StateStore {
  const now = opts.now ?? (() => new Date());
  mkdirSync(dirname(path), { recursive: true });
  const file = new Database(path);
  file.pragma('journal_mode = WAL');
  // WAL + NORMAL: a commit survives a crash of the process (what the per-request counters need);
  // only a power loss may lose the last commits.
  file.pragma('synchronous = NORMAL');
  file.pragma(`busy_timeout = ${opts.busyTimeoutMs ?? 5000}`);
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
  const runSync = <T>(mode: Mode, op: Op<T>): T => (mode === 'plain' ? driveSync(op, exec) : immediate(op) as T);

  const db = new Kysely<Tables>({ dialect: new SqliteDialect({ database: file }) }); // compiles only; `exec` runs
  try {
    runSync('atomic', migrate(db, SQLITE_DIALECT, now().toISOString()));
  } catch (e) {
    file.close();
    throw e;
  }

  const backend: Backend = {
    db,
    dialect: SQLITE_DIALECT,
    ready: Promise.resolve(), // migrated synchronously above
    changeStamp: sqliteChangeStamp(file),
    keyChangeSent: () => Promise.resolve(), // another connection sees data_version move once the commit is done
    run<T>(mode: Mode, op: () => Op<T>): Promise<T> {
      try {
        return Promise.resolve(runSync(mode, op()));
      } catch (e) {
        return Promise.reject(e);
      }
    },
    async close() {
      if (file.open) file.close();
    },
  };
  return createStateStore(backend, now);
}
