/**
 * The account area's pages (api/app-area/pages) over real HTTP through the test fixture
 * (test/helpers/app-harness.ts), next to a real API: keys made in the app work on the API and
 * stop at once when revoked there; scopes follow the plan; the 10-key limit is explained;
 * usage, the explorer (same total as GET /v1/leads, rows charged to the app's ledger entry,
 * CSV masked by plan), webhooks (test delivery verified with standardwebhooks, rotate,
 * disable, delete), licences and activity; one account never reaches another's keys, webhooks
 * or deliveries (404); labels and descriptions render inert.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { startAppHarness, type AppHarness } from '../../../helpers/app-harness.ts';
import { startReceiver, type Receiver } from '../../../helpers/webhook-receiver.ts';
import { tempDir } from '../../../helpers/tmp.ts';
import { appKeyId } from '../../../../api/app-area/account-service.ts';
import { MAX_SELF_SERVE_KEYS } from '../../../../api/access/licences.ts';
import { utcDay } from '../../../../api/access/limits.ts';
import type { Account } from '../../../../api/state/store-interface.ts';

let h: AppHarness;
let rx: Receiver;
let pro: Account;
let premium: Account;
let basic: Account;
const XSS = '<script>alert(1)</script>';

test.before(async () => {
  h = await startAppHarness({
    config: { webhookAllowHosts: ['127.0.0.1'] },
    resolveHost: async () => [{ address: '127.0.0.1', family: 4 }],
  });
  rx = await startReceiver();
  pro = await h.account('pro-co', 'pro');
  premium = await h.account('premium-co', 'premium');
  basic = await h.account('basic-co', 'basic');
});
test.after(async () => {
  await rx?.close();
  await h?.close();
});

const rawKey = (page: string): string => /id="new-key" readonly value="(lk_[A-Za-z0-9_-]+)"/.exec(page)?.[1] ?? '';
const keyIdOf = async (a: Account, raw: string): Promise<string> =>
  (await h.api.store.listKeys(a.id)).find((k) => raw.startsWith(k.display_prefix) && k.status === 'active')!.id;

test('keys: a commonwealth key made in the app works on the API, shown once; revoked in the app → 401 at once', async () => {
  const made = await h.post(pro, '/app/keys', { scope: 'commonwealth', label: XSS });
  assert.is(made.status, 201);
  const raw = rawKey(made.text);
  assert.match(raw, /^lk_cw_/);
  assert.match(made.headers.get('cache-control') ?? '', /no-store/);
  assert.ok(made.text.includes('&lt;script&gt;alert(1)&lt;/script&gt;'), 'the label is escaped');
  assert.not.ok(made.text.includes(XSS), 'the label never renders as markup');
  const list = await h.get(pro, '/app/keys');
  assert.not.ok(list.text.includes(raw), 'the key is never shown again');
  assert.ok(list.text.includes(raw.slice(0, 10)), 'its prefix is listed');
  // a real request with it, cached by the API's key cache (KEY_CACHE_MS 5 s)
  assert.is((await h.api.request('/v1/meta', { key: raw })).status, 200);
  assert.is((await h.api.request('/v1/meta', { key: raw })).status, 200);
  const id = await keyIdOf(pro, raw);
  const revoked = await h.post(pro, `/app/keys/${id}/revoke`);
  assert.is(revoked.status, 303, 'Post/Redirect/Get: a reload does not post again');
  assert.is(revoked.headers.get('location'), `/app/keys?revoked=${id}`);
  const listed = await h.get(pro, revoked.headers.get('location')!);
  assert.match(listed.text, /is revoked: the API refuses it from the next request/);
  assert.match(listed.text, /data-focus-result/, 'focus moves to the result');
  // the notice is for this account's own keys only
  assert.not.match((await h.get(premium, revoked.headers.get('location')!)).text, /is revoked/);
  const after = await h.api.request('/v1/meta', { key: raw });
  assert.is(after.status, 401, 'refused on the next request, not after the cache period');
  assert.is(after.body.code, 'revoked_key');
  const events = (await h.api.store.app.listActivity(pro.id)).map((e) => `${e.event} ${e.details['key_id']}`);
  assert.ok(events.includes(`key_created ${id}`) && events.includes(`key_revoked ${id}`), events.join(', '));
});

test('keys: scopes follow the plan (ent_api only on premium; ent_feed/custom only by licence)', async () => {
  const page = await h.get(pro, '/app/keys');
  assert.match(page.text, /id="scope-ent_api" value="ent_api" aria-describedby="scope-ent_api-why" disabled/);
  assert.match(page.text, /id="scope-ent_feed" value="ent_feed" aria-describedby="scope-ent_feed-why" disabled/);
  assert.match(
    page.text,
    /id="scope-commonwealth" value="commonwealth" aria-describedby="scope-commonwealth-why" checked/,
  );
  // named for what they give, the code small beside; the form starts on the best scope the plan allows
  assert.match(page.text, /Public leads <small class="code">\(<code>commonwealth<\/code>\)<\/small>/);
  assert.match(page.text, /Full leads <small class="code">\(<code>ent_api<\/code>\)<\/small>/);
  assert.match(page.text, /Needs the premium plan \(yours is pro\)/);
  const premiumForm = await h.get(premium, '/app/keys');
  assert.match(premiumForm.text, /id="scope-ent_api" value="ent_api" aria-describedby="scope-ent_api-why" checked/);
  assert.not.match(premiumForm.text, /value="commonwealth"[^>]*checked/);
  const refused = await h.post(pro, '/app/keys', { scope: 'ent_api' });
  assert.is(refused.status, 403);
  assert.match(refused.text, /Needs the premium plan \(yours is pro\)/);
  assert.not.match(refused.text, /leads licences create/);
  assert.is((await h.post(premium, '/app/keys', { scope: 'custom' })).status, 403);
  const ok = await h.post(premium, '/app/keys', { scope: 'ent_api', label: 'crm' });
  assert.is(ok.status, 201);
  assert.match(rawKey(ok.text), /^lk_ea_/);
});

test(`keys: the ${MAX_SELF_SERVE_KEYS}-key limit is explained, not a silent failure`, async () => {
  const a = await h.account('many-keys', 'basic');
  for (let i = 0; i < MAX_SELF_SERVE_KEYS; i++)
    assert.is((await h.post(a, '/app/keys', { scope: 'commonwealth', label: `k${i}` })).status, 201);
  const page = await h.get(a, '/app/keys');
  assert.match(page.text, /id="key-limit"/);
  assert.not.ok(page.text.includes('action="/app/keys"'), 'no create form at the limit');
  const over = await h.post(a, '/app/keys', { scope: 'commonwealth' });
  assert.is(over.status, 409);
  assert.match(over.text, /Revoke a key you no longer use/);
});

test('one account never reaches another account’s key, webhook or delivery: 404', async () => {
  const made = await h.post(premium, '/app/keys', { scope: 'ent_api', label: 'hooks' });
  const raw = rawKey(made.text);
  const id = await keyIdOf(premium, raw);
  const stranger = await h.post(basic, `/app/keys/${id}/revoke`);
  assert.is(stranger.status, 404);
  assert.is((await h.api.request('/v1/meta', { key: raw })).status, 200, 'the key still works');
  assert.is((await h.post(basic, `/app/keys/${appKeyId(premium.id)}/revoke`)).status, 404);
  const wh = await h.post(premium, '/app/webhooks', { url: rx.url('/iso'), description: 'iso' });
  assert.is(wh.status, 201, wh.text.slice(0, 500));
  const whId = /wh_[0-9a-f]{16}/.exec(wh.text)![0];
  const tested = await h.post(premium, `/app/webhooks/${whId}/test`);
  assert.is(tested.status, 303, 'Post/Redirect/Get');
  const delivery = /evt_[A-Za-z0-9_-]+/.exec(tested.headers.get('location') ?? '')![0];
  assert.is((await h.get(premium, `/app/webhooks/${whId}/deliveries/${delivery}`)).status, 200);
  for (const path of [`/app/webhooks/${whId}`, `/app/webhooks/${whId}/deliveries/${delivery}`])
    assert.is((await h.get(basic, path)).status, 404, path);
  for (const action of ['test', 'disable', 'enable', 'rotate-secret', 'replay', 'delete'])
    assert.is((await h.post(basic, `/app/webhooks/${whId}/${action}`)).status, 404, action);
  // a delivery id under another webhook of the right account is a 404 too
  const other = await h.post(premium, '/app/webhooks', { url: rx.url('/iso2') });
  const otherId = /wh_[0-9a-f]{16}/.exec(other.text)![0];
  assert.is((await h.get(premium, `/app/webhooks/${otherId}/deliveries/${delivery}`)).status, 404);
  assert.is((await h.get(premium, `/app/webhooks/${whId}`)).status, 200, 'still there for its owner');
});

test('webhooks: filter builder from the filter table, test delivery verified with standardwebhooks, rotate, disable, delete', async () => {
  const form = await h.get(premium, '/app/webhooks');
  for (const name of [
    'q',
    'vertical',
    'authority',
    'county',
    'readiness',
    'status',
    'use_class',
    'scale',
    'application_type',
    'min_value',
    'min_units',
    'has_contact',
    'demolition',
    'received_from',
    'received_to',
  ]) {
    assert.match(form.text, new RegExp(`<label for="wh-${name}">|name="${name}"`), name);
  }
  const county = (await h.api.request('/v1/leads?page_size=1')).body.results[0].county as string;
  assert.match(form.text, new RegExp(`<option value="${county}"></option>`), 'county values come from the release');
  assert.match(form.text, /<label for="wh-vertical-solar">Solar PV<\/label>/, 'trades in words');
  assert.not.match(form.text, /WEBHOOK_ALLOW_HOSTS/);
  const made = await h.post(premium, '/app/webhooks', {
    url: rx.url('/hook'),
    description: XSS,
    county,
    vertical: ['solar', 'roofing'],
  });
  assert.is(made.status, 201);
  assert.ok(
    made.text.includes('&lt;script&gt;alert(1)&lt;/script&gt;') && !made.text.includes(XSS),
    'the description renders inert',
  );
  const id = /wh_[0-9a-f]{16}/.exec(made.text)![0];
  const secret = /id="wh-secret" readonly value="(whsec_[^"]+)"/.exec(made.text)![1]!;
  const w = await h.api.store.webhooks.getWebhook(id);
  assert.is(
    w?.filter.replace(/\+/g, ' '),
    `vertical=roofing,solar&county=${county}`,
    'the canonical saved filter of the same /v1/leads query',
  );
  // each action answers 303 to the webhook's page, which says what happened (a reload posts nothing)
  const follow = async (res: { status: number; headers: Headers }): Promise<string> => {
    assert.is(res.status, 303, 'Post/Redirect/Get');
    const to = await h.get(premium, res.headers.get('location')!);
    assert.is(to.status, 200);
    return to.text;
  };
  const tested = await follow(await h.post(premium, `/app/webhooks/${id}/test`));
  assert.match(tested, /delivered \(your endpoint answered 204\)/);
  const got = rx.requests('/hook')[0]!;
  const verified = new StandardWebhook(secret).verify(
    got.body.toString('utf8'),
    got.headers as Record<string, string>,
  ) as { type: string };
  assert.is(verified.type, 'webhook.test');
  assert.match((await h.get(premium, `/app/webhooks/${id}`)).text, /webhook\.test/, 'in the delivery log');
  const rotated = await h.post(premium, `/app/webhooks/${id}/rotate-secret`);
  const secret2 = /id="wh-secret" readonly value="(whsec_[^"]+)"/.exec(rotated.text)![1]!;
  assert.is.not(secret2, secret);
  assert.match(await follow(await h.post(premium, `/app/webhooks/${id}/disable`)), /Webhook disabled: nothing is sent/);
  assert.is((await h.api.store.webhooks.getWebhook(id))?.status, 'disabled');
  assert.match(await follow(await h.post(premium, `/app/webhooks/${id}/enable`)), /Webhook enabled\./);
  assert.match(await follow(await h.post(premium, `/app/webhooks/${id}/replay`)), /0 dead deliveries queued again\./);
  assert.not.match(
    (await h.get(premium, `/app/webhooks/${id}?done=tested&delivery=evt_not_this_webhooks`)).text,
    /Test delivery/,
    "a delivery id that is not this webhook's says nothing",
  );
  const gone = await h.post(premium, `/app/webhooks/${id}/delete`);
  assert.is(gone.status, 303);
  assert.is(gone.headers.get('location'), `/app/webhooks?deleted=${id}`);
  assert.match(await follow(gone), new RegExp(`Webhook ${id} deleted\\.`));
  assert.is(await h.api.store.webhooks.getWebhook(id), null);
  assert.is((await h.get(premium, `/app/webhooks/${id}`)).status, 404);
  const events = (await h.api.store.app.listActivity(premium.id))
    .filter((e) => e.details['webhook_id'] === id)
    .map((e) => e.event);
  assert.equal(events.sort(), [
    'webhook_changed',
    'webhook_changed',
    'webhook_changed',
    'webhook_created',
    'webhook_deleted',
    'webhook_secret_rotated',
  ]);
});

test('webhooks: a refused destination is explained in customer terms, not with the operator setting', async () => {
  for (const url of ['https://192.168.1.5/hook', 'http://203.0.113.9/hook']) {
    const res = await h.post(premium, '/app/webhooks', { url, county: 'Nowhere-at-all' });
    assert.is(res.status, 400, url);
    assert.not.match(res.text, /WEBHOOK_ALLOW_HOSTS/, url);
    assert.match(res.text, /Please check: /, url);
  }
  const priv = await h.post(premium, '/app/webhooks', { url: 'https://192.168.1.5/hook' });
  assert.match(priv.text, /points into a private network. Webhooks are sent only to addresses on the public internet/);
  const plain = await h.post(premium, '/app/webhooks', { url: 'http://203.0.113.9/hook' });
  assert.match(plain.text, /must start with https:\/\//);
});

test('webhooks: a plan without webhooks gets an explanation and no form', async () => {
  const page = await h.get(pro, '/app/webhooks');
  assert.match(page.text, /does not include them/);
  assert.not.ok(page.text.includes('name="url"'));
  assert.is((await h.post(pro, '/app/webhooks', { url: rx.url('/x') })).status, 403);
});

test('explorer: the same total as GET /v1/leads; rows charged to the app ledger entry; paging and detail', async () => {
  const county = (await h.api.request('/v1/leads?page_size=1')).body.results[0].county as string;
  const api = await h.api.request(`/v1/leads?county=${encodeURIComponent(county)}&page_size=1`);
  const page = await h.get(pro, `/app/explorer?county=${encodeURIComponent(county)}`);
  assert.is(page.status, 200);
  assert.match(page.text, new RegExp(`data-total="${api.body.total}"`));
  const all = await h.api.request('/v1/leads?page_size=1');
  assert.match((await h.get(pro, '/app/explorer')).text, new RegExp(`data-total="${all.body.total}"`));
  if (all.body.total > 25) assert.match((await h.get(pro, '/app/explorer?page=2')).text, /Page 2 of/);
  const leadId = all.body.results[0].id as number;
  const detail = await h.get(pro, `/app/explorer/${leadId}`);
  assert.is(detail.status, 200);
  assert.is((await h.get(pro, '/app/explorer/999999999')).status, 404);
  // the CSV is priced before the link: the unfiltered list offers it only when it fits what is left today
  const unfiltered = await h.get(pro, '/app/explorer');
  const left = Number(
    /(\d[\d,]*) of your 1,000 rows left today|more than the (\d[\d,]*) rows left today/
      .exec(unfiltered.text)
      ?.slice(1)
      .find(Boolean)
      ?.replace(/,/g, '') ?? NaN,
  );
  if (all.body.total > 1000)
    assert.match(
      unfiltered.text,
      /Download not available:<\/strong> these [\d,]+ leads are more than your plan's 1,000 rows a day/,
    );
  else
    assert.ok(
      unfiltered.text.includes('download>Download CSV</a>') === all.body.total <= left,
      `total ${all.body.total}, left ${left}`,
    );
  const bad = await h.get(pro, '/app/explorer?min_value=-3');
  assert.is(bad.status, 400);
  assert.match(bad.text, /min_value/);
  await h.api.server.ledger.flush();
  const today = utcDay(Date.now());
  const usage = await h.api.store.accountUsage(pro.id, today, today);
  const app = usage.days.find((d) => d.key_id === appKeyId(pro.id));
  assert.ok(app && app.rows >= 26 && app.requests >= 4, JSON.stringify(app));
  const page2 = await h.get(pro, '/app/usage');
  assert.match(page2.text, /Lead explorer \(app\)/);
  assert.match(page2.text, /GET \/app\/explorer/);
  // the app's key never authenticates and never counts against the key limit
  assert.is((await h.api.store.listKeys(pro.id)).find((k) => k.id === appKeyId(pro.id))?.status, 'revoked');
});

test('lead page: the address and council reference as its title, a link to the council, facts in words, timeline, map point; applicant only on premium', async () => {
  // a located lead with an organisation as applicant and an address
  const list = (await h.api.request('/v1/leads?page_size=100&sort=value_desc', { key: h.api.keys.ent_api })).body
    .results as any[];
  const lead = list.find(
    (l) => l.applicant_org && l.address && l.lat !== null && l.public_url && l.verticals.length > 0,
  );
  assert.ok(lead, 'a lead with an organisation applicant, an address, a location and a council link');
  const strip = (t: string): string =>
    t
      .replace(/<[^>]+>/g, ' ')
      .replace(/&amp;/g, '&')
      .replace(/&#39;/g, "'")
      .replace(/&quot;/g, '"')
      .replace(/\s+/g, ' ');
  const page = await h.get(premium, `/app/explorer/${lead.id}`);
  assert.is(page.status, 200);
  const h1 = /<h1>([^<]*)<\/h1>/.exec(page.text)?.[1] ?? '';
  assert.ok(strip(h1).includes(lead.application_number) && strip(h1).includes(lead.address), `title: ${h1}`);
  assert.ok(page.text.includes(`href="${lead.public_url.replace(/&/g, '&amp;')}"`), 'the council page is a link');
  const text = strip(page.text);
  for (const v of [lead.planning_authority, lead.county, lead.address, lead.applicant_org])
    assert.ok(text.includes(v), `shows ${v}`);
  assert.not.match(text, /\[object Object\]/);
  assert.not.match(text, new RegExp(`\\b${lead.lead_readiness}\\b`), 'the stage in words, not its code');
  assert.match(text, /Application received\s*:\s*\d{4}-\d{2}-\d{2}/);
  assert.ok(text.includes(`(since ${lead.readiness_since})`), `the stage says since when: ${lead.readiness_since}`);
  assert.match(page.text, /The lead is the red point/);
  assert.match(page.text, /data-points="\[\{&quot;id&quot;:/, 'the map has the lead');
  const basicPage = strip((await h.get(pro, `/app/explorer/${lead.id}`)).text);
  assert.not.ok(basicPage.includes(lead.applicant_org), 'no applicant name below premium');
  assert.match(basicPage, /Not in your plan/);
});

test('explorer CSV: enriched columns present and blank on pro, filled on premium (read back in DuckDB)', async () => {
  const dir = tempDir('leads-app-csv-');
  // one county: within the commonwealth daily row budget (1,000)
  const county = (await h.api.request('/v1/leads?page_size=1')).body.results[0].county as string;
  const read = async (a: Account): Promise<{ n: number; named: number; cols: string[] }> => {
    const res = await h.get(a, `/app/explorer.csv?county=${encodeURIComponent(county)}`);
    assert.is(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/csv/);
    const file = join(dir, `${a.name}.csv`);
    writeFileSync(file, res.text);
    const cols = (
      await h.api.server.db.all<{ column_name: string }>(
        `DESCRIBE SELECT * FROM read_csv(?, header = true, all_varchar = true)`,
        [file],
      )
    ).map((r) => r.column_name);
    const [r] = await h.api.server.db.all<{ n: number; named: number }>(
      `SELECT count(*)::INTEGER AS n, count(applicant_org)::INTEGER AS named FROM read_csv(?, header = true, all_varchar = true)`,
      [file],
    );
    return { ...r!, cols };
  };
  const total = (await h.api.request(`/v1/leads?page_size=1&county=${encodeURIComponent(county)}`)).body
    .total as number;
  const p = await read(pro);
  const q = await read(premium);
  assert.is(p.n, total);
  assert.is(q.n, total);
  assert.ok(p.cols.includes('applicant_org') && p.cols.includes('main_contractor'), 'the columns are present');
  assert.equal(p.cols, q.cols, 'the same columns for every plan');
  assert.is(p.named, 0, 'blank on pro');
  assert.ok(q.named > 0, 'filled on premium');
});

test('usage: charts, the table against the limits and the CSV of the same rows (revoked keys kept)', async () => {
  const made = await h.post(basic, '/app/keys', { scope: 'commonwealth', label: 'usage' });
  const raw = rawKey(made.text);
  for (let i = 0; i < 3; i++) assert.is((await h.api.request('/v1/leads?page_size=2', { key: raw })).status, 200);
  await h.post(basic, `/app/keys/${await keyIdOf(basic, raw)}/revoke`);
  const page = await h.get(basic, '/app/usage');
  assert.is(page.status, 200);
  assert.match(page.text, /<svg class="chart"/);
  assert.match(page.text, /600 \/ hour/);
  assert.match(page.text, /GET \/v1\/leads/);
  assert.match(page.text, />revoked</);
  const csv = await h.get(basic, '/app/usage.csv');
  assert.is(csv.status, 200);
  const lines = csv.text.trim().split('\r\n');
  assert.is(lines[0], 'key_id,key_name,scope,status,date,route,requests,errors,rows');
  assert.ok(
    lines.some((l) => /,usage,commonwealth,revoked,\d{4}-\d{2}-\d{2},GET \/v1\/leads,3,0,6$/.test(l)),
    lines.join('\n'),
  );
  assert.is((await h.get(basic, '/app/usage?from=nope')).status, 200, 'a bad date falls back with a message');
});

test('licences and activity pages', async () => {
  const org = await h.account('org', 'basic');
  await h.api.store.createLicence({
    id: 'lic_test1',
    account_id: org.id,
    scope: 'ent_feed',
    seats: 3,
    expires_at: '2099-01-01T00:00:00.000Z',
  });
  const lic = await h.get(org, '/app/licences');
  assert.match(lic.text, /lic_test1/);
  assert.match(lic.text, /0 of 3/);
  assert.match((await h.get(pro, '/app/licences')).text, /no organisation licence/);
  assert.not.ok((await h.get(pro, '/app/licences')).text.includes('lic_test1'));
  const act = await h.get(pro, '/app/activity');
  assert.match(act.text, /key created/);
  assert.match(act.text, /key revoked/);
  assert.not.ok((await h.get(basic, '/app/activity')).text.includes('pro-co'));
});

test.run();
