/**
 * The account area's store contract (api/state/app-store.ts, `store.app`): what every backend
 * must do, as one uvu suite per backend (app-sqlite.test.ts, app-postgres.pg.test.ts). Each backend
 * opens a fresh store, and a second store on the same data (another process / replica) for the
 * single-use and counting cases.
 */
import type { StoreBackend } from '../../helpers/store-backends.ts';
import type { StateStore } from '../../../api/state/store-interface.ts';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { NewCredential } from '../../../api/state/app-store.ts';

export const T0 = Date.parse('2026-11-20T10:00:00.000Z');

/** A backend the suite runs on (test/helpers/store-backends.ts). */
export type AppContractBackend = StoreBackend;

const at = (s: number): string => new Date(T0 + s * 1000).toISOString();
const password = (id: string): NewCredential => ({ id, kind: 'password', password_hash: `scrypt$17$8$1$salt$${id}` });
const passkey = (id: string, passkeyId: string): NewCredential => ({
  id,
  kind: 'passkey',
  passkey_id: passkeyId,
  public_key: 'pQECAyYgASFYIA',
  counter: 3,
  transports: ['usb', 'internal'],
});
const session = (n: number, expiresS = 3600) => ({
  id_hash: `h${n}`.padEnd(64, '0'),
  public_id: `ses_${n}`,
  method: 'password' as const,
  expires_at: at(expiresS),
});

export function appStoreContract(name: string, backend: AppContractBackend): void {
  const test = suite(`account area store contract: ${name}`);
  let t = T0;
  const clock = { now: () => new Date(t), at: (s: number) => void (t = T0 + s * 1000) };
  const withStore = async (fn: (s: StateStore) => Promise<void>): Promise<void> => {
    t = T0;
    const s = await backend.open({ now: clock.now });
    try {
      await fn(s);
    } finally {
      await s.close();
    }
  };
  test.after(backend.cleanup);

  test('invitations: created by hash, a newer one revokes the older, accepted once, refused when expired', () =>
    withStore(async (s) => {
      const a = await s.createAccount('acme', 'pro');
      const b = await s.createAccount('beta', 'basic');
      const i1 = await s.app.createInvitation({ token_hash: 'inv1', account_id: a.id, expires_at: at(3600) });
      assert.equal(i1, {
        account_id: a.id,
        account_name: 'acme',
        created_at: at(0),
        expires_at: at(3600),
        used_at: null,
        revoked_at: null,
      });
      assert.equal(await s.app.getInvitation('inv1'), i1);
      assert.is(await s.app.getInvitation('nope'), null);
      clock.at(10);
      await s.app.createInvitation({ token_hash: 'inv2', account_id: a.id, expires_at: at(3600) });
      await s.app.createInvitation({ token_hash: 'invb', account_id: b.id, expires_at: at(60) });
      assert.is((await s.app.getInvitation('inv1'))?.revoked_at, at(10), 'the newer invitation revokes the older');
      assert.is((await s.app.getInvitation('invb'))?.revoked_at, null, 'another account is untouched');
      assert.equal(await s.app.acceptInvitation('inv1', password('cred_1'), session(1)), { refused: 'revoked' });
      assert.equal(await s.app.acceptInvitation('nope', password('cred_1'), session(1)), { refused: 'unknown' });
      assert.equal(await s.app.acceptInvitation('inv2', password('cred_1'), session(1)), { account_id: a.id });
      assert.is((await s.app.getInvitation('inv2'))?.used_at, at(10));
      assert.equal(await s.app.acceptInvitation('inv2', password('cred_2'), session(2)), { refused: 'used' });
      assert.equal(await s.app.passwordCredential(a.id), { id: 'cred_1', password_hash: 'scrypt$17$8$1$salt$cred_1' });
      assert.is(await s.app.getSession(session(2).id_hash), null, 'a refused acceptance writes nothing');
      clock.at(60);
      assert.equal(await s.app.acceptInvitation('invb', password('cred_b'), session(3)), { refused: 'expired' });
      assert.is(await s.app.passwordCredential(b.id), null);
    }));

  test('accepting an invitation replaces the credentials and ends every session of the account (recovery)', () =>
    withStore(async (s) => {
      const a = await s.createAccount('acme', 'pro');
      const b = await s.createAccount('beta', 'pro');
      await s.app.createInvitation({ token_hash: 'inv1', account_id: a.id, expires_at: at(3600) });
      await s.app.acceptInvitation('inv1', passkey('cred_pk', 'AAAA'), { ...session(1), method: 'passkey' });
      assert.equal(await s.app.passkeyCredential('AAAA'), {
        id: 'cred_pk',
        account_id: a.id,
        passkey_id: 'AAAA',
        public_key: 'pQECAyYgASFYIA',
        counter: 3,
        transports: ['usb', 'internal'],
      });
      assert.equal(await s.app.credentialKinds(a.id), ['passkey']);
      await s.app.createSession({ ...session(2), account_id: a.id });
      await s.app.createSession({ ...session(9), account_id: b.id });
      clock.at(5);
      await s.app.createInvitation({ token_hash: 'inv2', account_id: a.id, expires_at: at(3600) });
      assert.ok(await s.app.getSession(session(1).id_hash), 'issuing an invitation does not end sessions');
      await s.app.acceptInvitation('inv2', password('cred_pw'), session(3));
      assert.is(await s.app.passkeyCredential('AAAA'), null, 'the lost passkey no longer works');
      assert.equal(await s.app.credentialKinds(a.id), ['password']);
      assert.is(await s.app.getSession(session(1).id_hash), null);
      assert.is(await s.app.getSession(session(2).id_hash), null);
      assert.is((await s.app.getSession(session(3).id_hash))?.account_id, a.id, 'the new session');
      assert.is(
        (await s.app.getSession(session(9).id_hash))?.account_name,
        'beta',
        "another account's session is untouched",
      );
    }));

  test('an invitation is accepted once even when two replicas accept it at the same moment', () =>
    withStore(async (s) => {
      const a = await s.createAccount('acme', 'pro');
      const sibling = await backend.openSibling(s, { now: clock.now });
      try {
        await s.app.createInvitation({ token_hash: 'inv1', account_id: a.id, expires_at: at(3600) });
        const results = await Promise.all([
          s.app.acceptInvitation('inv1', password('cred_1'), session(1)),
          sibling.app.acceptInvitation('inv1', password('cred_2'), session(2)),
          s.app.acceptInvitation('inv1', password('cred_3'), session(3)),
          sibling.app.acceptInvitation('inv1', password('cred_4'), session(4)),
        ]);
        assert.is(results.filter((r) => 'account_id' in r).length, 1, JSON.stringify(results));
        assert.is(results.filter((r) => 'refused' in r && r.refused === 'used').length, 3);
        assert.equal(await s.app.credentialKinds(a.id), ['password']);
      } finally {
        await sibling.close();
      }
    }));

  test('sessions: read with the account as it is now, touched, ended one by one or per account, pruned past expiry', () =>
    withStore(async (s) => {
      const a = await s.createAccount('acme', 'pro');
      await s.app.createSession({ ...session(1, 7200), account_id: a.id });
      const read = await s.app.getSession(session(1).id_hash);
      assert.equal(read, {
        public_id: 'ses_1',
        account_id: a.id,
        account_name: 'acme',
        account_plan: 'pro',
        method: 'password',
        created_at: at(0),
        last_seen_at: at(0),
        expires_at: at(7200),
      });
      await s.setAccountPlan(a.id, 'basic');
      clock.at(30);
      await s.app.touchSession(session(1).id_hash);
      assert.equal(
        [
          (await s.app.getSession(session(1).id_hash))?.account_plan,
          (await s.app.getSession(session(1).id_hash))?.last_seen_at,
        ],
        ['basic', at(30)],
      );
      assert.is(await s.app.endSession(session(1).id_hash), true);
      assert.is(await s.app.endSession(session(1).id_hash), false);
      assert.is(await s.app.getSession(session(1).id_hash), null);
      for (const n of [2, 3]) await s.app.createSession({ ...session(n, 60 * n), account_id: a.id });
      await s.app.pruneApp({ sessionsBefore: at(150), windowBefore: 0 });
      assert.is(await s.app.getSession(session(2).id_hash), null, 'past its absolute expiry');
      assert.ok(await s.app.getSession(session(3).id_hash));
      assert.is(await s.app.endAccountSessions(a.id), 1);
    }));

  test('WebAuthn challenges: single use, bound to their purpose and invitation, refused once expired', () =>
    withStore(async (s) => {
      const sibling = await backend.openSibling(s, { now: clock.now });
      try {
        await s.app.createChallenge({
          challenge: 'c1',
          purpose: 'register',
          invitation_hash: 'inv1',
          expires_at: at(300),
        });
        await s.app.createChallenge({
          challenge: 'c2',
          purpose: 'authenticate',
          invitation_hash: null,
          expires_at: at(300),
        });
        await s.app.createChallenge({
          challenge: 'c3',
          purpose: 'authenticate',
          invitation_hash: null,
          expires_at: at(300),
        });
        assert.is(await s.app.takeChallenge('c1', 'register', 'other'), false, 'another invitation');
        assert.is(await s.app.takeChallenge('c1', 'authenticate', null), false, 'another purpose');
        const taken = await Promise.all([
          s.app.takeChallenge('c1', 'register', 'inv1'),
          sibling.app.takeChallenge('c1', 'register', 'inv1'),
        ]);
        assert.equal(taken.sort(), [false, true], 'taken once across replicas');
        assert.is(await s.app.takeChallenge('c2', 'authenticate', null), true);
        assert.is(await s.app.takeChallenge('c2', 'authenticate', null), false);
        clock.at(300);
        assert.is(await s.app.takeChallenge('c3', 'authenticate', null), false, 'expired');
      } finally {
        await sibling.close();
      }
    }));

  test('credentials: a passkey use moves its counter; a password is found by account', () =>
    withStore(async (s) => {
      const a = await s.createAccount('acme', 'pro');
      await s.app.createInvitation({ token_hash: 'inv1', account_id: a.id, expires_at: at(3600) });
      await s.app.acceptInvitation('inv1', passkey('cred_pk', 'BBBB'), { ...session(1), method: 'passkey' });
      await s.app.credentialUsed('cred_pk', 9);
      assert.is((await s.app.passkeyCredential('BBBB'))?.counter, 9);
      assert.is(await s.app.passwordCredential(a.id), null);
    }));

  test('sign-in failures: counted per key and window by every replica, read for several windows, pruned', () =>
    withStore(async (s) => {
      const sibling = await backend.openSibling(s, { now: clock.now });
      try {
        await Promise.all(
          Array.from({ length: 8 }, (_, i) =>
            (i % 2 ? s : sibling).app.addSigninFailure(['account:1', 'addr:10.0.0.1'], 1000),
          ),
        );
        await s.app.addSigninFailure(['addr:10.0.0.1'], 1900);
        assert.equal(await sibling.app.signinFailures(['account:1', 'addr:10.0.0.1', 'account:2'], [1000, 1900]), {
          'account:1': [8, 0],
          'addr:10.0.0.1': [8, 1],
          'account:2': [0, 0],
        });
        await s.app.pruneApp({ sessionsBefore: at(0), windowBefore: 1900 });
        assert.equal(await s.app.signinFailures(['addr:10.0.0.1'], [1000, 1900]), { 'addr:10.0.0.1': [0, 1] });
      } finally {
        await sibling.close();
      }
    }));

  test('activity log: appended with the clock, listed newest first per account, paged by id', () =>
    withStore(async (s) => {
      const a = await s.createAccount('acme', 'pro');
      const b = await s.createAccount('beta', 'pro');
      for (let i = 0; i < 5; i++) {
        clock.at(i);
        await s.app.recordActivity({
          account_id: a.id,
          event: i % 2 ? 'signed_in' : 'key_created',
          session_id: 'ses_1',
          address: '192.0.2.1',
          details: { n: i, method: i % 2 ? 'password' : null },
        });
      }
      await s.app.recordActivity({
        account_id: b.id,
        event: 'signed_in',
        session_id: null,
        address: null,
        details: {},
      });
      const all = await s.app.listActivity(a.id);
      assert.equal(
        all.map((e) => e.details['n']),
        [4, 3, 2, 1, 0],
      );
      assert.equal(
        { ...all[0]!, id: 0 },
        {
          id: 0,
          account_id: a.id,
          at: at(4),
          event: 'key_created',
          session_id: 'ses_1',
          address: '192.0.2.1',
          details: { n: 4, method: null },
        },
      );
      const page = await s.app.listActivity(a.id, { limit: 2, beforeId: all[1]!.id });
      assert.equal(
        page.map((e) => e.details['n']),
        [2, 1],
      );
      assert.equal(
        (await s.app.listActivity(b.id)).map((e) => e.event),
        ['signed_in'],
      );
    }));

  test.run();
}
