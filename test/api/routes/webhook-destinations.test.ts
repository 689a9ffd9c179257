/**
 * Webhook destinations over real HTTP (issue 13, 3.3): `POST /v1/webhooks` refuses a loopback
 * host in every spelling and a name that resolves to one (`127.0.0.1.nip.io`); a name that
 * resolved to a public address at creation and to 127.0.0.1 at delivery (DNS rebinding), and
 * webhooks stored before this check with such URLs, are refused at connect time with the reason in
 * the delivery log. Names are resolved by a fake resolver given to the server: no DNS query leaves
 * the box, and the only address anything could connect to is 127.0.0.1.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { isIP } from 'node:net';
import { assertProblem, startTestApi, type TestApi } from '../../helpers/api.ts';
import { startReceiver, type Receiver } from '../../helpers/webhook-receiver.ts';
import { generateSecret } from '../../../api/webhooks/signing.ts';

/** What the fake resolver answers now (changed by the tests); every name asked for is recorded. */
const table: Record<string, string[]> = { '127.0.0.1.nip.io': ['127.0.0.1'], 'mapped.example': ['::ffff:7f00:1'] };
const asked: string[] = [];
const resolveHost = async (host: string) => {
  asked.push(host);
  const a = table[host];
  if (!a) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
  return a.map((address) => ({ address, family: isIP(address) }));
};

let api: TestApi;
let rx: Receiver;
test.before(async () => {
  api = await startTestApi({ resolveHost }); // WEBHOOK_ALLOW_HOSTS empty: nothing private is allowed
  rx = await startReceiver();
});
test.after(async () => {
  await rx?.close();
  await api?.close();
});

const create = (url: string) => api.request('/v1/webhooks', { method: 'POST', body: { url } });

test('POST /v1/webhooks refuses a loopback destination in every spelling, and a name resolving to one', async () => {
  const port = new URL(rx.url('/x')).port;
  const urls = [
    'https://[::127.0.0.1]/',
    'https://[::ffff:0:7f00:1]/',
    'https://[::ffff:127.0.0.1]/',
    'https://2130706433/',
    'https://0177.0.0.1/',
    'https://0x7f.0.0.1/',
    'https://127.1/',
    'https://127.0.0.1./',
    'https://localhost./',
    'https://[64:ff9b::7f00:1]/',
    `https://127.0.0.1.nip.io:${port}/hook`,
    'https://127.0.0.1.nip.io./hook',
    'https://mapped.example/hook',
  ];
  for (const url of urls) {
    const res = await create(url);
    assertProblem(res, 400, 'invalid_parameter');
    assert.equal(
      res.body.errors.map((e: { name: string }) => e.name),
      ['url'],
      url,
    );
    assert.match(res.body.errors[0].reason, /private or loopback/, url);
  }
  const nip = await create('https://127.0.0.1.nip.io/hook');
  assert.match(nip.body.errors[0].reason, /127\.0\.0\.1\.nip\.io resolves to 127\.0\.0\.1/);
  assert.equal((await api.request('/v1/webhooks')).body.results, [], 'nothing was created');
  assert.ok(asked.includes('127.0.0.1.nip.io'), 'the name was resolved, by the injected resolver');
});

test('a name rebound to 127.0.0.1 after creation is refused at connect time; the delivery log says why', async () => {
  const port = new URL(rx.url('/x')).port;
  table['rebind.example'] = ['93.184.216.34'];
  const created = await create(`https://rebind.example:${port}/hook`);
  assert.is(created.status, 201, created.text);
  table['rebind.example'] = ['127.0.0.1'];
  const sent = await api.request(`/v1/webhooks/${created.body.id}/test`, { method: 'POST' });
  assert.is(sent.status, 200, sent.text);
  assert.equal([sent.body.status, sent.body.last_status_code], ['pending', null]);
  assert.match(
    sent.body.last_error,
    /rebind\.example resolves to 127\.0\.0\.1, a private or loopback address; refused at connect time/,
  );
  const log = await api.request(`/v1/webhooks/${created.body.id}/deliveries`);
  assert.match(log.body.results[0].last_error, /refused at connect time/);
  assert.is(rx.requests('/hook').length, 0, 'nothing reached the receiver');
});

test('webhooks stored before this check, with a loopback URL in another spelling, are refused when they send', async () => {
  const port = new URL(rx.url('/x')).port;
  const account = (await api.store.getAccountByName('test'))!.id;
  for (const [i, url] of [
    `https://[::127.0.0.1]:${port}/old`,
    `https://[::ffff:0:7f00:1]:${port}/old`,
    `https://127.0.0.1.nip.io:${port}/old`,
  ].entries()) {
    const id = `wh_00000000000000a${i}`;
    await api.store.webhooks.createWebhook({
      id,
      account_id: account,
      scope: 'ent_api',
      url,
      filter: '',
      filters: {},
      description: null,
      secret: generateSecret(),
      watermark_lead_id: 0,
      watermark_release: null,
    });
    const sent = await api.request(`/v1/webhooks/${id}/test`, { method: 'POST' });
    assert.is(sent.status, 200, sent.text);
    assert.equal([sent.body.status, sent.body.last_status_code], ['pending', null], url);
    assert.match(sent.body.last_error, /private or loopback/, url);
  }
  assert.is(rx.requests('/old').length, 0, 'nothing reached the receiver');
});

test.run();
