/**
 * The webhook store (see `webhooks.ts` for the contract), written once over any `Backend`.
 * Claims run `atomic`: on SQLite in one IMMEDIATE transaction, so two processes sharing the
 * file never claim the same delivery; on PostgreSQL the due rows are taken `FOR UPDATE SKIP
 * LOCKED` (`Dialect.lockRows`), so concurrent dispatchers each get different deliveries and none
 * waits on another.
 */
import { sql, type Expression, type ExpressionBuilder, type SqlBool } from 'kysely';
import { rows, template, type Backend, type Row } from './backend.ts';
import type { Tables } from './tables.ts';
import type {
  Attempt,
  ClaimedDelivery,
  Delivery,
  DeliveryPosition,
  DeliveryStatus,
  NewDelivery,
  Webhook,
  WebhookPatch,
  WebhookSecrets,
  WebhookStore,
} from './webhook-interface.ts';

/** Deliveries per multi-row insert (7 parameters each). */
const DELIVERY_CHUNK = 500;

const WEBHOOK_COLUMNS = [
  'w.id',
  'w.account_id',
  'a.name as account_name',
  'w.scope',
  'w.url',
  'w.filter',
  'w.filters_json',
  'w.description',
  'w.status',
  'w.disabled_reason',
  'w.watermark_lead_id',
  'w.watermark_release',
  'w.secret_rotated_at',
  'w.previous_secret_expires_at',
  'w.suspended_at',
  'w.suspended_reason',
  'w.types',
  'w.watermark_event_id',
  'w.created_at',
  'w.updated_at',
] as const;
/** Delivery columns; the query joins its webhook as `w` (a pending delivery of a suspended webhook reads as `suspended`). */
const DELIVERY_COLUMNS = [
  'd.id',
  'd.webhook_id',
  'd.type',
  'd.created_at',
  'd.lead_count',
  'd.status',
  'd.attempts_total',
  'd.retry_base',
  'd.next_attempt_at',
  'd.last_attempt_at',
  'd.last_status_code',
  'd.last_error',
  'd.last_latency_ms',
  'd.delivered_at',
  'd.dead_reason',
  'w.suspended_at as webhook_suspended_at',
  'w.suspended_reason as webhook_suspended_reason',
] as const;
const CLAIM_COLUMNS = [
  'd.body',
  'w.url',
  'w.secret',
  'w.previous_secret',
  'w.previous_secret_expires_at',
  'w.account_id',
  'w.scope',
] as const;

type DeliveryEb = ExpressionBuilder<Tables & { d: Tables['webhook_deliveries']; w: Tables['webhooks'] }, 'd' | 'w'>;
/** Conditions for a delivery status filter (`pending` and `suspended` split the stored `pending`). */
const DELIVERY_STATUS: Record<DeliveryStatus, (eb: DeliveryEb) => Expression<SqlBool>> = {
  pending: (eb) => eb.and([eb('d.status', '=', 'pending'), eb('w.suspended_at', 'is', null)]),
  suspended: (eb) => eb.and([eb('d.status', '=', 'pending'), eb('w.suspended_at', 'is not', null)]),
  delivering: (eb) => eb('d.status', '=', 'delivering'),
  delivered: (eb) => eb('d.status', '=', 'delivered'),
  dead: (eb) => eb('d.status', '=', 'dead'),
};

const numOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

/** A webhooks row as a `Webhook` (fields in the order responses show them). */
function toWebhook(r: Row): Webhook {
  return {
    id: r['id'],
    account_id: Number(r['account_id']),
    account_name: r['account_name'],
    scope: r['scope'],
    url: r['url'],
    filter: r['filter'],
    filters: JSON.parse(r['filters_json']) as Record<string, unknown>,
    description: r['description'],
    status: r['status'],
    disabled_reason: r['disabled_reason'],
    watermark_lead_id: Number(r['watermark_lead_id']),
    watermark_release: r['watermark_release'],
    types: String(r['types'] ?? 'lead.new').split(','),
    watermark_event_id: Number(r['watermark_event_id'] ?? 0),
    secret_rotated_at: r['secret_rotated_at'],
    previous_secret_expires_at: r['previous_secret_expires_at'],
    suspended_at: r['suspended_at'],
    suspended_reason: r['suspended_reason'],
    created_at: r['created_at'],
    updated_at: r['updated_at'],
  };
}

/** A webhook_deliveries row as a `Delivery` (attempts counted since enqueue or the last replay). */
function toDelivery(r: Row): Delivery {
  const held = r['status'] === 'pending' && r['webhook_suspended_at'] !== null;
  return {
    id: r['id'],
    webhook_id: r['webhook_id'],
    type: r['type'],
    created_at: r['created_at'],
    lead_count: Number(r['lead_count']),
    status: held ? 'suspended' : r['status'],
    attempts: Number(r['attempts_total']) - Number(r['retry_base']),
    next_attempt_at: r['next_attempt_at'],
    last_attempt_at: r['last_attempt_at'],
    last_status_code: numOrNull(r['last_status_code']),
    last_error: r['last_error'],
    last_latency_ms: numOrNull(r['last_latency_ms']),
    delivered_at: r['delivered_at'],
    dead_reason: r['dead_reason'],
    suspended_reason: held ? r['webhook_suspended_reason'] : null,
  };
}

/** A claimed row (delivery columns + body, url, secrets, account and scope of its webhook) as a `ClaimedDelivery`. */
function toClaimed(d: Row): ClaimedDelivery {
  return {
    ...toDelivery(d),
    account_id: Number(d['account_id']),
    scope: d['scope'],
    body: d['body'],
    url: d['url'],
    attempt_no: Number(d['attempts_total']),
    secrets: {
      current: d['secret'],
      previous: d['previous_secret'],
      previous_expires_at: d['previous_secret_expires_at'],
    },
  };
}

const toAttempt = (r: Row): Attempt => ({
  delivery_id: r['delivery_id'],
  attempt_no: Number(r['attempt_no']),
  started_at: r['started_at'],
  status_code: numOrNull(r['status_code']),
  latency_ms: numOrNull(r['latency_ms']),
  error: r['error'],
  outcome: r['outcome'],
});

const chunks = <T>(xs: readonly T[], n: number): T[][] =>
  Array.from({ length: Math.ceil(xs.length / n) }, (_, i) => xs.slice(i * n, i * n + n));

/** Webhooks joined to their account, with the columns a `Webhook` is read from. */
const selectWebhooks = (b: Backend) =>
  b.db.selectFrom('webhooks as w').innerJoin('accounts as a', 'a.id', 'w.account_id').select(WEBHOOK_COLUMNS);

/** Deliveries joined to their webhook as `w`, with the columns a `Delivery` is read from. */
const selectDeliveries = (b: Backend) =>
  b.db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhooks as w', 'w.id', 'd.webhook_id')
    .select(DELIVERY_COLUMNS);

/** The dialect's insertion order of a row, the tie-break after a timestamp. */
const insertionSeq = (b: Backend) => sql.ref(b.dialect.insertionOrder.ref);

/** Due: pending and due, or delivering with a lapsed lease. */
const due = (eb: DeliveryEb, at: string) =>
  eb.or([
    eb.and([eb('d.status', '=', 'pending'), eb('d.next_attempt_at', '<=', at)]),
    eb.and([eb('d.status', '=', 'delivering'), eb('d.lease_until', '<=', at)]),
  ]);

/** Creating and reading webhooks. */
function webhookRowQueries(b: Backend) {
  const { db, dialect: d } = b;
  return {
    insert: template(
      (
        id: string,
        accountId: number,
        scope: Webhook['scope'],
        url: string,
        filter: string,
        filtersJson: string,
        description: string | null,
        secret: string,
        watermark: number,
        release: string | null,
        types: string,
        eventWatermark: number,
        at: string,
      ) =>
        db.insertInto('webhooks').values({
          id,
          account_id: accountId,
          scope,
          url,
          filter,
          filters_json: filtersJson,
          description,
          status: 'active',
          secret,
          watermark_lead_id: watermark,
          watermark_release: release,
          types,
          watermark_event_id: eventWatermark,
          created_at: at,
          updated_at: at,
        }),
    ),
    byId: template((id: string) => selectWebhooks(b).where('w.id', '=', id)),
    list: (f: { accountId?: number; status?: Webhook['status']; suspended?: boolean }) =>
      selectWebhooks(b)
        .$if(f.accountId !== undefined, (qb) => qb.where('w.account_id', '=', f.accountId!))
        .$if(f.status !== undefined, (qb) => qb.where('w.status', '=', f.status!))
        .$if(f.suspended !== undefined, (qb) => qb.where('w.suspended_at', f.suspended ? 'is not' : 'is', null))
        .orderBy('w.created_at')
        .orderBy(d.bytewise('w.id'))
        .compile(),
    secrets: template((id: string) =>
      db
        .selectFrom('webhooks')
        .select(['secret', 'previous_secret', 'previous_secret_expires_at'])
        .where('id', '=', id),
    ),
  };
}

/** Changing a webhook: status, suspension, destination and filter, secret; and deleting it with its queue. */
function webhookChangeQueries(b: Backend) {
  const { db, dialect: d } = b;
  return {
    setStatus: template((status: Webhook['status'], reason: string | null, at: string, id: string) =>
      db.updateTable('webhooks').set({ status, disabled_reason: reason, updated_at: at }).where('id', '=', id),
    ),
    suspend: template((at: string, reason: string, id: string) =>
      db
        .updateTable('webhooks')
        .set((eb) => ({ suspended_at: eb.fn.coalesce('suspended_at', eb.val(at)), suspended_reason: reason }))
        .where('id', '=', id),
    ),
    /** The members of `p` that are given, and `updated_at` (the shape varies: built per call). */
    update: (id: string, p: WebhookPatch, at: string) =>
      db
        .updateTable('webhooks')
        .set({
          ...(p.url !== undefined ? { url: p.url } : {}),
          ...(p.filter !== undefined
            ? { filter: p.filter.filter, filters_json: JSON.stringify(p.filter.filters) }
            : {}),
          ...(p.types !== undefined ? { types: p.types.join(',') } : {}),
          ...(p.description !== undefined ? { description: p.description } : {}),
          updated_at: at,
        })
        .where('id', '=', id)
        .compile(),
    resume: template((id: string) =>
      db.updateTable('webhooks').set({ suspended_at: null, suspended_reason: null }).where('id', '=', id),
    ),
    lockWebhook: template((id: string) => d.lockRows(db.selectFrom('webhooks').select('id').where('id', '=', id))),
    deleteAttempts: template((id: string) =>
      db
        .deleteFrom('webhook_attempts')
        .where('delivery_id', 'in', db.selectFrom('webhook_deliveries').select('id').where('webhook_id', '=', id)),
    ),
    deleteDeliveries: template((id: string) => db.deleteFrom('webhook_deliveries').where('webhook_id', '=', id)),
    deleteWebhook: template((id: string) => db.deleteFrom('webhooks').where('id', '=', id)),
    rotate: template((previousExpiresAt: string, secret: string, at: string, id: string) =>
      db
        .updateTable('webhooks')
        .set((eb) => ({
          previous_secret: eb.ref('secret'),
          previous_secret_expires_at: previousExpiresAt,
          secret,
          secret_rotated_at: at,
          updated_at: at,
        }))
        .where('id', '=', id),
    ),
  };
}

/** Enqueueing: moving the watermarks (compare-and-set) and inserting the new deliveries. */
function enqueueQueries(b: Backend) {
  const { db } = b;
  return {
    advance: template((to: number, release: string | null, at: string, id: string, from: number) =>
      db
        .updateTable('webhooks')
        .set({ watermark_lead_id: to, watermark_release: release, updated_at: at })
        .where('id', '=', id)
        .where('watermark_lead_id', '=', from)
        .returning('id'),
    ),
    /** `advance` for both watermarks (lead ids and event ids), each compare-and-set. */
    advanceBoth: template(
      (to: number, release: string | null, eventTo: number, at: string, id: string, from: number, eventFrom: number) =>
        db
          .updateTable('webhooks')
          .set({ watermark_lead_id: to, watermark_release: release, watermark_event_id: eventTo, updated_at: at })
          .where('id', '=', id)
          .where('watermark_lead_id', '=', from)
          .where('watermark_event_id', '=', eventFrom)
          .returning('id'),
    ),
    insertDeliveries: (webhookId: string, at: string, ds: readonly NewDelivery[]) =>
      db
        .insertInto('webhook_deliveries')
        .values(
          ds.map((x) => ({
            id: x.id,
            webhook_id: webhookId,
            type: x.type,
            created_at: x.created_at,
            body: x.body,
            lead_count: x.lead_count,
            status: 'pending' as const,
            next_attempt_at: at,
          })),
        )
        .compile(),
  };
}

/** Claiming due deliveries: pick and lock them, abandon stale attempts, lease, log the attempt, read them back. */
function claimQueries(b: Backend) {
  const { db, dialect: d } = b;
  const seq = insertionSeq(b);
  return {
    /** Due deliveries of active, unsuspended webhooks, oldest due first, locked for this claim. */
    pickDue: template((at: string, limit: number) =>
      d.lockRows(
        db
          .selectFrom('webhook_deliveries as d')
          .innerJoin('webhooks as w', 'w.id', 'd.webhook_id')
          .select(['d.id', 'd.status'])
          .where('w.status', '=', 'active')
          .where('w.suspended_at', 'is', null)
          .where((eb) => due(eb as DeliveryEb, at))
          .orderBy('d.next_attempt_at')
          .orderBy(seq)
          .limit(limit),
        { skipLocked: true, of: 'd' },
      ),
    ),
    /** One delivery by id, if it is pending (due or not) or due. */
    pickOne: template((id: string, at: string) =>
      d.lockRows(
        db
          .selectFrom('webhook_deliveries as d')
          .select(['d.id', 'd.status'])
          .where('d.id', '=', id)
          .where((eb) => eb.or([eb('d.status', '=', 'pending'), due(eb as unknown as DeliveryEb, at)])),
        { skipLocked: true },
      ),
    ),
    abandon: (ids: string[]) =>
      db
        .updateTable('webhook_attempts')
        .set({ outcome: 'abandoned' })
        .where('delivery_id', 'in', ids)
        .where('outcome', '=', 'sending')
        .compile(),
    lease: (owner: string, until: string, at: string, ids: string[]) =>
      db
        .updateTable('webhook_deliveries')
        .set((eb) => ({
          status: 'delivering',
          lease_owner: owner,
          lease_until: until,
          attempts_total: eb('attempts_total', '+', 1),
          last_attempt_at: at,
        }))
        .where('id', 'in', ids)
        .compile(),
    logSending: (at: string, ids: string[]) =>
      db
        .insertInto('webhook_attempts')
        .columns(['delivery_id', 'attempt_no', 'started_at', 'outcome'])
        .expression((eb) =>
          eb
            .selectFrom('webhook_deliveries')
            .select((e) => ['id', 'attempts_total', e.val(at).as('started_at'), e.val('sending').as('outcome')])
            .where('id', 'in', ids),
        )
        .compile(),
    claimed: (ids: string[]) =>
      selectDeliveries(b)
        .select(CLAIM_COLUMNS)
        .where('d.id', 'in', ids)
        .orderBy('d.next_attempt_at')
        .orderBy(seq)
        .compile(),
  };
}

/** Ending a claim: record the attempt's outcome and settle the delivery, or hand the delivery back unsent. */
function finishQueries(b: Backend) {
  const { db, dialect: d } = b;
  return {
    finishAttempt: template(
      (
        statusCode: number | null,
        latencyMs: number | null,
        error: string | null,
        outcome: string,
        id: string,
        attemptNo: number,
      ) =>
        db
          .updateTable('webhook_attempts')
          .set((eb) => ({
            status_code: statusCode,
            latency_ms: latencyMs,
            error,
            outcome: eb
              .case()
              .when('outcome', '=', 'sending')
              .then(sql<Attempt['outcome']>`${outcome}`)
              .else(eb.ref('outcome'))
              .end(),
          }))
          .where('delivery_id', '=', id)
          .where('attempt_no', '=', attemptNo),
    ),
    finishDelivery: template(
      (
        status: 'pending' | 'delivered' | 'dead',
        next: string | null,
        deliveredAt: string | null,
        deadReason: string | null,
        code: number | null,
        error: string | null,
        latency: number | null,
        id: string,
        owner: string,
      ) =>
        db
          .updateTable('webhook_deliveries')
          .set({
            status,
            next_attempt_at: next,
            delivered_at: deliveredAt,
            dead_reason: deadReason,
            last_status_code: code,
            last_error: error,
            last_latency_ms: latency,
            lease_owner: null,
            lease_until: null,
          })
          .where('id', '=', id)
          .where('lease_owner', '=', owner)
          .where('status', '=', 'delivering')
          .returning('id'),
    ),
    held: template((id: string, owner: string) =>
      d.lockRows(
        db
          .selectFrom('webhook_deliveries')
          .select('id')
          .where('id', '=', id)
          .where('lease_owner', '=', owner)
          .where('status', '=', 'delivering'),
      ),
    ),
    dropSending: template((id: string, attemptNo: number) =>
      db
        .deleteFrom('webhook_attempts')
        .where('delivery_id', '=', id)
        .where('attempt_no', '=', attemptNo)
        .where('outcome', '=', 'sending'),
    ),
    unlease: template((id: string) =>
      db
        .updateTable('webhook_deliveries')
        .set((eb) => ({
          status: 'pending',
          lease_owner: null,
          lease_until: null,
          attempts_total: eb('attempts_total', '-', 1),
          last_attempt_at: eb
            .selectFrom('webhook_attempts')
            .select((e) => e.fn.max('started_at').as('m'))
            .where('delivery_id', '=', id),
        }))
        .where('id', '=', id),
    ),
  };
}

/** Reading the queue: a delivery, a webhook's deliveries (listed or keyset-paged), attempts, the monitoring counts. */
function deliveryReadQueries(b: Backend) {
  const { db } = b;
  const seq = insertionSeq(b);
  return {
    delivery: template((id: string) => selectDeliveries(b).where('d.id', '=', id)),
    listDeliveries: (webhookId: string, status: DeliveryStatus | undefined, limit: number) =>
      selectDeliveries(b)
        .where('d.webhook_id', '=', webhookId)
        .$if(status !== undefined, (qb) => qb.where((eb) => DELIVERY_STATUS[status!](eb as DeliveryEb)))
        .orderBy('d.created_at', 'desc')
        .orderBy(seq, 'desc')
        .limit(limit)
        .compile(),
    pageDeliveries: (
      webhookId: string,
      status: DeliveryStatus | undefined,
      limit: number,
      after: DeliveryPosition | undefined,
    ) =>
      selectDeliveries(b)
        .select(sql<number>`${seq}`.as('_seq'))
        .where('d.webhook_id', '=', webhookId)
        .$if(status !== undefined, (qb) => qb.where((eb) => DELIVERY_STATUS[status!](eb as DeliveryEb)))
        .$if(after !== undefined, (qb) =>
          qb.where((eb) =>
            eb.or([
              eb('d.created_at', '<', after![0]),
              eb.and([eb('d.created_at', '=', after![0]), sql<boolean>`${seq} < ${after![1]}`]),
            ]),
          ),
        )
        .orderBy('d.created_at', 'desc')
        .orderBy(seq, 'desc')
        .limit(limit)
        .compile(),
    attempts: template((id: string) =>
      db.selectFrom('webhook_attempts').selectAll().where('delivery_id', '=', id).orderBy('attempt_no'),
    ),
    /** Undelivered deliveries of active webhooks, by whether their webhook is suspended (monitoring). */
    queueStats: template(() =>
      db
        .selectFrom('webhook_deliveries as d')
        .innerJoin('webhooks as w', 'w.id', 'd.webhook_id')
        .select((eb) => [
          eb.case().when('w.suspended_at', 'is', null).then(eb.lit(0)).else(eb.lit(1)).end().as('held'),
          eb.fn.countAll<number>().as('n'),
          eb.fn.min('d.created_at').as('oldest'),
        ])
        .where('w.status', '=', 'active')
        .where('d.status', 'in', ['pending', 'delivering'])
        .groupBy((eb) => eb.case().when('w.suspended_at', 'is', null).then(eb.lit(0)).else(eb.lit(1)).end()),
    ),
  };
}

/** Replaying: a webhook's dead deliveries (locked), and putting them back in the queue. */
function replayQueries(b: Backend) {
  const { db, dialect: d } = b;
  const seq = insertionSeq(b);
  return {
    dead: template((webhookId: string) =>
      d.lockRows(
        db
          .selectFrom('webhook_deliveries as d')
          .select('d.id')
          .where('d.webhook_id', '=', webhookId)
          .where('d.status', '=', 'dead')
          .orderBy(seq),
      ),
    ),
    replay: (at: string, ids: string[]) =>
      db
        .updateTable('webhook_deliveries')
        .set((eb) => ({
          status: 'pending',
          next_attempt_at: at,
          retry_base: eb.ref('attempts_total'),
          dead_reason: null,
        }))
        .where('id', 'in', ids)
        .where('status', '=', 'dead')
        .compile(),
  };
}

/** The webhook queries, compiled once for the backend's dialect (those whose shape varies are built per call). */
function webhookQueries(b: Backend) {
  return {
    ...webhookRowQueries(b),
    ...webhookChangeQueries(b),
    ...enqueueQueries(b),
    ...claimQueries(b),
    ...finishQueries(b),
    ...deliveryReadQueries(b),
    ...replayQueries(b),
  };
}

/** What the store's method groups share: the backend, its queries, the clock and a webhook by id. */
interface StoreContext {
  readonly b: Backend;
  readonly q: ReturnType<typeof webhookQueries>;
  /** Now, as an ISO timestamp. */
  readonly iso: () => string;
  readonly get: (id: string) => Promise<Webhook | null>;
}

/** The store's methods over webhooks themselves. */
function webhookMethods({
  b,
  q,
  iso,
  get,
}: StoreContext): Pick<
  WebhookStore,
  | 'createWebhook'
  | 'getWebhook'
  | 'listWebhooks'
  | 'setWebhookStatus'
  | 'updateWebhook'
  | 'deleteWebhook'
  | 'setSuspension'
  | 'rotateSecret'
  | 'getSecrets'
> {
  return {
    async createWebhook(w) {
      const t = iso();
      await b.run('plain', () =>
        rows(
          q.insert(
            w.id,
            w.account_id,
            w.scope,
            w.url,
            w.filter,
            JSON.stringify(w.filters),
            w.description,
            w.secret,
            w.watermark_lead_id,
            w.watermark_release,
            (w.types ?? ['lead.new']).join(','),
            w.watermark_event_id ?? 0,
            t,
          ),
        ),
      );
      return (await get(w.id))!;
    },
    getWebhook: get,
    async listWebhooks(f = {}) {
      return (await b.run('plain', () => rows(q.list(f)))).map(toWebhook);
    },
    async setWebhookStatus(id, status, reason) {
      await b.run('plain', () => rows(q.setStatus(status, status === 'disabled' ? reason : null, iso(), id)));
      return get(id);
    },
    async updateWebhook(id, patch) {
      await b.run('plain', () => rows(q.update(id, patch, iso())));
      return get(id);
    },
    async deleteWebhook(id) {
      return b.run('atomic', function* () {
        const [found] = yield q.lockWebhook(id);
        if (!found) return false;
        yield q.deleteAttempts(id);
        yield q.deleteDeliveries(id);
        yield q.deleteWebhook(id);
        return true;
      });
    },
    async setSuspension(id, reason, at) {
      await b.run('plain', () => rows(reason === null ? q.resume(id) : q.suspend(at.toISOString(), reason, id)));
      return get(id);
    },
    async rotateSecret(id, secret, previousExpiresAt) {
      await b.run('plain', () => rows(q.rotate(previousExpiresAt.toISOString(), secret, iso(), id)));
      return get(id);
    },
    async getSecrets(id): Promise<WebhookSecrets | null> {
      const [r] = await b.run('plain', () => rows(q.secrets(id)));
      return r
        ? { current: r['secret'], previous: r['previous_secret'], previous_expires_at: r['previous_secret_expires_at'] }
        : null;
    },
  };
}

/** The store's methods that move deliveries through the queue: enqueue, claim, release, finish, replay. */
function queueMethods({
  b,
  q,
  iso,
}: StoreContext): Pick<WebhookStore, 'enqueue' | 'claimDue' | 'releaseClaim' | 'finishAttempt' | 'replayDead'> {
  return {
    enqueue(webhookId, deliveries, wm) {
      return b.run('atomic', function* () {
        const t = iso();
        const moved =
          wm &&
          (wm.events
            ? q.advanceBoth(wm.to, wm.release, wm.events.to, t, webhookId, wm.from, wm.events.from)
            : q.advance(wm.to, wm.release, t, webhookId, wm.from));
        if (moved && (yield moved).length !== 1) return false;
        for (const c of chunks(deliveries, DELIVERY_CHUNK)) yield q.insertDeliveries(webhookId, t, c);
        return true;
      });
    },
    claimDue(o) {
      return b.run('atomic', function* () {
        const t = o.now.toISOString();
        const picked = o.deliveryId !== undefined ? yield q.pickOne(o.deliveryId, t) : yield q.pickDue(t, o.limit);
        if (picked.length === 0) return [];
        const ids = picked.map((r) => r['id'] as string);
        const stale = picked.filter((r) => r['status'] === 'delivering').map((r) => r['id'] as string);
        if (stale.length) yield q.abandon(stale);
        yield q.lease(o.owner, o.leaseUntil.toISOString(), t, ids);
        yield q.logSending(t, ids);
        return (yield q.claimed(ids)).map(toClaimed);
      });
    },
    releaseClaim(id, owner, attemptNo) {
      return b.run('atomic', function* () {
        if ((yield q.held(id, owner)).length === 0) return false;
        yield q.dropSending(id, attemptNo);
        yield q.unlease(id);
        return true;
      });
    },
    finishAttempt(id, owner, a, o) {
      return b.run('atomic', function* () {
        const outcome = o.status === 'delivered' ? 'delivered' : o.status === 'dead' ? 'dead' : 'retry';
        yield q.finishAttempt(a.status_code, a.latency_ms, a.error, outcome, id, a.attempt_no);
        const r = yield q.finishDelivery(
          o.status,
          o.status === 'pending' ? o.next_attempt_at.toISOString() : null,
          o.status === 'delivered' ? iso() : null,
          o.status === 'dead' ? o.reason : null,
          a.status_code,
          a.error,
          a.latency_ms,
          id,
          owner,
        );
        return r.length === 1;
      });
    },
    replayDead(webhookId, t, ids) {
      return b.run('atomic', function* () {
        const dead = (yield q.dead(webhookId))
          .map((r) => r['id'] as string)
          .filter((id) => ids === undefined || ids.includes(id));
        if (dead.length) yield q.replay(t.toISOString(), dead);
        return dead;
      });
    },
  };
}

/** The store's methods that read the queue: deliveries, attempts, the monitoring counts. */
function deliveryReadMethods({
  b,
  q,
}: StoreContext): Pick<
  WebhookStore,
  'getDelivery' | 'listDeliveries' | 'pageDeliveries' | 'listAttempts' | 'queueStats'
> {
  return {
    async getDelivery(id) {
      const [r] = await b.run('plain', () => rows(q.delivery(id)));
      return r ? toDelivery(r) : null;
    },
    async listDeliveries(webhookId, o = {}) {
      return (await b.run('plain', () => rows(q.listDeliveries(webhookId, o.status, o.limit ?? 100)))).map(toDelivery);
    },
    async pageDeliveries(webhookId, o) {
      const found = await b.run('plain', () => rows(q.pageDeliveries(webhookId, o.status, o.limit, o.after)));
      return {
        deliveries: found.map(toDelivery),
        positions: found.map((r) => [String(r['created_at']), Number(r['_seq'])] as const),
      };
    },
    async listAttempts(deliveryId) {
      return (await b.run('plain', () => rows(q.attempts(deliveryId)))).map(toAttempt);
    },
    async queueStats() {
      const out = { queued: 0, held: 0, oldestQueuedAt: null as string | null };
      for (const r of await b.run('plain', () => rows(q.queueStats()))) {
        if (Number(r['held']) === 1) out.held = Number(r['n']);
        else ((out.queued = Number(r['n'])), (out.oldestQueuedAt = r['oldest'] ?? null));
      }
      return out;
    },
  };
}

/** The webhook store on `b`; `now` dates created_at, updated_at and delivered_at. */
export function webhookStore(b: Backend, now: () => Date): WebhookStore {
  const q = webhookQueries(b);
  const iso = (): string => now().toISOString();
  const get = async (id: string): Promise<Webhook | null> => {
    const [r] = await b.run('plain', () => rows(q.byId(id)));
    return r ? toWebhook(r) : null;
  };
  const s: StoreContext = { b, q, iso, get };
  return { ...webhookMethods(s), ...queueMethods(s), ...deliveryReadMethods(s) };
}
