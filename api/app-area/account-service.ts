/**
 * What the account area's pages do for ONE account, as plain functions over the existing state
 * store and access rules (no HTTP, no HTML): testable without a browser, and the only place the
 * pages change state. Every function takes the account id and acts on that account only: an id
 * of another account's key answers 404 exactly like an id that does not exist.
 *
 * The rules are the API's own, never re-declared: which scopes a plan may create
 * (api/access/licences.ts `selfServeRefusal`), the 10-key limit (`MAX_SELF_SERVE_KEYS`, checked
 * atomically by `insertSelfServeKey`), the hourly limit and daily row budget of a scope
 * (api/access/limits.ts), the usage ledger (`accountUsage`).
 *
 * The app's own ledger entry: the lead explorer reads leads with the rights of the account's
 * plan (`appScope`: the top self-serve scope the plan allows — `ent_api` on premium, else
 * `commonwealth`) and its rows are charged to a per-account internal key, `key_app_<account id>`
 * (`ensureAppKey`). That key exists only so the usage ledger and the row budget have something
 * to count against (their rows reference api_keys): it is stored already revoked, with a random
 * hash nobody holds, so it never authenticates, never counts against the 10-key limit and never
 * lets a webhook send. The pages show it as "Lead explorer (app)".
 */
import { createHash, randomBytes } from 'node:crypto';
import { ApiError, notFound } from '../http/errors.ts';
import { generateKey } from '../access/keys.ts';
import { isLicensedScope, MAX_SELF_SERVE_KEYS, planAllowsScope, selfServeRefusal } from '../access/licences.ts';
import { dailyRows, requestsPerHour, utcDay } from '../access/limits.ts';
import { SCOPES, type Plan, type Scope } from '../access/scopes.ts';
import type { ApiKey, Licence, StateStore, UsageCounts } from '../state/store-interface.ts';

/** A key as its owner's list shows it. */
export interface KeyRow extends ApiKey {
  /** The last UTC day the usage ledger counted a request of the key (the ledger keeps days, not instants); null when never used. */
  last_used_day: string | null;
}

/** A scope the create form lists, with why it cannot be chosen (null when it can). */
export interface ScopeOffer {
  scope: Scope;
  refusal: string | null;
}

/** Longest key label. */
export const KEY_LABEL_MAX = 100;

/** The scope the app acts with for an account on `plan`: the top self-serve scope the plan allows. */
export function appScope(plan: Plan): Scope {
  return SCOPES.filter((s) => !isLicensedScope(s) && planAllowsScope(plan, s)).at(-1)!;
}

/** The id of the account's internal app key (see the module comment). */
export const appKeyId = (accountId: number): string => `key_app_${accountId}`;
export const isAppKey = (id: string): boolean => /^key_app_\d+$/.test(id);
/** The name the app key is stored with (shown by `leads keys list` and the usage ledger). */
export const APP_KEY_NAME = 'Lead explorer (app): internal ledger entry, not a usable key';

/** App keys known to exist, per store (a process may hold several stores: tests, replicas of a bench). */
const ensured = new WeakMap<object, Set<string>>();

/** Make sure the account's internal app key exists (stored revoked; idempotent, safe under races). */
export async function ensureAppKey(
  store: Pick<StateStore, 'listKeys' | 'insertKey' | 'revokeKey'>,
  accountId: number,
): Promise<string> {
  const id = appKeyId(accountId);
  let known = ensured.get(store);
  if (!known) ensured.set(store, (known = new Set()));
  if (known.has(id)) return id;
  const existing = (await store.listKeys(accountId)).find((k) => k.id === id);
  if (!existing) {
    const hash = createHash('sha256').update(randomBytes(32)).digest('hex'); // of nothing anyone holds
    try {
      await store.insertKey({
        id,
        account_id: accountId,
        scope: 'commonwealth',
        name: APP_KEY_NAME,
        display_prefix: 'app',
        hash,
      });
    } catch (e) {
      // another request inserted it first (primary key): fine
      if (!(await store.listKeys(accountId)).some((k) => k.id === id)) throw e;
    }
  }
  if (!existing || existing.status !== 'revoked') await store.revokeKey(id);
  known.add(id);
  return id;
}

/** Why `plan` may not create a `scope` key in the app (the CLI's rule, `selfServeRefusal`, worded for the account owner), or null. */
export function appRefusal(scope: Scope, plan: Plan): string | null {
  const why = selfServeRefusal(scope, plan);
  if (why === null) return null;
  return isLicensedScope(scope)
    ? `${scope} keys are issued only under an organisation licence: ask your account manager, who sends a one-time claim link per seat`
    : why;
}

/** The 409 shown when the account already holds the most active self-serve keys. */
export function keyLimitReached(): ApiError {
  return new ApiError(
    409,
    'key_limit',
    `You already hold ${MAX_SELF_SERVE_KEYS} active keys, the most an account may hold. Revoke a key you no longer use, then create the new one; a revoked key keeps its usage history.`,
  );
}

/** What the account service reads and writes with. */
interface AccountDeps {
  store: StateStore;
  clock: () => Date;
}

/** The account area's actions for one account (see the module comment), over `deps`. */
export function accountService({ store, clock }: AccountDeps) {
  const deps: AccountDeps = { store, clock };
  return {
    listKeys: (accountId: number) => listKeys(deps, accountId),
    offeredScopes,
    keyAllowance: (accountId: number) => keyAllowance(store, accountId),
    createKey: (accountId: number, plan: Plan, o: { scope: unknown; label: unknown }) =>
      createKey(store, accountId, plan, o),
    revokeKey: (accountId: number, keyId: string) => revokeKey(store, accountId, keyId),
    ownKey: (accountId: number, keyId: string) => ownKey(store, accountId, keyId),
    usage: (accountId: number, from: string, to: string) => accountUsage(deps, accountId, from, to),
    licences: (accountId: number) => licences(store, accountId),
  };
}

/** The account's key, or 404 (also for another account's key: ids are not secrets, ownership is checked). */
async function ownKey(store: StateStore, accountId: number, keyId: string): Promise<ApiKey> {
  const k = isAppKey(keyId) ? undefined : (await store.listKeys(accountId)).find((x) => x.id === keyId);
  if (!k) throw notFound(`key ${keyId}`);
  return k;
}

/** The account's keys, oldest first, with the day each was last used (the app's internal key left out). */
async function listKeys({ store, clock }: AccountDeps, accountId: number): Promise<KeyRow[]> {
  const today = utcDay(clock().getTime());
  const usage = await store.accountUsage(accountId, '1970-01-01', today);
  const last = new Map<string, string>();
  for (const d of usage.days) if (d.requests > 0 && (last.get(d.key_id) ?? '') < d.day) last.set(d.key_id, d.day);
  return usage.keys.filter((k) => !isAppKey(k.id)).map((k) => ({ ...k, last_used_day: last.get(k.id) ?? null }));
}

/** Every scope, with why `plan` may not create a self-serve key of it. */
function offeredScopes(plan: Plan): ScopeOffer[] {
  return SCOPES.map((scope) => ({ scope, refusal: appRefusal(scope, plan) }));
}

/** Active self-serve keys and the limit. */
async function keyAllowance(store: StateStore, accountId: number): Promise<{ active: number; max: number }> {
  const keys = await store.listKeys(accountId);
  return {
    active: keys.filter((k) => k.status === 'active' && k.licence_id === null && !isAppKey(k.id)).length,
    max: MAX_SELF_SERVE_KEYS,
  };
}

/**
 * Create a self-serve key: the raw key is returned once (only its hash is stored). 400 for a
 * bad label or scope, 403 for a scope the plan does not allow, 409 at the key limit.
 */
async function createKey(
  store: StateStore,
  accountId: number,
  plan: Plan,
  o: { scope: unknown; label: unknown },
): Promise<{ key: ApiKey; raw: string }> {
  if (typeof o.scope !== 'string' || !(SCOPES as readonly string[]).includes(o.scope)) {
    throw new ApiError(400, 'invalid_parameter', `choose a scope: ${SCOPES.join(', ')}`);
  }
  const scope = o.scope as Scope;
  const label = typeof o.label === 'string' ? o.label.trim() : '';
  if (label.length > KEY_LABEL_MAX)
    throw new ApiError(400, 'invalid_parameter', `the label may have at most ${KEY_LABEL_MAX} characters`);
  const refusal = appRefusal(scope, plan);
  if (refusal) throw new ApiError(403, 'insufficient_plan', refusal);
  const k = generateKey(scope);
  const made = await store.insertSelfServeKey(
    {
      id: k.id,
      account_id: accountId,
      scope,
      name: label === '' ? null : label,
      display_prefix: k.displayPrefix,
      hash: k.hash,
    },
    MAX_SELF_SERVE_KEYS,
  );
  if (made === 'limit') throw keyLimitReached();
  return { key: made, raw: k.raw };
}

/** Revoke one of the account's keys (404 for any other id); the API refuses it from the next request. */
async function revokeKey(
  store: StateStore,
  accountId: number,
  keyId: string,
): Promise<{ key: ApiKey; already: boolean }> {
  const before = await ownKey(store, accountId, keyId);
  if (before.status === 'revoked') return { key: before, already: true };
  return { key: (await store.revokeKey(keyId))!, already: false };
}

/**
 * The usage ledger of the account over [from, to]: per key (revoked and expired ones, and the
 * app's own entry, included) its days and routes, and the limits it stands against.
 */
async function accountUsage({ store, clock }: AccountDeps, accountId: number, from: string, to: string) {
  const u = await store.accountUsage(accountId, from, to);
  const today = utcDay(clock().getTime());
  const zero = (): UsageCounts => ({ requests: 0, errors: 0, rows: 0 });
  const keys = u.keys.map((k) => {
    const days = u.days.filter((d) => d.key_id === k.id);
    const totals = zero();
    for (const d of days) ((totals.requests += d.requests), (totals.errors += d.errors), (totals.rows += d.rows));
    const todayRow = days.find((d) => d.day === today);
    return {
      key: k,
      app: isAppKey(k.id),
      totals,
      days,
      routes: u.routes.filter((r) => r.key_id === k.id),
      hourlyLimit: requestsPerHour(k.scope),
      dailyRows: dailyRows(k.scope),
      today: todayRow ? { requests: todayRow.requests, rows: todayRow.rows } : { requests: 0, rows: 0 },
    };
  });
  return { from, to, today, keys };
}

/** The account's organisation licences with the keys claimed under each. */
async function licences(store: StateStore, accountId: number): Promise<{ licence: Licence; keys: ApiKey[] }[]> {
  const [ls, keys] = await Promise.all([store.listLicences(accountId), store.listKeys(accountId)]);
  return ls.map((licence) => ({ licence, keys: keys.filter((k) => k.licence_id === licence.id) }));
}

export type AccountService = ReturnType<typeof accountService>;
