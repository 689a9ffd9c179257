/**
 * The access model of the state store (issue 4), written once over any `Backend`: organisation
 * licences and their one-time claim links, self-serve key limits, hourly request counters, daily
 * row budgets and the usage ledger.
 *
 * Atomicity, the same on both databases: counters are single statements (`INSERT … ON CONFLICT
 * DO UPDATE … RETURNING`), so several processes or replicas count exactly; check-then-write
 * operations run `atomic` (SQLite: one `BEGIN IMMEDIATE` transaction; PostgreSQL: a transaction
 * that first locks the account or licence row, `Dialect.lockRows`).
 */
import { sql, type CompiledQuery, type Kysely } from 'kysely';
import type { Scope } from '../access/scopes.ts';
import { rows, template, type Backend, type Row } from './backend.ts';
import {
  withExpiry,
  type Account,
  type AccountUsage,
  type ApiKey,
  type ClaimLink,
  type ClaimRefusal,
  type Licence,
  type StateStore,
  type UsageCounts,
  type UsageDelta,
} from './store-interface.ts';
import type { Tables } from './tables.ts';

/**
 * api_keys joined with their account: every key read returns these columns (an `ApiKey`). A
 * licensed key's `expires_at` is its licence's end, read from the licence on every read: the
 * licence is the one source of truth (issue 31: the end used to be copied onto the key at claim,
 * so changing the licence did not reach its keys). `api_keys.expires_at` is no longer read or
 * written (kept, null for new keys, so databases of earlier versions open unchanged).
 */
export const keysQuery = (db: Kysely<Tables>) =>
  db
    .selectFrom('api_keys as k')
    .innerJoin('accounts as a', 'a.id', 'k.account_id')
    .leftJoin('licences as lk', 'lk.id', 'k.licence_id')
    .select([
      'k.id',
      'k.account_id',
      'a.name as account_name',
      'k.scope',
      'k.name',
      'k.display_prefix',
      'k.status',
      'k.created_at',
      'k.revoked_at',
      'k.licence_id',
      'lk.expires_at as expires_at',
    ]);

type AccessMethods = Pick<
  StateStore,
  | 'getAccountById'
  | 'insertSelfServeKey'
  | 'createLicence'
  | 'getLicence'
  | 'listLicences'
  | 'createClaimLink'
  | 'getClaimLink'
  | 'claimLink'
  | 'hitRateLimit'
  | 'reserveRequests'
  | 'chargeRows'
  | 'addUsage'
  | 'accountUsage'
  | 'prune'
>;

const LINK_COLUMNS = ['licence_id', 'expires_at', 'created_at', 'used_at', 'key_id'] as const;
const COUNT_COLUMNS = ['requests', 'errors', 'rows'] as const;
/** Ledger rows per multi-row upsert (6 parameters each: well under either database's limit). */
const USAGE_CHUNK = 1000;

const num = (v: unknown): number => Number(v ?? 0);
const counts = (r: Row) => ({ requests: num(r['requests']), errors: num(r['errors']), rows: num(r['rows']) });
const toLicence = (r: Row): Licence => ({ ...(r as Licence), seats_used: num(r['seats_used']) });

/** Licences joined to their account, with the seats in use at `at` (active keys while the licence runs). */
const selectLicences = (b: Backend, at: string) =>
  b.db
    .selectFrom('licences as l')
    .innerJoin('accounts as a', 'a.id', 'l.account_id')
    .select(['l.id', 'l.account_id', 'a.name as account_name', 'l.scope', 'l.seats', 'l.expires_at', 'l.created_at'])
    .select((eb) =>
      eb
        .selectFrom('api_keys as k')
        .select((e) => e.fn.countAll().as('n'))
        .whereRef('k.licence_id', '=', 'l.id')
        .where('k.status', '=', 'active')
        .where(sql.ref('l.expires_at'), '>', at) // the licence's own end: its keys end with it
        .as('seats_used'),
    );

/** A usage ledger table as `u`, joined to its keys as `k`. */
const selectUsage = <T extends 'usage_daily' | 'usage_routes'>(b: Backend, table: T) =>
  b.db.selectFrom(`${table} as u` as 'usage_routes as u').innerJoin('api_keys as k', 'k.id', 'u.key_id');

/** Accounts and keys: an account by id, self-serve keys counted under the account's lock, keys inserted and read. */
function keyQueries(b: Backend) {
  const { db, dialect: d } = b;
  return {
    accountById: template((id: number) =>
      db.selectFrom('accounts').select(['id', 'name', 'plan', 'created_at']).where('id', '=', id),
    ),
    lockAccount: template((id: number) => d.lockRows(db.selectFrom('accounts').select('id').where('id', '=', id))),
    countSelfServe: template((accountId: number) =>
      db
        .selectFrom('api_keys')
        .select((e) => e.fn.countAll().as('n'))
        .where('account_id', '=', accountId)
        .where('licence_id', 'is', null)
        .where('status', '=', 'active'),
    ),
    insertKey: template(
      (
        id: string,
        accountId: number,
        scope: Scope,
        name: string | null,
        prefix: string,
        hash: string,
        at: string,
        licenceId: string | null,
        expiresAt: string | null,
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
          licence_id: licenceId,
          expires_at: expiresAt,
        }),
    ),
    keyById: template((id: string) => keysQuery(db).where('k.id', '=', id)),
    keyHashExists: template((hash: string) => db.selectFrom('api_keys').select('id').where('key_hash', '=', hash)),
  };
}

/** Licences and their one-time claim links. */
function licenceQueries(b: Backend) {
  const { db, dialect: d } = b;
  return {
    insertLicence: template(
      (id: string, accountId: number, scope: Scope, seats: number, expiresAt: string, at: string) =>
        db
          .insertInto('licences')
          .values({ id, account_id: accountId, scope, seats, expires_at: expiresAt, created_at: at }),
    ),
    licenceById: template((at: string, id: string) => selectLicences(b, at).where('l.id', '=', id)),
    lockLicence: template((id: string) => d.lockRows(db.selectFrom('licences').select('id').where('id', '=', id))),
    licencesAll: template((at: string) => selectLicences(b, at).orderBy('l.created_at').orderBy(d.bytewise('l.id'))),
    licencesByAccount: template((at: string, accountId: number) =>
      selectLicences(b, at).where('l.account_id', '=', accountId).orderBy('l.created_at').orderBy(d.bytewise('l.id')),
    ),
    insertLink: template((hash: string, licenceId: string, expiresAt: string, at: string) =>
      db
        .insertInto('claim_links')
        .values({ token_hash: hash, licence_id: licenceId, expires_at: expiresAt, created_at: at })
        .returning(LINK_COLUMNS),
    ),
    linkByHash: template((hash: string) =>
      db.selectFrom('claim_links').select(LINK_COLUMNS).where('token_hash', '=', hash),
    ),
    lockLink: template((hash: string) =>
      d.lockRows(db.selectFrom('claim_links').select(LINK_COLUMNS).where('token_hash', '=', hash)),
    ),
    useLink: template((at: string, keyId: string, hash: string) =>
      db
        .updateTable('claim_links')
        .set({ used_at: at, key_id: keyId })
        .where('token_hash', '=', hash)
        .where('used_at', 'is', null),
    ),
  };
}

/** Hourly request counters and daily row budgets: single statements, so concurrent processes count exactly. */
function counterQueries(b: Backend) {
  const { db } = b;
  return {
    /** Count the request; the day's rows come back with it (a subquery of RETURNING: one statement). */
    hit: template((keyId: string, windowStart: number, day: string) =>
      db
        .insertInto('rate_counters')
        .values({ key_id: keyId, window_start: windowStart, count: 1 })
        .onConflict((oc) =>
          oc.columns(['key_id', 'window_start']).doUpdateSet({ count: (eb) => eb('rate_counters.count', '+', 1) }),
        )
        .returning((eb) => [
          'count',
          eb
            .selectFrom('budget_counters')
            .select('budget_counters.rows')
            .where('budget_counters.key_id', '=', keyId)
            .where('budget_counters.day', '=', day)
            .as('rows'),
        ]),
    ),
    /** Count `n` requests unless the window would pass the limit: on refusal the upsert updates (and returns) nothing. */
    reserve: template((keyId: string, windowStart: number, n: number, limit: number) =>
      db
        .insertInto('rate_counters')
        .values({ key_id: keyId, window_start: windowStart, count: n })
        .onConflict((oc) =>
          oc
            .columns(['key_id', 'window_start'])
            .doUpdateSet({ count: (eb) => eb('rate_counters.count', '+', eb.ref('excluded.count')) })
            .where((eb) => eb(eb('rate_counters.count', '+', eb.ref('excluded.count')), '<=', limit)),
        )
        .returning('count'),
    ),
    rowsUsed: template((keyId: string, day: string) =>
      db.selectFrom('budget_counters').select('rows').where('key_id', '=', keyId).where('day', '=', day),
    ),
    /** Charge unless the day would pass the limit: on refusal the upsert updates (and returns) nothing. */
    charge: template((keyId: string, day: string, n: number, limit: number) =>
      db
        .insertInto('budget_counters')
        .values({ key_id: keyId, day, rows: n })
        .onConflict((oc) =>
          oc
            .columns(['key_id', 'day'])
            .doUpdateSet({ rows: (eb) => eb('budget_counters.rows', '+', eb.ref('excluded.rows')) })
            .where((eb) => eb(eb('budget_counters.rows', '+', eb.ref('excluded.rows')), '<=', limit)),
        )
        .returning('rows'),
    ),
  };
}

/** The usage ledger: upserts of summed deltas, an account's keys and usage read back, and pruning. */
function usageQueries(b: Backend) {
  const { db, dialect: d } = b;
  return {
    usageDaily: (rs: { key_id: string; day: string; requests: number; errors: number; rows: number }[]) =>
      db
        .insertInto('usage_daily')
        .values(rs)
        .onConflict((oc) =>
          oc.columns(['key_id', 'day']).doUpdateSet((eb) => ({
            requests: eb('usage_daily.requests', '+', eb.ref('excluded.requests')),
            errors: eb('usage_daily.errors', '+', eb.ref('excluded.errors')),
            rows: eb('usage_daily.rows', '+', eb.ref('excluded.rows')),
          })),
        )
        .compile(),
    usageRoutes: (rs: UsageDelta[]) =>
      db
        .insertInto('usage_routes')
        .values(rs)
        .onConflict((oc) =>
          oc.columns(['key_id', 'day', 'route']).doUpdateSet((eb) => ({
            requests: eb('usage_routes.requests', '+', eb.ref('excluded.requests')),
            errors: eb('usage_routes.errors', '+', eb.ref('excluded.errors')),
            rows: eb('usage_routes.rows', '+', eb.ref('excluded.rows')),
          })),
        )
        .compile(),
    accountKeys: template((accountId: number) =>
      keysQuery(db).where('k.account_id', '=', accountId).orderBy('k.created_at').orderBy(d.bytewise('k.id')),
    ),
    usageDays: template((accountId: number, from: string, to: string) =>
      selectUsage(b, 'usage_daily')
        .select(['u.key_id', 'u.day', ...COUNT_COLUMNS.map((c) => `u.${c}` as const)])
        .where('k.account_id', '=', accountId)
        .where('u.day', '>=', from)
        .where('u.day', '<=', to)
        .orderBy(d.bytewise('u.day'))
        .orderBy(d.bytewise('u.key_id')),
    ),
    usageRouteRows: template((accountId: number, from: string, to: string) =>
      selectUsage(b, 'usage_routes')
        .select(['u.key_id', 'u.day', 'u.route', ...COUNT_COLUMNS.map((c) => `u.${c}` as const)])
        .where('k.account_id', '=', accountId)
        .where('u.day', '>=', from)
        .where('u.day', '<=', to)
        .orderBy(d.bytewise('u.day'))
        .orderBy(d.bytewise('u.key_id'))
        .orderBy(d.bytewise('u.route')),
    ),
    pruneRoutes: template((before: string) => db.deleteFrom('usage_routes').where('day', '<', before)),
    pruneWindows: template((before: number) => db.deleteFrom('rate_counters').where('window_start', '<', before)),
    pruneBudgets: template((before: string) => db.deleteFrom('budget_counters').where('day', '<', before)),
  };
}

/** The access-model queries, compiled once for the backend's dialect. */
function accessQueries(b: Backend) {
  return { ...keyQueries(b), ...licenceQueries(b), ...counterQueries(b), ...usageQueries(b) };
}

/** Sum deltas per key (as `keyOf` groups them), in key order: replicas flushing at once lock rows in the same order (no deadlock). */
function sumBy<T extends UsageCounts>(
  deltas: readonly UsageDelta[],
  keyOf: (d: UsageDelta) => string,
  pick: (d: UsageDelta) => T,
): T[] {
  const by = new Map<string, T>();
  for (const x of deltas) {
    const k = keyOf(x);
    const s = by.get(k);
    if (s) ((s.requests += x.requests), (s.errors += x.errors), (s.rows += x.rows));
    else by.set(k, pick(x));
  }
  return [...by.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, v]) => v);
}

const chunks = <T>(xs: T[], n: number): T[][] =>
  Array.from({ length: Math.ceil(xs.length / n) }, (_, i) => xs.slice(i * n, i * n + n));

/** What the access method groups share: the backend, its queries, the clock and key expiry. */
interface AccessContext {
  readonly b: Backend;
  readonly q: ReturnType<typeof accessQueries>;
  /** Now, as an ISO timestamp. */
  readonly iso: () => string;
  /** The rows of one query, run plain. */
  readonly read: (query: CompiledQuery) => Promise<Row[]>;
  /** A key as served now (`withExpiry`). */
  readonly live: ReturnType<typeof withExpiry>;
}

/** The access methods over accounts and self-serve keys. */
function keyMethods({ b, q, iso, read }: AccessContext): Pick<AccessMethods, 'getAccountById' | 'insertSelfServeKey'> {
  return {
    async getAccountById(id) {
      return ((await read(q.accountById(id)))[0] as Account | undefined) ?? null;
    },
    insertSelfServeKey(k, maxActive) {
      return b.run('atomic', function* () {
        yield q.lockAccount(k.account_id);
        const [c] = yield q.countSelfServe(k.account_id);
        if (num(c!['n']) >= maxActive) return 'limit' as const;
        yield q.insertKey(k.id, k.account_id, k.scope, k.name, k.display_prefix, k.hash, iso(), null, null);
        return (yield q.keyById(k.id))[0] as ApiKey;
      });
    },
  };
}

/** The access methods over licences and claim links (a claim takes a seat: a key under the licence). */
function licenceMethods({
  b,
  q,
  iso,
  read,
  live,
}: AccessContext): Pick<
  AccessMethods,
  'createLicence' | 'getLicence' | 'listLicences' | 'createClaimLink' | 'getClaimLink' | 'claimLink'
> {
  return {
    createLicence(l) {
      return b.run('plain', function* () {
        yield q.insertLicence(l.id, l.account_id, l.scope, l.seats, new Date(l.expires_at).toISOString(), iso());
        return toLicence((yield q.licenceById(iso(), l.id))[0]!);
      });
    },
    async getLicence(id) {
      const [r] = await read(q.licenceById(iso(), id));
      return r ? toLicence(r) : null;
    },
    async listLicences(accountId) {
      return (await read(accountId === undefined ? q.licencesAll(iso()) : q.licencesByAccount(iso(), accountId))).map(
        toLicence,
      );
    },
    async createClaimLink(l) {
      return (
        await b.run('plain', () =>
          rows(q.insertLink(l.token_hash, l.licence_id, new Date(l.expires_at).toISOString(), iso())),
        )
      )[0] as ClaimLink;
    },
    async getClaimLink(tokenHash) {
      return ((await read(q.linkByHash(tokenHash)))[0] as ClaimLink | undefined) ?? null;
    },
    claimLink(tokenHash, k) {
      return b.run('atomic', function* (): Generator<
        ReturnType<typeof q.keyById>,
        { key: ApiKey } | { refused: ClaimRefusal },
        Row[]
      > {
        const t = iso();
        const at = Date.parse(t);
        const [link] = (yield q.lockLink(tokenHash)) as ClaimLink[];
        if (!link) return { refused: 'unknown_link' };
        if (link.used_at !== null) return { refused: 'link_used' };
        if (Date.parse(link.expires_at) <= at) return { refused: 'link_expired' };
        yield q.lockLicence(link.licence_id); // serialise seat counting
        const lic = toLicence((yield q.licenceById(t, link.licence_id))[0]!);
        if (Date.parse(lic.expires_at) <= at) return { refused: 'licence_expired' };
        if (lic.seats_used >= lic.seats) return { refused: 'seats_full' };
        if ((yield q.keyHashExists(k.hash)).length) return { refused: 'duplicate_key' };
        yield q.insertKey(k.id, lic.account_id, lic.scope, k.name, k.display_prefix, k.hash, t, lic.id, null); // its end is the licence's, read through it
        yield q.useLink(t, k.id, tokenHash);
        return { key: live((yield q.keyById(k.id))[0] as ApiKey) };
      });
    },
  };
}

/** The access methods over request counters and row budgets. */
function counterMethods({
  b,
  q,
}: AccessContext): Pick<AccessMethods, 'hitRateLimit' | 'reserveRequests' | 'chargeRows'> {
  return {
    async hitRateLimit(keyId, windowStart, day) {
      const [r] = await b.run('counter', () => rows(q.hit(keyId, windowStart, day)));
      return { count: num(r!['count']), rowsUsed: num(r!['rows']) };
    },
    async reserveRequests(keyId, windowStart, n, limit) {
      if (n < 1 || n > limit) return null;
      const [r] = await b.run('counter', () => rows(q.reserve(keyId, windowStart, n, limit)));
      return r ? num(r['count']) : null;
    },
    chargeRows(keyId, day, n, limit) {
      return b.run('counter', function* () {
        const [r] = n > limit ? [] : yield q.charge(keyId, day, n, limit);
        if (r) return { ok: true, used: num(r['rows']) };
        return { ok: false, used: num((yield q.rowsUsed(keyId, day))[0]?.['rows']) };
      });
    },
  };
}

/** The access methods over the usage ledger, and the pruning of counters and ledger. */
function usageMethods({ b, q, read, live }: AccessContext): Pick<AccessMethods, 'addUsage' | 'accountUsage' | 'prune'> {
  return {
    async addUsage(deltas) {
      if (!deltas.length) return;
      const days = sumBy(
        deltas,
        (x) => `${x.key_id}\0${x.day}`,
        (x) => ({ key_id: x.key_id, day: x.day, requests: x.requests, errors: x.errors, rows: x.rows }),
      );
      const routes = sumBy(
        deltas,
        (x) => `${x.key_id}\0${x.day}\0${x.route}`,
        (x) => ({ ...x }),
      );
      await b.run('atomic', function* () {
        for (const c of chunks(days, USAGE_CHUNK)) yield q.usageDaily(c);
        for (const c of chunks(routes, USAGE_CHUNK)) yield q.usageRoutes(c);
      });
    },
    async accountUsage(accountId, fromDay, toDay): Promise<AccountUsage> {
      const [keys, days, routes] = await Promise.all([
        read(q.accountKeys(accountId)),
        read(q.usageDays(accountId, fromDay, toDay)),
        read(q.usageRouteRows(accountId, fromDay, toDay)),
      ]);
      return {
        keys: (keys as ApiKey[]).map(live),
        days: days.map((r) => ({ key_id: r['key_id'] as string, day: r['day'] as string, ...counts(r) })),
        routes: routes.map((r) => ({
          key_id: r['key_id'] as string,
          day: r['day'] as string,
          route: r['route'] as string,
          ...counts(r),
        })),
      };
    },
    async prune(p) {
      await b.run('atomic', function* () {
        yield q.pruneRoutes(p.detailBefore);
        yield q.pruneWindows(p.windowBefore);
        yield q.pruneBudgets(p.budgetBefore);
      });
    },
  };
}

/** The access-model methods of the state store on `b`; `now` dates rows and decides what has expired. */
export function access(b: Backend, now: () => Date): AccessMethods {
  const iso = (): string => now().toISOString();
  const read = (query: CompiledQuery) => b.run('plain', () => rows(query));
  const s: AccessContext = { b, q: accessQueries(b), iso, read, live: withExpiry(now) };
  return { ...keyMethods(s), ...licenceMethods(s), ...counterMethods(s), ...usageMethods(s) };
}
