/**
 * The idempotency-key store (api/state/idempotency.ts) on both backends: a real SQLite file
 * (the sibling is another connection, as another process would open it) and the local
 * PostgreSQL server (the sibling is another pool on the schema, as another replica).
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { StateStore } from '../../../api/state/store-interface.ts';
import { postgresBackend, sqliteBackend, type StoreBackend } from '../../helpers/store-backends.ts';

const HOUR = 3_600_000;

for (const [name, backend] of [
  ['sqlite', sqliteBackend()],
  ['postgres', postgresBackend('leads_idemtest')],
] as [string, StoreBackend][]) {
  const test = suite(`idempotency keys on ${name}`);
  let a: StateStore;
  let b: StateStore;
  let account: number;
  let other: number;
  const t0 = new Date('2026-11-20T10:00:00Z');
  const at = (ms: number) => new Date(t0.getTime() + ms);
  const claim = (s: StateStore, key: string, fingerprint: string, now = t0, acc = account) =>
    s.idempotency.claim({ accountId: acc, key, fingerprint, now, ttlMs: 24 * HOUR, staleMs: 60_000 });

  test.before(async () => {
    a = await backend.open({ now: () => t0 });
    b = await backend.openSibling(a, { now: () => t0 });
    account = (await a.createAccount('acme', 'premium')).id;
    other = (await a.createAccount('other', 'premium')).id;
  });
  test.after(async () => {
    await a?.close();
    await b?.close();
    await backend.cleanup();
  });

  test('one claim per key across connections; the answer once complete; another fingerprint is a mismatch', async () => {
    assert.equal(await claim(a, 'k1', 'f1'), { state: 'claimed' });
    assert.equal(await claim(b, 'k1', 'f1'), { state: 'in_progress' }, 'the other connection sees the claim');
    assert.equal(await claim(b, 'k1', 'f2'), { state: 'mismatch' });
    assert.equal(await claim(b, 'k1', 'f1', t0, other), { state: 'claimed' }, 'keys are per account');
    await a.idempotency.complete(account, 'k1', {
      status: 201,
      body: '{"id":"wh_1"}',
      location: 'https://x/v1/webhooks/wh_1',
    });
    assert.equal(await claim(b, 'k1', 'f1', at(HOUR)), {
      state: 'done',
      response: { status: 201, body: '{"id":"wh_1"}', location: 'https://x/v1/webhooks/wh_1' },
    });
    assert.equal(await claim(b, 'k1', 'f2', at(HOUR)), { state: 'mismatch' });
  });

  test('released keys, stale claims and expired answers are claimed anew', async () => {
    assert.equal(await claim(a, 'k2', 'f1'), { state: 'claimed' });
    await b.idempotency.release(account, 'k2');
    assert.equal(await claim(b, 'k2', 'f2'), { state: 'claimed' }, 'released: free for any request');
    assert.equal(await claim(a, 'k2', 'f2', at(59_000)), { state: 'in_progress' });
    assert.equal(
      await claim(a, 'k2', 'f2', at(61_000)),
      { state: 'claimed' },
      'a claim unanswered past staleMs is taken over',
    );
    await a.idempotency.complete(account, 'k2', { status: 201, body: '{}', location: null });
    await b.idempotency.release(account, 'k2'); // a completed answer is never released
    assert.equal((await claim(b, 'k2', 'f2', at(2 * HOUR))).state, 'done');
    assert.equal(await claim(b, 'k2', 'f9', at(61_000 + 24 * HOUR)), { state: 'claimed' }, 'expired after 24 h');
  });

  test('racing claims of one key: exactly one wins', async () => {
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => claim(i % 2 ? a : b, 'race', 'f')));
    assert.is(results.filter((r) => r.state === 'claimed').length, 1, JSON.stringify(results));
    assert.is(results.filter((r) => r.state === 'in_progress').length, 9);
  });

  test.run();
}
