/** The SQLite state store on a real temp file. */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { rejects } from 'node:assert/strict';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { ApiConfigError } from '../../../api/config.ts';
import { generateKey } from '../../../api/keys.ts';
import { openStateStore } from '../../../api/state/open.ts';
import { MIGRATIONS, openSqliteStore } from '../../../api/state/sqlite.ts';
import { tempDir } from '../../helpers/tmp.ts';

const clock = () => new Date('2026-11-20T10:00:00Z');

test('migrations are recorded once, WAL mode, tables exist', async () => {
  const file = join(tempDir(), 'sub', 'state.sqlite');
  const s1 = openSqliteStore(file, { now: clock });
  await s1.close();
  const s2 = openSqliteStore(file, { now: clock }); // reopening does not re-apply
  await s2.close();
  const db = new Database(file, { readonly: true });
  try {
    const versions = db.prepare('SELECT version, applied_at FROM schema_migrations ORDER BY version').all();
    assert.equal(versions, MIGRATIONS.map((m) => ({ version: m.version, applied_at: '2026-11-20T10:00:00.000Z' })));
    assert.is(db.pragma('journal_mode', { simple: true }), 'wal');
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all().map((r) => (r as { name: string }).name);
    for (const t of ['accounts', 'api_keys', 'schema_migrations']) assert.ok(tables.includes(t), t);
  } finally {
    db.close();
  }
});

test('accounts: create, find by name, unique names, plans checked', async () => {
  const store = openSqliteStore(join(tempDir(), 'state.sqlite'), { now: clock });
  try {
    const a = await store.createAccount('acme', 'pro');
    assert.equal(a, { id: a.id, name: 'acme', plan: 'pro', created_at: '2026-11-20T10:00:00.000Z' });
    assert.equal(await store.getAccountByName('acme'), a);
    assert.is(await store.getAccountByName('nobody'), null);
    await rejects(() => store.createAccount('acme', 'basic'), /UNIQUE/);
    await rejects(() => store.createAccount('other', 'gold' as never), /CHECK/);
  } finally {
    await store.close();
  }
});

test('keys: stored by hash, found by hash, listed, revoked', async () => {
  const file = join(tempDir(), 'state.sqlite');
  const store = openSqliteStore(file, { now: clock });
  try {
    const a = await store.createAccount('acme', 'premium');
    const b = await store.createAccount('beta', 'basic');
    const k1 = generateKey('ent_api');
    const k2 = generateKey('commonwealth');
    const inserted = await store.insertKey({ id: k1.id, account_id: a.id, scope: 'ent_api', name: 'prod', display_prefix: k1.displayPrefix, hash: k1.hash });
    assert.equal(inserted, {
      id: k1.id, account_id: a.id, account_name: 'acme', scope: 'ent_api', name: 'prod', display_prefix: k1.displayPrefix,
      status: 'active', created_at: '2026-11-20T10:00:00.000Z', revoked_at: null,
    });
    await store.insertKey({ id: k2.id, account_id: b.id, scope: 'commonwealth', name: null, display_prefix: k2.displayPrefix, hash: k2.hash });
    const found = await store.findKeyByHash(k1.hash);
    assert.is(found?.id, k1.id);
    assert.is(found?.key_hash, k1.hash);
    assert.is(await store.findKeyByHash(generateKey('ent_api').hash), null);
    assert.equal((await store.listKeys()).map((k) => k.id).sort(), [k1.id, k2.id].sort());
    assert.equal((await store.listKeys(b.id)).map((k) => k.id), [k2.id]);
    for (const k of await store.listKeys()) assert.not.ok('key_hash' in k, 'listKeys never returns hashes');
    // the raw key is never stored
    const db = new Database(file, { readonly: true });
    const dump = JSON.stringify(db.prepare('SELECT * FROM api_keys').all());
    db.close();
    assert.not.ok(dump.includes(k1.raw));
    // duplicate hash refused; unknown account refused
    await rejects(() => store.insertKey({ id: 'key_x', account_id: a.id, scope: 'ent_api', name: null, display_prefix: 'x', hash: k1.hash }), /UNIQUE/);
    await rejects(() => store.insertKey({ id: 'key_y', account_id: 999, scope: 'ent_api', name: null, display_prefix: 'y', hash: 'ff' }), /FOREIGN KEY/);
    const revoked = await store.revokeKey(k1.id);
    assert.is(revoked?.status, 'revoked');
    assert.is(revoked?.revoked_at, '2026-11-20T10:00:00.000Z');
    assert.is((await store.findKeyByHash(k1.hash))?.status, 'revoked');
    assert.is(await store.revokeKey('key_missing'), null);
  } finally {
    await store.close();
  }
});

test('a second process-like connection sees writes at once (WAL, shared file)', async () => {
  const file = join(tempDir(), 'state.sqlite');
  const server = openSqliteStore(file);
  const cli = openSqliteStore(file);
  try {
    const a = await cli.createAccount('acme', 'basic');
    const k = generateKey('custom');
    await cli.insertKey({ id: k.id, account_id: a.id, scope: 'custom', name: null, display_prefix: k.displayPrefix, hash: k.hash });
    assert.is((await server.findKeyByHash(k.hash))?.status, 'active');
    await cli.revokeKey(k.id);
    assert.is((await server.findKeyByHash(k.hash))?.status, 'revoked');
  } finally {
    await server.close();
    await cli.close();
  }
});

test('openStateStore: file: paths and URLs open SQLite; postgres is not there yet', async () => {
  const dir = tempDir();
  for (const url of [`file:${join(dir, 'a.sqlite')}`, `file://${join(dir, 'b.sqlite')}`]) {
    const s = openStateStore(url);
    await s.createAccount('x', 'basic');
    assert.ok(await s.getAccountByName('x'), url);
    await s.close();
  }
  assert.throws(() => openStateStore('postgres://localhost/test'), (e: unknown) => e instanceof ApiConfigError && /access-model/.test((e as Error).message));
  assert.throws(() => openStateStore('file:'), (e: unknown) => e instanceof ApiConfigError);
  assert.throws(() => openStateStore('mysql://x'), (e: unknown) => e instanceof ApiConfigError);
});

test.run();
