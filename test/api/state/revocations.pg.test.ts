/**
 * Revocation is immediate on every process (api/state/revocations.ts): a server's auth
 * middleware with a long key cache (60 s) over one store instance refuses a key on the very next
 * request after ANOTHER store instance (another process, replica or the CLI) revoked it — on
 * SQLite (two connections to one file: `PRAGMA data_version`) and on PostgreSQL (two stores on one
 * schema: `LISTEN` / `pg_notify`), and on PostgreSQL also while the listening connection is down.
 * PostgreSQL is the server of this machine (TEST_DATABASE_URL, default 127.0.0.1:5432/test).
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import Koa from 'koa';
import pg from 'pg';
import { problemMiddleware } from '../../../api/http/errors.ts';
import { authMiddleware } from '../../../api/middleware/auth.ts';
import { requestIdMiddleware } from '../../../api/middleware/request-id.ts';
import { openPostgresStore, type PostgresStateStore } from '../../../api/state/postgres.ts';
import { keyChangeChannel } from '../../../api/state/revocations.ts';
import { openSqliteStore } from '../../../api/state/sqlite.ts';
import type { StateStore } from '../../../api/state/store-interface.ts';
import { addKey } from '../../helpers/api.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { waitUntil } from '../../helpers/wait.ts';

const BASE_URL =
  process.env['TEST_DATABASE_URL'] ??
  `postgres://${encodeURIComponent(process.env['PGUSER'] ?? userInfo().username)}@127.0.0.1:5432/test`;
const SCHEMA = `leads_test_rev_${randomBytes(4).toString('hex')}`;
const PG_URL = `${BASE_URL}${BASE_URL.includes('?') ? '&' : '?'}schema=${SCHEMA}`;

/** A server with only the auth middleware over `store`, caching keys for a minute. */
async function server(
  store: StateStore,
): Promise<{ get(key: string): Promise<number>; lookups: () => number; close(): Promise<void> }> {
  let lookups = 0;
  const counting: Pick<StateStore, 'findKeyByHash' | 'keyChangeStamp'> = {
    findKeyByHash: (h) => (lookups++, store.findKeyByHash(h)),
    keyChangeStamp: () => store.keyChangeStamp(),
  };
  const app = new Koa();
  app.use(problemMiddleware(() => {}));
  app.use(requestIdMiddleware());
  app.use(authMiddleware(counting, { publicPaths: [], cacheMs: 60_000 }));
  app.use((ctx) => void (ctx.body = { ok: true }));
  const s = http.createServer(app.callback());
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(s.address() as AddressInfo).port}/v1/x`;
  return {
    get: async (key) => (await fetch(url, { headers: { Authorization: `Bearer ${key}` } })).status,
    lookups: () => lookups,
    close: () => new Promise<void>((r) => s.close(() => r())),
  };
}

/**
 * SQLite: nothing to wait for (the stamp has moved when the other connection's commit returns).
 * PostgreSQL: another replica gets the notification a moment after the revoking one returns —
 * assert that moment is short (under 250 ms; about 1 ms on one host), never a cache period.
 */
async function delivered(served: StateStore, stamp: number): Promise<void> {
  if (!('listening' in served)) {
    assert.is.not(served.keyChangeStamp(), stamp, 'SQLite: the stamp moved when the commit returned');
    return;
  }
  const t0 = performance.now();
  await waitUntil('the notification to reach the serving replica', () => served.keyChangeStamp() !== stamp, {
    attempts: 50,
    intervalMs: 5,
  });
  assert.ok(performance.now() - t0 < 250);
}

/** Revoke through `other` a key served (and cached) through `served`: the next request is a 401. */
async function revokeElsewhere(served: StateStore, other: StateStore): Promise<void> {
  const account = await served.createAccount(`acme_${randomBytes(3).toString('hex')}`, 'premium');
  const k = await addKey(served, account.id, 'ent_api');
  const keep = await addKey(served, account.id, 'commonwealth');
  const api = await server(served);
  try {
    assert.is(await api.get(k.raw), 200);
    assert.is(await api.get(keep.raw), 200);
    const before = api.lookups();
    assert.is(await api.get(k.raw), 200);
    assert.is(api.lookups(), before, 'served from the cache while nothing changed');
    const stamp = served.keyChangeStamp();
    const revoked = await other.revokeKey(k.id);
    assert.is(revoked?.status, 'revoked');
    await delivered(served, stamp);
    assert.is(await api.get(k.raw), 401, 'refused on the very next request');
    assert.is(await api.get(keep.raw), 200, 'other keys keep working');
    // a downgrade through the other instance is seen at once too
    const e = await addKey(served, account.id, 'ent_api');
    assert.is(await api.get(e.raw), 200);
    const before2 = served.keyChangeStamp();
    await other.setAccountPlan(account.id, 'pro');
    await delivered(served, before2);
    assert.is(await api.get(e.raw), 403, 'insufficient_plan on the next request');
  } finally {
    await api.close();
  }
}

test('SQLite: a key revoked through another connection to the file is refused on the next request', async () => {
  const file = join(tempDir('leads-rev-'), 'state.sqlite');
  const a = openSqliteStore(file);
  const b = openSqliteStore(file);
  try {
    await revokeElsewhere(a, b);
    // and through the same instance (this process's own revocation)
    await revokeElsewhere(a, a);
  } finally {
    await a.close();
    await b.close();
  }
});

test('SQLite: the stamp stays put while only this connection writes (counters do not empty the cache)', async () => {
  const file = join(tempDir('leads-rev-'), 'state.sqlite');
  const a = openSqliteStore(file);
  try {
    const s = a.keyChangeStamp();
    await a.hitRateLimit('key_x', 0, '2026-01-01');
    await a
      .addUsage([{ key_id: 'key_x', day: '2026-01-01', route: 'GET /v1/leads', requests: 1, errors: 0, rows: 0 }])
      .catch(() => {}); // (no such key: a foreign key error is fine)
    assert.is(a.keyChangeStamp(), s);
  } finally {
    await a.close();
  }
});

let pa: PostgresStateStore | null = null;
let pb: PostgresStateStore | null = null;
const admin = new pg.Pool({ connectionString: BASE_URL, max: 2 });
admin.on('error', () => {});

test('PostgreSQL: a key revoked by another replica is refused on the next request (LISTEN / pg_notify)', async () => {
  pa = await openPostgresStore(PG_URL);
  pb = await openPostgresStore(PG_URL);
  await waitUntil('the key-change listener to connect', () => pa!.listening(), { attempts: 400 });
  await revokeElsewhere(pa, pb);
});

test('PostgreSQL: while the listener is down nothing is served from the cache; it reconnects', async () => {
  const account = await pa!.createAccount('dropped', 'premium');
  const k = await addKey(pa!, account.id, 'ent_api');
  const api = await server(pa!);
  try {
    assert.is(await api.get(k.raw), 200);
    // cut the listening connections of the schema's channel
    const cut = await admin.query(`select pg_terminate_backend(pid) from pg_stat_activity where query = $1`, [
      `LISTEN ${keyChangeChannel(SCHEMA)}`,
    ]);
    assert.ok(cut.rowCount! >= 1, 'a listener was connected');
    await waitUntil('the listener to notice the drop', () => !pa!.listening(), { attempts: 200 });
    const before = api.lookups();
    assert.is(await api.get(k.raw), 200);
    assert.is(await api.get(k.raw), 200);
    assert.is(api.lookups(), before + 2, 'each request read its key while the listener was down');
    // a revocation that sends no notification (written behind the store's back) is still seen
    await admin.query(`update ${SCHEMA}.api_keys set status = 'revoked' where id = $1`, [k.id]);
    assert.is(await api.get(k.raw), 401);
    await waitUntil('the listener to reconnect', () => pa!.listening(), { attempts: 400 });
  } finally {
    await api.close();
  }
});

test.after(async () => {
  await pa?.close();
  await pb?.close();
  await admin.query(`drop schema if exists ${SCHEMA} cascade`).catch(() => {});
  await admin.end();
});

test.run();
