/**
 * Webhook event bodies. A `lead.new` event carries up to WEBHOOK_BATCH_MAX new leads that match
 * a webhook's saved filter, masked for the webhook's scope exactly as `GET /v1/leads` serves them:
 *
 *   { "id": "evt_…", "type": "lead.new", "created_at": "…Z", "webhook_id": "wh_…",
 *     "release": "20261116T060000Z", "batch": { "index": 1, "count": 3 },
 *     "leads": [ …lead records… ], "_meta": { "release", "scope", "masked" } }
 *
 * A larger set is split into `batch.count` events, each with its own id. `webhook.test` (sent by
 * `leads webhooks test` / `POST /v1/webhooks/{id}/test`) has the same shape with no leads.
 * The body is serialised once, at enqueue time, and stored: every redelivery sends the same bytes.
 */
import { randomBytes } from 'node:crypto';
import { maskedFor, maskRecord, responseMeta } from '../masking.ts';
import type { Scope } from '../scopes.ts';
import type { NewDelivery } from '../state/webhooks.ts';

export const LEAD_NEW = 'lead.new';
export const WEBHOOK_TEST = 'webhook.test';
export const EVENT_TYPES = [LEAD_NEW, WEBHOOK_TEST] as const;

/** A new event id: `evt_` + 24 hex (96 random bits). */
export function newEventId(): string {
  return 'evt_' + randomBytes(12).toString('hex');
}

/**
 * The `lead.new` events for `leads` (in the order given), `batchMax` leads each, masked for `scope`.
 *
 * @example leadNewEvents({ webhookId: 'wh_1', scope: 'ent_api', releaseId: 'r1', leads, batchMax: 100, createdAt: new Date() })
 */
export function leadNewEvents(o: {
  webhookId: string;
  scope: Scope;
  releaseId: string;
  leads: Record<string, unknown>[];
  batchMax: number;
  createdAt: Date;
  newId?: () => string;
}): NewDelivery[] {
  const count = Math.ceil(o.leads.length / o.batchMax);
  const created = o.createdAt.toISOString();
  const meta = responseMeta(o.releaseId, o.scope, maskedFor('lead', o.scope));
  const out: NewDelivery[] = [];
  for (let i = 0; i < count; i++) {
    const part = o.leads.slice(i * o.batchMax, (i + 1) * o.batchMax).map((l) => maskRecord('lead', l, o.scope).record);
    const id = (o.newId ?? newEventId)();
    const body = JSON.stringify({ id, type: LEAD_NEW, created_at: created, webhook_id: o.webhookId, release: o.releaseId, batch: { index: i + 1, count }, leads: part, _meta: meta });
    out.push({ id, type: LEAD_NEW, created_at: created, body, lead_count: part.length });
  }
  return out;
}

/** A `webhook.test` event (no leads) for checking a destination and its signature verification. */
export function testEvent(o: { webhookId: string; scope: Scope; releaseId: string | null; createdAt: Date }): NewDelivery {
  const id = newEventId();
  const created = o.createdAt.toISOString();
  const body = JSON.stringify({
    id,
    type: WEBHOOK_TEST,
    created_at: created,
    webhook_id: o.webhookId,
    release: o.releaseId,
    batch: { index: 1, count: 1 },
    leads: [],
    _meta: responseMeta(o.releaseId ?? '', o.scope, maskedFor('lead', o.scope)),
  });
  return { id, type: WEBHOOK_TEST, created_at: created, body, lead_count: 0 };
}
