/**
 * The access a webhook acts with, decided when it sends (never when it was created):
 *
 *   the webhook's scope, lowered to the best webhook scope (ent_api < ent_feed < custom) among the
 *   account's keys that grant it right now — active (not revoked), not expired (a licensed key
 *   ends with its licence) and of a scope the account's plan allows (ent_api needs premium;
 *   api/access/licences.ts `planAllowsScope`, the same rule the API applies to every request).
 *
 * Every delivery is masked for that scope when it is sent (retries and replays included). When
 * no such key exists the webhook is *suspended*: nothing is sent, the reason is shown on the
 * webhook and its held deliveries, and sending resumes — with the leads queued meanwhile — as
 * soon as the account holds such a key again.
 */
import { planAllowsScope, SCOPE_PLAN } from '../access/licences.ts';
import { CAPABILITIES, scopesWith, SCOPES, type Scope } from '../access/scopes.ts';
import type { Account, ApiKey, StateStore } from '../state/store-interface.ts';

/** Why a webhook cannot send (the only reason today). */
export const NO_ACTIVE_KEY = 'no_active_key';

export type WebhookAccess =
  { scope: Scope; reason: null; detail: null } | { scope: null; reason: typeof NO_ACTIVE_KEY; detail: string };

const rank = (s: Scope): number => SCOPES.indexOf(s);
const list = (xs: string[]): string =>
  xs.length > 1 ? `${xs.slice(0, -1).join(', ')} or ${xs.at(-1)}` : (xs[0] ?? '');

/** Why one key of a webhook scope grants nothing at `now`, or null when it grants its scope. */
export function keyRefusal(k: ApiKey, account: Pick<Account, 'plan'>, now: Date): string | null {
  if (k.status === 'revoked') return `${k.id} (${k.scope}) was revoked${k.revoked_at ? ` at ${k.revoked_at}` : ''}`;
  if (k.status === 'expired' || (k.expires_at !== null && Date.parse(k.expires_at) <= now.getTime())) {
    return `${k.id} (${k.scope}) expired${k.licence_id ? ` with licence ${k.licence_id}` : ''} at ${k.expires_at}`;
  }
  if (k.status !== 'active') return `${k.id} (${k.scope}) is ${k.status}`;
  if (!planAllowsScope(account.plan, k.scope))
    return `${k.id} (${k.scope}) needs the ${SCOPE_PLAN[k.scope]} plan and the account is on ${account.plan}`;
  return null;
}

/**
 * The scope a webhook of `webhookScope` sends with now, given its account (null: gone) and all
 * the account's keys; or why it cannot send.
 *
 * @example webhookAccess('ent_api', { plan: 'pro' }, keys, now)
 *   // { scope: null, reason: 'no_active_key', detail: 'the account holds no active ent_api, ent_feed or custom key …' }
 */
export function webhookAccess(
  webhookScope: Scope,
  account: Pick<Account, 'plan'> | null,
  keys: readonly ApiKey[],
  now: Date,
): WebhookAccess {
  const capable = keys.filter((k) => CAPABILITIES[k.scope].webhooks);
  const usable = account ? capable.filter((k) => keyRefusal(k, account, now) === null) : [];
  if (usable.length > 0) {
    const best = usable.map((k) => k.scope).sort((a, b) => rank(b) - rank(a))[0]!;
    return { scope: rank(best) < rank(webhookScope) ? best : webhookScope, reason: null, detail: null };
  }
  const why = account
    ? capable
        .slice(-5)
        .reverse()
        .map((k) => keyRefusal(k, account, now)!)
    : [];
  const detail =
    `the account holds no active ${list(scopesWith('webhooks'))} key (commonwealth keys cannot receive webhooks)` +
    (why.length ? `: ${why.join('; ')}` : '') +
    '. Deliveries are held and nothing is sent; they resume, with the leads queued meanwhile, once the account holds such a key again';
  return { scope: null, reason: NO_ACTIVE_KEY, detail };
}

/** `webhookAccess` read from the state store for one account. */
export type AccessReader = (accountId: number, webhookScope: Scope, now: Date) => Promise<WebhookAccess>;

export function accessReader(store: Pick<StateStore, 'listKeys' | 'getAccountById'>): AccessReader {
  return async (accountId, webhookScope, now) => {
    const [account, keys] = await Promise.all([store.getAccountById(accountId), store.listKeys(accountId)]);
    return webhookAccess(webhookScope, account, keys, now);
  };
}
