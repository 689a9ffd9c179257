/**
 * The state store's schema migrations, written once for SQLite and PostgreSQL with Kysely's
 * schema builder; the few type differences come from the backend's `Dialect`
 * (api/state/backend.ts). Versions are recorded in `schema_migrations (version, applied_at)`,
 * as they always were, so a database made by an earlier release opens and is brought up to date.
 * A new version is appended, never edited; version ranges are reserved per feature (1–19 accounts,
 * keys and the access model; 20–29 webhooks; 30–39 the account area;
 * 40–49 saved searches and e-mail alerts), so a lower version may arrive after a higher one.
 */
import { sql, type Compilable, type Kysely, type SchemaModule } from 'kysely';
import { PLANS, SCOPES } from '../access/scopes.ts';
import type { Dialect, Op } from './backend.ts';
import type { Tables } from './tables.ts';

/** `column IN ('a', 'b', …)` for a CHECK constraint. */
const oneOf = (column: string, values: readonly string[]) =>
  sql`${sql.ref(column)} in (${sql.join(values.map((v) => sql.lit(v)))})`;

export interface Migration {
  version: number;
  /** The statements of the migration, in order. */
  up(s: SchemaModule, d: Dialect): Compilable[];
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1, // accounts and keys
    up: (s, d) => [
      s
        .createTable('accounts')
        .addColumn('id', 'integer', (c) => d.autoId(c))
        .addColumn('name', 'text', (c) => c.notNull().unique())
        .addColumn('plan', 'text', (c) => c.notNull().check(oneOf('plan', PLANS)))
        .addColumn('created_at', d.instantType, (c) => c.notNull()),
      s
        .createTable('api_keys')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id'))
        .addColumn('scope', 'text', (c) => c.notNull().check(oneOf('scope', SCOPES)))
        .addColumn('name', 'text')
        .addColumn('display_prefix', 'text', (c) => c.notNull())
        .addColumn('key_hash', 'text', (c) => c.notNull().unique())
        .addColumn('status', 'text', (c) =>
          c
            .notNull()
            .defaultTo('active')
            .check(oneOf('status', ['active', 'revoked', 'expired'])),
        )
        .addColumn('created_at', d.instantType, (c) => c.notNull())
        .addColumn('revoked_at', d.instantType),
      s.createIndex('api_keys_account').on('api_keys').column('account_id'),
    ],
  },
  {
    version: 2, // organisation licences and their claim links
    up: (s, d) => [
      s
        .createTable('licences')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id'))
        .addColumn('scope', 'text', (c) => c.notNull().check(oneOf('scope', ['ent_feed', 'custom'])))
        .addColumn('seats', 'integer', (c) => c.notNull().check(sql`seats > 0`))
        .addColumn('expires_at', d.instantType, (c) => c.notNull())
        .addColumn('created_at', d.instantType, (c) => c.notNull()),
      s.createIndex('licences_account').on('licences').column('account_id'),
      s.alterTable('api_keys').addColumn('licence_id', 'text', (c) => c.references('licences.id')),
      s.alterTable('api_keys').addColumn('expires_at', d.instantType),
      s.createIndex('api_keys_licence').on('api_keys').column('licence_id'),
      s
        .createTable('claim_links')
        .addColumn('token_hash', 'text', (c) => c.primaryKey())
        .addColumn('licence_id', 'text', (c) => c.notNull().references('licences.id'))
        .addColumn('expires_at', d.instantType, (c) => c.notNull())
        .addColumn('created_at', d.instantType, (c) => c.notNull())
        .addColumn('used_at', d.instantType)
        .addColumn('key_id', 'text', (c) => c.references('api_keys.id')),
    ],
  },
  {
    version: 3, // hourly request counters
    up: (s, d) => [
      d.keyedTable(
        s
          .createTable('rate_counters')
          .addColumn('key_id', 'text', (c) => c.notNull())
          .addColumn('window_start', d.bigintType, (c) => c.notNull())
          .addColumn('count', 'integer', (c) => c.notNull())
          .addPrimaryKeyConstraint('rate_counters_pkey', ['key_id', 'window_start']),
      ),
    ],
  },
  {
    version: 4, // daily row budgets
    up: (s, d) => [
      d.keyedTable(
        s
          .createTable('budget_counters')
          .addColumn('key_id', 'text', (c) => c.notNull())
          .addColumn('day', 'text', (c) => c.notNull())
          .addColumn('rows', d.bigintType, (c) => c.notNull())
          .addPrimaryKeyConstraint('budget_counters_pkey', ['key_id', 'day']),
      ),
    ],
  },
  {
    version: 5, // the usage ledger
    up: (s, d) => [
      d.keyedTable(
        s
          .createTable('usage_daily')
          .addColumn('key_id', 'text', (c) => c.notNull().references('api_keys.id'))
          .addColumn('day', 'text', (c) => c.notNull())
          .addColumn('requests', d.bigintType, (c) => c.notNull())
          .addColumn('errors', d.bigintType, (c) => c.notNull())
          .addColumn('rows', d.bigintType, (c) => c.notNull())
          .addPrimaryKeyConstraint('usage_daily_pkey', ['key_id', 'day']),
      ),
      d.keyedTable(
        s
          .createTable('usage_routes')
          .addColumn('key_id', 'text', (c) => c.notNull().references('api_keys.id'))
          .addColumn('day', 'text', (c) => c.notNull())
          .addColumn('route', 'text', (c) => c.notNull())
          .addColumn('requests', d.bigintType, (c) => c.notNull())
          .addColumn('errors', d.bigintType, (c) => c.notNull())
          .addColumn('rows', d.bigintType, (c) => c.notNull())
          .addPrimaryKeyConstraint('usage_routes_pkey', ['key_id', 'day', 'route']),
      ),
    ],
  },
  {
    version: 20, // webhooks, their delivery queue and attempt log
    up: (s, d) => [
      s
        .createTable('webhooks')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id'))
        .addColumn('scope', 'text', (c) => c.notNull().check(oneOf('scope', SCOPES)))
        .addColumn('url', 'text', (c) => c.notNull())
        .addColumn('filter', 'text', (c) => c.notNull())
        .addColumn('filters_json', 'text', (c) => c.notNull())
        .addColumn('description', 'text')
        .addColumn('status', 'text', (c) =>
          c
            .notNull()
            .defaultTo('active')
            .check(oneOf('status', ['active', 'disabled'])),
        )
        .addColumn('disabled_reason', 'text')
        .addColumn('secret', 'text', (c) => c.notNull())
        .addColumn('previous_secret', 'text')
        .addColumn('previous_secret_expires_at', d.instantType)
        .addColumn('secret_rotated_at', d.instantType)
        .addColumn('watermark_lead_id', d.bigintType, (c) => c.notNull())
        .addColumn('watermark_release', 'text')
        .addColumn('created_at', d.instantType, (c) => c.notNull())
        .addColumn('updated_at', d.instantType, (c) => c.notNull()),
      s.createIndex('webhooks_account').on('webhooks').column('account_id'),
      d.insertionOrder
        .addColumn(s.createTable('webhook_deliveries'))
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('webhook_id', 'text', (c) => c.notNull().references('webhooks.id'))
        .addColumn('type', 'text', (c) => c.notNull())
        .addColumn('created_at', d.instantType, (c) => c.notNull())
        .addColumn('body', 'text', (c) => c.notNull())
        .addColumn('lead_count', 'integer', (c) => c.notNull())
        .addColumn('status', 'text', (c) =>
          c.notNull().check(oneOf('status', ['pending', 'delivering', 'delivered', 'dead'])),
        )
        .addColumn('attempts_total', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('retry_base', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('next_attempt_at', d.instantType)
        .addColumn('lease_owner', 'text')
        .addColumn('lease_until', d.instantType)
        .addColumn('last_attempt_at', d.instantType)
        .addColumn('last_status_code', 'integer')
        .addColumn('last_error', 'text')
        .addColumn('last_latency_ms', 'integer')
        .addColumn('delivered_at', d.instantType)
        .addColumn('dead_reason', 'text'),
      s.createIndex('webhook_deliveries_due').on('webhook_deliveries').columns(['status', 'next_attempt_at']),
      s.createIndex('webhook_deliveries_webhook').on('webhook_deliveries').columns(['webhook_id', 'created_at']),
      s
        .createTable('webhook_attempts')
        .addColumn('delivery_id', 'text', (c) => c.notNull().references('webhook_deliveries.id'))
        .addColumn('attempt_no', 'integer', (c) => c.notNull())
        .addColumn('started_at', d.instantType, (c) => c.notNull())
        .addColumn('status_code', 'integer')
        .addColumn('latency_ms', 'integer')
        .addColumn('error', 'text')
        .addColumn('outcome', 'text', (c) =>
          c.notNull().check(oneOf('outcome', ['sending', 'delivered', 'retry', 'dead', 'abandoned'])),
        )
        .addPrimaryKeyConstraint('webhook_attempts_pkey', ['delivery_id', 'attempt_no']),
    ],
  },
  {
    version: 21, // webhooks held while the account has no key that may receive them (api/webhooks/send-access.ts)
    up: (s, d) => [
      s.alterTable('webhooks').addColumn('suspended_at', d.instantType),
      s.alterTable('webhooks').addColumn('suspended_reason', 'text'),
    ],
  },
  {
    version: 22, // webhook event types (api/webhooks/events.ts) and the event-log watermark they advance
    up: (s, d) => [
      s.alterTable('webhooks').addColumn('types', 'text', (c) => c.notNull().defaultTo('lead.new')),
      s.alterTable('webhooks').addColumn('watermark_event_id', d.bigintType, (c) => c.notNull().defaultTo(0)),
    ],
  },
  {
    version: 23, // Idempotency-Key on POST /v1/webhooks (api/state/idempotency.ts): the request's fingerprint and, once it succeeded, its answer, for 24 h
    up: (s, d) => [
      s
        .createTable('idempotency_keys')
        .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id'))
        .addColumn('idem_key', 'text', (c) => c.notNull())
        .addColumn('fingerprint', 'text', (c) => c.notNull())
        .addColumn('started_at', d.instantType, (c) => c.notNull())
        .addColumn('expires_at', d.instantType, (c) => c.notNull())
        .addColumn('status_code', 'integer')
        .addColumn('response_body', 'text')
        .addColumn('location', 'text')
        .addPrimaryKeyConstraint('idempotency_keys_pkey', ['account_id', 'idem_key']),
      s.createIndex('idempotency_keys_expires').on('idempotency_keys').column('expires_at'),
    ],
  },
  {
    version: 30, // the account area (api/state/app-store.ts): invitations, credentials, sessions, WebAuthn challenges, sign-in throttle, activity log
    up: (s, d) => [
      s
        .createTable('app_invitations')
        .addColumn('token_hash', 'text', (c) => c.primaryKey())
        .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id'))
        .addColumn('created_at', d.instantType, (c) => c.notNull())
        .addColumn('expires_at', d.instantType, (c) => c.notNull())
        .addColumn('used_at', d.instantType)
        .addColumn('revoked_at', d.instantType),
      s.createIndex('app_invitations_account').on('app_invitations').column('account_id'),
      s
        .createTable('app_credentials')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id'))
        .addColumn('kind', 'text', (c) => c.notNull().check(oneOf('kind', ['password', 'passkey'])))
        .addColumn('password_hash', 'text')
        .addColumn('passkey_id', 'text', (c) => c.unique())
        .addColumn('public_key', 'text')
        .addColumn('counter', d.bigintType, (c) => c.notNull().defaultTo(0))
        .addColumn('transports', 'text')
        .addColumn('created_at', d.instantType, (c) => c.notNull())
        .addColumn('last_used_at', d.instantType),
      s.createIndex('app_credentials_account').on('app_credentials').column('account_id'),
      s
        .createTable('app_sessions')
        .addColumn('id_hash', 'text', (c) => c.primaryKey())
        .addColumn('public_id', 'text', (c) => c.notNull().unique())
        .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id'))
        .addColumn('method', 'text', (c) => c.notNull().check(oneOf('method', ['password', 'passkey'])))
        .addColumn('created_at', d.instantType, (c) => c.notNull())
        .addColumn('last_seen_at', d.instantType, (c) => c.notNull())
        .addColumn('expires_at', d.instantType, (c) => c.notNull()),
      s.createIndex('app_sessions_account').on('app_sessions').column('account_id'),
      s
        .createTable('app_challenges')
        .addColumn('challenge', 'text', (c) => c.primaryKey())
        .addColumn('purpose', 'text', (c) => c.notNull().check(oneOf('purpose', ['register', 'authenticate'])))
        .addColumn('invitation_hash', 'text')
        .addColumn('expires_at', d.instantType, (c) => c.notNull()),
      d.keyedTable(
        s
          .createTable('app_signin_failures')
          .addColumn('key', 'text', (c) => c.notNull())
          .addColumn('window_start', d.bigintType, (c) => c.notNull())
          .addColumn('count', 'integer', (c) => c.notNull())
          .addPrimaryKeyConstraint('app_signin_failures_pkey', ['key', 'window_start']),
      ),
      s
        .createTable('app_activity')
        .addColumn('id', 'integer', (c) => d.autoId(c))
        .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id'))
        .addColumn('at', d.instantType, (c) => c.notNull())
        .addColumn('event', 'text', (c) => c.notNull())
        .addColumn('session_id', 'text')
        .addColumn('address', 'text')
        .addColumn('details_json', 'text', (c) => c.notNull()),
      s.createIndex('app_activity_account').on('app_activity').columns(['account_id', 'id']),
    ],
  },
  {
    version: 40, // saved searches and their e-mail alerts (api/state/search-store.ts, api/alerts/)
    up: (s, d) => [
      s
        .createTable('saved_searches')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('query', 'text', (c) => c.notNull())
        .addColumn('frequency', 'text', (c) =>
          c
            .notNull()
            .defaultTo('none')
            .check(oneOf('frequency', ['none', 'daily', 'weekly'])),
        )
        .addColumn('email', 'text')
        .addColumn('unsubscribe_key', 'text', (c) => c.notNull())
        .addColumn('watermark_lead_id', d.bigintType, (c) => c.notNull())
        .addColumn('watermark_event_id', d.bigintType, (c) => c.notNull())
        .addColumn('last_period', 'text')
        .addColumn('last_sent_at', d.instantType)
        .addColumn('created_at', d.instantType, (c) => c.notNull())
        .addColumn('updated_at', d.instantType, (c) => c.notNull()),
      s.createIndex('saved_searches_account').on('saved_searches').column('account_id'),
    ],
  },
];

/**
 * Apply every migration not yet recorded, in version order, in one transaction (run it `atomic`:
 * SQLite holds the write lock, PostgreSQL the prologue's advisory lock, so processes or replicas
 * opening together migrate once; the applied versions are read inside the lock).
 */
export function* migrate(db: Kysely<Tables>, d: Dialect, appliedAt: string): Op<void> {
  for (const q of d.migrationPrologue) yield q;
  yield db.schema
    .createTable('schema_migrations')
    .ifNotExists()
    .addColumn('version', 'integer', (c) => c.primaryKey())
    .addColumn('applied_at', d.instantType, (c) => c.notNull())
    .compile();
  const applied = new Set(
    (yield db.selectFrom('schema_migrations').select('version').compile()).map((r) => Number(r['version'])),
  );
  for (const m of [...MIGRATIONS].sort((a, b) => a.version - b.version)) {
    if (applied.has(m.version)) continue;
    for (const step of m.up(db.schema, d)) yield step.compile();
    yield db.insertInto('schema_migrations').values({ version: m.version, applied_at: appliedAt }).compile();
  }
}
