/**
 * The access-model part of the state store contract (issue 4), run on every backend by
 * `contract.ts`: self-serve key limit, licences and one-time claim links, hourly counters, daily
 * row budgets and the usage ledger — including what must hold under concurrent calls.
 */
import type { Test } from 'uvu';
import * as assert from 'uvu/assert';
import { createHash, randomBytes } from 'node:crypto';
import { generateKey } from '../../../api/access/keys.ts';
import type { NewKey, StateStore } from '../../../api/state/store-interface.ts';

type WithStore = (fn: (s: StateStore) => Promise<void>, now?: () => Date) => Promise<void>;

const T0 = Date.parse('2026-11-20T10:00:00.000Z');
function clockAt(): { now: () => Date; set: (iso: string) => void } {
  let t = T0;
  return { now: () => new Date(t), set: (iso) => void (t = Date.parse(iso)) };
}

const newKey = (account_id: number, scope: NewKey['scope'] = 'commonwealth'): NewKey & { raw: string } => {
  const k = generateKey(scope);
  return { id: k.id, account_id, scope, name: null, display_prefix: k.displayPrefix, hash: k.hash, raw: k.raw };
};
const token = (): { raw: string; hash: string } => {
  const raw = randomBytes(32).toString('base64url');
  return { raw, hash: createHash('sha256').update(raw).digest('hex') };
};
const claimed = (scope: 'ent_feed' | 'custom') => {
  const k = generateKey(scope);
  return { id: k.id, name: 'org laptop', display_prefix: k.displayPrefix, hash: k.hash };
};

export function accessContract(test: Test, withStore: WithStore): void {
  test('self-serve keys: at most N active per account, atomically; revoked and licensed keys do not count', () =>
    withStore(async (store) => {
      const a = await store.createAccount('acme', 'premium');
      const b = await store.createAccount('beta', 'basic');
      // 15 concurrent creations against a limit of 10: exactly 10 land
      const results = await Promise.all(Array.from({ length: 15 }, () => store.insertSelfServeKey(newKey(a.id), 10)));
      assert.is(results.filter((r) => r !== 'limit').length, 10);
      assert.is((await store.listKeys(a.id)).length, 10);
      assert.is(await store.insertSelfServeKey(newKey(a.id), 10), 'limit');
      // another account has its own allowance
      assert.not.equal(await store.insertSelfServeKey(newKey(b.id), 10), 'limit');
      // a revoked key frees a place; its row (history) stays
      const first = results.find((r) => r !== 'limit') as { id: string };
      await store.revokeKey(first.id);
      const again = await store.insertSelfServeKey(newKey(a.id), 10);
      assert.ok(again !== 'limit' && again.licence_id === null && again.expires_at === null);
      assert.is((await store.listKeys(a.id)).length, 11);
      // licensed keys count against seats, not the self-serve limit
      const lic = await store.createLicence({
        id: 'lic_a1',
        account_id: a.id,
        scope: 'ent_feed',
        seats: 1,
        expires_at: '2027-01-01T00:00:00.000Z',
      });
      const t = token();
      await store.createClaimLink({ token_hash: t.hash, licence_id: lic.id, expires_at: '2026-11-27T10:00:00.000Z' });
      assert.ok('key' in (await store.claimLink(t.hash, claimed('ent_feed'))));
      assert.is(await store.insertSelfServeKey(newKey(a.id), 10), 'limit', 'still 10 active self-serve keys');
      assert.is(await store.getAccountById(a.id).then((x) => x?.name), 'acme');
      assert.is(await store.getAccountById(999), null);
    }));

  const clock = clockAt();
  test('licences and claim links: single use, expiring, seats, expiry of licensed keys', () =>
    withStore(async (store) => {
      clock.set('2026-11-20T10:00:00.000Z');
      const org = await store.createAccount('org', 'basic');
      const lic = await store.createLicence({
        id: 'lic_1',
        account_id: org.id,
        scope: 'custom',
        seats: 2,
        expires_at: '2026-12-01T00:00:00Z',
      });
      assert.equal(lic, {
        id: 'lic_1',
        account_id: org.id,
        account_name: 'org',
        scope: 'custom',
        seats: 2,
        expires_at: '2026-12-01T00:00:00.000Z',
        created_at: '2026-11-20T10:00:00.000Z',
        seats_used: 0,
      });
      assert.equal(await store.getLicence('lic_1'), lic);
      assert.is(await store.getLicence('lic_x'), null);
      const bad = await store
        .createLicence({
          id: 'lic_bad',
          account_id: org.id,
          scope: 'ent_api',
          seats: 1,
          expires_at: '2026-12-01T00:00:00Z',
        })
        .catch((e: Error) => e);
      assert.match(String(bad), /check/i, 'licences are for ent_feed and custom only');
      const links = [token(), token(), token(), token()];
      for (const [i, t] of links.entries()) {
        const l = await store.createClaimLink({
          token_hash: t.hash,
          licence_id: 'lic_1',
          expires_at: i === 3 ? '2026-11-20T11:00:00Z' : '2026-11-27T10:00:00Z',
        });
        assert.is(l.used_at, null);
      }
      assert.equal(await store.claimLink(token().hash, claimed('custom')), { refused: 'unknown_link' });
      const k1 = claimed('custom');
      const r1 = await store.claimLink(links[0]!.hash, k1);
      assert.ok('key' in r1);
      if ('key' in r1) {
        assert.equal(r1.key, {
          id: k1.id,
          account_id: org.id,
          account_name: 'org',
          scope: 'custom',
          name: 'org laptop',
          display_prefix: k1.display_prefix,
          status: 'active',
          created_at: '2026-11-20T10:00:00.000Z',
          revoked_at: null,
          licence_id: 'lic_1',
          expires_at: '2026-12-01T00:00:00.000Z',
        });
      }
      assert.equal((await store.getClaimLink(links[0]!.hash))?.key_id, k1.id);
      assert.equal(
        await store.claimLink(links[0]!.hash, claimed('custom')),
        { refused: 'link_used' },
        'replay refused',
      );
      assert.equal(await store.claimLink(links[1]!.hash, { ...claimed('custom'), hash: k1.hash }), {
        refused: 'duplicate_key',
      });
      assert.is((await store.getClaimLink(links[1]!.hash))?.used_at, null, 'a refused claim writes nothing');
      // two claims racing for the last seat: exactly one wins
      const race = await Promise.all([
        store.claimLink(links[1]!.hash, claimed('custom')),
        store.claimLink(links[2]!.hash, claimed('custom')),
      ]);
      assert.equal(race.filter((r) => 'key' in r).length, 1);
      assert.equal(
        race.find((r) => 'refused' in r),
        { refused: 'seats_full' },
      );
      assert.is((await store.getLicence('lic_1'))?.seats_used, 2);
      // revoking a licensed key frees its seat
      const loser = race.findIndex((r) => 'refused' in r);
      await store.revokeKey(k1.id);
      assert.is((await store.getLicence('lic_1'))?.seats_used, 1);
      clock.set('2026-11-20T12:00:00.000Z');
      assert.equal(await store.claimLink(links[3]!.hash, claimed('custom')), { refused: 'link_expired' });
      const k3 = claimed('custom');
      assert.ok('key' in (await store.claimLink(links[1 + loser]!.hash, k3)));
      assert.equal(
        (await store.listLicences(org.id)).map((l) => l.seats_used),
        [2],
      );
      assert.equal(
        (await store.listLicences()).map((l) => l.id),
        ['lic_1'],
      );
      // the licence ends: its keys read as expired everywhere, seats are moot, new claims refused
      const late = token();
      await store.createClaimLink({ token_hash: late.hash, licence_id: 'lic_1', expires_at: '2026-12-08T00:00:00Z' });
      clock.set('2026-12-01T00:00:00.000Z');
      assert.is((await store.findKeyByHash(k3.hash))?.status, 'expired');
      assert.equal((await store.listKeys(org.id)).map((k) => k.status).sort(), ['expired', 'expired', 'revoked']);
      assert.equal(await store.claimLink(late.hash, claimed('custom')), { refused: 'licence_expired' });
      assert.is((await store.getLicence('lic_1'))?.seats_used, 0);
    }, clock.now));

  test("a licence's end is its keys' end: moving it reaches keys already claimed (issue 31)", () => {
    const clock = clockAt();
    return withStore(async (store) => {
      const org = await store.createAccount('org', 'basic');
      await store.createLicence({
        id: 'lic_m',
        account_id: org.id,
        scope: 'ent_feed',
        seats: 1,
        expires_at: '2026-12-01T00:00:00Z',
      });
      const link = token();
      await store.createClaimLink({ token_hash: link.hash, licence_id: 'lic_m', expires_at: '2026-11-27T00:00:00Z' });
      const k = claimed('ent_feed');
      assert.ok('key' in (await store.claimLink(link.hash, k)));
      const stamp = store.keyChangeStamp();
      // shortened to before now: the key is expired at once, its seat free
      const shorter = await store.setLicenceEnd('lic_m', '2026-11-20T09:00:00Z');
      assert.equal([shorter?.expires_at, shorter?.seats_used], ['2026-11-20T09:00:00.000Z', 0]);
      assert.ok(store.keyChangeStamp() !== stamp, 'key caches are told');
      const found = await store.findKeyByHash(k.hash);
      assert.equal([found?.status, found?.expires_at], ['expired', '2026-11-20T09:00:00.000Z']);
      // extended: the same key works again until the new end
      await store.setLicenceEnd('lic_m', '2027-06-01T00:00:00Z');
      const again = (await store.listKeys(org.id))[0]!;
      assert.equal([again.status, again.expires_at], ['active', '2027-06-01T00:00:00.000Z']);
      assert.is((await store.getLicence('lic_m'))?.seats_used, 1);
      clock.set('2027-06-01T00:00:00.000Z');
      assert.is((await store.findKeyByHash(k.hash))?.status, 'expired');
      assert.is(await store.setLicenceEnd('lic_none', '2027-01-01T00:00:00Z'), null);
    }, clock.now);
  });

  test('hourly counter: one atomic count per request, exact under concurrency, per window', () =>
    withStore(async (store) => {
      const a = await store.createAccount('acme', 'pro');
      const k = newKey(a.id);
      await store.insertKey(k);
      const w = 1_795_000_000 - (1_795_000_000 % 3600);
      const hits = await Promise.all(Array.from({ length: 40 }, () => store.hitRateLimit(k.id, w, '2026-11-20')));
      assert.equal(
        hits.map((h) => h.count).sort((x, y) => x - y),
        Array.from({ length: 40 }, (_, i) => i + 1),
      );
      assert.equal((await store.hitRateLimit(k.id, w + 3600, '2026-11-20')).count, 1, 'a new window starts at 1');
      assert.equal((await store.hitRateLimit('key_other', w, '2026-11-20')).count, 1, 'per key');
      await store.chargeRows(k.id, '2026-11-20', 30, 100);
      assert.equal(
        await store.hitRateLimit(k.id, w, '2026-11-20'),
        { count: 41, rowsUsed: 30 },
        'rows used today come back with the count',
      );
      await store.prune({ detailBefore: '2000-01-01', windowBefore: w + 1, budgetBefore: '2000-01-01' });
      assert.is((await store.hitRateLimit(k.id, w, '2026-11-20')).count, 1, 'pruned windows start again');
    }));

  test('hourly counter in blocks: a conditional atomic reservation, refused (counting nothing) past the limit, exact under concurrency', () =>
    withStore(async (store) => {
      const w = 1_795_000_000 - (1_795_000_000 % 3600);
      assert.is(await store.reserveRequests('key_r', w, 10, 100), 10, 'a new window starts with the block');
      assert.is((await store.hitRateLimit('key_r', w, '2026-11-20')).count, 11, 'per-request counts follow the block');
      assert.is(await store.reserveRequests('key_r', w, 89, 100), 100, 'up to the limit exactly');
      assert.is(await store.reserveRequests('key_r', w, 1, 100), null, 'past it: refused');
      assert.is((await store.hitRateLimit('key_r', w, '2026-11-20')).count, 101, 'and nothing was counted');
      assert.is(await store.reserveRequests('key_s', w, 101, 100), null, 'a block larger than the limit never fits');
      assert.is(await store.reserveRequests('key_s', w, 0, 100), null, 'nor an empty one');
      assert.is((await store.hitRateLimit('key_s', w, '2026-11-20')).count, 1, 'neither counted anything');
      // 30 concurrent blocks of 7 against 100: 14 fit (98), the rest count nothing
      const racing = await Promise.all(Array.from({ length: 30 }, () => store.reserveRequests('key_t', w, 7, 100)));
      const granted = racing.filter((c): c is number => c !== null).sort((x, y) => x - y);
      assert.equal(
        granted,
        Array.from({ length: 14 }, (_, i) => 7 * (i + 1)),
      );
      assert.is(await store.reserveRequests('key_t', w, 2, 100), 100, 'what remains still fits');
      assert.is(await store.reserveRequests('key_t', w + 3600, 5, 100), 5, 'per window');
    }));

  test('daily row budget: conditional atomic charge, nothing charged on refusal, exact under concurrency', () =>
    withStore(async (store) => {
      const day = '2026-11-20';
      assert.equal(await store.chargeRows('key_a', day, 40, 100), { ok: true, used: 40 });
      assert.equal(await store.chargeRows('key_a', day, 61, 100), { ok: false, used: 40 });
      assert.equal(await store.chargeRows('key_a', day, 60, 100), { ok: true, used: 100 });
      assert.equal(await store.chargeRows('key_a', day, 1, 100), { ok: false, used: 100 });
      assert.equal(
        await store.chargeRows('key_b', day, 101, 100),
        { ok: false, used: 0 },
        'more than the whole budget: refused on a fresh day',
      );
      assert.equal(
        await store.chargeRows('key_a', '2026-11-21', 1, 100),
        { ok: true, used: 1 },
        'a new day starts at 0',
      );
      const racing = await Promise.all(Array.from({ length: 15 }, () => store.chargeRows('key_c', day, 10, 100)));
      assert.is(racing.filter((r) => r.ok).length, 10);
      assert.equal((await store.chargeRows('key_c', day, 0, 100)).used, 100);
      await store.prune({ detailBefore: '2000-01-01', windowBefore: 0, budgetBefore: '2026-11-21' });
      assert.equal(await store.chargeRows('key_a', day, 5, 100), { ok: true, used: 5 }, 'pruned days start again');
    }));

  test('usage ledger: additive per key, day and route; revoked keys listed; detail pruned, daily totals kept', () =>
    withStore(async (store) => {
      const a = await store.createAccount('acme', 'premium');
      const other = await store.createAccount('other', 'basic');
      const k1 = newKey(a.id, 'ent_api');
      const k2 = newKey(a.id);
      const k3 = newKey(other.id);
      for (const k of [k1, k2, k3]) await store.insertKey(k);
      await store.revokeKey(k2.id);
      const d = (key_id: string, day: string, route: string, requests: number, errors: number, rows: number) => ({
        key_id,
        day,
        route,
        requests,
        errors,
        rows,
      });
      // two replicas flushing at once, the same rows in both batches
      await Promise.all([
        store.addUsage([
          d(k1.id, '2026-11-19', 'GET /v1/leads', 3, 1, 50),
          d(k1.id, '2026-11-19', 'GET /v1/leads/:id', 2, 0, 2),
          d(k2.id, '2026-11-20', 'GET /v1/meta', 1, 0, 0),
        ]),
        store.addUsage([
          d(k1.id, '2026-11-19', 'GET /v1/leads', 1, 0, 25),
          d(k3.id, '2026-11-19', 'GET /v1/leads', 9, 9, 9),
        ]),
      ]);
      await store.addUsage([]);
      const u = await store.accountUsage(a.id, '2026-11-01', '2026-11-30');
      assert.equal(
        new Map(u.keys.map((k) => [k.id, k.status])),
        new Map([
          [k1.id, 'active'],
          [k2.id, 'revoked'],
        ]),
      );
      assert.equal(u.days, [
        { key_id: k1.id, day: '2026-11-19', requests: 6, errors: 1, rows: 77 },
        { key_id: k2.id, day: '2026-11-20', requests: 1, errors: 0, rows: 0 },
      ]);
      assert.equal(u.routes, [
        { key_id: k1.id, day: '2026-11-19', route: 'GET /v1/leads', requests: 4, errors: 1, rows: 75 },
        { key_id: k1.id, day: '2026-11-19', route: 'GET /v1/leads/:id', requests: 2, errors: 0, rows: 2 },
        { key_id: k2.id, day: '2026-11-20', route: 'GET /v1/meta', requests: 1, errors: 0, rows: 0 },
      ]);
      assert.equal(
        (await store.accountUsage(a.id, '2026-11-20', '2026-11-20')).days.map((x) => x.key_id),
        [k2.id],
        'from/to inclusive',
      );
      await store.prune({ detailBefore: '2026-11-20', windowBefore: 0, budgetBefore: '2000-01-01' });
      const after = await store.accountUsage(a.id, '2026-11-01', '2026-11-30');
      assert.equal(after.days, u.days, 'daily totals are kept forever');
      assert.equal(
        after.routes.map((r) => r.day),
        ['2026-11-20'],
        'route detail before the window is gone',
      );
    }));
}
