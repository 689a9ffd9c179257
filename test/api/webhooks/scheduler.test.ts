/**
 * The webhook scheduler inside the server (`make serve`): with WEBHOOK_INTERVAL_MS set, the
 * running server itself sends deliveries that come due — here the retry of a failed test
 * event, due 30 s later on the server's (injected) clock — with the same event id, and logs it.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestApi, type TestApi } from '../../helpers/api.ts';
import { startReceiver, type Receiver } from '../../helpers/webhook-receiver.ts';

let api: TestApi;
let rx: Receiver;
let now = Date.parse('2026-11-20T10:00:00Z');

test.before(async () => {
  api = await startTestApi({
    clock: () => new Date(now),
    config: { webhookAllowHosts: ['127.0.0.1'], webhookIntervalMs: 3_600_000, webhookPollMs: 100 },
  });
  rx = await startReceiver();
});
test.after(async () => {
  await rx?.close();
  await api?.close();
});

const waitFor = async (what: string, ok: () => boolean, ms = 10_000): Promise<void> => {
  const until = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
};

test("a delivery that comes due is sent by the server's own scheduler, same event id", async () => {
  rx.script('/sched', (_r, n) => ({ status: n === 1 ? 500 : 204 }));
  const created = await api.request('/v1/webhooks', { method: 'POST', body: { url: rx.url('/sched') } });
  assert.is(created.status, 201, created.text);
  const sent = await api.request(`/v1/webhooks/${created.body.id}/test`, { method: 'POST' });
  assert.is(sent.status, 200, sent.text);
  assert.is(sent.body.last_status_code, 500);
  assert.is.not(sent.body.status, 'delivered');
  await new Promise((r) => setTimeout(r, 400)); // several poll ticks: not due yet on the server's clock
  assert.is(rx.requests('/sched').length, 1, 'the retry waits for its time');
  now += 10 * 60_000; // past the first retry delay (30 s + jitter)
  await waitFor('the scheduled retry', () => rx.requests('/sched').length === 2);
  const [first, second] = rx.requests('/sched');
  assert.is(second!.headers['webhook-id'], first!.headers['webhook-id']);
  assert.ok(second!.body.equals(first!.body), 'the same body is re-sent');
  await waitFor('the delivery log', () => api.logs.some((l) => l.includes('webhooks deliver')));
  const log = await api.request(`/v1/webhooks/${created.body.id}/deliveries`);
  assert.equal([log.body.results[0].status, log.body.results[0].attempts], ['delivered', 2]);
});

test.run();
