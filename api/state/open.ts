/** Choose the state store backend from `DATABASE_URL`. */
import { fileURLToPath } from 'node:url';
import { ApiConfigError } from '../config.ts';
import { createPostgresStore, type PostgresStoreOptions } from './postgres.ts';
import { openSqliteStore, type SqliteStoreOptions } from './sqlite.ts';
import type { StateStore } from './store-interface.ts';

/**
 * Open the state store named by `databaseUrl`: `file:/path/state.sqlite` (or `file:///path`) →
 * SQLite; `postgres://…` or `postgresql://…` (optionally `?schema=name`, default `public`) →
 * PostgreSQL, for several replicas sharing state. The PostgreSQL store migrates in the
 * background: await `store.ready` (the server does) to fail at open; otherwise its first query
 * waits for the migrations and fails if they failed.
 */
export function openStateStore(databaseUrl: string, opts: SqliteStoreOptions & PostgresStoreOptions = {}): StateStore {
  if (databaseUrl.startsWith('file:')) {
    const path = databaseUrl.startsWith('file://') ? fileURLToPath(databaseUrl) : databaseUrl.slice('file:'.length);
    if (path === '') throw new ApiConfigError(`DATABASE_URL needs a path after file:, got ${databaseUrl}`);
    return openSqliteStore(path, opts);
  }
  if (/^postgres(ql)?:\/\//.test(databaseUrl)) return createPostgresStore(databaseUrl, opts);
  throw new ApiConfigError(`DATABASE_URL must start with file: or postgres://, got ${databaseUrl}`);
}
