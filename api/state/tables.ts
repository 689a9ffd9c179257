/**
 * The state store's tables as Kysely sees them: one declaration, used to type every query and
 * migration (api/state/migrations.ts) on both backends. Instants are ISO-8601 strings on the way
 * in and out (SQLite stores them as TEXT, PostgreSQL as TIMESTAMPTZ; api/state/postgres.ts reads
 * them back as ISO strings).
 */
import type { Generated } from 'kysely';
import type { Plan, Scope } from '../access/scopes.ts';

/** The stored vocabularies (the interfaces of store-interface.ts, webhook-interface.ts and app-store.ts use them). */
export type KeyStatus = 'active' | 'revoked' | 'expired';
export type WebhookStatus = 'active' | 'disabled';
export type AttemptOutcome = 'sending' | 'delivered' | 'retry' | 'dead' | 'abandoned';
export type CredentialKind = 'password' | 'passkey';
export type ChallengePurpose = 'register' | 'authenticate';
export type AlertFrequency = 'none' | 'daily' | 'weekly';

type Instant = string;

export interface Tables {
  schema_migrations: { version: number; applied_at: Instant };
  accounts: { id: Generated<number>; name: string; plan: Plan; created_at: Instant };
  api_keys: {
    id: string;
    account_id: number;
    scope: Scope;
    name: string | null;
    display_prefix: string;
    key_hash: string;
    status: KeyStatus;
    created_at: Instant;
    revoked_at: Instant | null;
    licence_id: string | null;
    expires_at: Instant | null;
  };
  licences: { id: string; account_id: number; scope: Scope; seats: number; expires_at: Instant; created_at: Instant };
  claim_links: {
    token_hash: string;
    licence_id: string;
    expires_at: Instant;
    created_at: Instant;
    used_at: Instant | null;
    key_id: string | null;
  };
  rate_counters: { key_id: string; window_start: number; count: number };
  budget_counters: { key_id: string; day: string; rows: number };
  usage_daily: { key_id: string; day: string; requests: number; errors: number; rows: number };
  usage_routes: { key_id: string; day: string; route: string; requests: number; errors: number; rows: number };
  webhooks: {
    id: string;
    account_id: number;
    scope: Scope;
    url: string;
    filter: string;
    filters_json: string;
    description: string | null;
    status: WebhookStatus;
    disabled_reason: string | null;
    secret: string;
    previous_secret: string | null;
    previous_secret_expires_at: Instant | null;
    secret_rotated_at: Instant | null;
    watermark_lead_id: number;
    watermark_release: string | null;
    suspended_at: Instant | null;
    suspended_reason: string | null;
    /** Comma-separated webhook event types (migration 22; `lead.new` for webhooks made before). */
    types: Generated<string>;
    watermark_event_id: Generated<number>;
    created_at: Instant;
    updated_at: Instant;
  };
  webhook_deliveries: {
    id: string;
    webhook_id: string;
    type: string;
    created_at: Instant;
    body: string;
    lead_count: number;
    status: 'pending' | 'delivering' | 'delivered' | 'dead';
    attempts_total: Generated<number>;
    retry_base: Generated<number>;
    next_attempt_at: Instant | null;
    lease_owner: string | null;
    lease_until: Instant | null;
    last_attempt_at: Instant | null;
    last_status_code: number | null;
    last_error: string | null;
    last_latency_ms: number | null;
    delivered_at: Instant | null;
    dead_reason: string | null;
  };
  webhook_attempts: {
    delivery_id: string;
    attempt_no: number;
    started_at: Instant;
    status_code: number | null;
    latency_ms: number | null;
    error: string | null;
    outcome: AttemptOutcome;
  };
  /** Idempotency keys of POST /v1/webhooks (migration 23; api/state/idempotency.ts). */
  idempotency_keys: {
    account_id: number;
    idem_key: string;
    fingerprint: string;
    started_at: Instant;
    expires_at: Instant;
    status_code: number | null;
    response_body: string | null;
    location: string | null;
  };
  // — the account area (api/state/app-store.ts, migrations 30–39) —
  app_invitations: {
    token_hash: string;
    account_id: number;
    created_at: Instant;
    expires_at: Instant;
    used_at: Instant | null;
    revoked_at: Instant | null;
  };
  app_credentials: {
    id: string;
    account_id: number;
    kind: CredentialKind;
    password_hash: string | null;
    passkey_id: string | null;
    public_key: string | null;
    counter: number;
    transports: string | null;
    created_at: Instant;
    last_used_at: Instant | null;
  };
  app_sessions: {
    id_hash: string;
    public_id: string;
    account_id: number;
    method: CredentialKind;
    created_at: Instant;
    last_seen_at: Instant;
    expires_at: Instant;
  };
  app_challenges: { challenge: string; purpose: ChallengePurpose; invitation_hash: string | null; expires_at: Instant };
  app_signin_failures: { key: string; window_start: number; count: number };
  app_activity: {
    id: Generated<number>;
    account_id: number;
    at: Instant;
    event: string;
    session_id: string | null;
    address: string | null;
    details_json: string;
  };
  // — saved searches and e-mail alerts (api/state/search-store.ts, migrations 40–49) —
  saved_searches: {
    id: string;
    account_id: number;
    name: string;
    query: string;
    frequency: AlertFrequency;
    email: string | null;
    unsubscribe_key: string;
    watermark_lead_id: number;
    watermark_event_id: number;
    last_period: string | null;
    last_sent_at: Instant | null;
    created_at: Instant;
    updated_at: Instant;
  };
}
