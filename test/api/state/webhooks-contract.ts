/**
 * The webhook store contract (api/state/webhook-interface.ts): what every backend must do, as one uvu
 * suite per backend (webhooks-sqlite.test.ts, webhooks-postgres.pg.test.ts). Each backend opens a
 * fresh store, and a second store on the same data (another process / replica) for the
 * concurrency cases.
 */
import type { StoreBackend } from '../../helpers/store-backends.ts';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { rejects } from 'node:assert/strict';
import type { StateStore } from '../../../api/state/store-interface.ts';
import type { NewDelivery, NewWebhook } from '../../../api/state/webhook-interface.ts';

export const T0 = Date.parse('2026-11-20T10:00:00.000Z');

/** A backend the suite runs on (test/helpers/store-backends.ts). */
export type WebhookContractBackend = StoreBackend;

/** A clock the test moves: `clock.at(s)` = T0 + s seconds. */
function settable(): { now: () => Date; at: (s: number) => Date } {
  let t = T0;
  return { now: () => new Date(t), at: (s) => new Date((t = T0 + s * 1000)) };
}

const at = (s: number): Date => new Date(T0 + s * 1000);

const newWebhook = (account_id: number, over: Partial<NewWebhook> = {}): NewWebhook => ({
  id: `wh_${Math.random().toString(16).slice(2, 18).padEnd(16, '0')}`,
  account_id,
  scope: 'ent_api',
  url: 'https://hooks.example.com/leads',
  filter: 'county=Cork',
  filters: { county: ['Cork'] },
  description: null,
  secret: 'whsec_first',
  watermark_lead_id: 100,
  watermark_release: 'r1',
  ...over,
});

let seq = 0;
const delivery = (over: Partial<NewDelivery> = {}): NewDelivery => {
  const id = `evt_${String(++seq).padStart(24, '0')}`;
  return {
    id,
    type: 'lead.new',
    created_at: new Date(T0).toISOString(),
    body: JSON.stringify({ id, leads: [seq] }),
    lead_count: 1,
    ...over,
  };
};

export function webhookStoreContract(name: string, backend: WebhookContractBackend): void {
  const test = suite(`webhook store contract: ${name}`);
  const clock = settable();
  const withStore = async (fn: (s: StateStore) => Promise<void>): Promise<void> => {
    clock.at(0);
    const s = await backend.open({ now: clock.now });
    try {
      await fn(s);
    } finally {
      await s.close();
    }
  };
  test.after(backend.cleanup);

  test('webhooks: created, read, listed per account and status, disabled and enabled, secrets rotated', () =>
    withStore(async (s) => {
      const a = await s.createAccount('acme', 'premium');
      const b = await s.createAccount('beta', 'pro');
      const w1 = await s.webhooks.createWebhook(
        newWebhook(a.id, { id: 'wh_0000000000000001', description: 'cork solar' }),
      );
      assert.equal(w1, {
        id: 'wh_0000000000000001',
        account_id: a.id,
        account_name: 'acme',
        scope: 'ent_api',
        url: 'https://hooks.example.com/leads',
        filter: 'county=Cork',
        filters: { county: ['Cork'] },
        description: 'cork solar',
        status: 'active',
        disabled_reason: null,
        watermark_lead_id: 100,
        watermark_release: 'r1',
        types: ['lead.new'],
        watermark_event_id: 0,
        secret_rotated_at: null,
        previous_secret_expires_at: null,
        suspended_at: null,
        suspended_reason: null,
        created_at: at(0).toISOString(),
        updated_at: at(0).toISOString(),
      });
      assert.not.ok('secret' in w1, 'a webhook never carries its secret');
      clock.at(10);
      const w2 = await s.webhooks.createWebhook(newWebhook(b.id, { id: 'wh_0000000000000002' }));
      assert.equal(await s.webhooks.getWebhook(w1.id), w1);
      assert.is(await s.webhooks.getWebhook('wh_missing'), null);
      assert.equal(
        (await s.webhooks.listWebhooks()).map((w) => w.id),
        [w1.id, w2.id],
      );
      assert.equal(
        (await s.webhooks.listWebhooks({ accountId: b.id })).map((w) => w.id),
        [w2.id],
      );
      clock.at(20);
      const off = await s.webhooks.setWebhookStatus(w1.id, 'disabled', 'by owner');
      assert.equal(
        [off?.status, off?.disabled_reason, off?.updated_at],
        ['disabled', 'by owner', at(20).toISOString()],
      );
      assert.equal(
        (await s.webhooks.listWebhooks({ status: 'active' })).map((w) => w.id),
        [w2.id],
      );
      assert.equal([(await s.webhooks.setWebhookStatus(w1.id, 'active', 'ignored'))?.disabled_reason], [null]);
      assert.is(await s.webhooks.setWebhookStatus('wh_missing', 'disabled', null), null);
      assert.equal(await s.webhooks.getSecrets(w1.id), {
        current: 'whsec_first',
        previous: null,
        previous_expires_at: null,
      });
      clock.at(30);
      const rotated = await s.webhooks.rotateSecret(w1.id, 'whsec_second', at(30 + 86_400));
      assert.is(rotated?.secret_rotated_at, at(30).toISOString());
      assert.is(rotated?.previous_secret_expires_at, at(30 + 86_400).toISOString());
      assert.equal(await s.webhooks.getSecrets(w1.id), {
        current: 'whsec_second',
        previous: 'whsec_first',
        previous_expires_at: at(30 + 86_400).toISOString(),
      });
      await rejects(() => s.webhooks.createWebhook(newWebhook(999)), /foreign key/i);
      await rejects(() => s.webhooks.createWebhook(newWebhook(a.id, { scope: 'gold' as never })), /check/i);
    }));

  test('enqueue moves the watermark and inserts the batch atomically, once (compare-and-set)', () =>
    withStore(async (s) => {
      const a = await s.createAccount('acme', 'premium');
      const w = await s.webhooks.createWebhook(newWebhook(a.id));
      const batch = [delivery(), delivery()];
      assert.ok(await s.webhooks.enqueue(w.id, batch, { from: 100, to: 150, release: 'r2' }));
      assert.not.ok(
        await s.webhooks.enqueue(w.id, [delivery()], { from: 100, to: 160, release: 'r3' }),
        'a stale watermark writes nothing',
      );
      const after = await s.webhooks.getWebhook(w.id);
      assert.equal([after?.watermark_lead_id, after?.watermark_release], [150, 'r2']);
      // event types and the event-log watermark, compare-and-set with the lead watermark
      const typed = await s.webhooks.createWebhook(
        newWebhook(a.id, {
          id: 'wh_00000000000000ty',
          types: ['lead.new', 'lead.stage_changed'],
          watermark_event_id: 40,
        }),
      );
      assert.equal([typed.types, typed.watermark_event_id], [['lead.new', 'lead.stage_changed'], 40]);
      assert.not.ok(
        await s.webhooks.enqueue(typed.id, [delivery()], {
          from: 100,
          to: 150,
          release: 'r2',
          events: { from: 39, to: 70 },
        }),
        'a stale event watermark writes nothing',
      );
      assert.ok(
        await s.webhooks.enqueue(typed.id, [delivery({ type: 'lead.stage_changed' })], {
          from: 100,
          to: 150,
          release: 'r2',
          events: { from: 40, to: 70 },
        }),
      );
      const moved = await s.webhooks.getWebhook(typed.id);
      assert.equal([moved?.watermark_lead_id, moved?.watermark_event_id], [150, 70]);
      assert.equal(
        (await s.webhooks.listDeliveries(typed.id)).map((d) => d.type),
        ['lead.stage_changed'],
      );
      const listed = await s.webhooks.listDeliveries(w.id);
      assert.equal(
        listed.map((d) => d.id),
        [batch[1]!.id, batch[0]!.id],
        'newest first',
      );
      assert.equal(listed[0], {
        id: batch[1]!.id,
        webhook_id: w.id,
        type: 'lead.new',
        created_at: at(0).toISOString(),
        lead_count: 1,
        status: 'pending',
        attempts: 0,
        next_attempt_at: at(0).toISOString(),
        last_attempt_at: null,
        last_status_code: null,
        last_error: null,
        last_latency_ms: null,
        delivered_at: null,
        dead_reason: null,
        suspended_reason: null,
      });
      // a duplicate event id is refused and rolls the watermark back with it
      await rejects(
        () => s.webhooks.enqueue(w.id, [batch[0]!], { from: 150, to: 170, release: 'r4' }),
        /unique|duplicate/i,
      );
      assert.is((await s.webhooks.getWebhook(w.id))?.watermark_lead_id, 150);
      // without a watermark (test events) only the delivery is added
      assert.ok(await s.webhooks.enqueue(w.id, [delivery({ type: 'webhook.test', lead_count: 0 })]));
      assert.is((await s.webhooks.listDeliveries(w.id)).length, 3);
      // keyset pages of the same list (issue 31, 16): in its order, each once, a position per row
      const all = (await s.webhooks.listDeliveries(w.id)).map((d) => d.id);
      const first = await s.webhooks.pageDeliveries(w.id, { limit: 2 });
      assert.equal(
        first.deliveries.map((d) => d.id),
        all.slice(0, 2),
      );
      assert.is(first.positions.length, 2);
      const rest = await s.webhooks.pageDeliveries(w.id, { limit: 2, after: first.positions[1]! });
      assert.equal(
        rest.deliveries.map((d) => d.id),
        all.slice(2),
      );
      assert.equal((await s.webhooks.pageDeliveries(w.id, { limit: 5, after: rest.positions.at(-1)! })).deliveries, []);
    }));

  test('claims: due only, leased to one owner, outcome recorded by the owner; a lapsed lease is re-sent with the same id and body', () =>
    withStore(async (s) => {
      const a = await s.createAccount('acme', 'premium');
      const w = await s.webhooks.createWebhook(newWebhook(a.id));
      const d = delivery();
      await s.webhooks.enqueue(w.id, [d]);
      clock.at(5);
      const [c1, ...more] = await s.webhooks.claimDue({ now: at(5), limit: 10, leaseUntil: at(65), owner: 'one' });
      assert.is(more.length, 0);
      assert.equal(
        [c1!.id, c1!.body, c1!.url, c1!.attempts, c1!.attempt_no, c1!.status],
        [d.id, d.body, w.url, 1, 1, 'delivering'],
      );
      assert.equal(c1!.secrets, { current: 'whsec_first', previous: null, previous_expires_at: null });
      assert.equal(
        await s.webhooks.claimDue({ now: at(30), limit: 10, leaseUntil: at(90), owner: 'two' }),
        [],
        'leased: nobody else gets it',
      );
      // the first owner dies without recording; after the lease the delivery is due again
      const [c2] = await s.webhooks.claimDue({ now: at(65), limit: 10, leaseUntil: at(125), owner: 'two' });
      assert.equal([c2!.id, c2!.body, c2!.attempts, c2!.attempt_no], [d.id, d.body, 2, 2]);
      assert.not.ok(
        await s.webhooks.finishAttempt(
          d.id,
          'one',
          { attempt_no: 1, status_code: 200, latency_ms: 5, error: null },
          { status: 'delivered' },
        ),
        'the old owner lost the lease',
      );
      clock.at(70);
      assert.ok(
        await s.webhooks.finishAttempt(
          d.id,
          'two',
          { attempt_no: 2, status_code: 500, latency_ms: 12, error: null },
          { status: 'pending', next_attempt_at: at(200) },
        ),
      );
      const pending = await s.webhooks.getDelivery(d.id);
      assert.equal(
        [
          pending?.status,
          pending?.attempts,
          pending?.next_attempt_at,
          pending?.last_status_code,
          pending?.last_latency_ms,
        ],
        ['pending', 2, at(200).toISOString(), 500, 12],
      );
      assert.equal(
        await s.webhooks.claimDue({ now: at(199), limit: 10, leaseUntil: at(300), owner: 'two' }),
        [],
        'not due before next_attempt_at',
      );
      const [c3] = await s.webhooks.claimDue({ now: at(200), limit: 10, leaseUntil: at(300), owner: 'two' });
      clock.at(201);
      assert.ok(
        await s.webhooks.finishAttempt(
          d.id,
          'two',
          { attempt_no: c3!.attempt_no, status_code: 204, latency_ms: 3, error: null },
          { status: 'delivered' },
        ),
      );
      const done = await s.webhooks.getDelivery(d.id);
      assert.equal(
        [done?.status, done?.delivered_at, done?.next_attempt_at],
        ['delivered', at(201).toISOString(), null],
      );
      assert.equal(
        (await s.webhooks.listAttempts(d.id)).map((x) => [x.attempt_no, x.outcome, x.status_code]),
        [
          [1, 'abandoned', 200],
          [2, 'retry', 500],
          [3, 'delivered', 204],
        ], // the late answer is logged; the attempt stays abandoned
      );
      assert.equal(
        await s.webhooks.claimDue({ now: at(9999), limit: 10, leaseUntil: at(99999), owner: 'x' }),
        [],
        'delivered is never claimed again',
      );
    }));

  test('disabled webhooks are not claimed (their queue waits); a delivery can be claimed by id; dead letters replay with a fresh budget', () =>
    withStore(async (s) => {
      const a = await s.createAccount('acme', 'premium');
      const w = await s.webhooks.createWebhook(newWebhook(a.id));
      const [d1, d2] = [delivery(), delivery()];
      await s.webhooks.enqueue(w.id, [d1!, d2!]);
      await s.webhooks.setWebhookStatus(w.id, 'disabled', 'test');
      assert.equal(await s.webhooks.claimDue({ now: at(10), limit: 10, leaseUntil: at(70), owner: 'o' }), []);
      const [byId] = await s.webhooks.claimDue({
        now: at(10),
        limit: 1,
        leaseUntil: at(70),
        owner: 'o',
        deliveryId: d1!.id,
      });
      assert.is(byId?.id, d1!.id);
      assert.ok(
        await s.webhooks.finishAttempt(
          d1!.id,
          'o',
          { attempt_no: 1, status_code: 410, latency_ms: 1, error: null },
          { status: 'dead', reason: 'gone' },
        ),
      );
      await s.webhooks.setWebhookStatus(w.id, 'active', null);
      const [c2] = await s.webhooks.claimDue({ now: at(20), limit: 10, leaseUntil: at(80), owner: 'o' });
      assert.is(c2?.id, d2!.id);
      await s.webhooks.finishAttempt(
        d2!.id,
        'o',
        { attempt_no: 1, status_code: null, latency_ms: 100, error: 'ECONNREFUSED' },
        { status: 'dead', reason: 'failed 1 attempts' },
      );
      assert.equal(
        (await s.webhooks.listDeliveries(w.id, { status: 'dead' })).map((d) => [d.id, d.dead_reason, d.last_error]),
        [
          [d2!.id, 'failed 1 attempts', 'ECONNREFUSED'],
          [d1!.id, 'gone', null],
        ],
      );
      assert.equal(await s.webhooks.replayDead(w.id, at(30), [d1!.id, 'evt_other']), [d1!.id]);
      const replayed = await s.webhooks.getDelivery(d1!.id);
      assert.equal(
        [replayed?.status, replayed?.attempts, replayed?.next_attempt_at, replayed?.dead_reason],
        ['pending', 0, at(30).toISOString(), null],
      );
      assert.equal(await s.webhooks.replayDead(w.id, at(31)), [d2!.id], 'no ids: every dead letter');
      const again = await s.webhooks.claimDue({ now: at(40), limit: 10, leaseUntil: at(100), owner: 'o' });
      assert.equal(
        again.map((c) => [c.id, c.attempts, c.attempt_no]).sort(),
        [
          [d1!.id, 1, 2],
          [d2!.id, 1, 2],
        ].sort(),
      );
    }));

  test('suspension: a suspended webhook is not claimed, its pending deliveries read as suspended with the reason; resumed, they are due as before', () =>
    withStore(async (s) => {
      const a = await s.createAccount('acme', 'premium');
      const w = await s.webhooks.createWebhook(newWebhook(a.id));
      const other = await s.webhooks.createWebhook(newWebhook(a.id));
      const [d1, d2, d3] = [delivery(), delivery(), delivery()];
      await s.webhooks.enqueue(w.id, [d1!, d2!]);
      await s.webhooks.enqueue(other.id, [d3!]);
      // d1 is delivered first: suspension leaves it alone
      const [c1] = await s.webhooks.claimDue({ now: at(1), limit: 1, leaseUntil: at(61), owner: 'o' });
      assert.is(c1?.id, d1!.id);
      assert.equal(
        [c1?.account_id, c1?.scope],
        [a.id, 'ent_api'],
        'a claim carries the account and scope that decide how it is sent',
      );
      await s.webhooks.finishAttempt(
        d1!.id,
        'o',
        { attempt_no: 1, status_code: 204, latency_ms: 1, error: null },
        { status: 'delivered' },
      );
      clock.at(10);
      const sus = await s.webhooks.setSuspension(w.id, 'no key', at(10));
      assert.equal(
        [sus?.suspended_at, sus?.suspended_reason, sus?.updated_at],
        [at(10).toISOString(), 'no key', at(0).toISOString()],
      );
      // suspended again later: the first time stays, the reason is replaced
      const again = await s.webhooks.setSuspension(w.id, 'no key, still', at(20));
      assert.equal([again?.suspended_at, again?.suspended_reason], [at(10).toISOString(), 'no key, still']);
      assert.equal(
        (await s.webhooks.listWebhooks({ suspended: true })).map((x) => x.id),
        [w.id],
      );
      assert.equal(
        (await s.webhooks.listWebhooks({ status: 'active', suspended: false })).map((x) => x.id),
        [other.id],
      );
      const log = await s.webhooks.listDeliveries(w.id);
      assert.equal(
        log.map((d) => [d.id, d.status, d.suspended_reason]),
        [
          [d2!.id, 'suspended', 'no key, still'],
          [d1!.id, 'delivered', null],
        ],
      );
      assert.equal(
        (await s.webhooks.listDeliveries(w.id, { status: 'suspended' })).map((d) => d.id),
        [d2!.id],
      );
      assert.equal(await s.webhooks.listDeliveries(w.id, { status: 'pending' }), []);
      assert.equal(
        [(await s.webhooks.getDelivery(d2!.id))?.status, (await s.webhooks.getDelivery(d3!.id))?.status],
        ['suspended', 'pending'],
      );
      const claimed = await s.webhooks.claimDue({ now: at(30), limit: 10, leaseUntil: at(90), owner: 'o' });
      assert.equal(
        claimed.map((c) => c.id),
        [d3!.id],
        "only the unsuspended webhook's delivery",
      );
      const resumed = await s.webhooks.setSuspension(w.id, null, at(40));
      assert.equal([resumed?.suspended_at, resumed?.suspended_reason], [null, null]);
      const d2now = await s.webhooks.getDelivery(d2!.id);
      assert.equal(
        [d2now?.status, d2now?.suspended_reason, d2now?.next_attempt_at, d2now?.attempts],
        ['pending', null, at(0).toISOString(), 0],
      );
      assert.equal(
        (await s.webhooks.claimDue({ now: at(40), limit: 10, leaseUntil: at(100), owner: 'o' })).map((c) => c.id),
        [d2!.id],
      );
      assert.is(await s.webhooks.setSuspension('wh_missing', 'x', at(50)), null);
    }));

  test('releaseClaim: a claim not sent is given back uncounted and unlogged; only by the lease owner', () =>
    withStore(async (s) => {
      const a = await s.createAccount('acme', 'premium');
      const w = await s.webhooks.createWebhook(newWebhook(a.id));
      const d = delivery();
      await s.webhooks.enqueue(w.id, [d]);
      const [c1] = await s.webhooks.claimDue({ now: at(5), limit: 1, leaseUntil: at(65), owner: 'o' });
      await s.webhooks.finishAttempt(
        d.id,
        'o',
        { attempt_no: c1!.attempt_no, status_code: 500, latency_ms: 2, error: null },
        { status: 'pending', next_attempt_at: at(30) },
      );
      const [c2] = await s.webhooks.claimDue({ now: at(30), limit: 1, leaseUntil: at(90), owner: 'o' });
      assert.equal([c2?.attempt_no, c2?.attempts], [2, 2]);
      assert.not.ok(await s.webhooks.releaseClaim(d.id, 'someone-else', 2), 'not the lease owner');
      assert.ok(await s.webhooks.releaseClaim(d.id, 'o', 2));
      const back = await s.webhooks.getDelivery(d.id);
      assert.equal(
        [back?.status, back?.attempts, back?.next_attempt_at, back?.last_attempt_at, back?.last_status_code],
        ['pending', 1, at(30).toISOString(), at(5).toISOString(), 500],
        'as it was before the claim',
      );
      assert.equal(
        (await s.webhooks.listAttempts(d.id)).map((x) => [x.attempt_no, x.outcome]),
        [[1, 'retry']],
      );
      assert.not.ok(await s.webhooks.releaseClaim(d.id, 'o', 2), 'nothing to give back twice');
      const [c3] = await s.webhooks.claimDue({ now: at(31), limit: 1, leaseUntil: at(91), owner: 'o' });
      assert.equal([c3?.id, c3?.attempt_no, c3?.attempts], [d.id, 2, 2], 'claimed again as the same attempt');
    }));

  test('queueStats (monitoring): undelivered deliveries of active webhooks, queued or held, and the oldest queued one', () =>
    withStore(async (s) => {
      assert.equal(await s.webhooks.queueStats(), { queued: 0, held: 0, oldestQueuedAt: null }, 'empty');
      const a = await s.createAccount('acme', 'premium');
      const [w, held, off] = [
        await s.webhooks.createWebhook(newWebhook(a.id)),
        await s.webhooks.createWebhook(newWebhook(a.id)),
        await s.webhooks.createWebhook(newWebhook(a.id)),
      ];
      const [d1, d2] = [delivery({ created_at: at(5).toISOString() }), delivery({ created_at: at(1).toISOString() })];
      await s.webhooks.enqueue(w.id, [d1, d2]);
      await s.webhooks.enqueue(held.id, [delivery({ created_at: at(0).toISOString() })]);
      await s.webhooks.enqueue(off.id, [delivery({ created_at: at(0).toISOString() })]);
      await s.webhooks.setSuspension(held.id, 'no key', at(2));
      await s.webhooks.setWebhookStatus(off.id, 'disabled', 'by owner');
      assert.equal(
        await s.webhooks.queueStats(),
        { queued: 2, held: 1, oldestQueuedAt: at(1).toISOString() },
        "a disabled webhook's deliveries are not queued",
      );
      const [c] = await s.webhooks.claimDue({ now: at(10), limit: 1, leaseUntil: at(70), owner: 'o' });
      assert.is(c?.id, d1.id, 'due first (enqueued first)');
      assert.equal(
        await s.webhooks.queueStats(),
        { queued: 2, held: 1, oldestQueuedAt: at(1).toISOString() },
        'being sent is still queued',
      );
      await s.webhooks.finishAttempt(
        d1.id,
        'o',
        { attempt_no: 1, status_code: 204, latency_ms: 1, error: null },
        { status: 'delivered' },
      );
      const [c2] = await s.webhooks.claimDue({ now: at(11), limit: 1, leaseUntil: at(71), owner: 'o' });
      await s.webhooks.finishAttempt(
        c2!.id,
        'o',
        { attempt_no: 1, status_code: 500, latency_ms: 1, error: null },
        { status: 'dead', reason: 'gave up' },
      );
      assert.equal(
        await s.webhooks.queueStats(),
        { queued: 0, held: 1, oldestQueuedAt: null },
        'delivered and dead ones leave the queue',
      );
    }));

  test('concurrent dispatchers on two connections claim every due delivery exactly once', () =>
    withStore(async (s) => {
      const other = await backend.openSibling(s, { now: clock.now });
      try {
        const a = await s.createAccount('acme', 'premium');
        const w = await s.webhooks.createWebhook(newWebhook(a.id));
        const all = Array.from({ length: 60 }, () => delivery());
        await s.webhooks.enqueue(w.id, all);
        const claimedBy = async (store: StateStore, owner: string): Promise<string[]> => {
          const got: string[] = [];
          for (;;) {
            const c = await store.webhooks.claimDue({ now: at(1), limit: 7, leaseUntil: at(61), owner });
            if (c.length === 0) return got;
            got.push(...c.map((x) => x.id));
          }
        };
        const results = await Promise.all([
          claimedBy(s, 'a1'),
          claimedBy(other, 'b1'),
          claimedBy(s, 'a2'),
          claimedBy(other, 'b2'),
        ]);
        const flat = results.flat();
        assert.is(flat.length, all.length, `claimed ${flat.length} of ${all.length}`);
        assert.is(new Set(flat).size, all.length, 'no delivery claimed twice');
      } finally {
        await other.close();
      }
    }));

  test.run();
}
