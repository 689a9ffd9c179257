/**
 * The access-model part of the SQLite store (issue 4): organisation licences and their one-time
 * claim links, self-serve key limits, hourly request counters, daily row budgets and the usage
 * ledger. Every check-then-write runs in one `BEGIN IMMEDIATE` transaction (the write lock is
 * taken first, so another process — the CLI, another server on the same file — cannot interleave).
 */
import type Database from 'better-sqlite3';
import { withExpiry, type Account, type AccountUsage, type ApiKey, type ClaimLink, type ClaimRefusal, type Licence, type NewKey, type StateStore, type UsageDelta } from './store.ts';

/** The api_keys columns (with the account name) every key read returns. */
export const SQLITE_KEY_COLUMNS = `k.id, k.account_id, a.name AS account_name, k.scope, k.name, k.display_prefix, k.status, k.created_at, k.revoked_at, k.licence_id, k.expires_at`;
const KEY_COLUMNS = SQLITE_KEY_COLUMNS;

/** Migrations 2–5 (versions 20–29 belong to webhooks). */
export const ACCESS_MIGRATIONS_SQLITE: { version: number; sql: string }[] = [
  {
    version: 2,
    sql: `
      CREATE TABLE licences (
        id TEXT PRIMARY KEY,
        account_id INTEGER NOT NULL REFERENCES accounts(id),
        scope TEXT NOT NULL CHECK (scope IN ('ent_feed', 'custom')),
        seats INTEGER NOT NULL CHECK (seats > 0),
        expires_at TEXT NOT NULL,
        created_at TEXT NOT NULL
      );
      CREATE INDEX licences_account ON licences(account_id);
      ALTER TABLE api_keys ADD COLUMN licence_id TEXT REFERENCES licences(id);
      ALTER TABLE api_keys ADD COLUMN expires_at TEXT;
      CREATE INDEX api_keys_licence ON api_keys(licence_id);
      CREATE TABLE claim_links (
        token_hash TEXT PRIMARY KEY,
        licence_id TEXT NOT NULL REFERENCES licences(id),
        expires_at TEXT NOT NULL,
        created_at TEXT NOT NULL,
        used_at TEXT,
        key_id TEXT REFERENCES api_keys(id)
      );
    `,
  },
  {
    version: 3,
    sql: `
      CREATE TABLE rate_counters (
        key_id TEXT NOT NULL,
        window_start INTEGER NOT NULL,
        count INTEGER NOT NULL,
        PRIMARY KEY (key_id, window_start)
      ) WITHOUT ROWID;
    `,
  },
  {
    version: 4,
    sql: `
      CREATE TABLE budget_counters (
        key_id TEXT NOT NULL,
        day TEXT NOT NULL,
        rows INTEGER NOT NULL,
        PRIMARY KEY (key_id, day)
      ) WITHOUT ROWID;
    `,
  },
  {
    version: 5,
    sql: `
      CREATE TABLE usage_daily (
        key_id TEXT NOT NULL REFERENCES api_keys(id),
        day TEXT NOT NULL,
        requests INTEGER NOT NULL,
        errors INTEGER NOT NULL,
        rows INTEGER NOT NULL,
        PRIMARY KEY (key_id, day)
      ) WITHOUT ROWID;
      CREATE TABLE usage_routes (
        key_id TEXT NOT NULL REFERENCES api_keys(id),
        day TEXT NOT NULL,
        route TEXT NOT NULL,
        requests INTEGER NOT NULL,
        errors INTEGER NOT NULL,
        rows INTEGER NOT NULL,
        PRIMARY KEY (key_id, day, route)
      ) WITHOUT ROWID;
    `,
  },
];

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

const LICENCE_SELECT = `SELECT l.id, l.account_id, a.name AS account_name, l.scope, l.seats, l.expires_at, l.created_at,
  (SELECT count(*) FROM api_keys k WHERE k.licence_id = l.id AND k.status = 'active' AND k.expires_at > ?) AS seats_used
  FROM licences l JOIN accounts a ON a.id = l.account_id`;

export function accessSqlite(db: Database.Database, now: () => Date): AccessMethods {
  const live = withExpiry(now);
  const iso = (): string => now().toISOString();
  const s = {
    accountById: db.prepare('SELECT id, name, plan, created_at FROM accounts WHERE id = ?'),
    countSelfServe: db.prepare(`SELECT count(*) AS n FROM api_keys WHERE account_id = ? AND licence_id IS NULL AND status = 'active'`),
    insertKey: db.prepare(
      'INSERT INTO api_keys (id, account_id, scope, name, display_prefix, key_hash, status, created_at, licence_id, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
    ),
    keyById: db.prepare(`SELECT ${KEY_COLUMNS} FROM api_keys k JOIN accounts a ON a.id = k.account_id WHERE k.id = ?`),
    keyHashExists: db.prepare('SELECT 1 FROM api_keys WHERE key_hash = ?'),
    insertLicence: db.prepare('INSERT INTO licences (id, account_id, scope, seats, expires_at, created_at) VALUES (?, ?, ?, ?, ?, ?)'),
    licenceById: db.prepare(`${LICENCE_SELECT} WHERE l.id = ?`),
    licencesAll: db.prepare(`${LICENCE_SELECT} ORDER BY l.created_at, l.id`),
    licencesByAccount: db.prepare(`${LICENCE_SELECT} WHERE l.account_id = ? ORDER BY l.created_at, l.id`),
    insertLink: db.prepare('INSERT INTO claim_links (token_hash, licence_id, expires_at, created_at) VALUES (?, ?, ?, ?)'),
    linkByHash: db.prepare('SELECT licence_id, expires_at, created_at, used_at, key_id FROM claim_links WHERE token_hash = ?'),
    useLink: db.prepare('UPDATE claim_links SET used_at = ?, key_id = ? WHERE token_hash = ? AND used_at IS NULL'),
    hit: db.prepare(
      `INSERT INTO rate_counters (key_id, window_start, count) VALUES (?, ?, 1)
       ON CONFLICT (key_id, window_start) DO UPDATE SET count = count + 1 RETURNING count`,
    ),
    rowsUsed: db.prepare('SELECT rows FROM budget_counters WHERE key_id = ? AND day = ?'),
    charge: db.prepare(
      `INSERT INTO budget_counters (key_id, day, rows) VALUES (?, ?, ?)
       ON CONFLICT (key_id, day) DO UPDATE SET rows = rows + excluded.rows WHERE rows + excluded.rows <= ? RETURNING rows`,
    ),
    usageDay: db.prepare(
      `INSERT INTO usage_daily (key_id, day, requests, errors, rows) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (key_id, day) DO UPDATE SET requests = requests + excluded.requests, errors = errors + excluded.errors, rows = rows + excluded.rows`,
    ),
    usageRoute: db.prepare(
      `INSERT INTO usage_routes (key_id, day, route, requests, errors, rows) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (key_id, day, route) DO UPDATE SET requests = requests + excluded.requests, errors = errors + excluded.errors, rows = rows + excluded.rows`,
    ),
    listKeys: db.prepare(`SELECT ${KEY_COLUMNS} FROM api_keys k JOIN accounts a ON a.id = k.account_id WHERE k.account_id = ? ORDER BY k.created_at, k.id`),
    usageDays: db.prepare(
      `SELECT u.key_id, u.day, u.requests, u.errors, u.rows FROM usage_daily u JOIN api_keys k ON k.id = u.key_id
       WHERE k.account_id = ? AND u.day BETWEEN ? AND ? ORDER BY u.day, u.key_id`,
    ),
    usageRoutes: db.prepare(
      `SELECT u.key_id, u.day, u.route, u.requests, u.errors, u.rows FROM usage_routes u JOIN api_keys k ON k.id = u.key_id
       WHERE k.account_id = ? AND u.day BETWEEN ? AND ? ORDER BY u.day, u.key_id, u.route`,
    ),
    pruneRoutes: db.prepare('DELETE FROM usage_routes WHERE day < ?'),
    pruneWindows: db.prepare('DELETE FROM rate_counters WHERE window_start < ?'),
    pruneBudgets: db.prepare('DELETE FROM budget_counters WHERE day < ?'),
  };

  const insertSelfServe = db.transaction((k: NewKey, max: number): ApiKey | 'limit' => {
    if ((s.countSelfServe.get(k.account_id) as { n: number }).n >= max) return 'limit';
    s.insertKey.run(k.id, k.account_id, k.scope, k.name, k.display_prefix, k.hash, 'active', iso(), null, null);
    return s.keyById.get(k.id) as ApiKey;
  });

  const claim = db.transaction((tokenHash: string, k: Omit<NewKey, 'account_id' | 'scope'>): { key: ApiKey } | { refused: ClaimRefusal } => {
    const t = iso();
    const link = s.linkByHash.get(tokenHash) as ClaimLink | undefined;
    if (!link) return { refused: 'unknown_link' };
    if (link.used_at !== null) return { refused: 'link_used' };
    if (link.expires_at <= t) return { refused: 'link_expired' };
    const lic = s.licenceById.get(t, link.licence_id) as Licence;
    if (lic.expires_at <= t) return { refused: 'licence_expired' };
    if (lic.seats_used >= lic.seats) return { refused: 'seats_full' };
    if (s.keyHashExists.get(k.hash)) return { refused: 'duplicate_key' };
    s.insertKey.run(k.id, lic.account_id, lic.scope, k.name, k.display_prefix, k.hash, 'active', t, lic.id, lic.expires_at);
    s.useLink.run(t, k.id, tokenHash);
    return { key: s.keyById.get(k.id) as ApiKey };
  });

  const hit = db.transaction((keyId: string, windowStart: number, day: string) => {
    const { count } = s.hit.get(keyId, windowStart) as { count: number };
    const used = s.rowsUsed.get(keyId, day) as { rows: number } | undefined;
    return { count, rowsUsed: used?.rows ?? 0 };
  });

  const charge = db.transaction((keyId: string, day: string, rows: number, limit: number) => {
    if (rows > limit) return { ok: false, used: (s.rowsUsed.get(keyId, day) as { rows: number } | undefined)?.rows ?? 0 };
    const r = s.charge.get(keyId, day, rows, limit) as { rows: number } | undefined;
    if (r) return { ok: true, used: r.rows };
    return { ok: false, used: (s.rowsUsed.get(keyId, day) as { rows: number } | undefined)?.rows ?? 0 };
  });

  const addUsage = db.transaction((deltas: UsageDelta[]) => {
    for (const d of deltas) {
      s.usageDay.run(d.key_id, d.day, d.requests, d.errors, d.rows);
      s.usageRoute.run(d.key_id, d.day, d.route, d.requests, d.errors, d.rows);
    }
  });

  const prune = db.transaction((p: { detailBefore: string; windowBefore: number; budgetBefore: string }) => {
    s.pruneRoutes.run(p.detailBefore);
    s.pruneWindows.run(p.windowBefore);
    s.pruneBudgets.run(p.budgetBefore);
  });

  return {
    async getAccountById(id) {
      return (s.accountById.get(id) as Account | undefined) ?? null;
    },
    async insertSelfServeKey(k, maxActive) {
      return insertSelfServe.immediate(k, maxActive);
    },
    async createLicence(l) {
      s.insertLicence.run(l.id, l.account_id, l.scope, l.seats, new Date(l.expires_at).toISOString(), iso());
      return s.licenceById.get(iso(), l.id) as Licence;
    },
    async getLicence(id) {
      return (s.licenceById.get(iso(), id) as Licence | undefined) ?? null;
    },
    async listLicences(accountId) {
      return (accountId === undefined ? s.licencesAll.all(iso()) : s.licencesByAccount.all(iso(), accountId)) as Licence[];
    },
    async createClaimLink(l) {
      s.insertLink.run(l.token_hash, l.licence_id, new Date(l.expires_at).toISOString(), iso());
      return s.linkByHash.get(l.token_hash) as ClaimLink;
    },
    async getClaimLink(tokenHash) {
      return (s.linkByHash.get(tokenHash) as ClaimLink | undefined) ?? null;
    },
    async claimLink(tokenHash, k) {
      const r = claim.immediate(tokenHash, k);
      return 'key' in r ? { key: live(r.key) } : r;
    },
    async hitRateLimit(keyId, windowStart, day) {
      return hit.immediate(keyId, windowStart, day);
    },
    async chargeRows(keyId, day, rows, limit) {
      return charge.immediate(keyId, day, rows, limit);
    },
    async addUsage(deltas) {
      if (deltas.length) addUsage.immediate(deltas);
    },
    async accountUsage(accountId, fromDay, toDay): Promise<AccountUsage> {
      return {
        keys: (s.listKeys.all(accountId) as ApiKey[]).map(live),
        days: s.usageDays.all(accountId, fromDay, toDay) as AccountUsage['days'],
        routes: s.usageRoutes.all(accountId, fromDay, toDay) as AccountUsage['routes'],
      };
    },
    async prune(p) {
      prune.immediate(p);
    },
  };
}
