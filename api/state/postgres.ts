/**
 * The PostgreSQL backend of the state store: the same tables and behaviour as the SQLite file,
 * shared by several API replicas. Only the driver set-up (pools, how values come back) and
 * PostgreSQL's entries of the `Dialect` table live here; every query, method and migration is
 * shared (api/state/accounts-store.ts, migrations.ts). Migrations are applied at open in one
 * transaction that first takes a transaction-scoped advisory lock, so replicas starting together
 * migrate exactly once.
 */
import { Kysely, PostgresDialect, sql, type CompiledQuery } from 'kysely';
import pg from 'pg';
import { ApiConfigError } from '../config.ts';
import { driveAsync, type Backend, type Dialect, type Mode, type Op, type Row } from './backend.ts';
import { migrate } from './migrations.ts';
import { createStateStore } from './accounts-store.ts';
import { keyChangeChannel, pgKeyListener } from './revocations.ts';
import type { StateStore } from './store-interface.ts';
import type { Tables } from './tables.ts';

/** First key of the two-integer advisory lock taken while migrating (the second is the schema's hash). */
const MIGRATION_LOCK_CLASS = 0x1ead5; // "leads"

export interface PostgresStoreOptions {
  /** Clock for created_at / revoked_at (tests inject one). */
  now?: () => Date;
  /** Connections in the pool. */
  poolMax?: number;
  /** Errors of idle pooled connections (e.g. the server restarted); the pool replaces them. */
  onIdleError?: (e: Error) => void;
  /**
   * How long an operation may take, ms (default 5000): every connection's `lock_timeout` and
   * `statement_timeout`, the wait for a pooled connection, and the bound of the whole operation
   * (a table or row locked by another session gives an "unavailable" error, not a hang). The
   * migrations at open are not bounded.
   */
  busyTimeoutMs?: number;
}

/** The error of an operation that did not finish within `busyTimeoutMs` (ETIMEDOUT: "unavailable", api/state/degraded.ts). */
export function storeTimeout(ms: number): Error {
  return Object.assign(new Error(`the state store did not answer within ${ms} ms`), { code: 'ETIMEDOUT' });
}

/** `p`, or a rejection with `storeTimeout(ms)` if it has not settled within `ms`. */
function within<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(storeTimeout(ms)), ms);
  });
  p.catch(() => {}); // settles after the deadline: nobody waits for it any more
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

/** A PostgreSQL store; `ready` settles once the migrations have been applied (or failed). */
export interface PostgresStateStore extends StateStore {
  readonly ready: Promise<void>;
  /** The schema holding the tables (`?schema=` of the URL, default `public`). */
  readonly schema: string;
  /** Whether the key-change listener is connected (api/state/revocations.ts); until then no key is served from a cache. */
  readonly listening: () => boolean;
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
  if (!SCHEMA_NAME.test(schema))
    throw new ApiConfigError(`DATABASE_URL ?schema= must be a plain identifier (letters, digits, _), got ${schema}`);
  url.searchParams.delete('schema');
  return { connectionString: url.toString(), schema };
}

/** The URL without a password, for messages. */
const redact = (u: string): string => u.replace(/\/\/([^:@/]*):[^@/]*@/, '//$1:***@');

/** PostgreSQL's side of the dialect differences (api/state/backend.ts), for the tables in `schema` (`db` compiles). */
export function postgresDialect(schema: string, db: Kysely<Tables>): Dialect {
  return {
    instantType: 'timestamptz',
    bigintType: 'bigint',
    autoId: (c) => c.generatedAlwaysAsIdentity().primaryKey(),
    keyedTable: (t) => t,
    insertionOrder: {
      addColumn: (t) => t.addColumn('seq', 'bigint', (c) => c.generatedAlwaysAsIdentity().unique()) as typeof t,
      ref: 'd.seq',
    },
    bytewise: (ref) => sql`${sql.ref(ref)} collate "C"`,
    lockRows: (q, o = {}) => {
      const locked = q.forUpdate(o.of as never);
      return (o.skipLocked ? locked.skipLocked() : locked) as typeof q;
    },
    migrationPrologue: [
      // the connections' lock and statement timeouts (busyTimeoutMs) do not bound the migrations
      sql`set local lock_timeout = 0`,
      sql`set local statement_timeout = 0`,
      sql`select pg_advisory_xact_lock(${MIGRATION_LOCK_CLASS}, hashtext(${schema}))`,
      sql`create schema if not exists ${sql.id(schema)}`,
      sql`set local search_path to ${sql.id(schema)}`,
    ].map((q) => q.compile(db)),
    keyChangeNotice: (token) => [sql`select pg_notify(${keyChangeChannel(schema)}, ${token})`.compile(db)],
  };
}

/**
 * How values come back: TIMESTAMPTZ as ISO-8601 strings (like SQLite's TEXT), BIGINT (counters,
 * count(*)) as numbers — so the shared code reads the same row from either database.
 */
const TYPES = {
  getTypeParser(oid: number, format?: 'text' | 'binary'): (v: string) => unknown {
    if (oid === pg.types.builtins.TIMESTAMPTZ) {
      const parse = pg.types.getTypeParser(oid, 'text');
      return (v) => (parse(v) as Date).toISOString();
    }
    if (oid === pg.types.builtins.INT8) return Number;
    return pg.types.getTypeParser(oid, format as 'text');
  },
};

/**
 * Create the PostgreSQL store for `databaseUrl` at once and start migrating; every method waits
 * for the migrations first. Use `openPostgresStore` to wait (and fail) at open instead.
 */
export function createPostgresStore(databaseUrl: string, opts: PostgresStoreOptions = {}): PostgresStateStore {
  const now = opts.now ?? (() => new Date());
  const { connectionString, schema } = parsePostgresUrl(databaseUrl);
  const timeoutMs = opts.busyTimeoutMs ?? 5000;
  const pool = (extra: string): Kysely<Tables> => {
    const p = new pg.Pool({
      connectionString,
      max: opts.poolMax ?? 10,
      connectionTimeoutMillis: timeoutMs,
      options: `-c search_path=${schema} -c lock_timeout=${timeoutMs} -c statement_timeout=${timeoutMs}${extra}`,
      types: TYPES,
    });
    const onError = opts.onIdleError ?? ((): void => {});
    p.on('error', onError);
    // A checked-out client has no listener of the pool's (pg-pool removes its idle listener while
    // the client is lent): a connection reset between two statements of a lent client would be
    // an unhandled 'error' event and end the process. Each client gets its own listener; the
    // statement in flight still fails on its own, and pg-pool drops the broken client on release.
    p.on('connect', (client) => void client.on('error', onError));
    return new Kysely<Tables>({ dialect: new PostgresDialect({ pool: p }) });
  };
  const db = pool('');
  // The per-request counters (hourly window, daily rows) commit without waiting for the WAL
  // flush: every request updates the same row of its key, and a synchronous commit would hold
  // that row lock for an fsync. Atomicity and replica-exactness are unchanged; a crash of the
  // PostgreSQL server itself may forget the last fraction of a second of counts.
  const hot = pool(' -c synchronous_commit=off');
  const dialect = postgresDialect(schema, db);

  const on =
    (k: Kysely<Tables>) =>
    async (q: CompiledQuery): Promise<Row[]> =>
      (await k.executeQuery<Row>(q)).rows;
  const exec = <T>(mode: Mode, op: Op<T>): Promise<T> =>
    mode === 'atomic'
      ? db.transaction().execute((trx) => driveAsync(op, on(trx)))
      : driveAsync(op, on(mode === 'counter' ? hot : db));

  const ready = exec('atomic', migrate(db, dialect, now().toISOString()));
  ready.catch(() => {}); // reported by whoever awaits it (openPostgresStore or the first query)
  // key changes of other replicas and the CLI (revocations, plan changes) reach the key cache through LISTEN
  const listener = pgKeyListener(connectionString, schema, opts.onIdleError ? { onError: opts.onIdleError } : {});
  let closed = false;

  const backend: Backend = {
    db,
    dialect,
    ready,
    changeStamp: listener.stamp,
    keyChangeSent: (token) => listener.received(token),
    async run<T>(mode: Mode, op: () => Op<T>): Promise<T> {
      await ready;
      return within(exec(mode, op()), timeoutMs);
    },
    async close() {
      if (closed) return;
      closed = true;
      await ready.catch(() => {}); // let the migration finish with its connection before ending the pools
      await Promise.all([db.destroy(), hot.destroy(), listener.close()]);
    },
  };
  return { ...createStateStore(backend, now), schema, listening: listener.connected };
}

/**
 * Open the PostgreSQL store for `databaseUrl` (`postgres://user@host:port/db?schema=name`),
 * creating the schema and applying pending migrations before it resolves.
 *
 * @example const store = await openPostgresStore('postgres://root@127.0.0.1:5432/test?schema=leads');
 */
export async function openPostgresStore(
  databaseUrl: string,
  opts: PostgresStoreOptions = {},
): Promise<PostgresStateStore> {
  const store = createPostgresStore(databaseUrl, opts);
  try {
    await store.ready;
  } catch (e) {
    await store.close();
    throw e;
  }
  return store;
}
