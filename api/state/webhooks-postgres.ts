/**
 * The webhook store on PostgreSQL (see `webhooks.ts` for the contract), shared by several API
 * replicas: claims take the due rows with `SELECT … FOR UPDATE SKIP LOCKED` inside a
 * transaction, so concurrent dispatchers each get different deliveries and none waits on another.
 */
import type pg from 'pg';
import { SCOPES } from '../scopes.ts';
import { DELIVERY_COLUMNS, DELIVERY_FROM, DELIVERY_STATUS_SQL, toAttempt, toClaimed, toDelivery, toWebhook, WEBHOOK_COLUMNS } from './webhooks-sqlite.ts';
import type { DeliveryOutcome, NewWebhook, Webhook, WebhookSecrets, WebhookStore } from './webhooks.ts';

/** Webhook migrations, version for version the same as WEBHOOK_SQLITE_MIGRATIONS (20..29). */
export const WEBHOOK_PG_MIGRATIONS: { version: number; sql: string }[] = [
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
        previous_secret_expires_at TIMESTAMPTZ,
        secret_rotated_at TIMESTAMPTZ,
        watermark_lead_id BIGINT NOT NULL,
        watermark_release TEXT,
        created_at TIMESTAMPTZ NOT NULL,
        updated_at TIMESTAMPTZ NOT NULL
      );
      CREATE INDEX webhooks_account ON webhooks(account_id);
      CREATE TABLE webhook_deliveries (
        seq BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE,
        id TEXT PRIMARY KEY,
        webhook_id TEXT NOT NULL REFERENCES webhooks(id),
        type TEXT NOT NULL,
        created_at TIMESTAMPTZ NOT NULL,
        body TEXT NOT NULL,
        lead_count INTEGER NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('pending', 'delivering', 'delivered', 'dead')),
        attempts_total INTEGER NOT NULL DEFAULT 0,
        retry_base INTEGER NOT NULL DEFAULT 0,
        next_attempt_at TIMESTAMPTZ,
        lease_owner TEXT,
        lease_until TIMESTAMPTZ,
        last_attempt_at TIMESTAMPTZ,
        last_status_code INTEGER,
        last_error TEXT,
        last_latency_ms INTEGER,
        delivered_at TIMESTAMPTZ,
        dead_reason TEXT
      );
      CREATE INDEX webhook_deliveries_due ON webhook_deliveries(status, next_attempt_at);
      CREATE INDEX webhook_deliveries_webhook ON webhook_deliveries(webhook_id, created_at);
      CREATE TABLE webhook_attempts (
        delivery_id TEXT NOT NULL REFERENCES webhook_deliveries(id),
        attempt_no INTEGER NOT NULL,
        started_at TIMESTAMPTZ NOT NULL,
        status_code INTEGER,
        latency_ms INTEGER,
        error TEXT,
        outcome TEXT NOT NULL CHECK (outcome IN ('sending', 'delivered', 'retry', 'dead', 'abandoned')),
        PRIMARY KEY (delivery_id, attempt_no)
      );
    `,
  },
  {
    version: 21,
    sql: `
      ALTER TABLE webhooks ADD COLUMN suspended_at TIMESTAMPTZ, ADD COLUMN suspended_reason TEXT;
    `,
  },
];

type Row = Record<string, any>;

/** TIMESTAMPTZ values (Date) as ISO strings, like the SQLite store returns them. */
function isoRow(r: Row): Row {
  const out: Row = {};
  for (const [k, v] of Object.entries(r)) out[k] = v instanceof Date ? v.toISOString() : v;
  return out;
}

/** The webhook store on a pg pool whose search_path is the store's schema; waits for `ready` first. */
export function postgresWebhookStore(pool: pg.Pool, ready: Promise<void>, now: () => Date): WebhookStore {
  const FROM = `webhooks w JOIN accounts a ON a.id = w.account_id`;
  const query = async (sql: string, params: unknown[] = []): Promise<Row[]> => {
    await ready;
    return (await pool.query(sql, params)).rows.map(isoRow);
  };
  /** Run `fn` in one transaction on one connection. */
  const tx = async <T>(fn: (q: (sql: string, params?: unknown[]) => Promise<Row[]>) => Promise<T>): Promise<T> => {
    await ready;
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      const out = await fn(async (sql, params = []) => (await client.query(sql, params)).rows.map(isoRow));
      await client.query('COMMIT');
      return out;
    } catch (e) {
      await client.query('ROLLBACK').catch(() => {});
      throw e;
    } finally {
      client.release();
    }
  };
  const get = async (id: string): Promise<Webhook | null> => {
    const [r] = await query(`SELECT ${WEBHOOK_COLUMNS} FROM ${FROM} WHERE w.id = $1`, [id]);
    return r ? toWebhook(r) : null;
  };

  return {
    async createWebhook(w: NewWebhook) {
      const t = now();
      await query(
        `INSERT INTO webhooks (id, account_id, scope, url, filter, filters_json, description, status, secret, watermark_lead_id, watermark_release, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, 'active', $8, $9, $10, $11, $11)`,
        [w.id, w.account_id, w.scope, w.url, w.filter, JSON.stringify(w.filters), w.description, w.secret, w.watermark_lead_id, w.watermark_release, t],
      );
      return (await get(w.id))!;
    },
    getWebhook: get,
    async listWebhooks(f = {}) {
      const conds: string[] = [];
      const params: unknown[] = [];
      if (f.accountId !== undefined) (params.push(f.accountId), conds.push(`w.account_id = $${params.length}`));
      if (f.status !== undefined) (params.push(f.status), conds.push(`w.status = $${params.length}`));
      if (f.suspended !== undefined) conds.push(f.suspended ? 'w.suspended_at IS NOT NULL' : 'w.suspended_at IS NULL');
      const where = conds.length ? `WHERE ${conds.join(' AND ')}` : '';
      return (await query(`SELECT ${WEBHOOK_COLUMNS} FROM ${FROM} ${where} ORDER BY w.created_at, w.id COLLATE "C"`, params)).map(toWebhook);
    },
    async setWebhookStatus(id, status, reason) {
      await query('UPDATE webhooks SET status = $1, disabled_reason = $2, updated_at = $3 WHERE id = $4', [status, status === 'disabled' ? reason : null, now(), id]);
      return get(id);
    },
    async setSuspension(id, reason, at) {
      if (reason === null) await query('UPDATE webhooks SET suspended_at = NULL, suspended_reason = NULL WHERE id = $1', [id]);
      else await query('UPDATE webhooks SET suspended_at = COALESCE(suspended_at, $1), suspended_reason = $2 WHERE id = $3', [at, reason, id]);
      return get(id);
    },
    async releaseClaim(id, owner, attemptNo) {
      return tx(async (q) => {
        const held = await q(`SELECT id FROM webhook_deliveries WHERE id = $1 AND lease_owner = $2 AND status = 'delivering' FOR UPDATE`, [id, owner]);
        if (held.length === 0) return false;
        await q(`DELETE FROM webhook_attempts WHERE delivery_id = $1 AND attempt_no = $2 AND outcome = 'sending'`, [id, attemptNo]);
        await q(
          `UPDATE webhook_deliveries SET status = 'pending', lease_owner = NULL, lease_until = NULL, attempts_total = attempts_total - 1,
             last_attempt_at = (SELECT max(started_at) FROM webhook_attempts WHERE delivery_id = $1)
           WHERE id = $1`,
          [id],
        );
        return true;
      });
    },
    async rotateSecret(id, secret, previousExpiresAt) {
      const t = now();
      await query(
        'UPDATE webhooks SET previous_secret = secret, previous_secret_expires_at = $1, secret = $2, secret_rotated_at = $3, updated_at = $3 WHERE id = $4',
        [previousExpiresAt, secret, t, id],
      );
      return get(id);
    },
    async getSecrets(id): Promise<WebhookSecrets | null> {
      const [r] = await query('SELECT secret, previous_secret, previous_secret_expires_at FROM webhooks WHERE id = $1', [id]);
      return r ? { current: r['secret'], previous: r['previous_secret'] ?? null, previous_expires_at: r['previous_secret_expires_at'] ?? null } : null;
    },
    async enqueue(webhookId, deliveries, wm) {
      return tx(async (q) => {
        const t = now();
        if (wm) {
          const moved = await q('UPDATE webhooks SET watermark_lead_id = $1, watermark_release = $2, updated_at = $3 WHERE id = $4 AND watermark_lead_id = $5 RETURNING id', [
            wm.to, wm.release, t, webhookId, wm.from,
          ]);
          if (moved.length !== 1) return false;
        }
        if (deliveries.length > 0) {
          await q(
            `INSERT INTO webhook_deliveries (id, webhook_id, type, created_at, body, lead_count, status, next_attempt_at)
             SELECT id, $1, type, created_at, body, lead_count, 'pending', $2
             FROM unnest($3::text[], $4::text[], $5::timestamptz[], $6::text[], $7::int[]) WITH ORDINALITY AS x(id, type, created_at, body, lead_count, n)
             ORDER BY n`,
            [webhookId, t, deliveries.map((d) => d.id), deliveries.map((d) => d.type), deliveries.map((d) => d.created_at), deliveries.map((d) => d.body), deliveries.map((d) => d.lead_count)],
          );
        }
        return true;
      });
    },
    async claimDue(o) {
      return tx(async (q) => {
        const due = `((d.status = 'pending' AND d.next_attempt_at <= $1) OR (d.status = 'delivering' AND d.lease_until <= $1))`;
        const picked =
          o.deliveryId !== undefined
            ? await q(`SELECT d.id, d.status FROM webhook_deliveries d WHERE d.id = $2 AND (d.status = 'pending' OR ${due}) FOR UPDATE SKIP LOCKED`, [o.now, o.deliveryId])
            : await q(
                `SELECT d.id, d.status FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
                 WHERE w.status = 'active' AND w.suspended_at IS NULL AND ${due} ORDER BY d.next_attempt_at, d.seq LIMIT $2 FOR UPDATE OF d SKIP LOCKED`,
                [o.now, o.limit],
              );
        if (picked.length === 0) return [];
        const ids = picked.map((r) => r['id'] as string);
        const stale = picked.filter((r) => r['status'] === 'delivering').map((r) => r['id'] as string);
        if (stale.length) await q(`UPDATE webhook_attempts SET outcome = 'abandoned' WHERE delivery_id = ANY($1) AND outcome = 'sending'`, [stale]);
        await q(
          `UPDATE webhook_deliveries SET status = 'delivering', lease_owner = $1, lease_until = $2, attempts_total = attempts_total + 1, last_attempt_at = $3 WHERE id = ANY($4)`,
          [o.owner, o.leaseUntil, o.now, ids],
        );
        await q(
          `INSERT INTO webhook_attempts (delivery_id, attempt_no, started_at, outcome) SELECT id, attempts_total, $1, 'sending' FROM webhook_deliveries WHERE id = ANY($2)`,
          [o.now, ids],
        );
        const rows = await q(
          `SELECT ${DELIVERY_COLUMNS}, d.body, w.url, w.secret, w.previous_secret, w.previous_secret_expires_at, w.account_id, w.scope
           FROM ${DELIVERY_FROM} WHERE d.id = ANY($1) ORDER BY d.next_attempt_at, d.seq`,
          [ids],
        );
        return rows.map(toClaimed);
      });
    },
    async finishAttempt(id, owner, a, o: DeliveryOutcome) {
      return tx(async (q) => {
        const t = now();
        const outcome = o.status === 'delivered' ? 'delivered' : o.status === 'dead' ? 'dead' : 'retry';
        await q(`UPDATE webhook_attempts SET status_code = $1, latency_ms = $2, error = $3, outcome = CASE WHEN outcome = 'sending' THEN $4 ELSE outcome END
           WHERE delivery_id = $5 AND attempt_no = $6`, [
          a.status_code, a.latency_ms, a.error, outcome, id, a.attempt_no,
        ]);
        const r = await q(
          `UPDATE webhook_deliveries SET status = $1, next_attempt_at = $2, delivered_at = $3, dead_reason = $4, last_status_code = $5, last_error = $6,
             last_latency_ms = $7, lease_owner = NULL, lease_until = NULL
           WHERE id = $8 AND lease_owner = $9 AND status = 'delivering' RETURNING id`,
          [
            o.status,
            o.status === 'pending' ? o.next_attempt_at : null,
            o.status === 'delivered' ? t : null,
            o.status === 'dead' ? o.reason : null,
            a.status_code, a.error, a.latency_ms, id, owner,
          ],
        );
        return r.length === 1;
      });
    },
    async getDelivery(id) {
      const [r] = await query(`SELECT ${DELIVERY_COLUMNS} FROM ${DELIVERY_FROM} WHERE d.id = $1`, [id]);
      return r ? toDelivery(r) : null;
    },
    async listDeliveries(webhookId, o = {}) {
      const params: unknown[] = [webhookId];
      let status = '';
      if (o.status !== undefined) status = `AND ${DELIVERY_STATUS_SQL[o.status]}`;
      params.push(o.limit ?? 100);
      return (
        await query(`SELECT ${DELIVERY_COLUMNS} FROM ${DELIVERY_FROM} WHERE d.webhook_id = $1 ${status} ORDER BY d.created_at DESC, d.seq DESC LIMIT $${params.length}`, params)
      ).map(toDelivery);
    },
    async listAttempts(deliveryId) {
      return (await query('SELECT * FROM webhook_attempts WHERE delivery_id = $1 ORDER BY attempt_no', [deliveryId])).map(toAttempt);
    },
    async replayDead(webhookId, t, ids) {
      return tx(async (q) => {
        const dead = (await q(`SELECT id FROM webhook_deliveries WHERE webhook_id = $1 AND status = 'dead' ORDER BY seq FOR UPDATE`, [webhookId]))
          .map((r) => r['id'] as string)
          .filter((id) => ids === undefined || ids.includes(id));
        if (dead.length) {
          await q(`UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = $1, retry_base = attempts_total, dead_reason = NULL WHERE id = ANY($2)`, [t, dead]);
        }
        return dead;
      });
    },
  };
}
