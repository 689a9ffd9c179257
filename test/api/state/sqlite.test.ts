/** The SQLite state store on real temp files: the shared contract, then what only SQLite does. */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { ApiConfigError } from '../../../api/config.ts';
import { generateKey } from '../../../api/access/keys.ts';
import { openStateStore } from '../../../api/state/open.ts';
import { MIGRATIONS } from '../../../api/state/migrations.ts';
import { openSqliteStore } from '../../../api/state/sqlite.ts';
import type { StateStore } from '../../../api/state/store-interface.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { stateStoreContract } from './contract.ts';

const clock = () => new Date('2026-11-20T10:00:00Z');

const files = new WeakMap<StateStore, string>();
stateStoreContract('sqlite', {
  async open({ now }) {
    const file = join(tempDir(), 'state.sqlite');
    const store = openSqliteStore(file, { now });
    files.set(store, file);
    return store;
  },
  async rawKeyRows(store) {
    const db = new Database(files.get(store)!, { readonly: true });
    try {
      return db.prepare('SELECT * FROM api_keys').all();
    } finally {
      db.close();
    }
  },
  async cleanup() {}, // temp folders go at process exit
});

test('migrations are recorded once, WAL mode, tables exist', async () => {
  const file = join(tempDir(), 'sub', 'state.sqlite');
  const s1 = openSqliteStore(file, { now: clock });
  await s1.close();
  const s2 = openSqliteStore(file, { now: clock }); // reopening does not re-apply
  await s2.close();
  const db = new Database(file, { readonly: true });
  try {
    const versions = db.prepare('SELECT version, applied_at FROM schema_migrations ORDER BY version').all();
    assert.equal(
      versions,
      MIGRATIONS.map((m) => ({ version: m.version, applied_at: '2026-11-20T10:00:00.000Z' })),
    );
    assert.is(db.pragma('journal_mode', { simple: true }), 'wal');
    const tables = db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
      .all()
      .map((r) => (r as { name: string }).name);
    for (const t of ['accounts', 'api_keys', 'schema_migrations']) assert.ok(tables.includes(t), t);
  } finally {
    db.close();
  }
});

test('a second process-like connection sees writes at once (WAL, shared file)', async () => {
  const file = join(tempDir(), 'state.sqlite');
  const server = openSqliteStore(file);
  const cli = openSqliteStore(file);
  try {
    const a = await cli.createAccount('acme', 'basic');
    const k = generateKey('custom');
    await cli.insertKey({
      id: k.id,
      account_id: a.id,
      scope: 'custom',
      name: null,
      display_prefix: k.displayPrefix,
      hash: k.hash,
    });
    assert.is((await server.findKeyByHash(k.hash))?.status, 'active');
    await cli.revokeKey(k.id);
    assert.is((await server.findKeyByHash(k.hash))?.status, 'revoked');
  } finally {
    await server.close();
    await cli.close();
  }
});

test('openStateStore: file: paths and URLs open SQLite; other schemes refused', async () => {
  const dir = tempDir();
  for (const url of [`file:${join(dir, 'a.sqlite')}`, `file://${join(dir, 'b.sqlite')}`]) {
    const s = openStateStore(url);
    await s.createAccount('x', 'basic');
    assert.ok(await s.getAccountByName('x'), url);
    await s.close();
  }
  assert.throws(
    () => openStateStore('file:'),
    (e: unknown) => e instanceof ApiConfigError,
  );
  assert.throws(
    () => openStateStore('mysql://x'),
    (e: unknown) => e instanceof ApiConfigError,
  );
});

test.run();
