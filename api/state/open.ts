/** Choose the state store backend from `DATABASE_URL`. */
import { fileURLToPath } from 'node:url';
import { ApiConfigError } from '../config.ts';
import { openSqliteStore, type SqliteStoreOptions } from './sqlite.ts';
import type { StateStore } from './store.ts';

/**
 * Open the state store named by `databaseUrl`: `file:/path/state.sqlite` (or `file:///path`) →
 * SQLite; `postgres://…` is refused until the access-model issue adds PostgreSQL.
 */
export function openStateStore(databaseUrl: string, opts: SqliteStoreOptions = {}): StateStore {
  if (databaseUrl.startsWith('file:')) {
    const path = databaseUrl.startsWith('file://') ? fileURLToPath(databaseUrl) : databaseUrl.slice('file:'.length);
    if (path === '') throw new ApiConfigError(`DATABASE_URL needs a path after file:, got ${databaseUrl}`);
    return openSqliteStore(path, opts);
  }
  if (/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ApiConfigError('PostgreSQL state arrives with the access-model issue; use DATABASE_URL=file:/path/state.sqlite for now');
  }
  throw new ApiConfigError(`DATABASE_URL must start with file: or postgres://, got ${databaseUrl}`);
}
