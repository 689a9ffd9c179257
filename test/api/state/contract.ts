/**
 * The state store contract: the behaviour every backend (SQLite, PostgreSQL) must show, as one
 * uvu suite per backend. Each backend's test file calls `stateStoreContract` with a way to open a
 * fresh, empty store and to read its api_keys rows as stored.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { rejects } from 'node:assert/strict';
import { generateKey } from '../../../api/access/keys.ts';
import type { StateStore } from '../../../api/state/store-interface.ts';
import { accessContract } from './access-contract.ts';

export const CONTRACT_NOW = '2026-11-20T10:00:00.000Z';
const fixedClock = () => new Date(CONTRACT_NOW);

/** A clock the test sets: `clock.at(seconds)` moves it to CONTRACT_NOW + seconds. */
function settableClock(): { now: () => Date; at: (seconds: number) => void } {
  let t = Date.parse(CONTRACT_NOW);
  return { now: () => new Date(t), at: (seconds) => void (t = Date.parse(CONTRACT_NOW) + seconds * 1000) };
}

export interface ContractBackend {
  /** Open a fresh, empty store (its own file / schema) with the given clock. */
  open: (opts: { now: () => Date }) => Promise<StateStore>;
  /** Every api_keys row of `store` exactly as stored (to check that no raw key is kept). */
  rawKeyRows: (store: StateStore) => Promise<unknown[]>;
  /** Runs once after the suite (remove files, drop schemas, end pools). */
  cleanup: () => Promise<void>;
}

/** Register and queue the contract suite for one backend. */
export function stateStoreContract(name: string, backend: ContractBackend): void {
  const test = suite(`state store contract: ${name}`);
  const withStore = async (fn: (s: StateStore) => Promise<void>, now: () => Date = fixedClock): Promise<void> => {
    const store = await backend.open({ now });
    try {
      await fn(store);
    } finally {
      await store.close();
    }
  };

  test.after(backend.cleanup);

  test('accounts: create, find by name, unique names, plans checked', () =>
    withStore(async (store) => {
      const a = await store.createAccount('acme', 'pro');
      assert.equal(a, { id: a.id, name: 'acme', plan: 'pro', created_at: CONTRACT_NOW });
      assert.type(a.id, 'number');
      assert.equal(await store.getAccountByName('acme'), a);
      assert.is(await store.getAccountByName('nobody'), null);
      await rejects(() => store.createAccount('acme', 'basic'), /unique/i);
      await rejects(() => store.createAccount('other', 'gold' as never), /check/i);
      assert.is(await store.getAccountByName('other'), null);
    }));

  test('accounts: the plan changes (upgrade, downgrade); keys read by hash carry the current plan', () =>
    withStore(async (store) => {
      const a = await store.createAccount('acme', 'premium');
      const k = generateKey('ent_api');
      await store.insertKey({
        id: k.id,
        account_id: a.id,
        scope: 'ent_api',
        name: null,
        display_prefix: k.displayPrefix,
        hash: k.hash,
      });
      assert.is((await store.findKeyByHash(k.hash))?.account_plan, 'premium');
      const down = await store.setAccountPlan(a.id, 'pro');
      assert.equal(down, { ...a, plan: 'pro' });
      assert.equal(await store.getAccountByName('acme'), down);
      assert.equal(await store.getAccountById(a.id), down);
      const found = await store.findKeyByHash(k.hash);
      assert.equal(
        [found?.account_plan, found?.status, found?.scope],
        ['pro', 'active', 'ent_api'],
        'the key itself is untouched',
      );
      assert.is((await store.setAccountPlan(a.id, 'premium'))?.plan, 'premium');
      assert.is((await store.findKeyByHash(k.hash))?.account_plan, 'premium');
      assert.is(await store.setAccountPlan(999, 'pro'), null);
      await rejects(() => store.setAccountPlan(a.id, 'gold' as never), /check/i);
      assert.is((await store.getAccountById(a.id))?.plan, 'premium');
    }));

  test('keys: stored by hash, found by hash, listed, revoked', () =>
    withStore(async (store) => {
      const a = await store.createAccount('acme', 'premium');
      const b = await store.createAccount('beta', 'basic');
      const k1 = generateKey('ent_api');
      const k2 = generateKey('commonwealth');
      const inserted = await store.insertKey({
        id: k1.id,
        account_id: a.id,
        scope: 'ent_api',
        name: 'prod',
        display_prefix: k1.displayPrefix,
        hash: k1.hash,
      });
      assert.equal(inserted, {
        id: k1.id,
        account_id: a.id,
        account_name: 'acme',
        scope: 'ent_api',
        name: 'prod',
        display_prefix: k1.displayPrefix,
        status: 'active',
        created_at: CONTRACT_NOW,
        revoked_at: null,
        licence_id: null,
        expires_at: null,
      });
      await store.insertKey({
        id: k2.id,
        account_id: b.id,
        scope: 'commonwealth',
        name: null,
        display_prefix: k2.displayPrefix,
        hash: k2.hash,
      });
      const found = await store.findKeyByHash(k1.hash);
      assert.equal(
        found,
        { ...inserted, key_hash: k1.hash, account_plan: 'premium' },
        "with its account's current plan",
      );
      assert.is(await store.findKeyByHash(generateKey('ent_api').hash), null);
      assert.equal((await store.listKeys()).map((k) => k.id).sort(), [k1.id, k2.id].sort());
      assert.equal(await store.listKeys(b.id), [
        {
          id: k2.id,
          account_id: b.id,
          account_name: 'beta',
          scope: 'commonwealth',
          name: null,
          display_prefix: k2.displayPrefix,
          status: 'active',
          created_at: CONTRACT_NOW,
          revoked_at: null,
          licence_id: null,
          expires_at: null,
        },
      ]);
      assert.equal(await store.listKeys(999), []);
      for (const k of await store.listKeys()) assert.not.ok('key_hash' in k, 'listKeys never returns hashes');
      // the raw key is never stored, only its hash
      const dump = JSON.stringify(await backend.rawKeyRows(store));
      assert.ok(dump.includes(k1.hash));
      assert.not.ok(dump.includes(k1.raw));
      assert.not.ok(dump.includes(k2.raw));
      // duplicate hash refused; unknown account refused; unknown scope refused
      await rejects(
        () =>
          store.insertKey({
            id: 'key_x',
            account_id: a.id,
            scope: 'ent_api',
            name: null,
            display_prefix: 'x',
            hash: k1.hash,
          }),
        /unique/i,
      );
      await rejects(
        () =>
          store.insertKey({
            id: 'key_y',
            account_id: 999,
            scope: 'ent_api',
            name: null,
            display_prefix: 'y',
            hash: 'ff',
          }),
        /foreign key/i,
      );
      await rejects(
        () =>
          store.insertKey({
            id: 'key_z',
            account_id: a.id,
            scope: 'gold' as never,
            name: null,
            display_prefix: 'z',
            hash: 'ee',
          }),
        /check/i,
      );
      const revoked = await store.revokeKey(k1.id);
      assert.equal(revoked, { ...inserted, status: 'revoked', revoked_at: CONTRACT_NOW });
      assert.is((await store.findKeyByHash(k1.hash))?.status, 'revoked');
      assert.is(await store.revokeKey('key_missing'), null);
    }));

  const clock = settableClock();
  test('keys: listed oldest first; revoking again keeps the first revoked_at', () =>
    withStore(async (store) => {
      clock.at(0);
      const a = await store.createAccount('acme', 'pro');
      // inserted newest first: the list is ordered by created_at, not by insertion
      const keys = Array.from({ length: 3 }, () => generateKey('commonwealth'));
      for (const [i, k] of keys.entries()) {
        clock.at(30 - i * 10);
        await store.insertKey({
          id: k.id,
          account_id: a.id,
          scope: 'commonwealth',
          name: null,
          display_prefix: k.displayPrefix,
          hash: k.hash,
        });
      }
      const listed = await store.listKeys(a.id);
      assert.equal(
        listed.map((k) => k.id),
        [...keys].reverse().map((k) => k.id),
      );
      assert.equal(
        listed.map((k) => k.created_at),
        ['2026-11-20T10:00:10.000Z', '2026-11-20T10:00:20.000Z', '2026-11-20T10:00:30.000Z'],
      );
      clock.at(60);
      const first = await store.revokeKey(keys[0]!.id);
      assert.is(first?.revoked_at, '2026-11-20T10:01:00.000Z');
      clock.at(120);
      assert.equal(await store.revokeKey(keys[0]!.id), first);
      assert.equal(
        (await store.listKeys(a.id)).map((k) => k.status),
        ['active', 'active', 'revoked'],
      );
    }, clock.now));

  test('concurrent calls: distinct accounts all created, one key per hash', () =>
    withStore(async (store) => {
      const accounts = await Promise.all(
        Array.from({ length: 20 }, (_, i) => store.createAccount(`acct${i}`, 'basic')),
      );
      assert.is(new Set(accounts.map((a) => a.id)).size, 20);
      const k = generateKey('ent_api');
      const results = await Promise.allSettled(
        accounts.slice(0, 8).map((a, i) =>
          store.insertKey({
            id: `key_race${i}`,
            account_id: a.id,
            scope: 'ent_api',
            name: null,
            display_prefix: k.displayPrefix,
            hash: k.hash,
          }),
        ),
      );
      assert.is(results.filter((r) => r.status === 'fulfilled').length, 1);
      assert.is((await store.listKeys()).length, 1);
    }));

  accessContract(test, withStore);

  test.run();
}
