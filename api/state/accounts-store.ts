/**
 * The state store, written once over any `Backend` (api/state/backend.ts: SQLite or
 * PostgreSQL): accounts and keys here, the access model in access.ts, webhooks in
 * webhook-store.ts, the account area in app-store.ts. Keys are stored only as SHA-256 hashes.
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Plan } from '../access/scopes.ts';
import { access, keysQuery } from './access-store.ts';
import { rows, template, type Backend } from './backend.ts';
import {
  withExpiry,
  type Account,
  type ApiKey,
  type Licence,
  type NewKey,
  type StateStore,
  type StoredKey,
} from './store-interface.ts';
import { webhookStore } from './webhook-store.ts';
import { appStore } from './app-store.ts';
import { idempotencyStore } from './idempotency.ts';
import { searchStore } from './search-store.ts';

export const ACCOUNT_COLUMNS = ['id', 'name', 'plan', 'created_at'] as const;

/** Accounts and keys queries, compiled once for the backend's dialect. */
function accountQueries(b: Backend) {
  const { db, dialect } = b;
  return {
    insertAccount: template((name: string, plan: Plan, at: string) =>
      db.insertInto('accounts').values({ name, plan, created_at: at }).returning(ACCOUNT_COLUMNS),
    ),
    accountByName: template((name: string) =>
      db.selectFrom('accounts').select(ACCOUNT_COLUMNS).where('name', '=', name),
    ),
    setPlan: template((plan: Plan, id: number) =>
      db.updateTable('accounts').set({ plan }).where('id', '=', id).returning(ACCOUNT_COLUMNS),
    ),
    insertKey: template(
      (
        id: string,
        accountId: number,
        scope: NewKey['scope'],
        name: string | null,
        prefix: string,
        hash: string,
        at: string,
      ) =>
        db.insertInto('api_keys').values({
          id,
          account_id: accountId,
          scope,
          name,
          display_prefix: prefix,
          key_hash: hash,
          status: 'active',
          created_at: at,
        }),
    ),
    keyById: template((id: string) => keysQuery(db).where('k.id', '=', id)),
    keyByHash: template((hash: string) =>
      keysQuery(db).select(['k.key_hash', 'a.plan as account_plan']).where('k.key_hash', '=', hash),
    ),
    listAll: keysQuery(db).orderBy('k.created_at').orderBy(dialect.bytewise('k.id')).compile(),
    listByAccount: template((accountId: number) =>
      keysQuery(db).where('k.account_id', '=', accountId).orderBy('k.created_at').orderBy(dialect.bytewise('k.id')),
    ),
    setLicenceEnd: template((expiresAt: string, id: string) =>
      db.updateTable('licences').set({ expires_at: expiresAt }).where('id', '=', id),
    ),
    probeRead: db.selectFrom('accounts').select('id').where('id', '=', 0).compile(),
    probeWrite: db
      .updateTable('rate_counters')
      .set((eb) => ({ count: eb.ref('count') }))
      .where(sql<boolean>`1 = 0`)
      .compile(),
    revoke: template((at: string, id: string) =>
      db
        .updateTable('api_keys')
        .set({ status: 'revoked', revoked_at: at })
        .where('id', '=', id)
        .where('status', '<>', 'revoked'),
    ),
  };
}

/** The state store on `b`; `now` dates created_at, revoked_at and key expiry (tests inject a clock). */
export function createStateStore(b: Backend, now: () => Date): StateStore {
  const q = accountQueries(b);
  const live = withExpiry(now);
  const iso = (): string => now().toISOString();
  // the change stamp: moves with the backend's (other connections) and with this process's own revocations and plan changes
  let seen = NaN;
  let stamp = 0;
  const changed = async <T>(r: T, token: string): Promise<T> => {
    stamp++;
    await b.keyChangeSent(token);
    return r;
  };
  const one = async <T>(query: ReturnType<typeof q.keyById>): Promise<T | null> =>
    ((await b.run('plain', () => rows(query)))[0] as T | undefined) ?? null;

  const acc = access(b, now);
  return {
    ...acc,
    webhooks: webhookStore(b, now),
    app: appStore(b, now),
    idempotency: idempotencyStore(b),
    searches: searchStore(b, now),
    ready: b.ready,
    async createAccount(name: string, plan: Plan): Promise<Account> {
      return (await one<Account>(q.insertAccount(name, plan, iso())))!;
    },
    getAccountByName: (name: string) => one<Account>(q.accountByName(name)),
    async setAccountPlan(id: number, plan: Plan): Promise<Account | null> {
      const token = randomUUID();
      const r = await b.run('atomic', function* () {
        const [a] = yield q.setPlan(plan, id);
        for (const n of b.dialect.keyChangeNotice(token)) yield n;
        return (a as Account | undefined) ?? null;
      });
      return changed(r, token);
    },
    async setLicenceEnd(id: string, expiresAt: string): Promise<Licence | null> {
      const token = randomUUID();
      await b.run('atomic', function* () {
        yield q.setLicenceEnd(new Date(expiresAt).toISOString(), id);
        for (const n of b.dialect.keyChangeNotice(token)) yield n;
      });
      await changed(null, token); // cached keys of the licence are read again
      return acc.getLicence(id);
    },
    async insertKey(k: NewKey): Promise<ApiKey> {
      return b.run('plain', function* () {
        yield q.insertKey(k.id, k.account_id, k.scope, k.name, k.display_prefix, k.hash, iso());
        return (yield q.keyById(k.id))[0] as ApiKey;
      });
    },
    async findKeyByHash(hash: string): Promise<StoredKey | null> {
      return live((await one<StoredKey>(q.keyByHash(hash))) ?? undefined) ?? null;
    },
    async listKeys(accountId?: number): Promise<ApiKey[]> {
      const r = await b.run('plain', () => rows(accountId === undefined ? q.listAll : q.listByAccount(accountId)));
      return (r as ApiKey[]).map(live);
    },
    async revokeKey(id: string): Promise<ApiKey | null> {
      const token = randomUUID();
      const r = await b.run('atomic', function* () {
        yield q.revoke(iso(), id);
        for (const n of b.dialect.keyChangeNotice(token)) yield n;
        return (yield q.keyById(id))[0] as ApiKey | undefined;
      });
      return changed(live(r) ?? null, token);
    },
    async probeWrite(): Promise<void> {
      await b.run('plain', () => rows(q.probeRead));
      await b.run('counter', () => rows(q.probeWrite));
    },
    keyChangeStamp(): number {
      const s = b.changeStamp();
      if (!(s === seen)) ((seen = s), stamp++); // (NaN, a closed file, never equals: no caching)
      return stamp;
    },
    close: () => b.close(),
  };
}
