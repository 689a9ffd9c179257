/** Scope capability checks of the routes: a refusal is a 403 `insufficient_scope` naming the scopes that may. */
import { ApiError } from '../http/errors.ts';
import { CAPABILITIES, scopesWith, type Scope } from './scopes.ts';

const WHAT = {
  geojsonFeeds: 'GeoJSON feeds and OGC API Features',
  enriched: 'enriched data',
  webhooks: 'webhooks',
} as const;

/** Throw 403 `insufficient_scope` unless `scope` has the capability `cap`. */
export function requireCapability(scope: Scope, cap: keyof typeof WHAT): void {
  if (CAPABILITIES[scope][cap]) return;
  const may = scopesWith(cap);
  const list = may.length > 1 ? `${may.slice(0, -1).join(', ')} or ${may.at(-1)}` : may.join('');
  throw new ApiError(
    403,
    'insufficient_scope',
    `${WHAT[cap]} need a key of scope ${list}; this key's scope is ${scope}`,
  );
}
