/**
 * An `ApiKey` record as the state store returns it, for tests of the rules that read keys (who may
 * receive a webhook or an alert, with which scope): active, no licence, no expiry, account 1
 * (`acme`), a fresh id each call — `over` changes any field.
 *
 * @example apiKey('ent_api', { status: 'revoked', revoked_at: '2026-11-20T00:00:00Z' })
 */
import type { Scope } from '../../api/access/scopes.ts';
import type { ApiKey } from '../../api/state/store-interface.ts';

let made = 0;

export function apiKey(scope: Scope, over: Partial<ApiKey> = {}): ApiKey {
  return {
    id: `key_${String(++made).padStart(16, '0')}`,
    account_id: 1,
    account_name: 'acme',
    scope,
    name: null,
    display_prefix: 'lk_',
    status: 'active',
    created_at: '2026-01-01T00:00:00.000Z',
    revoked_at: null,
    licence_id: null,
    expires_at: null,
    ...over,
  };
}
