/**
 * The access an alert e-mail is sent with, decided when it is sent — the rule webhooks follow
 * (api/webhooks/send-access.ts), through the same per-key check (`keyRefusal`): a key grants its
 * scope only while it is active (not revoked), not expired (a licensed key ends with its licence)
 * and of a scope the account's plan allows now (ent_api needs premium).
 *
 * An alert is masked for the best scope among the account's keys that grant theirs — exactly as
 * that key would read the leads through the API (enriched fields only to enriched scopes). Any
 * scope may receive alerts (commonwealth too: e-mail is not a webhook). When no key grants
 * anything — every key revoked, the licence expired, or the plan downgraded below every key's
 * scope — no alert is sent, and the search's marks stay where they were: the next alert after
 * access returns covers the leads since the last one sent.
 */
import { SCOPES, type Scope } from '../access/scopes.ts';
import type { Account, ApiKey } from '../state/store-interface.ts';
import { keyRefusal } from '../webhooks/send-access.ts';
import { isAppKey } from '../app-area/account-service.ts';

export type AlertAccess = { scope: Scope; detail: null } | { scope: null; detail: string };

/**
 * The scope an alert of `account` is masked for at `now`, or why none is sent.
 *
 * @example alertAccess({ plan: 'pro' }, [entApiKey], now) // { scope: null, detail: 'no key of the account grants access: key_… (ent_api) needs the premium plan …' }
 */
export function alertAccess(account: Pick<Account, 'plan'> | null, keys: readonly ApiKey[], now: Date): AlertAccess {
  if (!account) return { scope: null, detail: 'the account no longer exists' };
  const usable = keys.filter((k) => keyRefusal(k, account, now) === null).map((k) => k.scope);
  if (usable.length > 0) {
    const best = usable.sort((a, b) => SCOPES.indexOf(b) - SCOPES.indexOf(a))[0]!;
    return { scope: best, detail: null };
  }
  const why = keys
    .filter((k) => !isAppKey(k.id)) // the app's internal ledger entry is never a key (always revoked)
    .slice(-5)
    .reverse()
    .map((k) => keyRefusal(k, account, now)!);
  return {
    scope: null,
    detail: `no key of the account grants access${why.length ? `: ${why.join('; ')}` : ' (it holds none)'}`,
  };
}
