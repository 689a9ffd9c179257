/**
 * The webhook dispatcher, in two steps that any number of processes may run at once:
 *
 * 1. `plan()` — for every active webhook, the leads of the current release with an id above its
 *    lead watermark that match its saved filter become `lead.new` events (if it subscribes to
 *    them), and the events of the release's event log with an id above its event watermark, of
 *    the change types it subscribes to, for the leads the same filter selects (exactly the events
 *    `GET /v1/events?types=…&<filter>` serves, `eventsPageQuery`) become `lead.updated` /
 *    `lead.stage_changed` / `lead.removed` events (batches of at most `webhookBatchMax`),
 *    stored in the queue together with both new watermarks in one transaction (compare-and-set:
 *    if another replica planned the webhook first, nothing is written).
 * 2. `deliverDue()` — first suspends the active webhooks whose account holds no key that may
 *    receive them and resumes the suspended ones whose account holds one again (`access.ts`);
 *    then claims due deliveries of unsuspended webhooks (each goes to one dispatcher, leased for
 *    `webhookTimeoutMs` + 60 s), decides each one's access again right before sending it — no
 *    such key: the claim is given back unsent and the webhook suspended — masks it for that
 *    scope (`eventBodyFor`), signs and POSTs it, and records the outcome: delivered, retry at
 *    the scheduled time (`retry.ts`), or dead. 410 Gone disables the webhook. A dispatcher that
 *    dies between sending and recording leaves the lease to run out; the delivery is then
 *    claimed again and re-sent with the same event id (and the same body, if the scope is the same).
 *
 * The clock and random source are injected (tests move time instead of waiting).
 */
import { randomBytes } from 'node:crypto';
import type { ApiConfig } from '../config.ts';
import type { LeadsFilters } from '../query/leads-query.ts';
import { newLeadsQuery } from '../query/webhook-leads-query.ts';
import { areaIds } from '../gis/geometry-ids.ts';
import type { StateStore } from '../state/store-interface.ts';
import type { ClaimedDelivery, Delivery, Webhook, WebhookStore } from '../state/webhook-interface.ts';
import { accessReader, type WebhookAccess } from './send-access.ts';
import { eventsPageQuery } from '../query/events-query.ts';
import { changeEvents, changeTypesOf, eventBodyFor, LEAD_NEW, leadNewEvents, type LogEvent } from './events.ts';
import type { LeadReader, LeadSnapshot } from './lead-reader.ts';
import { attemptOutcome } from './retry.ts';
import { postDelivery, sendAgents } from './send.ts';
import type { HostResolver } from './destination.ts';
import { signatureHeaders } from './signing.ts';

export type WebhookConfig = Pick<
  ApiConfig,
  | 'webhookBatchMax'
  | 'webhookTimeoutMs'
  | 'webhookMaxAttempts'
  | 'webhookConcurrency'
  | 'webhookAllowHosts'
  | 'webhookRotationOverlapMs'
>;

export interface DispatcherDeps {
  store: WebhookStore;
  /** Accounts and keys: whether, and with which scope, each webhook may send (api/webhooks/send-access.ts). */
  accounts: Pick<StateStore, 'listKeys' | 'getAccountById'>;
  leads: LeadReader;
  config: WebhookConfig;
  clock: () => Date;
  random?: () => number;
  log?: (line: string) => void;
  /** Lease owner name (default: `<hostname-ish pid>-<random>`). */
  owner?: string;
  /** How destination host names are resolved at connect time (default: the system resolver). */
  resolveHost?: HostResolver;
}

export interface PlanSummary {
  release: string | null;
  webhooks: number;
  events: number;
  leads: number;
}

export interface DeliverSummary {
  attempted: number;
  delivered: number;
  retrying: number;
  dead: number;
  /** Claimed but not sent: the account held no key that may receive the webhook (now suspended). */
  held: number;
  /** Webhooks suspended / resumed by this run. */
  suspended: number;
  resumed: number;
}

export interface Dispatcher {
  plan(): Promise<PlanSummary>;
  /** Send every delivery due now (loops until none is due). */
  deliverDue(): Promise<DeliverSummary>;
  /** Claim and send one delivery now (due or not), e.g. a test event; its state afterwards. */
  deliverOne(deliveryId: string): Promise<Delivery | null>;
  /** Time a claimed delivery stays leased. */
  readonly leaseMs: number;
  close(): void;
}

/** Run `fn` over `items` with at most `n` at a time. */
async function eachLimited<T>(items: readonly T[], n: number, fn: (t: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) await fn(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(n, items.length) }, worker));
}

/** What a dispatcher's steps share: its dependencies, lease owner, HTTP agents and access reader. */
interface DispatchContext {
  readonly deps: DispatcherDeps;
  readonly log: (line: string) => void;
  readonly owner: string;
  readonly leaseMs: number;
  readonly agents: ReturnType<typeof sendAgents>;
  readonly accessOf: ReturnType<typeof accessReader>;
}

/** Suspend a webhook for `why` (logged when it was not suspended yet, or for another reason). */
async function suspend(
  c: DispatchContext,
  w: Pick<Webhook, 'id' | 'suspended_at' | 'suspended_reason'>,
  why: string,
  summary: DeliverSummary,
): Promise<void> {
  if (w.suspended_at !== null && w.suspended_reason === why) return;
  await c.deps.store.setSuspension(w.id, why, c.deps.clock());
  if (w.suspended_at === null) {
    summary.suspended++;
    c.log(`webhook ${w.id} suspended: ${why}`);
  }
}

/**
 * Suspend the active webhooks whose account holds no key that may receive them; resume the
 * suspended ones whose account holds one again (their queued deliveries are due as before).
 */
async function syncAccess(c: DispatchContext, summary: DeliverSummary): Promise<void> {
  const { store, clock } = c.deps;
  const now = clock();
  const seen = new Map<string, Promise<WebhookAccess>>();
  for (const w of await store.listWebhooks({ status: 'active' })) {
    const k = `${w.account_id}\u0000${w.scope}`;
    let p = seen.get(k);
    if (!p) seen.set(k, (p = c.accessOf(w.account_id, w.scope, now)));
    const a = await p;
    if (a.scope === null) await suspend(c, w, a.detail, summary);
    else if (w.suspended_at !== null) {
      await store.setSuspension(w.id, null, now);
      summary.resumed++;
      c.log(`webhook ${w.id} resumed: the account holds a ${a.scope} key again`);
    }
  }
}

/** The headers of one send of `body`: signed with the current secret and, while it overlaps, the previous one. */
function deliveryHeaders(d: ClaimedDelivery, body: string, now: Date): Record<string, string> {
  const secrets = [d.secrets.current];
  if (d.secrets.previous && d.secrets.previous_expires_at && Date.parse(d.secrets.previous_expires_at) > now.getTime())
    secrets.push(d.secrets.previous);
  return {
    ...signatureHeaders({ id: d.id, timestamp: Math.floor(now.getTime() / 1000), body, secrets }),
    'X-Service-Event': d.type,
  };
}

/** Decide access, mask, sign, send and record one claimed delivery. */
async function attempt(c: DispatchContext, d: ClaimedDelivery, summary: DeliverSummary): Promise<void> {
  const { deps, owner, log } = c;
  const { store, config, clock } = deps;
  const now = clock();
  // the access that exists now, not when the webhook was created or the batch queued
  const access = await c.accessOf(d.account_id, d.scope, now);
  if (access.scope === null) {
    const w = await store.getWebhook(d.webhook_id);
    if (w) await suspend(c, w, access.detail, summary);
    if (!(await store.releaseClaim(d.id, owner, d.attempt_no)))
      log(`webhook delivery ${d.id}: lease lost before the claim was given back`);
    summary.held++;
    return;
  }
  const body = eventBodyFor(d.body, access.scope);
  const r = await postDelivery(d.url, deliveryHeaders(d, body, now), body, {
    timeoutMs: config.webhookTimeoutMs,
    allowHosts: config.webhookAllowHosts,
    agents: c.agents,
    ...(deps.resolveHost ? { resolveHost: deps.resolveHost } : {}),
  });
  const outcome = attemptOutcome(
    { statusCode: r.statusCode, retryAfter: r.retryAfter, error: r.error },
    { attempts: d.attempts, maxAttempts: config.webhookMaxAttempts, now: clock(), random: deps.random },
  );
  const recorded = await store.finishAttempt(
    d.id,
    owner,
    { attempt_no: d.attempt_no, status_code: r.statusCode, latency_ms: r.latencyMs, error: r.error },
    outcome,
  );
  summary.attempted++;
  if (outcome.status === 'delivered') summary.delivered++;
  else if (outcome.status === 'dead') summary.dead++;
  else summary.retrying++;
  if (!recorded)
    log(`webhook delivery ${d.id}: lease lost before the outcome was recorded (another dispatcher took it over)`);
  if (r.statusCode === 410) {
    await store.setWebhookStatus(
      d.webhook_id,
      'disabled',
      `the destination answered 410 Gone at ${clock().toISOString()}`,
    );
    log(`webhook ${d.webhook_id} disabled: its destination answered 410 Gone`);
  }
}

/** Claim and send due deliveries until none is due (or exactly `deliveryId`, once). */
async function claimAndSend(c: DispatchContext, deliveryId?: string): Promise<DeliverSummary> {
  const { store, config, clock } = c.deps;
  const summary: DeliverSummary = {
    attempted: 0,
    delivered: 0,
    retrying: 0,
    dead: 0,
    held: 0,
    suspended: 0,
    resumed: 0,
  };
  for (;;) {
    if (!deliveryId) await syncAccess(c, summary);
    const now = clock();
    const claimed = await store.claimDue({
      now,
      limit: deliveryId ? 1 : config.webhookConcurrency * 4,
      leaseUntil: new Date(now.getTime() + c.leaseMs),
      owner: c.owner,
      ...(deliveryId ? { deliveryId } : {}),
    });
    if (claimed.length === 0) break;
    await eachLimited(claimed, config.webhookConcurrency, (d) => attempt(c, d, summary));
    if (deliveryId) break;
  }
  return summary;
}

/**
 * Plan one webhook against the release `snap`: its new leads and logged changes above its
 * watermarks become queued events, enqueued with the new watermarks (compare-and-set). A failure
 * is logged, not thrown, so one webhook cannot stop the others.
 */
async function planWebhook(c: DispatchContext, snap: LeadSnapshot, w: Webhook, summary: PlanSummary): Promise<void> {
  const { deps, log } = c;
  const { store, config, clock } = deps;
  const changeTypes = changeTypesOf(w.types);
  // the event watermark never goes back (a release rebuilt without its log reads as 0 events)
  const eventTo = Math.max(w.watermark_event_id, snap.maxEventId);
  if (snap.maxLeadId <= w.watermark_lead_id && eventTo <= w.watermark_event_id) return;
  try {
    const filters = w.filters as LeadsFilters;
    const ids = await areaIds(deps.leads, snap.source.leads, filters); // geometry filters: tested by api/gis/geometry.ts, ids into the SQL
    let leads: Record<string, unknown>[] = [];
    if (w.types.includes(LEAD_NEW) && snap.maxLeadId > w.watermark_lead_id) {
      const q = newLeadsQuery(snap.source, filters, w.watermark_lead_id, ids);
      leads = await deps.leads.all(q.sql, q.params);
    }
    let logged: LogEvent[] = [];
    if (changeTypes.length > 0 && snap.events && eventTo > w.watermark_event_id) {
      const q = eventsPageQuery(
        snap.events,
        snap.source,
        { types: changeTypes, filters },
        w.watermark_event_id,
        eventTo - w.watermark_event_id,
        ids,
      );
      logged = await deps.leads.all<LogEvent & Record<string, unknown>>(q.sql, q.params);
    }
    // queued even while the webhook is suspended (held until it resumes); masked when sent
    const createdAt = clock();
    const events = [
      ...leadNewEvents({
        webhookId: w.id,
        releaseId: snap.releaseId,
        leads,
        batchMax: config.webhookBatchMax,
        createdAt,
      }),
      ...changeEvents({
        webhookId: w.id,
        releaseId: snap.releaseId,
        events: logged,
        batchMax: config.webhookBatchMax,
        createdAt,
      }),
    ];
    const ok = await store.enqueue(w.id, events, {
      from: w.watermark_lead_id,
      to: Math.max(w.watermark_lead_id, snap.maxLeadId),
      release: snap.releaseId,
      events: { from: w.watermark_event_id, to: eventTo },
    });
    if (!ok) return; // another dispatcher planned this webhook meanwhile
    summary.webhooks++;
    summary.events += events.length;
    summary.leads += leads.length + logged.length;
  } catch (e) {
    log(`webhook ${w.id}: planning failed: ${(e as Error).message}`);
  }
}

/** Plan every active webhook against the current release (nothing before the first release). */
async function plan(c: DispatchContext): Promise<PlanSummary> {
  const snap = await c.deps.leads.snapshot();
  const summary: PlanSummary = { release: snap?.releaseId ?? null, webhooks: 0, events: 0, leads: 0 };
  if (!snap) {
    c.log('webhooks: no release published yet; nothing to plan');
    return summary;
  }
  for (const w of await c.deps.store.listWebhooks({ status: 'active' })) await planWebhook(c, snap, w, summary);
  return summary;
}

/** A dispatcher over `deps` (see the module comment for its two steps). */
export function createDispatcher(deps: DispatcherDeps): Dispatcher {
  const { config } = deps;
  const c: DispatchContext = {
    deps,
    log: deps.log ?? (() => {}),
    owner: deps.owner ?? `pid${process.pid}-${randomBytes(4).toString('hex')}`,
    leaseMs: config.webhookTimeoutMs + 60_000,
    agents: sendAgents(Math.max(4, config.webhookConcurrency)),
    accessOf: accessReader(deps.accounts),
  };
  return {
    leaseMs: c.leaseMs,
    plan: () => plan(c),
    deliverDue: () => claimAndSend(c),
    async deliverOne(deliveryId) {
      await claimAndSend(c, deliveryId);
      return deps.store.getDelivery(deliveryId);
    },
    close() {
      c.agents.http.destroy();
      c.agents.https.destroy();
    },
  };
}

/**
 * Run the dispatcher on a timer inside the server: `plan()` every `intervalMs` (first at start)
 * and `deliverDue()` every `pollMs`; runs never overlap. `stop()` waits for a running step.
 */
export function startWebhookScheduler(
  d: Dispatcher,
  o: { intervalMs: number; pollMs: number; log: (line: string) => void },
): { stop(): Promise<void> } {
  let running: Promise<unknown> = Promise.resolve();
  let stopped = false;
  const step = (what: string, fn: () => Promise<unknown>): void => {
    running = running.then(async () => {
      if (stopped) return;
      try {
        const r = await fn();
        const s = r as Partial<PlanSummary & DeliverSummary>;
        if ((s.events ?? 0) > 0 || (s.attempted ?? 0) > 0 || (s.held ?? 0) > 0)
          o.log(`webhooks ${what}: ${JSON.stringify(r)}`);
      } catch (e) {
        o.log(`webhooks ${what} failed: ${(e as Error).message}`);
      }
    });
  };
  const plan = (): void =>
    step('plan', async () => {
      const p = await d.plan();
      await d.deliverDue();
      return p;
    });
  plan();
  const t1 = setInterval(plan, o.intervalMs);
  const t2 = setInterval(() => step('deliver', () => d.deliverDue()), o.pollMs);
  t1.unref();
  t2.unref();
  return {
    async stop() {
      stopped = true;
      clearInterval(t1);
      clearInterval(t2);
      await running;
      d.close();
    },
  };
}
