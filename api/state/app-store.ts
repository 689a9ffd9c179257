/**
 * The account area's state (issue 16), written once over any `Backend` and exposed as
 * `store.app`: invitations, credentials (passwords and passkeys), sessions, WebAuthn challenges,
 * the sign-in throttle's counters and the account activity log. Migrations use versions 30..39
 * (api/state/migrations.ts).
 *
 * What is stored, and what never is:
 * - invitations and sessions by the SHA-256 hash of their token / cookie value only (the raw
 *   values live in the invitation link and the browser's cookie);
 * - passwords only as scrypt hashes (api/app-area/passwords.ts), passkeys as their public key;
 * - no e-mail address (an invitation's address is used to send it, never kept), no person's name.
 *
 * Atomicity, the same on both databases: accepting an invitation is one `atomic` operation that
 * locks the invitation row (PostgreSQL `FOR UPDATE`; SQLite holds the write lock), so a link
 * works once even when two replicas get it at the same moment; WebAuthn challenges are taken
 * with one `DELETE … RETURNING` (single use); throttle counters are single upserts.
 */
import type { CompiledQuery } from 'kysely';
import type { Plan } from '../access/scopes.ts';
import { rows, template, type Backend, type Row } from './backend.ts';
import type { ChallengePurpose, CredentialKind } from './tables.ts';

/** An invitation as read by the hash of its token, with its account. */
export interface Invitation {
  account_id: number;
  account_name: string;
  created_at: string;
  expires_at: string;
  used_at: string | null;
  /** Set when a newer invitation of the account replaced this unused one. */
  revoked_at: string | null;
}

/** Why an invitation cannot be accepted (nothing is written then). */
export type InvitationRefusal = 'unknown' | 'used' | 'revoked' | 'expired';

/** A credential to store when an invitation is accepted. */
export type NewCredential =
  | { id: string; kind: 'password'; password_hash: string }
  | { id: string; kind: 'passkey'; passkey_id: string; public_key: string; counter: number; transports: string[] };

export interface PasskeyCredential {
  id: string;
  account_id: number;
  passkey_id: string;
  /** base64url of the COSE public key. */
  public_key: string;
  counter: number;
  transports: string[];
}

/** A session to insert: stored by the SHA-256 hash of its cookie value. */
export interface NewSession {
  id_hash: string;
  /** Public id (safe to log and show), `ses_…`. */
  public_id: string;
  account_id: number;
  method: CredentialKind;
  /** Absolute expiry (idle expiry is checked against `last_seen_at` by the session layer). */
  expires_at: string;
}

/** A session as read for a request: with its account as it is now (plan changes apply at once). */
export interface StoredSession {
  public_id: string;
  account_id: number;
  account_name: string;
  account_plan: Plan;
  method: CredentialKind;
  created_at: string;
  last_seen_at: string;
  expires_at: string;
}

/** One entry of the activity log. `details` never holds a password, a token or a person's name. */
export interface ActivityEntry {
  id: number;
  account_id: number;
  at: string;
  /** e.g. `signed_in`, `sign_in_failed`, `signed_out`, `credential_set`, `invitation_issued`, `key_created`… */
  event: string;
  /** Public id of the session it happened in, if any. */
  session_id: string | null;
  /** The client address it came from (the operator's command line: null). */
  address: string | null;
  details: Record<string, string | number | null>;
}

export type NewActivity = Omit<ActivityEntry, 'id' | 'at'>;

export interface AppStore {
  /**
   * Record an invitation by its token's hash; the account's earlier unused invitations are
   * revoked in the same transaction (only the newest link works).
   */
  createInvitation(i: { token_hash: string; account_id: number; expires_at: string }): Promise<Invitation>;
  /** The invitation with this token hash (any state), or null. */
  getInvitation(tokenHash: string): Promise<Invitation | null>;
  /**
   * Accept an invitation, atomically: it must be unused, unrevoked and unexpired; then it is
   * marked used, the account's credentials are REPLACED by `credential` (a lost or stolen one
   * stops working), every session of the account ends and `session` starts.
   */
  acceptInvitation(
    tokenHash: string,
    credential: NewCredential,
    session: Omit<NewSession, 'account_id'>,
  ): Promise<{ account_id: number } | { refused: InvitationRefusal }>;
  /** The account's password credential (its scrypt hash), or null. */
  passwordCredential(accountId: number): Promise<{ id: string; password_hash: string } | null>;
  /** A passkey by its WebAuthn credential id (base64url), or null. */
  passkeyCredential(passkeyId: string): Promise<PasskeyCredential | null>;
  /** Note a credential's use (and a passkey's new signature counter). */
  credentialUsed(id: string, counter?: number): Promise<void>;
  /** Which credential kinds the account has. */
  credentialKinds(accountId: number): Promise<CredentialKind[]>;
  createSession(s: NewSession): Promise<void>;
  /** The session with this hash joined with its account, or null (expiry is the caller's check). */
  getSession(idHash: string): Promise<StoredSession | null>;
  /** Move the session's idle clock. */
  touchSession(idHash: string): Promise<void>;
  /** End one session (sign-out); false when there was none. */
  endSession(idHash: string): Promise<boolean>;
  /** End every session of the account; returns how many ended. */
  endAccountSessions(accountId: number): Promise<number>;
  /** Keep a WebAuthn challenge until `expires_at` (`register` ones belong to an invitation). */
  createChallenge(c: {
    challenge: string;
    purpose: ChallengePurpose;
    invitation_hash: string | null;
    expires_at: string;
  }): Promise<void>;
  /** Take a challenge (single use: it is deleted); true when it existed for this purpose and invitation and had not expired. */
  takeChallenge(challenge: string, purpose: ChallengePurpose, invitationHash: string | null): Promise<boolean>;
  /** Failed sign-ins counted under each key in the windows starting at `windowStarts` (epoch s): `counts[key][i]`. */
  signinFailures(keys: readonly string[], windowStarts: readonly number[]): Promise<Record<string, number[]>>;
  /** Count one failed sign-in under each key in the window starting at `windowStart` (one upsert per key, exact across replicas). */
  addSigninFailure(keys: readonly string[], windowStart: number): Promise<void>;
  /** Append an entry to the account's activity log, dated now. */
  recordActivity(e: NewActivity): Promise<void>;
  /** The account's activity, newest first: at most `limit` entries with ids below `beforeId` (paging). */
  listActivity(accountId: number, opts?: { limit?: number; beforeId?: number }): Promise<ActivityEntry[]>;
  /** Housekeeping: delete sessions past `sessionsBefore` (absolute expiry), expired challenges, and throttle windows before `windowBefore`. */
  pruneApp(p: { sessionsBefore: string; windowBefore: number }): Promise<void>;
}

const INVITATION_COLUMNS = [
  'i.account_id',
  'a.name as account_name',
  'i.created_at',
  'i.expires_at',
  'i.used_at',
  'i.revoked_at',
] as const;
const SESSION_COLUMNS = [
  's.public_id',
  's.account_id',
  'a.name as account_name',
  'a.plan as account_plan',
  's.method',
  's.created_at',
  's.last_seen_at',
  's.expires_at',
] as const;
const ACTIVITY_COLUMNS = ['id', 'account_id', 'at', 'event', 'session_id', 'address', 'details_json'] as const;

/** Most activity entries one call returns. */
export const ACTIVITY_PAGE_MAX = 500;

/** Invitations joined to their account, with the columns an `Invitation` is read from. */
const selectInvitations = (b: Backend) =>
  b.db.selectFrom('app_invitations as i').innerJoin('accounts as a', 'a.id', 'i.account_id').select(INVITATION_COLUMNS);

/** Invitations: one open per account (issuing one revokes the others), read, locked and used. */
function invitationQueries(b: Backend) {
  const { db, dialect: d } = b;
  return {
    revokeOpen: template((at: string, accountId: number) =>
      db
        .updateTable('app_invitations')
        .set({ revoked_at: at })
        .where('account_id', '=', accountId)
        .where('used_at', 'is', null)
        .where('revoked_at', 'is', null),
    ),
    lockAccount: template((id: number) => d.lockRows(db.selectFrom('accounts').select('id').where('id', '=', id))),
    insertInvitation: template((hash: string, accountId: number, at: string, expiresAt: string) =>
      db
        .insertInto('app_invitations')
        .values({ token_hash: hash, account_id: accountId, created_at: at, expires_at: expiresAt }),
    ),
    invitation: template((hash: string) => selectInvitations(b).where('i.token_hash', '=', hash)),
    lockInvitation: template((hash: string) =>
      d.lockRows(
        db
          .selectFrom('app_invitations')
          .select(['account_id', 'expires_at', 'used_at', 'revoked_at'])
          .where('token_hash', '=', hash),
      ),
    ),
    useInvitation: template((at: string, hash: string) =>
      db.updateTable('app_invitations').set({ used_at: at }).where('token_hash', '=', hash),
    ),
  };
}

/** Sign-in credentials: a password or a passkey per account, read and marked used. */
function credentialQueries(b: Backend) {
  const { db } = b;
  return {
    deleteCredentials: template((accountId: number) =>
      db.deleteFrom('app_credentials').where('account_id', '=', accountId),
    ),
    insertPassword: template((id: string, accountId: number, hash: string, at: string) =>
      db
        .insertInto('app_credentials')
        .values({ id, account_id: accountId, kind: 'password', password_hash: hash, counter: 0, created_at: at }),
    ),
    insertPasskey: template(
      (
        id: string,
        accountId: number,
        passkeyId: string,
        publicKey: string,
        counter: number,
        transports: string,
        at: string,
      ) =>
        db.insertInto('app_credentials').values({
          id,
          account_id: accountId,
          kind: 'passkey',
          passkey_id: passkeyId,
          public_key: publicKey,
          counter,
          transports,
          created_at: at,
        }),
    ),
    password: template((accountId: number) =>
      db
        .selectFrom('app_credentials')
        .select(['id', 'password_hash'])
        .where('account_id', '=', accountId)
        .where('kind', '=', 'password'),
    ),
    passkey: template((passkeyId: string) =>
      db
        .selectFrom('app_credentials')
        .select(['id', 'account_id', 'passkey_id', 'public_key', 'counter', 'transports'])
        .where('passkey_id', '=', passkeyId),
    ),
    used: template((at: string, id: string) =>
      db.updateTable('app_credentials').set({ last_used_at: at }).where('id', '=', id),
    ),
    usedPasskey: template((at: string, counter: number, id: string) =>
      db.updateTable('app_credentials').set({ last_used_at: at, counter }).where('id', '=', id),
    ),
    kinds: template((accountId: number) =>
      db.selectFrom('app_credentials').select('kind').distinct().where('account_id', '=', accountId).orderBy('kind'),
    ),
  };
}

/** Sessions: created, read, touched and ended. */
function sessionQueries(b: Backend) {
  const { db } = b;
  return {
    insertSession: template(
      (idHash: string, publicId: string, accountId: number, method: string, at: string, expiresAt: string) =>
        db.insertInto('app_sessions').values({
          id_hash: idHash,
          public_id: publicId,
          account_id: accountId,
          method: method as 'password',
          created_at: at,
          last_seen_at: at,
          expires_at: expiresAt,
        }),
    ),
    session: template((idHash: string) =>
      db
        .selectFrom('app_sessions as s')
        .innerJoin('accounts as a', 'a.id', 's.account_id')
        .select(SESSION_COLUMNS)
        .where('s.id_hash', '=', idHash),
    ),
    touch: template((at: string, idHash: string) =>
      db.updateTable('app_sessions').set({ last_seen_at: at }).where('id_hash', '=', idHash),
    ),
    endSession: template((idHash: string) =>
      db.deleteFrom('app_sessions').where('id_hash', '=', idHash).returning('public_id'),
    ),
    endAccountSessions: template((accountId: number) =>
      db.deleteFrom('app_sessions').where('account_id', '=', accountId).returning('public_id'),
    ),
  };
}

/** Sign-in ceremonies: one-use challenges and the failure counts that throttle sign-in. */
function signInQueries(b: Backend) {
  const { db } = b;
  return {
    insertChallenge: template((challenge: string, purpose: string, invitationHash: string | null, expiresAt: string) =>
      db
        .insertInto('app_challenges')
        .values({ challenge, purpose: purpose as 'register', invitation_hash: invitationHash, expires_at: expiresAt }),
    ),
    takeRegister: template((challenge: string, invitationHash: string) =>
      db
        .deleteFrom('app_challenges')
        .where('challenge', '=', challenge)
        .where('purpose', '=', 'register')
        .where('invitation_hash', '=', invitationHash)
        .returning('expires_at'),
    ),
    takeAuthenticate: template((challenge: string) =>
      db
        .deleteFrom('app_challenges')
        .where('challenge', '=', challenge)
        .where('purpose', '=', 'authenticate')
        .where('invitation_hash', 'is', null)
        .returning('expires_at'),
    ),
    failures: (keys: readonly string[], windows: readonly number[]) =>
      db
        .selectFrom('app_signin_failures')
        .select(['key', 'window_start', 'count'])
        .where('key', 'in', [...keys])
        .where('window_start', 'in', [...windows])
        .compile(),
    addFailure: template((key: string, windowStart: number) =>
      db
        .insertInto('app_signin_failures')
        .values({ key, window_start: windowStart, count: 1 })
        .onConflict((oc) =>
          oc.columns(['key', 'window_start']).doUpdateSet({ count: (eb) => eb('app_signin_failures.count', '+', 1) }),
        ),
    ),
  };
}

/** The activity log, and the housekeeping that prunes what has expired. */
function activityQueries(b: Backend) {
  const { db } = b;
  return {
    insertActivity: template(
      (
        accountId: number,
        at: string,
        event: string,
        sessionId: string | null,
        address: string | null,
        details: string,
      ) =>
        db
          .insertInto('app_activity')
          .values({ account_id: accountId, at, event, session_id: sessionId, address, details_json: details }),
    ),
    activity: template((accountId: number, beforeId: number, limit: number) =>
      db
        .selectFrom('app_activity')
        .select(ACTIVITY_COLUMNS)
        .where('account_id', '=', accountId)
        .where('id', '<', beforeId)
        .orderBy('id', 'desc')
        .limit(limit),
    ),
    pruneSessions: template((before: string) => db.deleteFrom('app_sessions').where('expires_at', '<', before)),
    pruneChallenges: template((before: string) => db.deleteFrom('app_challenges').where('expires_at', '<', before)),
    pruneFailures: template((before: number) =>
      db.deleteFrom('app_signin_failures').where('window_start', '<', before),
    ),
  };
}

/** The account area's queries, compiled once for the backend's dialect. */
function appQueries(b: Backend) {
  return {
    ...invitationQueries(b),
    ...credentialQueries(b),
    ...sessionQueries(b),
    ...signInQueries(b),
    ...activityQueries(b),
  };
}

const toActivity = (r: Row): ActivityEntry => ({
  id: Number(r['id']),
  account_id: Number(r['account_id']),
  at: r['at'],
  event: r['event'],
  session_id: r['session_id'],
  address: r['address'],
  details: JSON.parse(r['details_json']) as ActivityEntry['details'],
});

/** What the store's method groups share: the backend, its queries and the clock. */
interface StoreContext {
  readonly b: Backend;
  readonly q: ReturnType<typeof appQueries>;
  readonly now: () => Date;
  /** Now, as an ISO timestamp. */
  readonly iso: () => string;
  /** The rows of one query, run plain. */
  readonly read: (query: CompiledQuery) => Promise<Row[]>;
}

/** The store's methods over invitations: issue, read, accept (which starts the first session). */
function invitationMethods({
  b,
  q,
  iso,
  read,
}: StoreContext): Pick<AppStore, 'createInvitation' | 'getInvitation' | 'acceptInvitation'> {
  return {
    createInvitation(i) {
      return b.run('atomic', function* () {
        const at = iso();
        yield q.lockAccount(i.account_id);
        yield q.revokeOpen(at, i.account_id);
        yield q.insertInvitation(i.token_hash, i.account_id, at, new Date(i.expires_at).toISOString());
        return (yield q.invitation(i.token_hash))[0] as Invitation;
      });
    },
    async getInvitation(tokenHash) {
      return ((await read(q.invitation(tokenHash)))[0] as Invitation | undefined) ?? null;
    },
    acceptInvitation(tokenHash, credential, session) {
      return b.run('atomic', function* (): Generator<
        ReturnType<typeof q.invitation>,
        { account_id: number } | { refused: InvitationRefusal },
        Row[]
      > {
        const at = iso();
        const [inv] = yield q.lockInvitation(tokenHash);
        if (!inv) return { refused: 'unknown' };
        if (inv['used_at'] !== null) return { refused: 'used' };
        if (inv['revoked_at'] !== null) return { refused: 'revoked' };
        if (Date.parse(inv['expires_at']) <= Date.parse(at)) return { refused: 'expired' };
        const accountId = Number(inv['account_id']);
        yield q.useInvitation(at, tokenHash);
        yield q.deleteCredentials(accountId);
        if (credential.kind === 'password')
          yield q.insertPassword(credential.id, accountId, credential.password_hash, at);
        else
          yield q.insertPasskey(
            credential.id,
            accountId,
            credential.passkey_id,
            credential.public_key,
            credential.counter,
            credential.transports.join(','),
            at,
          );
        yield q.endAccountSessions(accountId);
        yield q.insertSession(
          session.id_hash,
          session.public_id,
          accountId,
          session.method,
          at,
          new Date(session.expires_at).toISOString(),
        );
        return { account_id: accountId };
      });
    },
  };
}

/** The store's methods over sign-in credentials. */
function credentialMethods({
  b,
  q,
  iso,
  read,
}: StoreContext): Pick<AppStore, 'passwordCredential' | 'passkeyCredential' | 'credentialUsed' | 'credentialKinds'> {
  return {
    async passwordCredential(accountId) {
      const [r] = await read(q.password(accountId));
      return r ? { id: r['id'], password_hash: r['password_hash'] } : null;
    },
    async passkeyCredential(passkeyId) {
      const [r] = await read(q.passkey(passkeyId));
      if (!r) return null;
      return {
        id: r['id'],
        account_id: Number(r['account_id']),
        passkey_id: r['passkey_id'],
        public_key: r['public_key'],
        counter: Number(r['counter']),
        transports: r['transports'] ? String(r['transports']).split(',') : [],
      };
    },
    async credentialUsed(id, counter) {
      await b.run('plain', () => rows(counter === undefined ? q.used(iso(), id) : q.usedPasskey(iso(), counter, id)));
    },
    async credentialKinds(accountId) {
      return (await read(q.kinds(accountId))).map((r) => r['kind'] as CredentialKind);
    },
  };
}

/** The store's methods over sessions. */
function sessionMethods({
  b,
  q,
  iso,
  read,
}: StoreContext): Pick<
  AppStore,
  'createSession' | 'getSession' | 'touchSession' | 'endSession' | 'endAccountSessions'
> {
  return {
    async createSession(s) {
      await b.run('plain', () =>
        rows(
          q.insertSession(s.id_hash, s.public_id, s.account_id, s.method, iso(), new Date(s.expires_at).toISOString()),
        ),
      );
    },
    async getSession(idHash) {
      const [r] = await read(q.session(idHash));
      return r ? ({ ...r, account_id: Number(r['account_id']) } as StoredSession) : null;
    },
    async touchSession(idHash) {
      await b.run('plain', () => rows(q.touch(iso(), idHash)));
    },
    async endSession(idHash) {
      return (await b.run('plain', () => rows(q.endSession(idHash)))).length > 0;
    },
    async endAccountSessions(accountId) {
      return (await b.run('plain', () => rows(q.endAccountSessions(accountId)))).length;
    },
  };
}

/** The store's methods over sign-in challenges and failure counts. */
function signInMethods({
  b,
  q,
  now,
}: StoreContext): Pick<AppStore, 'createChallenge' | 'takeChallenge' | 'signinFailures' | 'addSigninFailure'> {
  return {
    async createChallenge(c) {
      await b.run('plain', () =>
        rows(q.insertChallenge(c.challenge, c.purpose, c.invitation_hash, new Date(c.expires_at).toISOString())),
      );
    },
    async takeChallenge(challenge, purpose, invitationHash) {
      if (purpose === 'register' && invitationHash === null) return false;
      const [r] = await b.run('plain', () =>
        rows(purpose === 'register' ? q.takeRegister(challenge, invitationHash!) : q.takeAuthenticate(challenge)),
      );
      return r !== undefined && Date.parse(r['expires_at']) > now().getTime();
    },
    async signinFailures(keys, windowStarts) {
      const out: Record<string, number[]> = Object.fromEntries(keys.map((k) => [k, windowStarts.map(() => 0)]));
      if (!keys.length || !windowStarts.length) return out;
      for (const r of await b.run('plain', () => rows(q.failures(keys, windowStarts)))) {
        const i = windowStarts.indexOf(Number(r['window_start']));
        if (i >= 0 && out[r['key']]) out[r['key']]![i] = Number(r['count']);
      }
      return out;
    },
    async addSigninFailure(keys, windowStart) {
      // keys in order: replicas counting the same keys at once lock rows in the same order
      const sorted = [...new Set(keys)].sort();
      await b.run('counter', function* () {
        for (const k of sorted) yield q.addFailure(k, windowStart);
      });
    },
  };
}

/** The store's methods over the activity log, and its housekeeping. */
function activityMethods({
  b,
  q,
  iso,
  read,
}: StoreContext): Pick<AppStore, 'recordActivity' | 'listActivity' | 'pruneApp'> {
  return {
    async recordActivity(e) {
      await b.run('plain', () =>
        rows(q.insertActivity(e.account_id, iso(), e.event, e.session_id, e.address, JSON.stringify(e.details))),
      );
    },
    async listActivity(accountId, opts = {}) {
      const limit = Math.max(1, Math.min(opts.limit ?? 50, ACTIVITY_PAGE_MAX));
      return (await read(q.activity(accountId, opts.beforeId ?? 2_147_483_647, limit))).map(toActivity);
    },
    async pruneApp(p) {
      await b.run('plain', function* () {
        yield q.pruneSessions(p.sessionsBefore);
        yield q.pruneChallenges(iso());
        yield q.pruneFailures(p.windowBefore);
      });
    },
  };
}

/** The account area's store on `b`; `now` dates every row (tests inject a clock). */
export function appStore(b: Backend, now: () => Date): AppStore {
  const iso = (): string => now().toISOString();
  const read = (query: CompiledQuery) => b.run('plain', () => rows(query));
  const s: StoreContext = { b, q: appQueries(b), now, iso, read };
  return {
    ...invitationMethods(s),
    ...credentialMethods(s),
    ...sessionMethods(s),
    ...signInMethods(s),
    ...activityMethods(s),
  };
}
