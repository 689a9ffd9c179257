/**
 * The SQLite state store (default backend): one file, WAL mode so the server reads while the
 * operators' CLI writes from another process, versioned migrations applied at open.
 */
import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { PLANS, SCOPES, type Plan } from '../scopes.ts';
import { ACCESS_MIGRATIONS_SQLITE, accessSqlite, SQLITE_KEY_COLUMNS } from './access-sqlite.ts';
import { withExpiry, type Account, type ApiKey, type KeyStatus, type NewKey, type StateStore, type StoredKey } from './store.ts';
import { sqliteWebhookStore, WEBHOOK_SQLITE_MIGRATIONS } from './webhooks-sqlite.ts';

/** Ordered schema migrations; a new version is appended, never edited. */
export const MIGRATIONS: { version: number; sql: string }[] = [
  {
    version: 1,
    sql: `
      CREATE TABLE accounts (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        name TEXT NOT NULL UNIQUE,
        plan TEXT NOT NULL CHECK (plan IN (${PLANS.map((p) => `'${p}'`).join(', ')})),
        created_at TEXT NOT NULL
      );
      CREATE TABLE api_keys (
        id TEXT PRIMARY KEY,
        account_id INTEGER NOT NULL REFERENCES accounts(id),
        scope TEXT NOT NULL CHECK (scope IN (${SCOPES.map((s) => `'${s}'`).join(', ')})),
        name TEXT,
        display_prefix TEXT NOT NULL,
        key_hash TEXT NOT NULL UNIQUE,
        status TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'revoked', 'expired')),
        created_at TEXT NOT NULL,
        revoked_at TEXT
      );
      CREATE INDEX api_keys_account ON api_keys(account_id);
    `,
  },
  ...ACCESS_MIGRATIONS_SQLITE,
  ...WEBHOOK_SQLITE_MIGRATIONS,
];

export interface SqliteStoreOptions {
  /** Clock for created_at / revoked_at (tests inject one). */
  now?: () => Date;
  /** How long a writer waits for the lock held by another process. */
  busyTimeoutMs?: number;
}

const KEY_COLUMNS = SQLITE_KEY_COLUMNS;

/** Open (creating and migrating if needed) the SQLite state file at `path`. */
export function openSqliteStore(path: string, opts: SqliteStoreOptions = {}): StateStore {
  const now = opts.now ?? (() => new Date());
  mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  // WAL + NORMAL: a commit survives a crash of the process (what the per-request counters need);
  // only a power loss may lose the last commits.
  db.pragma('synchronous = NORMAL');
  db.pragma(`busy_timeout = ${opts.busyTimeoutMs ?? 5000}`);
  db.pragma('foreign_keys = ON');
  migrate(db, now);

  const live = withExpiry(now);
  const stmt = {
    insertAccount: db.prepare('INSERT INTO accounts (name, plan, created_at) VALUES (?, ?, ?)'),
    accountByName: db.prepare('SELECT id, name, plan, created_at FROM accounts WHERE name = ?'),
    accountById: db.prepare('SELECT id, name, plan, created_at FROM accounts WHERE id = ?'),
    insertKey: db.prepare(
      'INSERT INTO api_keys (id, account_id, scope, name, display_prefix, key_hash, status, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    ),
    keyById: db.prepare(`SELECT ${KEY_COLUMNS} FROM api_keys k JOIN accounts a ON a.id = k.account_id WHERE k.id = ?`),
    keyByHash: db.prepare(`SELECT ${KEY_COLUMNS}, k.key_hash, a.plan AS account_plan FROM api_keys k JOIN accounts a ON a.id = k.account_id WHERE k.key_hash = ?`),
    setPlan: db.prepare('UPDATE accounts SET plan = ? WHERE id = ?'),
    listAll: db.prepare(`SELECT ${KEY_COLUMNS} FROM api_keys k JOIN accounts a ON a.id = k.account_id ORDER BY k.created_at, k.id`),
    listByAccount: db.prepare(
      `SELECT ${KEY_COLUMNS} FROM api_keys k JOIN accounts a ON a.id = k.account_id WHERE k.account_id = ? ORDER BY k.created_at, k.id`,
    ),
    revoke: db.prepare(`UPDATE api_keys SET status = 'revoked', revoked_at = ? WHERE id = ? AND status <> 'revoked'`),
  };

  return {
    ...accessSqlite(db, now),
    ready: Promise.resolve(), // migrated synchronously above
    webhooks: sqliteWebhookStore(db, now),
    async createAccount(name: string, plan: Plan): Promise<Account> {
      const r = stmt.insertAccount.run(name, plan, now().toISOString());
      return stmt.accountById.get(r.lastInsertRowid) as Account;
    },
    async getAccountByName(name: string): Promise<Account | null> {
      return (stmt.accountByName.get(name) as Account | undefined) ?? null;
    },
    async setAccountPlan(id: number, plan: Plan): Promise<Account | null> {
      stmt.setPlan.run(plan, id);
      return (stmt.accountById.get(id) as Account | undefined) ?? null;
    },
    async insertKey(k: NewKey): Promise<ApiKey> {
      stmt.insertKey.run(k.id, k.account_id, k.scope, k.name, k.display_prefix, k.hash, 'active' satisfies KeyStatus, now().toISOString());
      return stmt.keyById.get(k.id) as ApiKey;
    },
    async findKeyByHash(hash: string): Promise<StoredKey | null> {
      return live(stmt.keyByHash.get(hash) as StoredKey | undefined) ?? null;
    },
    async listKeys(accountId?: number): Promise<ApiKey[]> {
      return ((accountId === undefined ? stmt.listAll.all() : stmt.listByAccount.all(accountId)) as ApiKey[]).map(live);
    },
    async revokeKey(id: string): Promise<ApiKey | null> {
      stmt.revoke.run(now().toISOString(), id);
      return live(stmt.keyById.get(id) as ApiKey | undefined) ?? null;
    },
    async close(): Promise<void> {
      if (db.open) db.close();
    },
  };
}

/** Apply every migration newer than the file's version, each in its own transaction. */
function migrate(db: Database.Database, now: () => Date): void {
  db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)');
  const apply = db.transaction((m: { version: number; sql: string }) => {
    // re-check inside the write transaction: another process may have migrated meanwhile
    const done = db.prepare('SELECT 1 FROM schema_migrations WHERE version = ?').get(m.version);
    if (done) return;
    db.exec(m.sql);
    db.prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)').run(m.version, now().toISOString());
  });
  // Every version not yet recorded, in version order (not only those above the highest applied:
  // version ranges are reserved per feature, so a lower version may arrive after a higher one).
  const applied = new Set((db.prepare('SELECT version FROM schema_migrations').all() as { version: number }[]).map((r) => r.version));
  for (const m of [...MIGRATIONS].sort((a, b) => a.version - b.version)) if (!applied.has(m.version)) apply.immediate(m);
}
