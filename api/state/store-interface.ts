/**
 * The state store: accounts, API keys, organisation licences and their claim links, hourly
 * request counters, daily row budgets and the usage ledger; webhooks (`store.webhooks`) and the
 * account area's sessions and activity log (`store.app`).
 * One interface, several backends (SQLite file by default; PostgreSQL for replicas), chosen by
 * `DATABASE_URL`. Keys are stored only as SHA-256 hashes; the raw key exists once, in the
 * response to its creation.
 */
import type { Plan, Scope } from '../access/scopes.ts';
import type { WebhookStore } from './webhook-interface.ts';
import type { AppStore } from './app-store.ts';
import type { IdempotencyStore } from './idempotency.ts';
import type { SearchStore } from './search-store.ts';
import type { KeyStatus } from './tables.ts';

export interface Account {
  id: number;
  name: string;
  plan: Plan;
  created_at: string;
}

export interface ApiKey {
  id: string; // public key id, e.g. "key_3f9a…" (safe to log and show)
  account_id: number;
  account_name: string;
  scope: Scope;
  name: string | null;
  /** First characters of the raw key (prefix + 4), for recognising it in lists. */
  display_prefix: string;
  status: KeyStatus;
  created_at: string;
  revoked_at: string | null;
  /** The organisation licence the key was claimed under (null for self-serve keys). */
  licence_id: string | null;
  /** When a licensed key stops working: its licence's end, read from the licence; null for self-serve keys. */
  expires_at: string | null;
}

/**
 * A key as read for authentication: with its stored hash (never put on ctx.state, never logged)
 * and its account's current plan (a key of a scope the plan no longer allows grants nothing).
 */
export type StoredKey = ApiKey & { key_hash: string; account_plan: Plan };

/** The fields of a key to insert (by hash: the raw key is never passed to the store). */
export interface NewKey {
  id: string;
  account_id: number;
  scope: Scope;
  name: string | null;
  display_prefix: string;
  hash: string;
}

/** An organisation licence: `seats` keys of a feed scope until `expires_at`. */
export interface Licence {
  id: string; // "lic_…"
  account_id: number;
  account_name: string;
  scope: Scope;
  seats: number;
  /** Licensed keys stop working at this instant (00:00 UTC after the licence's last day). */
  expires_at: string;
  created_at: string;
  /** Active (unexpired, unrevoked) keys claimed under the licence. */
  seats_used: number;
}

/** A one-time claim link, stored by the SHA-256 hash of its token. */
export interface ClaimLink {
  licence_id: string;
  expires_at: string;
  created_at: string;
  used_at: string | null;
  key_id: string | null;
}

/** Why a claim was refused (nothing is written then). */
export type ClaimRefusal =
  'unknown_link' | 'link_used' | 'link_expired' | 'licence_expired' | 'seats_full' | 'duplicate_key';

/** One request's worth of counts for the usage ledger (added to the key's day and route). */
export interface UsageDelta {
  key_id: string;
  /** UTC day, YYYY-MM-DD. */
  day: string;
  route: string;
  requests: number;
  errors: number;
  rows: number;
}

export interface UsageCounts {
  requests: number;
  errors: number;
  rows: number;
}

/** The ledger of an account over [from, to]: its keys (any status) and their rows. */
export interface AccountUsage {
  keys: ApiKey[];
  /** Per key and day totals (kept forever). */
  days: (UsageCounts & { key_id: string; day: string })[];
  /** Per key, day and route (kept for the detail window). */
  routes: (UsageCounts & { key_id: string; day: string; route: string })[];
}

export interface StateStore {
  createAccount(name: string, plan: Plan): Promise<Account>;
  getAccountByName(name: string): Promise<Account | null>;
  /**
   * Move an account to another plan (upgrade or downgrade); null when there is no such account.
   * Keys are not touched: a key of a scope the new plan does not allow stops granting it
   * (api/access/licences.ts `planAllowsScope`) and works again if the plan allows it again.
   */
  setAccountPlan(id: number, plan: Plan): Promise<Account | null>;
  /** Store a key by its SHA-256 hash (hex), with no plan or limit checks (see insertSelfServeKey). */
  insertKey(k: NewKey): Promise<ApiKey>;
  /** Find a key by the SHA-256 hash of the presented secret (any status), with its stored hash. */
  findKeyByHash(hash: string): Promise<StoredKey | null>;
  listKeys(accountId?: number): Promise<ApiKey[]>;
  /** Revoke a key; every process's key cache learns it at once (`keyChangeStamp`). */
  revokeKey(id: string): Promise<ApiKey | null>;
  /**
   * A number that moves whenever a key may have been revoked or a plan changed — by this
   * process or by any other connection (another replica, the CLI) — read without a query
   * (api/state/revocations.ts). The auth middleware's key cache is only trusted while it stays put.
   */
  keyChangeStamp(): number;
  /** Webhooks and their delivery queue (api/state/webhook-interface.ts). */
  readonly webhooks: WebhookStore;
  /** The account area (/app): invitations, credentials, sessions, sign-in throttle, activity log (api/state/app-store.ts). */
  readonly app: AppStore;
  /** Idempotency keys of `POST /v1/webhooks` and their remembered answers (api/state/idempotency.ts). */
  readonly idempotency: IdempotencyStore;
  /** Saved searches and their e-mail alerts' marks (api/state/search-store.ts). */
  readonly searches: SearchStore;

  // — access model (issue 4) —
  getAccountById(id: number): Promise<Account | null>;
  /**
   * Insert a self-serve key unless the account already holds `maxActive` active self-serve keys
   * (checked and inserted atomically); 'limit' when refused.
   */
  insertSelfServeKey(k: NewKey, maxActive: number): Promise<ApiKey | 'limit'>;
  createLicence(l: {
    id: string;
    account_id: number;
    scope: Scope;
    seats: number;
    expires_at: string;
  }): Promise<Licence>;
  getLicence(id: string): Promise<Licence | null>;
  /**
   * Move a licence's end (extend or shorten it); its keys follow at once — a key's `expires_at`
   * is read from its licence, never copied — and every process's key cache learns it
   * (`keyChangeStamp`). Null when there is no such licence.
   */
  setLicenceEnd(id: string, expiresAt: string): Promise<Licence | null>;
  listLicences(accountId?: number): Promise<Licence[]>;
  /** Record a one-time claim link by its token's SHA-256 hash. */
  createClaimLink(l: { token_hash: string; licence_id: string; expires_at: string }): Promise<ClaimLink>;
  /** The link with this token hash (any state), or null. */
  getClaimLink(tokenHash: string): Promise<ClaimLink | null>;
  /**
   * Claim a link, atomically: the link must be unused and unexpired, its licence unexpired with a
   * free seat; then the key (scope and account of the licence, expiring with it) is inserted and
   * the link marked used. On refusal nothing is written.
   */
  claimLink(
    tokenHash: string,
    k: Omit<NewKey, 'account_id' | 'scope'>,
  ): Promise<{ key: ApiKey } | { refused: ClaimRefusal }>;
  /**
   * Count one request of `keyId` in the hourly window starting at `windowStart` (epoch s) and
   * return the window's count including it, with the rows already charged on `day` — one atomic
   * statement, exact across replicas.
   */
  hitRateLimit(keyId: string, windowStart: number, day: string): Promise<{ count: number; rowsUsed: number }>;
  /**
   * Count `n` requests of `keyId` at once in the hourly window starting at `windowStart`, unless
   * the window's count would then pass `limit`: one atomic conditional upsert, exact across
   * replicas (api/access/request-leases.ts hands the numbers out one per request). Returns the
   * window's count including them, or null when they do not fit (nothing is counted).
   */
  reserveRequests(keyId: string, windowStart: number, n: number, limit: number): Promise<number | null>;
  /**
   * Charge `rows` to the key's `day` unless that would pass `limit`: one atomic conditional
   * upsert; on refusal nothing is charged. Returns the day's rows used after (or without) it.
   */
  chargeRows(keyId: string, day: string, rows: number, limit: number): Promise<{ ok: boolean; used: number }>;
  /** Add counts to the usage ledger (per key and day, and per key, day and route), in one transaction. */
  addUsage(deltas: UsageDelta[]): Promise<void>;
  /** The usage ledger of an account for days in [fromDay, toDay]. */
  accountUsage(accountId: number, fromDay: string, toDay: string): Promise<AccountUsage>;
  /**
   * Housekeeping: delete per-route usage detail of days before `detailBefore` (per-key daily
   * totals are kept forever), hourly counters of windows before `windowBefore` (epoch s) and
   * budget counters of days before `budgetBefore`.
   */
  prune(p: { detailBefore: string; windowBefore: number; budgetBefore: string }): Promise<void>;
  /**
   * Readiness (`/readyz`): read, then write the table keyed requests write
   * (`rate_counters`, a statement that changes no row), the way `hitRateLimit` does — so a lock
   * held by another process or session, a read-only store or a lost connection rejects here as
   * it would on the request path.
   */
  probeWrite(): Promise<void>;
  /** Settles when the store can answer: migrations applied, or rejects with why not. */
  readonly ready: Promise<void>;
  close(): Promise<void>;
}

/**
 * A licensed key past its licence's end reads as `expired` (computed on read, so nothing has to
 * sweep the table; both backends apply it to every key they return).
 */
export const withExpiry =
  (now: () => Date) =>
  <K extends ApiKey | undefined>(k: K): K =>
    k && k.status === 'active' && k.expires_at !== null && Date.parse(k.expires_at) <= now().getTime()
      ? { ...k, status: 'expired' }
      : k;
