/**
 * Bearer-key authentication for everything under /v1 except the public docs paths.
 *
 * The presented key is hashed (SHA-256) and looked up by hash; the stored hash is then compared
 * with `crypto.timingSafeEqual`. Keys are never logged — only key ids. Successful lookups are
 * cached in memory for `cacheMs` (default 5 s) keyed by hash — but only while the store's
 * change stamp (`StateStore.keyChangeStamp`, api/state/revocations.ts) stays put: a key revoked
 * anywhere (the app, the CLI, another replica) or a plan change empties the cache, so the very
 * next request reads the key again and is refused at once. Unknown keys are not cached (a key
 * created a moment ago works at once, and random keys cannot fill the cache). A key of a scope
 * its account's plan no longer allows (a downgrade: ent_api needs premium) is refused with 403
 * `insufficient_plan`.
 */
import { timingSafeEqual } from 'node:crypto';
import type { Middleware } from 'koa';
import { ApiError } from '../http/errors.ts';
import { hashKey, parseBearer } from '../access/keys.ts';
import type { ApiKey, StateStore, StoredKey } from '../state/store-interface.ts';
import { UNLIMITED } from '../access/budget.ts';
import { planAllowsScope, SCOPE_PLAN } from '../access/licences.ts';

export interface AuthOptions {
  /** Paths (and everything under them) served without a key. */
  publicPaths: string[];
  /** How long a looked-up key is trusted before reading the store again. */
  cacheMs?: number;
  /** Upper bound of cached keys (the oldest are dropped). */
  cacheMax?: number;
  now?: () => number;
}

/** The 401 problem with its `WWW-Authenticate` challenge (RFC 6750). */
export function unauthorized(
  code: 'missing_key' | 'malformed_key' | 'unknown_key' | 'revoked_key' | 'expired_key',
  detail: string,
): ApiError {
  const challenge =
    code === 'missing_key'
      ? 'Bearer realm="leads"'
      : `Bearer realm="leads", error="invalid_token", error_description="${detail.replace(/"/g, "'")}"`;
  return new ApiError(401, code, detail, { headers: { 'WWW-Authenticate': challenge } });
}

/** The 403 for a valid key whose scope its account's plan no longer allows (e.g. ent_api after a downgrade from premium). */
function insufficientPlan(k: Pick<StoredKey, 'id' | 'scope' | 'account_name' | 'account_plan'>): ApiError {
  return new ApiError(
    403,
    'insufficient_plan',
    `API key ${k.id} is a ${k.scope} key, which needs the ${SCOPE_PLAN[k.scope] ?? 'a higher'} plan; account ${k.account_name} is on the ${k.account_plan} plan, ` +
      `so the key grants nothing until the plan is ${SCOPE_PLAN[k.scope] ?? 'upgraded'} again (commonwealth keys work on every plan)`,
  );
}

export function authMiddleware(
  store: Pick<StateStore, 'findKeyByHash' | 'keyChangeStamp'>,
  opts: AuthOptions,
): Middleware {
  const cacheMs = opts.cacheMs ?? 5000;
  const cacheMax = opts.cacheMax ?? 10_000;
  const now = opts.now ?? Date.now;
  const cache = new Map<string, { key: StoredKey; until: number }>();
  const isPublic = (path: string): boolean =>
    !path.startsWith('/v1') || opts.publicPaths.some((p) => path === p || path.startsWith(p + '/'));

  let stamp = NaN;
  const lookup = async (hash: string): Promise<StoredKey | null> => {
    const now_ = store.keyChangeStamp();
    if (now_ !== stamp) {
      cache.clear(); // a key was revoked or a plan changed somewhere: trust nothing read before
      stamp = now_;
    }
    const hit = cache.get(hash);
    if (hit && hit.until > now()) return hit.key;
    cache.delete(hash);
    const key = await store.findKeyByHash(hash);
    // cache it only if nothing changed while it was read (else the next request reads it again)
    if (key && cacheMs > 0 && store.keyChangeStamp() === stamp) {
      if (cache.size >= cacheMax) cache.delete(cache.keys().next().value!);
      cache.set(hash, { key, until: now() + cacheMs });
    }
    return key;
  };

  return async (ctx, next) => {
    if (isPublic(ctx.path)) return next();
    const token = parseBearer(ctx.get('Authorization'));
    if (token === 'missing') throw unauthorized('missing_key', 'send your API key as Authorization: Bearer <key>');
    if (token === 'malformed')
      throw unauthorized(
        'malformed_key',
        'the Authorization header must be Bearer followed by a key of the form lk_<scope>_<43 characters>',
      );
    const hash = hashKey(token);
    const stored = await lookup(hash);
    if (!stored || !timingSafeEqual(Buffer.from(stored.key_hash, 'hex'), Buffer.from(hash, 'hex'))) {
      throw unauthorized('unknown_key', 'this API key is not known');
    }
    // a licensed key expires with its licence (also while it sits in the cache)
    if (
      stored.status === 'expired' ||
      (stored.status === 'active' && stored.expires_at !== null && Date.parse(stored.expires_at) <= now())
    ) {
      throw unauthorized(
        'expired_key',
        `API key ${stored.id} expired with its organisation licence ${stored.licence_id ?? ''} on ${stored.expires_at}; ask your account manager to renew the licence`.replace(
          '  ',
          ' ',
        ),
      );
    }
    if (stored.status !== 'active') throw unauthorized('revoked_key', `API key ${stored.id} has been ${stored.status}`);
    // a key of a scope the account's plan no longer allows (after a downgrade) grants nothing
    if (!planAllowsScope(stored.account_plan, stored.scope)) throw insufficientPlan(stored);
    const { key_hash: _omit, ...key } = stored;
    ctx.state['key'] = key satisfies ApiKey;
    ctx.state['budget'] ??= UNLIMITED; // the access model replaces it with the key's daily budget
    await next();
  };
}
