/**
 * The access-model part of the PostgreSQL store (issue 4), statement for statement the behaviour
 * of `access-sqlite.ts`. Counters are single atomic statements (`INSERT … ON CONFLICT DO UPDATE …
 * RETURNING`), so several replicas sharing the schema count exactly; check-then-write operations
 * (key limit, claims) lock the account or licence row (`SELECT … FOR UPDATE`) in a transaction.
 */
import type pg from 'pg';
import { withExpiry, type Account, type AccountUsage, type ApiKey, type ClaimLink, type ClaimRefusal, type Licence, type NewKey, type StateStore } from './store.ts';

/** Migrations 2–5, the same versions as the SQLite ones (20–29 belong to webhooks). */
export const ACCESS_MIGRATIONS_PG: { version: number; sql: string }[] = [
  {
    version: 2,
    sql: `
      CREATE TABLE licences (
        id TEXT PRIMARY KEY,
        account_id INTEGER NOT NULL REFERENCES accounts(id),
        scope TEXT NOT NULL CHECK (scope IN ('ent_feed', 'custom')),
        seats INTEGER NOT NULL CHECK (seats > 0),
        expires_at TIMESTAMPTZ NOT NULL,
        created_at TIMESTAMPTZ NOT NULL
      );
      CREATE INDEX licences_account ON licences(account_id);
      ALTER TABLE api_keys ADD COLUMN licence_id TEXT REFERENCES licences(id);
      ALTER TABLE api_keys ADD COLUMN expires_at TIMESTAMPTZ;
      CREATE INDEX api_keys_licence ON api_keys(licence_id);
      CREATE TABLE claim_links (
        token_hash TEXT PRIMARY KEY,
        licence_id TEXT NOT NULL REFERENCES licences(id),
        expires_at TIMESTAMPTZ NOT NULL,
        created_at TIMESTAMPTZ NOT NULL,
        used_at TIMESTAMPTZ,
        key_id TEXT REFERENCES api_keys(id)
      );
    `,
  },
  {
    version: 3,
    sql: `
      CREATE TABLE rate_counters (
        key_id TEXT NOT NULL,
        window_start BIGINT NOT NULL,
        count INTEGER NOT NULL,
        PRIMARY KEY (key_id, window_start)
      );
    `,
  },
  {
    version: 4,
    sql: `
      CREATE TABLE budget_counters (
        key_id TEXT NOT NULL,
        day TEXT NOT NULL,
        rows BIGINT NOT NULL,
        PRIMARY KEY (key_id, day)
      );
    `,
  },
  {
    version: 5,
    sql: `
      CREATE TABLE usage_daily (
        key_id TEXT NOT NULL REFERENCES api_keys(id),
        day TEXT NOT NULL,
        requests BIGINT NOT NULL,
        errors BIGINT NOT NULL,
        rows BIGINT NOT NULL,
        PRIMARY KEY (key_id, day)
      );
      CREATE TABLE usage_routes (
        key_id TEXT NOT NULL REFERENCES api_keys(id),
        day TEXT NOT NULL,
        route TEXT NOT NULL,
        requests BIGINT NOT NULL,
        errors BIGINT NOT NULL,
        rows BIGINT NOT NULL,
        PRIMARY KEY (key_id, day, route)
      );
    `,
  },
];

type Row = Record<string, unknown>;
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
  | 'chargeRows'
  | 'addUsage'
  | 'accountUsage'
  | 'prune'
>;

export interface PgAccessDeps {
  pool: pg.Pool;
  /** Pool for the per-request counters (synchronous_commit=off). */
  hot: pg.Pool;
  ready: Promise<void>;
  now: () => Date;
  keyColumns: string;
  toKey: (r: Row) => ApiKey;
  toAccount: (r: Row) => Account;
}

const iso = (v: unknown): string | null => (v === null || v === undefined ? null : (v as Date).toISOString());
const num = (v: unknown): number => Number(v ?? 0);

const LICENCE_SELECT = `SELECT l.id, l.account_id, a.name AS account_name, l.scope, l.seats, l.expires_at, l.created_at,
  (SELECT count(*) FROM api_keys k WHERE k.licence_id = l.id AND k.status = 'active' AND k.expires_at > $1) AS seats_used
  FROM licences l JOIN accounts a ON a.id = l.account_id`;

const toLicence = (r: Row): Licence => ({
  id: r['id'] as string,
  account_id: r['account_id'] as number,
  account_name: r['account_name'] as string,
  scope: r['scope'] as Licence['scope'],
  seats: r['seats'] as number,
  expires_at: iso(r['expires_at'])!,
  created_at: iso(r['created_at'])!,
  seats_used: num(r['seats_used']),
});

const toLink = (r: Row): ClaimLink => ({
  licence_id: r['licence_id'] as string,
  expires_at: iso(r['expires_at'])!,
  created_at: iso(r['created_at'])!,
  used_at: iso(r['used_at']),
  key_id: (r['key_id'] as string | null) ?? null,
});

const counts = (r: Row) => ({ requests: num(r['requests']), errors: num(r['errors']), rows: num(r['rows']) });

export function accessPostgres(d: PgAccessDeps): AccessMethods {
  const { pool, now } = d;
  const live = withExpiry(now);
  const query = async (sql: string, params: unknown[]): Promise<Row[]> => {
    await d.ready;
    return (await pool.query(sql, params)).rows as Row[];
  };
  const hotQuery = async (sql: string, params: unknown[]): Promise<Row[]> => {
    await d.ready;
    return (await d.hot.query(sql, params)).rows as Row[];
  };
  /** Run `fn` in a transaction on one connection. */
  const tx = async <T>(fn: (q: (sql: string, params: unknown[]) => Promise<Row[]>) => Promise<T>): Promise<T> => {
    await d.ready;
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      const r = await fn(async (sql, params) => (await client.query(sql, params)).rows as Row[]);
      await client.query('COMMIT');
      return r;
    } catch (e) {
      await client.query('ROLLBACK').catch(() => {});
      throw e;
    } finally {
      client.release();
    }
  };
  const KEY = `SELECT ${d.keyColumns} FROM api_keys k JOIN accounts a ON a.id = k.account_id`;

  return {
    async getAccountById(id) {
      const [r] = await query('SELECT id, name, plan, created_at FROM accounts WHERE id = $1', [id]);
      return r ? d.toAccount(r) : null;
    },
    async insertSelfServeKey(k: NewKey, maxActive: number) {
      return tx(async (q) => {
        await q('SELECT id FROM accounts WHERE id = $1 FOR UPDATE', [k.account_id]);
        const [c] = await q(`SELECT count(*) AS n FROM api_keys WHERE account_id = $1 AND licence_id IS NULL AND status = 'active'`, [k.account_id]);
        if (num(c!['n']) >= maxActive) return 'limit' as const;
        await q(
          `INSERT INTO api_keys (id, account_id, scope, name, display_prefix, key_hash, status, created_at) VALUES ($1, $2, $3, $4, $5, $6, 'active', $7)`,
          [k.id, k.account_id, k.scope, k.name, k.display_prefix, k.hash, now()],
        );
        const [r] = await q(`${KEY} WHERE k.id = $1`, [k.id]);
        return d.toKey(r!);
      });
    },
    async createLicence(l) {
      await query('INSERT INTO licences (id, account_id, scope, seats, expires_at, created_at) VALUES ($1, $2, $3, $4, $5, $6)', [
        l.id, l.account_id, l.scope, l.seats, new Date(l.expires_at), now(),
      ]);
      const [r] = await query(`${LICENCE_SELECT} WHERE l.id = $2`, [now(), l.id]);
      return toLicence(r!);
    },
    async getLicence(id) {
      const [r] = await query(`${LICENCE_SELECT} WHERE l.id = $2`, [now(), id]);
      return r ? toLicence(r) : null;
    },
    async listLicences(accountId) {
      const rows =
        accountId === undefined
          ? await query(`${LICENCE_SELECT} ORDER BY l.created_at, l.id COLLATE "C"`, [now()])
          : await query(`${LICENCE_SELECT} WHERE l.account_id = $2 ORDER BY l.created_at, l.id COLLATE "C"`, [now(), accountId]);
      return rows.map(toLicence);
    },
    async createClaimLink(l) {
      const [r] = await query(
        'INSERT INTO claim_links (token_hash, licence_id, expires_at, created_at) VALUES ($1, $2, $3, $4) RETURNING licence_id, expires_at, created_at, used_at, key_id',
        [l.token_hash, l.licence_id, new Date(l.expires_at), now()],
      );
      return toLink(r!);
    },
    async getClaimLink(tokenHash) {
      const [r] = await query('SELECT licence_id, expires_at, created_at, used_at, key_id FROM claim_links WHERE token_hash = $1', [tokenHash]);
      return r ? toLink(r) : null;
    },
    async claimLink(tokenHash, k): Promise<{ key: ApiKey } | { refused: ClaimRefusal }> {
      return tx(async (q) => {
        const t = now();
        const [lr] = await q('SELECT licence_id, expires_at, created_at, used_at, key_id FROM claim_links WHERE token_hash = $1 FOR UPDATE', [tokenHash]);
        if (!lr) return { refused: 'unknown_link' as const };
        const link = toLink(lr);
        if (link.used_at !== null) return { refused: 'link_used' as const };
        if (Date.parse(link.expires_at) <= t.getTime()) return { refused: 'link_expired' as const };
        await q('SELECT id FROM licences WHERE id = $1 FOR UPDATE', [link.licence_id]); // serialise seat counting
        const lic = toLicence((await q(`${LICENCE_SELECT} WHERE l.id = $2`, [t, link.licence_id]))[0]!);
        if (Date.parse(lic.expires_at) <= t.getTime()) return { refused: 'licence_expired' as const };
        if (lic.seats_used >= lic.seats) return { refused: 'seats_full' as const };
        if ((await q('SELECT 1 FROM api_keys WHERE key_hash = $1', [k.hash])).length) return { refused: 'duplicate_key' as const };
        await q(
          `INSERT INTO api_keys (id, account_id, scope, name, display_prefix, key_hash, status, created_at, licence_id, expires_at)
           VALUES ($1, $2, $3, $4, $5, $6, 'active', $7, $8, $9)`,
          [k.id, lic.account_id, lic.scope, k.name, k.display_prefix, k.hash, t, lic.id, new Date(lic.expires_at)],
        );
        await q('UPDATE claim_links SET used_at = $1, key_id = $2 WHERE token_hash = $3', [t, k.id, tokenHash]);
        const [r] = await q(`${KEY} WHERE k.id = $1`, [k.id]);
        return { key: live(d.toKey(r!)) };
      });
    },
    async hitRateLimit(keyId, windowStart, day) {
      const [r] = await hotQuery(
        `WITH hit AS (
           INSERT INTO rate_counters (key_id, window_start, count) VALUES ($1, $2, 1)
           ON CONFLICT (key_id, window_start) DO UPDATE SET count = rate_counters.count + 1
           RETURNING count
         )
         SELECT hit.count, COALESCE((SELECT rows FROM budget_counters WHERE key_id = $1 AND day = $3), 0) AS rows FROM hit`,
        [keyId, windowStart, day],
      );
      return { count: num(r!['count']), rowsUsed: num(r!['rows']) };
    },
    async chargeRows(keyId, day, rows, limit) {
      const used = async (): Promise<number> => num((await query('SELECT rows FROM budget_counters WHERE key_id = $1 AND day = $2', [keyId, day]))[0]?.['rows']);
      if (rows > limit) return { ok: false, used: await used() };
      const [r] = await hotQuery(
        `INSERT INTO budget_counters (key_id, day, rows) VALUES ($1, $2, $3)
         ON CONFLICT (key_id, day) DO UPDATE SET rows = budget_counters.rows + EXCLUDED.rows
         WHERE budget_counters.rows + EXCLUDED.rows <= $4
         RETURNING rows`,
        [keyId, day, rows, limit],
      );
      return r ? { ok: true, used: num(r['rows']) } : { ok: false, used: await used() };
    },
    async addUsage(deltas) {
      if (!deltas.length) return;
      const cols = [deltas.map((x) => x.key_id), deltas.map((x) => x.day), deltas.map((x) => x.route), deltas.map((x) => x.requests), deltas.map((x) => x.errors), deltas.map((x) => x.rows)];
      const input = `unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::bigint[], $6::bigint[]) AS t(key_id, day, route, requests, errors, rows)`;
      await tx(async (q) => {
        // rows in key order, so replicas flushing at once lock them in the same order (no deadlock)
        await q(
          `INSERT INTO usage_daily (key_id, day, requests, errors, rows)
           SELECT key_id, day, sum(requests), sum(errors), sum(rows) FROM ${input} GROUP BY key_id, day ORDER BY key_id, day
           ON CONFLICT (key_id, day) DO UPDATE SET requests = usage_daily.requests + EXCLUDED.requests,
             errors = usage_daily.errors + EXCLUDED.errors, rows = usage_daily.rows + EXCLUDED.rows`,
          cols,
        );
        await q(
          `INSERT INTO usage_routes (key_id, day, route, requests, errors, rows)
           SELECT key_id, day, route, sum(requests), sum(errors), sum(rows) FROM ${input} GROUP BY key_id, day, route ORDER BY key_id, day, route
           ON CONFLICT (key_id, day, route) DO UPDATE SET requests = usage_routes.requests + EXCLUDED.requests,
             errors = usage_routes.errors + EXCLUDED.errors, rows = usage_routes.rows + EXCLUDED.rows`,
          cols,
        );
      });
    },
    async accountUsage(accountId, fromDay, toDay): Promise<AccountUsage> {
      const [keys, days, routes] = await Promise.all([
        query(`${KEY} WHERE k.account_id = $1 ORDER BY k.created_at, k.id COLLATE "C"`, [accountId]),
        query(
          `SELECT u.key_id, u.day, u.requests, u.errors, u.rows FROM usage_daily u JOIN api_keys k ON k.id = u.key_id
           WHERE k.account_id = $1 AND u.day BETWEEN $2 AND $3 ORDER BY u.day COLLATE "C", u.key_id COLLATE "C"`,
          [accountId, fromDay, toDay],
        ),
        query(
          `SELECT u.key_id, u.day, u.route, u.requests, u.errors, u.rows FROM usage_routes u JOIN api_keys k ON k.id = u.key_id
           WHERE k.account_id = $1 AND u.day BETWEEN $2 AND $3 ORDER BY u.day COLLATE "C", u.key_id COLLATE "C", u.route COLLATE "C"`,
          [accountId, fromDay, toDay],
        ),
      ]);
      return {
        keys: keys.map((r) => live(d.toKey(r))),
        days: days.map((r) => ({ key_id: r['key_id'] as string, day: r['day'] as string, ...counts(r) })),
        routes: routes.map((r) => ({ key_id: r['key_id'] as string, day: r['day'] as string, route: r['route'] as string, ...counts(r) })),
      };
    },
    async prune(p) {
      await tx(async (q) => {
        await q('DELETE FROM usage_routes WHERE day < $1', [p.detailBefore]);
        await q('DELETE FROM rate_counters WHERE window_start < $1', [p.windowBefore]);
        await q('DELETE FROM budget_counters WHERE day < $1', [p.budgetBefore]);
      });
    },
  };
}
