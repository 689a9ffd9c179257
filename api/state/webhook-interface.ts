/**
 * Webhook persistence: webhooks (destination, saved filter, signing secrets, watermark) and the
 * durable delivery queue with its attempt log. Its own interface, next to the accounts-and-keys
 * `StateStore`, implemented once for both backends (`webhook-store.ts`) and exposed as
 * `store.webhooks`. Migrations use versions 20..29 (api/state/migrations.ts).
 *
 * Queue rules the dispatcher (api/webhooks/dispatcher.ts) relies on:
 * - `enqueue` inserts a batch of deliveries and advances the webhook's watermark in ONE
 *   transaction, and only if the watermark is still the one the caller read (compare-and-set):
 *   two replicas planning the same webhook cannot both enqueue the same leads.
 * - `claimDue` hands each due delivery to exactly one caller (PostgreSQL: `FOR UPDATE SKIP
 *   LOCKED`; SQLite: an IMMEDIATE transaction) and leases it until `leaseUntil`. A delivery whose
 *   lease ran out without an outcome (the dispatcher died between sending and recording) is due
 *   again and is re-sent with the same id and body.
 * - `finishAttempt` records the outcome only for the lease owner.
 * - A *suspended* webhook (its account holds no key that may receive it: `setSuspension`, set
 *   and cleared by the dispatcher, api/webhooks/send-access.ts) is not claimed; its pending
 *   deliveries read as `suspended` with the webhook's reason, and are due again once it is
 *   resumed. `releaseClaim` undoes a claim that was not sent (access ended between the claim
 *   and the send): no attempt is counted or logged.
 */
import type { Scope } from '../access/scopes.ts';
import type { AttemptOutcome, WebhookStatus } from './tables.ts';

/** `suspended`: pending, but held because the webhook is suspended (read-only: derived from the webhook, never stored). */
export type DeliveryStatus = 'pending' | 'suspended' | 'delivering' | 'delivered' | 'dead';
export const DELIVERY_STATUSES: readonly DeliveryStatus[] = ['pending', 'suspended', 'delivering', 'delivered', 'dead'];

export interface Webhook {
  /** `wh_` + 16 hex. */
  id: string;
  account_id: number;
  account_name: string;
  /**
   * The creating key's scope: the most a delivery is ever sent with. Each delivery is masked for
   * the lower of it and the best scope the account holds when it is sent (api/webhooks/send-access.ts).
   */
  scope: Scope;
  url: string;
  /** The saved filter as a canonical query string (`/v1/leads` grammar). */
  filter: string;
  /** The parsed filter (LeadsFilters) as JSON. */
  filters: Record<string, unknown>;
  description: string | null;
  status: WebhookStatus;
  disabled_reason: string | null;
  /** Leads with an id above this are new to the webhook (lead ids grow as leads are first seen). */
  watermark_lead_id: number;
  /** Release the watermark was last advanced on. */
  watermark_release: string | null;
  /** The event types it receives (api/webhooks/events.ts `WEBHOOK_EVENT_TYPES`); `['lead.new']` unless chosen. */
  types: string[];
  /** Events of the release's event log with an id above this are new to the webhook (event ids grow across releases). */
  watermark_event_id: number;
  secret_rotated_at: string | null;
  /** Until when the previous secret still signs deliveries (rotation overlap); null when none. */
  previous_secret_expires_at: string | null;
  /** Since when deliveries are held because the account holds no key that may receive them; null when not suspended. */
  suspended_at: string | null;
  /** Why they are held (set with `suspended_at`). */
  suspended_reason: string | null;
  created_at: string;
  updated_at: string;
}

export interface WebhookSecrets {
  current: string;
  previous: string | null;
  previous_expires_at: string | null;
}

export interface NewWebhook {
  id: string;
  account_id: number;
  scope: Scope;
  url: string;
  filter: string;
  filters: Record<string, unknown>;
  description: string | null;
  secret: string;
  watermark_lead_id: number;
  watermark_release: string | null;
  /** Default `['lead.new']`. */
  types?: string[];
  /** Default 0. */
  watermark_event_id?: number;
}

/** What `updateWebhook` may change (members left out stay as they are). */
export interface WebhookPatch {
  url?: string;
  /** The canonical saved filter and its parsed form, together. */
  filter?: { filter: string; filters: Record<string, unknown> };
  types?: string[];
  description?: string | null;
}

export interface NewDelivery {
  /** Event id (`evt_…`): the `webhook-id` header and the body's `id`, the same on every redelivery. */
  id: string;
  type: string;
  created_at: string;
  /**
   * The stored event (UTF-8 JSON): the leads as the release has them, without `_meta`. The bytes
   * sent are built from it at each attempt, masked for the scope of that moment
   * (api/webhooks/events.ts `eventBodyFor`): the same bytes on every redelivery while that scope is the same.
   */
  body: string;
  lead_count: number;
}

/** Where a delivery stands in the delivery log's order (newest first): its created_at and insertion order. */
export type DeliveryPosition = readonly [createdAt: string, seq: number];

export interface Delivery {
  id: string;
  webhook_id: string;
  type: string;
  created_at: string;
  lead_count: number;
  status: DeliveryStatus;
  /** Attempts made since the delivery was enqueued or last replayed. */
  attempts: number;
  next_attempt_at: string | null;
  last_attempt_at: string | null;
  last_status_code: number | null;
  last_error: string | null;
  last_latency_ms: number | null;
  delivered_at: string | null;
  dead_reason: string | null;
  /** Why a `suspended` delivery is held (its webhook's `suspended_reason`); null otherwise. */
  suspended_reason: string | null;
}

/** A delivery handed to one dispatcher, with what it needs to send it. */
export interface ClaimedDelivery extends Delivery {
  /** The webhook's account (whose keys decide, at send time, whether and how it is sent). */
  account_id: number;
  /** The webhook's scope (the most the delivery may be sent with). */
  scope: Scope;
  body: string;
  url: string;
  secrets: WebhookSecrets;
  /** Number of this attempt in the attempt log (counts every attempt, across replays). */
  attempt_no: number;
}

export interface Attempt {
  delivery_id: string;
  attempt_no: number;
  started_at: string;
  status_code: number | null;
  latency_ms: number | null;
  error: string | null;
  outcome: AttemptOutcome;
}

/** What an attempt came to. */
export type DeliveryOutcome =
  { status: 'delivered' } | { status: 'pending'; next_attempt_at: Date } | { status: 'dead'; reason: string };

export interface WebhookStore {
  createWebhook(w: NewWebhook): Promise<Webhook>;
  getWebhook(id: string): Promise<Webhook | null>;
  /** Webhooks oldest first, optionally of one account and/or status, suspended or not. */
  listWebhooks(filter?: { accountId?: number; status?: WebhookStatus; suspended?: boolean }): Promise<Webhook[]>;
  setWebhookStatus(id: string, status: WebhookStatus, reason: string | null): Promise<Webhook | null>;
  /** Change a webhook's destination, saved filter, event types or description (its watermarks, secret and queue stay); null when there is no such webhook. */
  updateWebhook(id: string, patch: WebhookPatch): Promise<Webhook | null>;
  /** Delete a webhook with its delivery queue and attempt log, atomically; false when there is no such webhook. */
  deleteWebhook(id: string): Promise<boolean>;
  /**
   * Suspend a webhook (`reason` given: `suspended_at` is set to `at` unless it is suspended
   * already, the reason is replaced) or resume it (`reason` null: both cleared). Its queued
   * deliveries wait while it is suspended and keep their due times. Null when there is no such webhook.
   */
  setSuspension(id: string, reason: string | null, at: Date): Promise<Webhook | null>;
  /** New current secret; the old one keeps signing until `previousExpiresAt`. */
  rotateSecret(id: string, secret: string, previousExpiresAt: Date): Promise<Webhook | null>;
  getSecrets(id: string): Promise<WebhookSecrets | null>;
  /**
   * Insert `deliveries` (pending, due now) and, when `watermark` is given, move the webhook's
   * lead watermark from `watermark.from` to `watermark.to` (and, with `events`, its event
   * watermark from `events.from` to `events.to`), atomically. False (nothing written) when a
   * watermark is no longer `from` (another dispatcher got there first).
   */
  enqueue(
    webhookId: string,
    deliveries: NewDelivery[],
    watermark?: { from: number; to: number; release: string | null; events?: { from: number; to: number } },
  ): Promise<boolean>;
  /**
   * Claim up to `limit` due deliveries of active, unsuspended webhooks (or exactly `deliveryId`,
   * whatever its webhook's state, if it is due or pending), lease them to `owner` until `leaseUntil`, count
   * the attempt and log it as `sending`.
   */
  claimDue(opts: {
    now: Date;
    limit: number;
    leaseUntil: Date;
    owner: string;
    deliveryId?: string;
  }): Promise<ClaimedDelivery[]>;
  /**
   * Give back a claimed delivery that was not sent: pending again with its due time, the claim's
   * attempt removed from the count and the attempt log. False when `owner` lost the lease.
   */
  releaseClaim(deliveryId: string, owner: string, attemptNo: number): Promise<boolean>;
  /** Record an attempt's result and the delivery's next state; false when `owner` lost the lease. */
  finishAttempt(
    deliveryId: string,
    owner: string,
    attempt: { attempt_no: number; status_code: number | null; latency_ms: number | null; error: string | null },
    outcome: DeliveryOutcome,
  ): Promise<boolean>;
  getDelivery(id: string): Promise<Delivery | null>;
  /** Deliveries of a webhook, newest first (`suspended`: the pending ones of a suspended webhook). */
  listDeliveries(webhookId: string, opts?: { status?: DeliveryStatus; limit?: number }): Promise<Delivery[]>;
  /**
   * A page of `listDeliveries`, keyset-paged: the deliveries after `after` (a position of the
   * previous page: created_at and insertion order, the list's own order), each with its position,
   * so that new deliveries never shift a walk.
   */
  pageDeliveries(
    webhookId: string,
    opts: { status?: DeliveryStatus; limit: number; after?: DeliveryPosition },
  ): Promise<{ deliveries: Delivery[]; positions: DeliveryPosition[] }>;
  listAttempts(deliveryId: string): Promise<Attempt[]>;
  /**
   * Put dead deliveries of a webhook back in the queue, due at `now`, with a fresh retry budget:
   * the ids given (only those that are dead) or every dead one. Returns the ids replayed.
   */
  replayDead(webhookId: string, now: Date, deliveryIds?: string[]): Promise<string[]>;
  /**
   * The queue for monitoring: deliveries not yet delivered or dead (pending or being sent) of
   * active webhooks — `queued` (unsuspended webhooks) and `held` (suspended ones) — and the
   * `created_at` of the oldest queued one (null when none is queued).
   */
  queueStats(): Promise<{ queued: number; held: number; oldestQueuedAt: string | null }>;
}
