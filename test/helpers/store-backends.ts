/**
 * The two state-store backends the contract suites run on (test/api/state/*-contract.ts), written
 * once: real SQLite files in a temp folder, and the local PostgreSQL server with a schema per
 * store (dropped by `cleanup`). A sibling store is another connection to the same data — another
 * process on the SQLite file, another replica's pool on the PostgreSQL schema.
 */
import { randomBytes } from 'node:crypto';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { openPostgresStore, type PostgresStateStore } from '../../api/state/postgres.ts';
import { openSqliteStore } from '../../api/state/sqlite.ts';
import type { StateStore } from '../../api/state/store-interface.ts';
import { tempDir } from './tmp.ts';

export interface StoreBackend {
  /** A fresh, empty store with the given clock. */
  open: (opts: { now: () => Date }) => Promise<StateStore>;
  /** Another store on the same data as `store` (another process or replica). */
  openSibling: (store: StateStore, opts: { now: () => Date }) => Promise<StateStore>;
  cleanup: () => Promise<void>;
}

/** The tests' PostgreSQL server: `TEST_DATABASE_URL`, default `postgres://<PGUSER or OS user>@127.0.0.1:5432/test`. */
export const TEST_PG_URL =
  process.env['TEST_DATABASE_URL'] ??
  `postgres://${encodeURIComponent(process.env['PGUSER'] ?? userInfo().username)}@127.0.0.1:5432/test`;

/** The server's URL for one schema. */
export const pgSchemaUrl = (schema: string): string =>
  `${TEST_PG_URL}${TEST_PG_URL.includes('?') ? '&' : '?'}schema=${schema}`;

/** SQLite: a new file per store. */
export function sqliteBackend(): StoreBackend {
  const files = new WeakMap<StateStore, string>();
  return {
    async open({ now }) {
      const file = join(tempDir(), 'state.sqlite');
      const store = openSqliteStore(file, { now });
      files.set(store, file);
      return store;
    },
    async openSibling(store, { now }) {
      return openSqliteStore(files.get(store)!, { now });
    },
    async cleanup() {},
  };
}

/** PostgreSQL: a schema per store, named `<prefix>_<run>_<n>`; `cleanup` drops this run's schemas. */
export function postgresBackend(prefix: string): StoreBackend {
  const run = `${prefix}_${randomBytes(4).toString('hex')}`;
  let n = 0;
  return {
    open: ({ now }) => openPostgresStore(pgSchemaUrl(`${run}_${++n}`), { now }),
    openSibling: (store, { now }) => openPostgresStore(pgSchemaUrl((store as PostgresStateStore).schema), { now }),
    async cleanup() {
      const admin = new pg.Pool({ connectionString: TEST_PG_URL, max: 1 });
      try {
        const { rows } = await admin.query<{ nspname: string }>(
          'SELECT nspname FROM pg_namespace WHERE starts_with(nspname, $1)',
          [`${run}_`],
        );
        for (const { nspname } of rows) await admin.query(`DROP SCHEMA ${pg.escapeIdentifier(nspname)} CASCADE`);
      } catch (e) {
        console.error(`${prefix} schemas cleanup: ${(e as Error).message}`);
      } finally {
        await admin.end();
      }
    },
  };
}
