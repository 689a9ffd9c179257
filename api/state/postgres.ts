/**
 * The PostgreSQL state store: the same tables and behaviour as the SQLite file, shared by several
 * API replicas. Versioned migrations are applied at open in one transaction that first takes a
 * transaction-scoped advisory lock, so replicas starting together migrate exactly once.
 */
import pg from 'pg';
import { ApiConfigError } from '../config.ts';
import { PLANS, SCOPES, type Plan, type Scope } from '../scopes.ts';
import { ACCESS_MIGRATIONS_PG, accessPostgres } from './access-postgres.ts';
import { withExpiry, type Account, type ApiKey, type KeyStatus, type NewKey, type StateStore, type StoredKey } from './store.ts';
import { postgresWebhookStore, WEBHOOK_PG_MIGRATIONS } from './webhooks-postgres.ts';

/**
 * Ordered schema migrations, version for version the same as the SQLite ones (`sqlite.ts`);
 * a new version is appended to both, never edited.
 */
export const PG_MIGRATIONS: { version: number; sql: string }[] = [
  {
    version: 1,
    sql: `
      CREATE TABLE accounts (
        id INTEGER GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        plan TEXT NOT NULL CHECK (plan IN (${PLANS.map((p) => `'${p}'`).join(', ')})),
        created_at TIMESTAMPTZ NOT NULL
      );
      CREATE TABLE api_keys (
        id TEXT PRIMARY KEY,
        account_id INTEGER NOT NULL REFERENCES accounts(id),
        scope TEXT NOT NULL CHECK (scope IN (${SCOPES.map((s) => `'${s}'`).join(', ')})),
        name TEXT,
        display_prefix TEXT NOT NULL,
        key_hash TEXT NOT NULL UNIQUE,
        status TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'revoked', 'expired')),
        created_at TIMESTAMPTZ NOT NULL,
        revoked_at TIMESTAMPTZ
      );
      CREATE INDEX api_keys_account ON api_keys(account_id);
    `,
  },
  ...ACCESS_MIGRATIONS_PG,
  ...WEBHOOK_PG_MIGRATIONS,
];

/** First key of the two-integer advisory lock taken while migrating (the second is the schema's hash). */
const MIGRATION_LOCK_CLASS = 0x1ead5; // "leads"

export interface PostgresStoreOptions {
  /** Clock for created_at / revoked_at (tests inject one). */
  now?: () => Date;
  /** Connections in the pool. */
  poolMax?: number;
  /** Errors of idle pooled connections (e.g. the server restarted); the pool replaces them. */
  onIdleError?: (e: Error) => void;
}

/** A PostgreSQL store; `ready` settles once the migrations have been applied (or failed). */
export interface PostgresStateStore extends StateStore {
  readonly ready: Promise<void>;
  /** The schema holding the tables (`?schema=` of the URL, default `public`). */
  readonly schema: string;
}

const SCHEMA_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/**
 * Split `postgres://…?schema=name` into the connection string pg understands and the schema
 * (default `public`). The schema must be a plain identifier; a bad URL throws ApiConfigError.
 *
 * @example parsePostgresUrl('postgres://root@127.0.0.1:5432/test?schema=t1')
 *   // → { connectionString: 'postgres://root@127.0.0.1:5432/test', schema: 't1' }
 */
export function parsePostgresUrl(databaseUrl: string): { connectionString: string; schema: string } {
  let url: URL;
  try {
    url = new URL(databaseUrl);
  } catch {
    throw new ApiConfigError(`DATABASE_URL is not a valid postgres:// URL: ${redact(databaseUrl)}`);
  }
  const schema = url.searchParams.get('schema') ?? 'public';
  if (!SCHEMA_NAME.test(schema)) throw new ApiConfigError(`DATABASE_URL ?schema= must be a plain identifier (letters, digits, _), got ${schema}`);
  url.searchParams.delete('schema');
  return { connectionString: url.toString(), schema };
}

/** The URL without a password, for messages. */
const redact = (u: string): string => u.replace(/\/\/([^:@/]*):[^@/]*@/, '//$1:***@');

const KEY_COLUMNS = `k.id, k.account_id, a.name AS account_name, k.scope, k.name, k.display_prefix, k.status, k.created_at, k.revoked_at, k.licence_id, k.expires_at`;
const KEY_FROM = `api_keys k JOIN accounts a ON a.id = k.account_id`;
// "C" collation: the same byte order as SQLite, so lists come back in the same order on both
const KEY_ORDER = `ORDER BY k.created_at, k.id COLLATE "C"`;

type Row = Record<string, unknown>;

/** pg returns TIMESTAMPTZ as Date; results carry ISO strings like the SQLite store. */
const iso = (v: unknown): string | null => (v === null ? null : (v as Date).toISOString());

const toAccount = (r: Row): Account => ({ id: r['id'] as number, name: r['name'] as string, plan: r['plan'] as Plan, created_at: iso(r['created_at'])! });

const toKey = (r: Row): ApiKey => ({
  id: r['id'] as string,
  account_id: r['account_id'] as number,
  account_name: r['account_name'] as string,
  scope: r['scope'] as Scope,
  name: r['name'] as string | null,
  display_prefix: r['display_prefix'] as string,
  status: r['status'] as KeyStatus,
  created_at: iso(r['created_at'])!,
  revoked_at: iso(r['revoked_at']),
  licence_id: (r['licence_id'] as string | null) ?? null,
  expires_at: iso(r['expires_at'] ?? null),
});

/**
 * Create the PostgreSQL store for `databaseUrl` at once and start migrating; every method waits
 * for the migrations first. Use `openPostgresStore` to wait (and fail) at open instead.
 */
export function createPostgresStore(databaseUrl: string, opts: PostgresStoreOptions = {}): PostgresStateStore {
  const now = opts.now ?? (() => new Date());
  const { connectionString, schema } = parsePostgresUrl(databaseUrl);
  const pool = new pg.Pool({ connectionString, max: opts.poolMax ?? 10, options: `-c search_path=${schema}` });
  pool.on('error', opts.onIdleError ?? (() => {}));
  // The per-request counters (hourly window, daily rows) commit without waiting for the WAL
  // flush: every request updates the same row of its key, and a synchronous commit would hold
  // that row lock for an fsync. Atomicity and replica-exactness are unchanged; a crash of the
  // PostgreSQL server itself may forget the last fraction of a second of counts.
  const hot = new pg.Pool({ connectionString, max: opts.poolMax ?? 10, options: `-c search_path=${schema} -c synchronous_commit=off` });
  hot.on('error', opts.onIdleError ?? (() => {}));

  const ready = migrate(pool, schema, now);
  ready.catch(() => {}); // reported by whoever awaits it (openPostgresStore or the first query)

  const query = async (sql: string, params: unknown[]): Promise<Row[]> => {
    await ready;
    return (await pool.query(sql, params)).rows as Row[];
  };
  const live = withExpiry(now);
  const keyById = async (id: string): Promise<ApiKey | null> => {
    const [r] = await query(`SELECT ${KEY_COLUMNS} FROM ${KEY_FROM} WHERE k.id = $1`, [id]);
    return r ? live(toKey(r)) : null;
  };
  let closed = false;

  return {
    ...accessPostgres({ pool, hot, ready, now, keyColumns: KEY_COLUMNS, toKey, toAccount }),
    ready,
    schema,
    webhooks: postgresWebhookStore(pool, ready, now),
    async createAccount(name: string, plan: Plan): Promise<Account> {
      const [r] = await query('INSERT INTO accounts (name, plan, created_at) VALUES ($1, $2, $3) RETURNING id, name, plan, created_at', [name, plan, now()]);
      return toAccount(r!);
    },
    async getAccountByName(name: string): Promise<Account | null> {
      const [r] = await query('SELECT id, name, plan, created_at FROM accounts WHERE name = $1', [name]);
      return r ? toAccount(r) : null;
    },
    async setAccountPlan(id: number, plan: Plan): Promise<Account | null> {
      const [r] = await query('UPDATE accounts SET plan = $1 WHERE id = $2 RETURNING id, name, plan, created_at', [plan, id]);
      return r ? toAccount(r) : null;
    },
    async insertKey(k: NewKey): Promise<ApiKey> {
      const [r] = await query(
        `WITH k AS (
           INSERT INTO api_keys (id, account_id, scope, name, display_prefix, key_hash, status, created_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING *
         )
         SELECT ${KEY_COLUMNS} FROM k JOIN accounts a ON a.id = k.account_id`,
        [k.id, k.account_id, k.scope, k.name, k.display_prefix, k.hash, 'active' satisfies KeyStatus, now()],
      );
      return toKey(r!);
    },
    async findKeyByHash(hash: string): Promise<StoredKey | null> {
      const [r] = await query(`SELECT ${KEY_COLUMNS}, k.key_hash, a.plan AS account_plan FROM ${KEY_FROM} WHERE k.key_hash = $1`, [hash]);
      return r ? live({ ...toKey(r), key_hash: r['key_hash'] as string, account_plan: r['account_plan'] as Plan }) : null;
    },
    async listKeys(accountId?: number): Promise<ApiKey[]> {
      const rows =
        accountId === undefined
          ? await query(`SELECT ${KEY_COLUMNS} FROM ${KEY_FROM} ${KEY_ORDER}`, [])
          : await query(`SELECT ${KEY_COLUMNS} FROM ${KEY_FROM} WHERE k.account_id = $1 ${KEY_ORDER}`, [accountId]);
      return rows.map((r) => live(toKey(r)));
    },
    async revokeKey(id: string): Promise<ApiKey | null> {
      await query(`UPDATE api_keys SET status = 'revoked', revoked_at = $1 WHERE id = $2 AND status <> 'revoked'`, [now(), id]);
      return keyById(id);
    },
    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      await ready.catch(() => {}); // let the migration finish with its connection before ending the pool
      await Promise.all([pool.end(), hot.end()]);
    },
  };
}

/**
 * Open the PostgreSQL store for `databaseUrl` (`postgres://user@host:port/db?schema=name`),
 * creating the schema and applying pending migrations before it resolves.
 *
 * @example const store = await openPostgresStore('postgres://root@127.0.0.1:5432/test?schema=leads');
 */
export async function openPostgresStore(databaseUrl: string, opts: PostgresStoreOptions = {}): Promise<PostgresStateStore> {
  const store = createPostgresStore(databaseUrl, opts);
  try {
    await store.ready;
  } catch (e) {
    await store.close();
    throw e;
  }
  return store;
}

/**
 * Apply every migration the schema lacks, all in one transaction holding an advisory lock keyed
 * by the schema: a replica that starts at the same time waits, then finds nothing left to do.
 */
async function migrate(pool: pg.Pool, schema: string, now: () => Date): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [MIGRATION_LOCK_CLASS, schema]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${client.escapeIdentifier(schema)}`);
    await client.query(`SET LOCAL search_path TO ${client.escapeIdentifier(schema)}`);
    await client.query('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL)');
    // every version not yet recorded, in version order (version ranges are reserved per feature)
    const { rows } = await client.query<{ version: number }>('SELECT version FROM schema_migrations');
    const applied = new Set(rows.map((r) => r.version));
    for (const m of [...PG_MIGRATIONS].sort((a, b) => a.version - b.version)) {
      if (applied.has(m.version)) continue;
      await client.query(m.sql);
      await client.query('INSERT INTO schema_migrations (version, applied_at) VALUES ($1, $2)', [m.version, now()]);
    }
    await client.query('COMMIT');
  } catch (e) {
    await client.query('ROLLBACK').catch(() => {});
    throw e;
  } finally {
    client.release();
  }
}
