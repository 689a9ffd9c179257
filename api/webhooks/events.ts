/**
 * Webhook event bodies. A `lead.new` event carries up to WEBHOOK_BATCH_MAX new leads that match
 * a webhook's saved filter, masked for the scope the webhook sends with **at the moment of each
 * attempt** (api/webhooks/send-access.ts) exactly as `GET /v1/leads` serves them to that scope:
 *
 *   { "id": "evt_…", "type": "lead.new", "created_at": "…Z", "webhook_id": "wh_…",
 *     "release": "20261116T060000Z", "batch": { "index": 1, "count": 3 },
 *     "leads": [ …lead records… ], "_meta": { "release", "scope", "masked" } }
 *
 * A webhook subscribes to `types` (`WEBHOOK_EVENT_TYPES`; default `lead.new` only). The change
 * types carry events of the release's event log (`GET /v1/events`, schemas/event.schema.json) —
 * the same events the feed serves, with the same lead filters — instead of leads:
 *
 *   { "id": "evt_…", "type": "lead.stage_changed", "created_at": "…Z", "webhook_id": "wh_…",
 *     "release": "…", "batch": { "index": 1, "count": 1 },
 *     "events": [ { "id": 812, "type": "lead.stage_changed", "lead_id": …, "changes": { "lead_readiness": { "before": "granted", "after": "commencing" }, … }, … } ],
 *     "_meta": { … } }
 *
 * each event's `changes` masked for the scope at send time by `maskChanges` (api/access/masking.ts), as
 * the feed masks them.
 * A larger set is split into `batch.count` events, each with its own id. `webhook.test` (sent by
 * `leads webhooks test` / `POST /v1/webhooks/{id}/test`) has the same shape with no leads.
 * What is queued is the event without `_meta` and with the leads as the release has them;
 * `eventBodyFor` builds the bytes of each attempt from it with `maskRecord` / `responseMeta`
 * (api/access/masking.ts). Serialisation is deterministic, so every redelivery sends the same bytes
 * while the scope is the same.
 */
import { randomBytes } from 'node:crypto';
import { maskChanges, maskedFor, maskRecord, responseMeta, type FieldChange } from '../access/masking.ts';
import type { Scope } from '../access/scopes.ts';
import type { EventRow } from '../query/events-query.ts';
import type { NewDelivery } from '../state/webhook-interface.ts';

export const LEAD_NEW = 'lead.new';
export const WEBHOOK_TEST = 'webhook.test';
/** The change types a webhook may subscribe to besides `lead.new`: event types of the release's event log. */
export const CHANGE_TYPES = ['lead.updated', 'lead.stage_changed', 'lead.removed'] as const;
/** Every type a delivery can have. */
export const EVENT_TYPES = [LEAD_NEW, ...CHANGE_TYPES, WEBHOOK_TEST] as const;
export type ChangeType = (typeof CHANGE_TYPES)[number];
/** What a webhook may subscribe to (its `types`); `lead.new` is the default. */
export const WEBHOOK_EVENT_TYPES = [LEAD_NEW, ...CHANGE_TYPES] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];
/** The types of a webhook made without choosing. */
export const DEFAULT_WEBHOOK_TYPES: readonly WebhookEventType[] = [LEAD_NEW];

/** The change types among a webhook's `types`, in `CHANGE_TYPES` order. */
export function changeTypesOf(types: readonly string[]): ChangeType[] {
  return CHANGE_TYPES.filter((t) => types.includes(t));
}

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
    const body = JSON.stringify({
      id,
      type: LEAD_NEW,
      created_at: created,
      webhook_id: o.webhookId,
      release: o.releaseId,
      batch: { index: i + 1, count },
      leads: part,
    });
    out.push({ id, type: LEAD_NEW, created_at: created, body, lead_count: part.length });
  }
  return out;
}

/** An event-log row as the dispatcher reads it: the feed's own row (`changes` as JSON text). */
export type LogEvent = EventRow;

/**
 * The change events for `events` (event-log rows in id order, of the webhook's change types):
 * one set per type in `CHANGE_TYPES` order, each split into batches of `batchMax`, to be queued
 * unmasked and without `_meta`.
 *
 * @example changeEvents({ webhookId: 'wh_1', releaseId: 'r2', events, batchMax: 100, createdAt: new Date() })
 */
export function changeEvents(o: {
  webhookId: string;
  releaseId: string;
  events: readonly LogEvent[];
  batchMax: number;
  createdAt: Date;
  newId?: () => string;
}): NewDelivery[] {
  const created = o.createdAt.toISOString();
  const out: NewDelivery[] = [];
  for (const type of CHANGE_TYPES) {
    const of = o.events
      .filter((e) => e.type === type)
      .map((e) => ({ ...e, id: Number(e.id), lead_id: Number(e.lead_id), changes: JSON.parse(e.changes) as unknown }));
    const count = Math.ceil(of.length / o.batchMax);
    for (let i = 0; i < count; i++) {
      const part = of.slice(i * o.batchMax, (i + 1) * o.batchMax);
      const id = (o.newId ?? newEventId)();
      const body = JSON.stringify({
        id,
        type,
        created_at: created,
        webhook_id: o.webhookId,
        release: o.releaseId,
        batch: { index: i + 1, count },
        events: part,
      });
      out.push({ id, type, created_at: created, body, lead_count: part.length });
    }
  }
  return out;
}

/** A `webhook.test` event (no leads) for checking a destination and its signature verification. */
export function testEvent(o: { webhookId: string; releaseId: string | null; createdAt: Date }): NewDelivery {
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
  });
  return { id, type: WEBHOOK_TEST, created_at: created, body, lead_count: 0 };
}

/**
 * The bytes to send for a queued event, for `scope` (the webhook's scope at send time): every
 * lead masked with `maskRecord`, every change event's `changes` with `maskChanges` (as
 * `GET /v1/events` serves them), `_meta` from `responseMeta` (last, replacing any
 * `_meta` an older queue entry carries). Masking only ever removes, so an entry queued masked
 * for another scope is never unmasked.
 *
 * @example eventBodyFor(delivery.body, 'ent_api') // '{"id":"evt_…",…,"leads":[…],"_meta":{"release":"…","scope":"ent_api","masked":[]}}'
 */
export function eventBodyFor(stored: string, scope: Scope): string {
  const ev = JSON.parse(stored) as Record<string, unknown> & {
    leads?: Record<string, unknown>[];
    events?: (Record<string, unknown> & { changes: Record<string, FieldChange> })[];
    release?: string | null;
  };
  const { _meta: _old, ...rest } = ev;
  const meta = responseMeta(rest.release ?? '', scope, maskedFor('lead', scope));
  if (rest.events) {
    const events = rest.events.map((e) => ({ ...e, changes: maskChanges('lead', e.changes, scope).changes }));
    return JSON.stringify({ ...rest, events, _meta: meta });
  }
  const leads = (rest.leads ?? []).map((l) => maskRecord('lead', l, scope).record);
  return JSON.stringify({ ...rest, leads, _meta: meta });
}
