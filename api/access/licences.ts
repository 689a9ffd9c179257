/**
 * Organisation licences (spec 2.1, 3.1, 5.4–5.5) and key-creation rules.
 *
 * Self-serve keys (`leads keys create`): `commonwealth` on any plan, `ent_api` only on the top
 * self-serve plan (`premium`), at most 10 active per account. `ent_feed` and `custom` keys exist
 * only under an organisation licence: the operator records the licence (scope, seats, last day)
 * and gets a one-time claim link; the organisation opens it and its own browser (or `leads
 * licences claim`) generates the key and sends only the key's SHA-256 hash. The service never
 * sees the key. Links are single use and expire; licensed keys count against the licence's seats
 * and expire with it.
 *
 * A claim link is `<PUBLIC_BASE_URL>/claim#<token>`: the token sits in the URL fragment, which
 * browsers never send to a server (nor in `Referer`), so it reaches no access log; the page posts
 * it in a JSON body. Only the token's SHA-256 hash is stored.
 */
import { randomBytes } from 'node:crypto';
import { sha256Hex } from '../http/sha256.ts';
import type { Plan, Scope } from './scopes.ts';
import type { ClaimLink, Licence, StateStore } from '../state/store-interface.ts';

/** Active self-serve keys an account may hold (spec 2.1). */
export const MAX_SELF_SERVE_KEYS = 10;
/** Scopes issued only under an organisation licence. */
export const LICENSED_SCOPES = ['ent_feed', 'custom'] as const satisfies readonly Scope[];
export type LicensedScope = (typeof LICENSED_SCOPES)[number];
/** Default lifetime of a claim link. */
export const CLAIM_LINK_DAYS = 7;

export const isLicensedScope = (s: string): s is LicensedScope => (LICENSED_SCOPES as readonly string[]).includes(s);

/** The plan a self-serve scope needs, where one is needed (`ent_api` needs `premium`). */
export const SCOPE_PLAN: Partial<Record<Scope, Plan>> = { ent_api: 'premium' };

/**
 * Whether an account on `plan` may use keys of `scope`. Checked when a key is created AND on
 * every use (HTTP requests, GIS tokens, webhook deliveries): after a downgrade the account's keys
 * of a scope its plan no longer allows stop granting it until the plan allows it again. Licensed
 * scopes (`ent_feed`, `custom`) depend on their licence, not the plan.
 * @example planAllowsScope('pro', 'ent_api') // false
 */
export function planAllowsScope(plan: Plan, scope: Scope): boolean {
  const needs = SCOPE_PLAN[scope];
  return needs === undefined || plan === needs;
}

/**
 * Why `plan` may not hold a self-serve key of `scope`, or null when it may.
 * @example selfServeRefusal('ent_api', 'pro') // "ent_api keys need the premium plan …"
 */
export function selfServeRefusal(scope: Scope, plan: Plan): string | null {
  if (isLicensedScope(scope)) {
    return `${scope} keys are issued only under an organisation licence: record one with 'leads licences create --org <account> --scope ${scope} --seats N --expires YYYY-MM-DD' and send the organisation its one-time claim link`;
  }
  if (!planAllowsScope(plan, scope)) {
    return `${scope} (enriched) keys need the ${SCOPE_PLAN[scope]} plan; account plan is ${plan} (commonwealth keys are available on every plan)`;
  }
  return null;
}

/**
 * The instant a licence whose last day is `lastDay` (YYYY-MM-DD) ends: 00:00 UTC the day after.
 * Null when `lastDay` is not a real calendar date.
 */
export function licenceEnd(lastDay: string): string | null {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(lastDay)) return null;
  const t = Date.parse(lastDay + 'T00:00:00Z');
  if (Number.isNaN(t) || new Date(t).toISOString().slice(0, 10) !== lastDay) return null;
  return new Date(t + 86_400_000).toISOString();
}

export const hashToken = (token: string): string => sha256Hex(token);

/** Claim tokens: 32 random bytes, base64url (43 characters). */
export const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

/** Build a claim link for `token` under the public base URL (ending in /v1). */
export const claimLink = (publicBaseUrl: string, token: string): string =>
  `${publicBaseUrl.replace(/\/+$/, '')}/claim#${token}`;

/**
 * Split a claim link into the API base (…/v1) and the token.
 * @example parseClaimLink('https://api.example.ie/v1/claim#abc…') // { base: 'https://api.example.ie/v1', token: 'abc…' }
 */
export function parseClaimLink(link: string): { base: string; token: string } | null {
  let url: URL;
  try {
    url = new URL(link);
  } catch {
    return null;
  }
  const token = url.hash.slice(1);
  if (!/\/claim$/.test(url.pathname) || !TOKEN_PATTERN.test(token) || !/^https?:$/.test(url.protocol)) return null;
  return { base: `${url.origin}${url.pathname.replace(/\/claim$/, '')}`, token };
}

/**
 * Issue a one-time claim link for a licence: a fresh token, stored only as its hash, valid for
 * `days` (never past the licence's end).
 */
export async function issueClaimLink(
  store: Pick<StateStore, 'createClaimLink'>,
  licence: Licence,
  publicBaseUrl: string,
  opts: { now: Date; days?: number },
): Promise<{ url: string; link: ClaimLink }> {
  const token = randomBytes(32).toString('base64url');
  const until = Math.min(
    opts.now.getTime() + (opts.days ?? CLAIM_LINK_DAYS) * 86_400_000,
    Date.parse(licence.expires_at),
  );
  const link = await store.createClaimLink({
    token_hash: hashToken(token),
    licence_id: licence.id,
    expires_at: new Date(until).toISOString(),
  });
  return { url: claimLink(publicBaseUrl, token), link };
}

export const newLicenceId = (): string => 'lic_' + randomBytes(8).toString('hex');
