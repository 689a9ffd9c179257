/**
 * The PostgreSQL state store against the server of this machine: the shared contract, then what
 * only PostgreSQL does (schemas, replicas migrating together, connection errors).
 *
 * Server: `TEST_DATABASE_URL`, default `postgres://<PGUSER or OS user>@127.0.0.1:5432/test`
 * (trust auth). Every store gets its own schema `leads_test_<random>_<n>`, all dropped at the
 * end. If the server is unreachable these tests FAIL (CI has it); they never skip.
 */
import { pgSchemaUrl, TEST_PG_URL } from '../../helpers/store-backends.ts';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { rejects } from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { ApiConfigError } from '../../../api/config.ts';
import { generateKey } from '../../../api/access/keys.ts';
import { openStateStore } from '../../../api/state/open.ts';
import { MIGRATIONS } from '../../../api/state/migrations.ts';
import {
  createPostgresStore,
  openPostgresStore,
  parsePostgresUrl,
  type PostgresStateStore,
  type PostgresStoreOptions,
} from '../../../api/state/postgres.ts';
import { stateStoreContract } from './contract.ts';

const BASE_URL = TEST_PG_URL;
const RUN = `leads_test_${randomBytes(4).toString('hex')}`;
let schemas = 0;
const freshSchema = (): string => `${RUN}_${++schemas}`;
const urlFor = pgSchemaUrl;

const admin = new pg.Pool({ connectionString: BASE_URL, max: 2, connectionTimeoutMillis: 5000 });
admin.on('error', () => {});

/** Say plainly what is missing when the server is not there, instead of a bare ECONNREFUSED. */
function unreachable(e: unknown): Error {
  return new Error(
    `PostgreSQL is unreachable at ${BASE_URL} (${(e as Error).message || String(e)}). ` +
      'These tests need it and fail rather than skip: start the server (CI has it on 127.0.0.1:5432, database test) or set TEST_DATABASE_URL.',
  );
}

async function open(schema: string, opts: PostgresStoreOptions = {}): Promise<PostgresStateStore> {
  try {
    return await openPostgresStore(urlFor(schema), opts);
  } catch (e) {
    throw (e as { code?: string }).code?.startsWith('E') ? unreachable(e) : e; // ECONNREFUSED, ETIMEDOUT, ENOTFOUND…
  }
}

async function adminQuery<R extends pg.QueryResultRow>(sql: string, params: unknown[] = []): Promise<R[]> {
  try {
    return (await admin.query<R>(sql, params)).rows;
  } catch (e) {
    throw (e as { code?: string }).code?.startsWith('E') ? unreachable(e) : e;
  }
}

/** Drop every schema this run made (idempotent). */
async function dropRunSchemas(): Promise<void> {
  const rows = await adminQuery<{ nspname: string }>(
    'SELECT nspname FROM pg_namespace WHERE starts_with(nspname, $1)',
    [`${RUN}_`],
  );
  for (const { nspname } of rows) await adminQuery(`DROP SCHEMA ${pg.escapeIdentifier(nspname)} CASCADE`);
}

/** For after-hooks: uvu aborts the whole run when a hook throws, so report and carry on. */
const quietly = (fn: () => Promise<void>) => async (): Promise<void> => {
  await fn().catch((e: unknown) => console.error(`postgres.pg.test.ts cleanup: ${(e as Error).message}`));
};

stateStoreContract('postgres', {
  open: ({ now }) => open(freshSchema(), { now }),
  rawKeyRows: (store) =>
    adminQuery(`SELECT * FROM ${pg.escapeIdentifier((store as PostgresStateStore).schema)}.api_keys`),
  cleanup: quietly(dropRunSchemas),
});

const test = suite('postgres state store');

test.after(quietly(() => admin.end()));

test('the server is reachable', async () => {
  const [r] = await adminQuery<{ one: number }>('SELECT 1 AS one');
  assert.is(r?.one, 1);
});

test('migrations: the one list (api/state/migrations.ts), recorded once, tables in the named schema only', async () => {
  const schema = freshSchema();
  const now = () => new Date('2026-11-20T10:00:00Z');
  await (await open(schema, { now })).close();
  await (await open(schema, { now })).close(); // reopening does not re-apply
  const versions = await adminQuery(`SELECT version, applied_at FROM ${schema}.schema_migrations ORDER BY version`);
  assert.equal(
    versions,
    MIGRATIONS.map((m) => ({ version: m.version, applied_at: new Date('2026-11-20T10:00:00Z') })),
  );
  const tables = await adminQuery<{ table_schema: string; table_name: string }>(
    "SELECT table_schema, table_name FROM information_schema.tables WHERE table_name IN ('accounts', 'api_keys', 'schema_migrations') AND starts_with(table_schema, $1) ORDER BY table_name",
    [RUN],
  );
  assert.equal(
    tables,
    ['accounts', 'api_keys', 'schema_migrations'].map((t) => ({ table_schema: schema, table_name: t })),
  );
});

for (const existing of [false, true]) {
  test(`replicas opening together on one ${existing ? 'existing' : 'new'} schema all succeed and migrate once`, async () => {
    const schema = freshSchema();
    if (existing) await adminQuery(`CREATE SCHEMA ${schema}`); // like public: only the tables race
    const stores = await Promise.all(Array.from({ length: 6 }, () => open(schema)));
    try {
      const versions = await adminQuery<{ version: number }>(
        `SELECT version FROM ${schema}.schema_migrations ORDER BY version`,
      );
      assert.equal(
        versions.map((v) => v.version),
        MIGRATIONS.map((m) => m.version),
      );
      // and they share state: a key made through one replica is seen and revoked through the others
      const a = await stores[0]!.createAccount('acme', 'premium');
      const k = generateKey('ent_api');
      await stores[1]!.insertKey({
        id: k.id,
        account_id: a.id,
        scope: 'ent_api',
        name: null,
        display_prefix: k.displayPrefix,
        hash: k.hash,
      });
      assert.is((await stores[2]!.findKeyByHash(k.hash))?.account_name, 'acme');
      await stores[3]!.revokeKey(k.id);
      assert.is((await stores[4]!.findKeyByHash(k.hash))?.status, 'revoked');
    } finally {
      await Promise.all(stores.map((s) => s.close()));
    }
  });
}

test('openStateStore: postgres:// and postgresql:// open PostgreSQL; a bad schema is a config error', async () => {
  for (const scheme of ['postgres', 'postgresql']) {
    const schema = freshSchema();
    const store = openStateStore(urlFor(schema).replace(/^postgres(ql)?:/, `${scheme}:`)) as PostgresStateStore;
    try {
      await store.createAccount('x', 'basic'); // waits for the migrations
      assert.is(store.schema, schema);
      assert.is((await adminQuery(`SELECT name FROM ${schema}.accounts`)).length, 1, scheme);
    } finally {
      await store.close();
    }
  }
  assert.throws(
    () => openStateStore(`${BASE_URL}?schema=a;drop`),
    (e: unknown) => e instanceof ApiConfigError && /schema/.test((e as Error).message),
  );
  assert.equal(parsePostgresUrl('postgres://u@h:5432/d'), {
    connectionString: 'postgres://u@h:5432/d',
    schema: 'public',
  });
  assert.equal(parsePostgresUrl('postgres://u@h/d?schema=s1&sslmode=disable'), {
    connectionString: 'postgres://u@h/d?sslmode=disable',
    schema: 's1',
  });
});

test('an unreachable server: open rejects, and a store made without waiting rejects its first query', async () => {
  const dead = 'postgres://nobody@127.0.0.1:1/test';
  await rejects(() => openPostgresStore(dead), /ECONNREFUSED/);
  const store = createPostgresStore(dead);
  await rejects(() => store.getAccountByName('x'), /ECONNREFUSED/);
  await store.close();
});

test('a connection cut while a lent client waits: the call fails, the process lives, the store recovers', async () => {
  // pg-pool takes its own error listener off a client while it is lent; before each client had
  // one of the store's, a backend terminated under a running statement was an unhandled 'error'
  // event that ended the process (seen in locks.pg.test.ts under load).
  const schema = freshSchema();
  const role = `leads_cut_${randomBytes(4).toString('hex')}`;
  const url = new URL(urlFor(schema));
  url.username = role;
  url.password = '';
  const database = url.pathname.slice(1);
  await adminQuery(`CREATE ROLE ${pg.escapeIdentifier(role)} LOGIN`);
  await adminQuery(`GRANT CREATE ON DATABASE ${pg.escapeIdentifier(database)} TO ${pg.escapeIdentifier(role)}`);
  const errors: Error[] = [];
  const store = await openPostgresStore(url.toString(), {
    busyTimeoutMs: 20_000,
    onIdleError: (e) => void errors.push(e),
  });
  const holder = await admin.connect();
  try {
    await holder.query('BEGIN');
    await holder.query(`LOCK TABLE ${pg.escapeIdentifier(schema)}.api_keys IN ACCESS EXCLUSIVE MODE`);
    const waiting = store.listKeys().then(
      () => null,
      (e: unknown) => e as Error,
    );
    // the store's statement is waiting for the lock on a lent client: cut its connection
    for (let i = 0; i < 50; i++) {
      const [{ n }] = (await adminQuery<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE usename = $1 AND wait_event_type = 'Lock'`,
        [role],
      )) as [{ n: number }];
      if (n > 0) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    await adminQuery('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1', [role]);
    const failed = await waiting;
    assert.ok(failed instanceof Error, 'the waiting call fails');
    await holder.query('ROLLBACK');
    // (an idle connection cut with the others may fail one more call before the pool drops it)
    let again: unknown = null;
    for (let i = 0; i < 5 && !Array.isArray(again); i++) {
      again = await store.listKeys().catch((e: unknown) => e);
      if (!Array.isArray(again)) await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(again, [], 'the store answers again on a new connection');
    assert.ok(errors.length >= 1, 'the cut reached the store’s error listener, not the process');
  } finally {
    holder.release();
    await store.close();
    await adminQuery(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(schema)} CASCADE`);
    await adminQuery(`REVOKE CREATE ON DATABASE ${pg.escapeIdentifier(database)} FROM ${pg.escapeIdentifier(role)}`);
    await adminQuery(`DROP ROLE IF EXISTS ${pg.escapeIdentifier(role)}`);
  }
});

test('cleanup: the run leaves no schema behind', async () => {
  await dropRunSchemas();
  assert.equal(await adminQuery('SELECT nspname FROM pg_namespace WHERE starts_with(nspname, $1)', [`${RUN}_`]), []);
});

test.run();
