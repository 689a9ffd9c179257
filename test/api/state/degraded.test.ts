/**
 * Issue 14 point 3: a state store that cannot be written answers 503 `service_degraded` with
 * `Retry-After` (not 500), and the usage ledger keeps the counts it could not write until the
 * store takes them.
 *
 * The fault is real, and works for root (chmod does not stop root, and an open SQLite file keeps
 * its descriptor anyway): a second connection — what a stuck CLI or backup would do — holds the
 * SQLite file's write lock (`BEGIN EXCLUSIVE`) beyond the server's busy timeout, so every write
 * of the server's store fails with SQLITE_BUSY, as a full disk fails with SQLITE_FULL or a
 * read-only file with SQLITE_READONLY; reads (WAL) still work. A read-only connection shows the
 * classifier real SQLITE_READONLY errors.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { assertProblem, startTestApi, type TestApi } from '../../helpers/api.ts';
import { storeUnavailable } from '../../../api/state/degraded.ts';
import { utcDay } from '../../../api/access/limits.ts';

let api: TestApi;
test.before(async () => {
  api = await startTestApi({ config: { stateBusyTimeoutMs: 50 } });
});
test.after(async () => {
  await api?.close();
});

test('store locked past the busy timeout: 503 service_degraded with Retry-After; the ledger keeps and later writes the counts', async () => {
  const key = api.keys.custom;
  for (let i = 0; i < 2; i++) assert.is((await api.request('/v1/meta', { key })).status, 200);
  const lock = new Database(join(api.dataDir, 'state.sqlite'));
  try {
    lock.exec('BEGIN EXCLUSIVE');
    for (let i = 0; i < 3; i++) {
      const res = await api.request('/v1/meta', { key });
      assertProblem(res, 503, 'service_degraded');
      assert.is(res.headers.get('retry-after'), '10');
      assert.match(res.body.detail, /degraded/);
    }
    await api.server.ledger.flush(); // fails: the counts stay in memory
    assert.ok(api.server.ledger.pendingRequests >= 3, `pending ${api.server.ledger.pendingRequests}`);
    assert.match(api.logs.join('\n'), /state store unavailable \(answered 503\): database is locked/);
    assert.match(api.logs.join('\n'), /usage ledger: flush failed, \d+ rows kept in memory/);
  } finally {
    lock.exec('ROLLBACK');
    lock.close();
  }
  await api.server.ledger.flush();
  assert.is(api.server.ledger.pendingRequests, 0);
  assert.match(api.logs.join('\n'), /the store is writable again/);
  const keyId = (await api.store.listKeys()).find((k) => k.scope === 'custom')!.id;
  const account = (await api.store.getAccountByName('test'))!;
  const today = utcDay(Date.now());
  const usage = await api.store.accountUsage(account.id, today, today);
  const meta = usage.routes.find((r) => r.key_id === keyId && r.route === 'GET /v1/meta')!;
  assert.equal(
    { requests: meta.requests, errors: meta.errors },
    { requests: 5, errors: 3 },
    'every request counted, none lost, none twice',
  );
  // and the service answers again
  assert.is((await api.request('/v1/meta', { key })).status, 200);
});

test('the classifier: real SQLite errors of an unwritable store are "unavailable", a constraint is not', () => {
  const rw = new Database(join(api.dataDir, 'state.sqlite'));
  const ro = new Database(join(api.dataDir, 'state.sqlite'), { readonly: true });
  try {
    let err: unknown;
    try {
      ro.exec('CREATE TABLE t_never (x)');
    } catch (e) {
      err = e;
    }
    assert.match(String((err as { code?: string }).code), /^SQLITE_READONLY/);
    assert.ok(storeUnavailable(err));
    let constraint: unknown;
    try {
      rw.exec(
        'INSERT INTO accounts (id, name, plan, created_at) SELECT id, name, plan, created_at FROM accounts LIMIT 1',
      );
    } catch (e) {
      constraint = e;
    }
    assert.match(String((constraint as { code?: string }).code), /^SQLITE_CONSTRAINT/);
    assert.not.ok(storeUnavailable(constraint));
    assert.not.ok(storeUnavailable(new Error('a bug')));
    assert.ok(storeUnavailable(Object.assign(new Error('could not write'), { code: '53100' })), 'PostgreSQL disk_full');
    assert.ok(storeUnavailable(new Error('Connection terminated unexpectedly')), 'PostgreSQL connection lost');
  } finally {
    ro.close();
    rw.close();
  }
});

test.run();
