/**
 * The webhook store on the SQLite state file (see `webhooks.ts` for the contract). Claims run in
 * IMMEDIATE transactions, so two processes sharing the file never claim the same delivery.
 */
import type Database from 'better-sqlite3';
import { SCOPES } from '../scopes.ts';
import type {
  Attempt,
  ClaimedDelivery,
  Delivery,
  DeliveryOutcome,
  NewDelivery,
  NewWebhook,
  Webhook,
  WebhookSecrets,
  WebhookStore,
} from './webhooks.ts';

/** Webhook migrations (versions 20..29 belong to webhooks), appended to sqlite.ts MIGRATIONS. */
export const WEBHOOK_SQLITE_MIGRATIONS: { version: number; sql: string }[] = [
  {
    version: 20,
    sql: `
      CREATE TABLE webhooks (
        id TEXT PRIMARY KEY,
        account_id INTEGER NOT NULL REFERENCES accounts(id),
        scope TEXT NOT NULL CHECK (scope IN (${SCOPES.map((s) => `'${s}'`).join(', ')})),
        url TEXT NOT NULL,
        filter TEXT NOT NULL,
        filters_json TEXT NOT NULL,
        description TEXT,
        status TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'disabled')),
        disabled_reason TEXT,
        secret TEXT NOT NULL,
        previous_secret TEXT,
        previous_secret_expires_at TEXT,
        secret_rotated_at TEXT,
        watermark_lead_id INTEGER NOT NULL,
        watermark_release TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
      CREATE INDEX webhooks_account ON webhooks(account_id);
      CREATE TABLE webhook_deliveries (
        id TEXT PRIMARY KEY,
        webhook_id TEXT NOT NULL REFERENCES webhooks(id),
        type TEXT NOT NULL,
        created_at TEXT NOT NULL,
        body TEXT NOT NULL,
        lead_count INTEGER NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('pending', 'delivering', 'delivered', 'dead')),
        attempts_total INTEGER NOT NULL DEFAULT 0,
        retry_base INTEGER NOT NULL DEFAULT 0,
        next_attempt_at TEXT,
        lease_owner TEXT,
        lease_until TEXT,
        last_attempt_at TEXT,
        last_status_code INTEGER,
        last_error TEXT,
        last_latency_ms INTEGER,
        delivered_at TEXT,
        dead_reason TEXT
      );
      CREATE INDEX webhook_deliveries_due ON webhook_deliveries(status, next_attempt_at);
      CREATE INDEX webhook_deliveries_webhook ON webhook_deliveries(webhook_id, created_at);
      CREATE TABLE webhook_attempts (
        delivery_id TEXT NOT NULL REFERENCES webhook_deliveries(id),
        attempt_no INTEGER NOT NULL,
        started_at TEXT NOT NULL,
        status_code INTEGER,
        latency_ms INTEGER,
        error TEXT,
        outcome TEXT NOT NULL CHECK (outcome IN ('sending', 'delivered', 'retry', 'dead', 'abandoned')),
        PRIMARY KEY (delivery_id, attempt_no)
      );
    `,
  },
  {
    // webhooks held while the account has no key that may receive them (api/webhooks/access.ts)
    version: 21,
    sql: `
      ALTER TABLE webhooks ADD COLUMN suspended_at TEXT;
      ALTER TABLE webhooks ADD COLUMN suspended_reason TEXT;
    `,
  },
];

type Row = Record<string, any>;

export const WEBHOOK_COLUMNS = `w.id, w.account_id, a.name AS account_name, w.scope, w.url, w.filter, w.filters_json, w.description, w.status,
  w.disabled_reason, w.watermark_lead_id, w.watermark_release, w.secret_rotated_at, w.previous_secret_expires_at, w.suspended_at, w.suspended_reason,
  w.created_at, w.updated_at`;
/** Delivery columns; the query joins its webhook as `w` (a pending delivery of a suspended webhook reads as `suspended`). */
export const DELIVERY_COLUMNS = `d.id, d.webhook_id, d.type, d.created_at, d.lead_count, d.status, d.attempts_total, d.retry_base, d.next_attempt_at,
  d.last_attempt_at, d.last_status_code, d.last_error, d.last_latency_ms, d.delivered_at, d.dead_reason,
  w.suspended_at AS webhook_suspended_at, w.suspended_reason AS webhook_suspended_reason`;
export const DELIVERY_FROM = `webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id`;
/** SQL conditions for a delivery status filter (`pending` and `suspended` split the stored `pending`). */
export const DELIVERY_STATUS_SQL: Record<string, string> = {
  pending: `d.status = 'pending' AND w.suspended_at IS NULL`,
  suspended: `d.status = 'pending' AND w.suspended_at IS NOT NULL`,
  delivering: `d.status = 'delivering'`,
  delivered: `d.status = 'delivered'`,
  dead: `d.status = 'dead'`,
};

/** A webhooks row (either backend, times already ISO strings) as a `Webhook`. */
export function toWebhook(r: Row): Webhook {
  return {
    id: r['id'],
    account_id: Number(r['account_id']),
    account_name: r['account_name'],
    scope: r['scope'],
    url: r['url'],
    filter: r['filter'],
    filters: JSON.parse(r['filters_json']) as Record<string, unknown>,
    description: r['description'] ?? null,
    status: r['status'],
    disabled_reason: r['disabled_reason'] ?? null,
    watermark_lead_id: Number(r['watermark_lead_id']),
    watermark_release: r['watermark_release'] ?? null,
    secret_rotated_at: r['secret_rotated_at'] ?? null,
    previous_secret_expires_at: r['previous_secret_expires_at'] ?? null,
    suspended_at: r['suspended_at'] ?? null,
    suspended_reason: r['suspended_reason'] ?? null,
    created_at: r['created_at'],
    updated_at: r['updated_at'],
  };
}

/** A webhook_deliveries row as a `Delivery` (attempts counted since enqueue or the last replay). */
export function toDelivery(r: Row): Delivery {
  const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));
  const held = r['status'] === 'pending' && (r['webhook_suspended_at'] ?? null) !== null;
  return {
    id: r['id'],
    webhook_id: r['webhook_id'],
    type: r['type'],
    created_at: r['created_at'],
    lead_count: Number(r['lead_count']),
    status: held ? 'suspended' : r['status'],
    attempts: Number(r['attempts_total']) - Number(r['retry_base']),
    next_attempt_at: r['next_attempt_at'] ?? null,
    last_attempt_at: r['last_attempt_at'] ?? null,
    last_status_code: num(r['last_status_code']),
    last_error: r['last_error'] ?? null,
    last_latency_ms: num(r['last_latency_ms']),
    delivered_at: r['delivered_at'] ?? null,
    dead_reason: r['dead_reason'] ?? null,
    suspended_reason: held ? (r['webhook_suspended_reason'] ?? null) : null,
  };
}

/** A claimed row (delivery columns + body, url, secrets, account and scope of its webhook) as a `ClaimedDelivery`. */
export function toClaimed(d: Row): ClaimedDelivery {
  return {
    ...toDelivery(d),
    account_id: Number(d['account_id']),
    scope: d['scope'],
    body: d['body'],
    url: d['url'],
    attempt_no: Number(d['attempts_total']),
    secrets: { current: d['secret'], previous: d['previous_secret'] ?? null, previous_expires_at: d['previous_secret_expires_at'] ?? null },
  };
}

export function toAttempt(r: Row): Attempt {
  return {
    delivery_id: r['delivery_id'],
    attempt_no: Number(r['attempt_no']),
    started_at: r['started_at'],
    status_code: r['status_code'] === null ? null : Number(r['status_code']),
    latency_ms: r['latency_ms'] === null ? null : Number(r['latency_ms']),
    error: r['error'] ?? null,
    outcome: r['outcome'],
  };
}

/** The webhook store on an open better-sqlite3 database (already migrated). */
export function sqliteWebhookStore(db: Database.Database, now: () => Date): WebhookStore {
  const iso = (d: Date): string => d.toISOString();
  const FROM = `webhooks w JOIN accounts a ON a.id = w.account_id`;
  const stmt = {
    insert: db.prepare(
      `INSERT INTO webhooks (id, account_id, scope, url, filter, filters_json, description, status, secret, watermark_lead_id, watermark_release, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, 'active', ?, ?, ?, ?, ?)`,
    ),
    byId: db.prepare(`SELECT ${WEBHOOK_COLUMNS} FROM ${FROM} WHERE w.id = ?`),
    secrets: db.prepare('SELECT secret, previous_secret, previous_secret_expires_at FROM webhooks WHERE id = ?'),
    setStatus: db.prepare('UPDATE webhooks SET status = ?, disabled_reason = ?, updated_at = ? WHERE id = ?'),
    rotate: db.prepare(
      `UPDATE webhooks SET previous_secret = secret, previous_secret_expires_at = ?, secret = ?, secret_rotated_at = ?, updated_at = ? WHERE id = ?`,
    ),
    advance: db.prepare('UPDATE webhooks SET watermark_lead_id = ?, watermark_release = ?, updated_at = ? WHERE id = ? AND watermark_lead_id = ?'),
    insertDelivery: db.prepare(
      `INSERT INTO webhook_deliveries (id, webhook_id, type, created_at, body, lead_count, status, next_attempt_at) VALUES (?, ?, ?, ?, ?, ?, 'pending', ?)`,
    ),
    delivery: db.prepare(`SELECT ${DELIVERY_COLUMNS} FROM ${DELIVERY_FROM} WHERE d.id = ?`),
    suspend: db.prepare('UPDATE webhooks SET suspended_at = COALESCE(suspended_at, ?), suspended_reason = ? WHERE id = ?'),
    resume: db.prepare('UPDATE webhooks SET suspended_at = NULL, suspended_reason = NULL WHERE id = ?'),
    attempts: db.prepare('SELECT * FROM webhook_attempts WHERE delivery_id = ? ORDER BY attempt_no'),
  };

  const claim = db.transaction((o: { now: Date; limit: number; leaseUntil: Date; owner: string; deliveryId?: string }): ClaimedDelivery[] => {
    const t = iso(o.now);
    const due = `((d.status = 'pending' AND d.next_attempt_at <= ?) OR (d.status = 'delivering' AND d.lease_until <= ?))`;
    const rows = (
      o.deliveryId !== undefined
        ? db.prepare(`SELECT d.id, d.status FROM webhook_deliveries d WHERE d.id = ? AND (d.status = 'pending' OR ${due})`).all(o.deliveryId, t, t)
        : db
            .prepare(
              `SELECT d.id, d.status FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
               WHERE w.status = 'active' AND w.suspended_at IS NULL AND ${due} ORDER BY d.next_attempt_at, d.rowid LIMIT ?`,
            )
            .all(t, t, o.limit)
    ) as { id: string; status: string }[];
    const out: ClaimedDelivery[] = [];
    for (const r of rows) {
      if (r.status === 'delivering') db.prepare(`UPDATE webhook_attempts SET outcome = 'abandoned' WHERE delivery_id = ? AND outcome = 'sending'`).run(r.id);
      db.prepare(
        `UPDATE webhook_deliveries SET status = 'delivering', lease_owner = ?, lease_until = ?, attempts_total = attempts_total + 1, last_attempt_at = ? WHERE id = ?`,
      ).run(o.owner, iso(o.leaseUntil), t, r.id);
      const d = db
        .prepare(
          `SELECT ${DELIVERY_COLUMNS}, d.body, w.url, w.secret, w.previous_secret, w.previous_secret_expires_at, w.account_id, w.scope
           FROM ${DELIVERY_FROM} WHERE d.id = ?`,
        )
        .get(r.id) as Row;
      db.prepare(`INSERT INTO webhook_attempts (delivery_id, attempt_no, started_at, outcome) VALUES (?, ?, ?, 'sending')`).run(r.id, d['attempts_total'], t);
      out.push(toClaimed(d));
    }
    return out;
  });

  const finish = db.transaction(
    (id: string, owner: string, a: { attempt_no: number; status_code: number | null; latency_ms: number | null; error: string | null }, o: DeliveryOutcome): boolean => {
      const t = iso(now());
      const outcome = o.status === 'delivered' ? 'delivered' : o.status === 'dead' ? 'dead' : 'retry';
      db.prepare(
        `UPDATE webhook_attempts SET status_code = ?, latency_ms = ?, error = ?, outcome = CASE WHEN outcome = 'sending' THEN ? ELSE outcome END WHERE delivery_id = ? AND attempt_no = ?`,
      ).run(
        a.status_code, a.latency_ms, a.error, outcome, id, a.attempt_no,
      );
      const r = db
        .prepare(
          `UPDATE webhook_deliveries SET status = ?, next_attempt_at = ?, delivered_at = ?, dead_reason = ?, last_status_code = ?, last_error = ?,
             last_latency_ms = ?, lease_owner = NULL, lease_until = NULL
           WHERE id = ? AND lease_owner = ? AND status = 'delivering'`,
        )
        .run(
          o.status,
          o.status === 'pending' ? iso(o.next_attempt_at) : null,
          o.status === 'delivered' ? t : null,
          o.status === 'dead' ? o.reason : null,
          a.status_code, a.error, a.latency_ms, id, owner,
        );
      return r.changes === 1;
    },
  );

  const release = db.transaction((id: string, owner: string, attemptNo: number): boolean => {
    const held = db.prepare(`SELECT 1 FROM webhook_deliveries WHERE id = ? AND lease_owner = ? AND status = 'delivering'`).get(id, owner);
    if (!held) return false;
    db.prepare(`DELETE FROM webhook_attempts WHERE delivery_id = ? AND attempt_no = ? AND outcome = 'sending'`).run(id, attemptNo);
    db.prepare(
      `UPDATE webhook_deliveries SET status = 'pending', lease_owner = NULL, lease_until = NULL, attempts_total = attempts_total - 1,
         last_attempt_at = (SELECT max(started_at) FROM webhook_attempts WHERE delivery_id = ?)
       WHERE id = ?`,
    ).run(id, id);
    return true;
  });

  const enqueue = db.transaction((webhookId: string, ds: NewDelivery[], wm?: { from: number; to: number; release: string | null }): boolean => {
    const t = iso(now());
    if (wm && stmt.advance.run(wm.to, wm.release, t, webhookId, wm.from).changes !== 1) return false;
    for (const d of ds) stmt.insertDelivery.run(d.id, webhookId, d.type, d.created_at, d.body, d.lead_count, t);
    return true;
  });

  const replay = db.transaction((webhookId: string, t: Date, ids?: string[]): string[] => {
    const dead = (db.prepare(`SELECT id FROM webhook_deliveries WHERE webhook_id = ? AND status = 'dead' ORDER BY rowid`).all(webhookId) as { id: string }[])
      .map((r) => r.id)
      .filter((id) => ids === undefined || ids.includes(id));
    const up = db.prepare(
      `UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = ?, retry_base = attempts_total, dead_reason = NULL WHERE id = ? AND status = 'dead'`,
    );
    for (const id of dead) up.run(iso(t), id);
    return dead;
  });

  const get = (id: string): Webhook | null => {
    const r = stmt.byId.get(id) as Row | undefined;
    return r ? toWebhook(r) : null;
  };

  return {
    async createWebhook(w: NewWebhook): Promise<Webhook> {
      const t = iso(now());
      stmt.insert.run(w.id, w.account_id, w.scope, w.url, w.filter, JSON.stringify(w.filters), w.description, w.secret, w.watermark_lead_id, w.watermark_release, t, t);
      return get(w.id)!;
    },
    async getWebhook(id) {
      return get(id);
    },
    async listWebhooks(f = {}) {
      const conds: string[] = [];
      const params: unknown[] = [];
      if (f.accountId !== undefined) (conds.push('w.account_id = ?'), params.push(f.accountId));
      if (f.status !== undefined) (conds.push('w.status = ?'), params.push(f.status));
      if (f.suspended !== undefined) conds.push(f.suspended ? 'w.suspended_at IS NOT NULL' : 'w.suspended_at IS NULL');
      const where = conds.length ? `WHERE ${conds.join(' AND ')}` : '';
      return (db.prepare(`SELECT ${WEBHOOK_COLUMNS} FROM ${FROM} ${where} ORDER BY w.created_at, w.id`).all(...params) as Row[]).map(toWebhook);
    },
    async setWebhookStatus(id, status, reason) {
      stmt.setStatus.run(status, status === 'disabled' ? reason : null, iso(now()), id);
      return get(id);
    },
    async setSuspension(id, reason, at) {
      if (reason === null) stmt.resume.run(id);
      else stmt.suspend.run(iso(at), reason, id);
      return get(id);
    },
    async releaseClaim(id, owner, attemptNo) {
      return release.immediate(id, owner, attemptNo);
    },
    async rotateSecret(id, secret, previousExpiresAt) {
      const t = iso(now());
      stmt.rotate.run(iso(previousExpiresAt), secret, t, t, id);
      return get(id);
    },
    async getSecrets(id): Promise<WebhookSecrets | null> {
      const r = stmt.secrets.get(id) as Row | undefined;
      return r ? { current: r['secret'], previous: r['previous_secret'] ?? null, previous_expires_at: r['previous_secret_expires_at'] ?? null } : null;
    },
    async enqueue(webhookId, deliveries, watermark) {
      return enqueue.immediate(webhookId, deliveries, watermark);
    },
    async claimDue(o) {
      return claim.immediate(o);
    },
    async finishAttempt(id, owner, attempt, outcome) {
      return finish.immediate(id, owner, attempt, outcome);
    },
    async getDelivery(id) {
      const r = stmt.delivery.get(id) as Row | undefined;
      return r ? toDelivery(r) : null;
    },
    async listDeliveries(webhookId, o = {}) {
      const status = o.status !== undefined ? `AND ${DELIVERY_STATUS_SQL[o.status]}` : '';
      return (
        db.prepare(`SELECT ${DELIVERY_COLUMNS} FROM ${DELIVERY_FROM} WHERE d.webhook_id = ? ${status} ORDER BY d.created_at DESC, d.rowid DESC LIMIT ?`).all(webhookId, o.limit ?? 100) as Row[]
      ).map(toDelivery);
    },
    async listAttempts(deliveryId) {
      return (stmt.attempts.all(deliveryId) as Row[]).map(toAttempt);
    },
    async replayDead(webhookId, t, ids) {
      return replay.immediate(webhookId, t, ids);
    },
  };
}
