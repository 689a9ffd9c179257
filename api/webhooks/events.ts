/**
 * Webhook event bodies. A `lead.new` event carries up to WEBHOOK_BATCH_MAX new leads that match
 * a webhook's saved filter, masked for the scope the webhook sends with **at the moment of each
 * attempt** (api/webhooks/access.ts) exactly as `GET /v1/leads` serves them to that scope:
 *
 *   { "id": "evt_…", "type": "lead.new", "created_at": "…Z", "webhook_id": "wh_…",
 *     "release": "20261116T060000Z", "batch": { "index": 1, "count": 3 },
 *     "leads": [ …lead records… ], "_meta": { "release", "scope", "masked" } }
 *
 * A larger set is split into `batch.count` events, each with its own id. `webhook.test` (sent by
 * `leads webhooks test` / `POST /v1/webhooks/{id}/test`) has the same shape with no leads.
 * What is queued is the event without `_meta` and with the leads as the release has them;
 * `eventBodyFor` builds the bytes of each attempt from it with `maskRecord` / `responseMeta`
 * (api/masking.ts). Serialisation is deterministic, so every redelivery sends the same bytes
 * while the scope is the same.
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
 * The `lead.new` events for `leads` (in the order given), `batchMax` leads each, to be queued:
 * unmasked and without `_meta` (both are added at send time by `eventBodyFor`).
 *
 * @example leadNewEvents({ webhookId: 'wh_1', releaseId: 'r1', leads, batchMax: 100, createdAt: new Date() })
 */
export function leadNewEvents(o: {
  webhookId: string;
  releaseId: string;
  leads: Record<string, unknown>[];
  batchMax: number;
  createdAt: Date;
  newId?: () => string;
}): NewDelivery[] {
  const count = Math.ceil(o.leads.length / o.batchMax);
  const created = o.createdAt.toISOString();
  const out: NewDelivery[] = [];
  for (let i = 0; i < count; i++) {
    const part = o.leads.slice(i * o.batchMax, (i + 1) * o.batchMax);
    const id = (o.newId ?? newEventId)();
    const body = JSON.stringify({ id, type: LEAD_NEW, created_at: created, webhook_id: o.webhookId, release: o.releaseId, batch: { index: i + 1, count }, leads: part });
    out.push({ id, type: LEAD_NEW, created_at: created, body, lead_count: part.length });
  }
  return out;
}

/** A `webhook.test` event (no leads) for checking a destination and its signature verification. */
export function testEvent(o: { webhookId: string; releaseId: string | null; createdAt: Date }): NewDelivery {
  const id = newEventId();
  const created = o.createdAt.toISOString();
  const body = JSON.stringify({ id, type: WEBHOOK_TEST, created_at: created, webhook_id: o.webhookId, release: o.releaseId, batch: { index: 1, count: 1 }, leads: [] });
  return { id, type: WEBHOOK_TEST, created_at: created, body, lead_count: 0 };
}

/**
 * The bytes to send for a queued event, for `scope` (the webhook's scope at send time): every
 * lead masked with `maskRecord`, `_meta` from `responseMeta` (after `leads`, replacing any
 * `_meta` an older queue entry carries). Masking only ever removes, so an entry queued masked
 * for another scope is never unmasked.
 *
 * @example eventBodyFor(delivery.body, 'ent_api') // '{"id":"evt_…",…,"leads":[…],"_meta":{"release":"…","scope":"ent_api","masked":[]}}'
 */
export function eventBodyFor(stored: string, scope: Scope): string {
  const ev = JSON.parse(stored) as Record<string, unknown> & { leads?: Record<string, unknown>[]; release?: string | null };
  const { _meta: _old, ...rest } = ev;
  const leads = (rest.leads ?? []).map((l) => maskRecord('lead', l, scope).record);
  return JSON.stringify({ ...rest, leads, _meta: responseMeta(rest.release ?? '', scope, maskedFor('lead', scope)) });
}
