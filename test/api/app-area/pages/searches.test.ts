/**
 * /app/searches over HTTP (test/helpers/app-harness.ts: the pages next to a real API, a real
 * release and a real SQLite state file): the explorer's "Save this search" contract
 * (`GET /app/searches/new?query=<explorer query string>`), the query checked by the `/v1/leads`
 * parser, POST → 303 to the list with the new search focused, the list in plain words with its
 * links (back to the explorer, "Turn into a webhook" filling the webhook form in), rename, alert
 * changes, delete, isolation between accounts (404) and inert names. The store itself is tested
 * on SQLite and PostgreSQL by test/api/state/searches.pg.test.ts; sending by test/api/alerts/send.test.ts.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Account } from '../../../../api/state/store-interface.ts';
import { serverLeadReader } from '../../../../api/webhooks/lead-reader.ts';
import { addKey } from '../../../helpers/api.ts';
import { startAppHarness, type AppHarness } from '../../../helpers/app-harness.ts';

const test = suite('saved searches pages');
let h: AppHarness;
let premium: Account;
let other: Account;
let county: string;
let savedId = '';

test.before(async () => {
  h = await startAppHarness();
  premium = await h.account('search-premium', 'premium');
  other = await h.account('search-other', 'pro');
  county = (await h.api.request('/v1/leads?page_size=1')).body.results[0].county as string;
});
test.after(() => h?.close());

const newPath = (query: string): string => `/app/searches/new?query=${encodeURIComponent(query)}`;

test('the new-search page shows the explorer query in plain words, canonical and without paging', async () => {
  const res = await h.get(premium, newPath(`county=${county.toLowerCase()}&vertical=roofing&page=3&sort=newest`));
  assert.is(res.status, 200, res.text);
  assert.match(res.text, /<dt>Trade<\/dt><dd>Roofing<\/dd><dt>County<\/dt>/);
  assert.match(res.text, `<dd>${county}</dd>`);
  assert.match(res.text, '<dt>Order</dt><dd>newest first</dd>');
  const q = `vertical=roofing&amp;county=${encodeURIComponent(county)}&amp;sort=newest`;
  assert.match(res.text, `name="query" value="${q}"`, 'the canonical query, page dropped');
  assert.match(res.text, `href="/app/explorer?${q}"`, 'back to the same results');
  assert.match(res.text, /id="ns-freq-weekly" value="weekly" checked/);
});

test('a query the API refuses cannot be saved: 400 naming the parameter, no form', async () => {
  const res = await h.get(premium, newPath('vertical=plumbers&min_value=-3'));
  assert.is(res.status, 400);
  assert.match(res.text, /This search cannot be saved: .*vertical: /);
  assert.not.match(res.text, 'action="/app/searches"');
  const posted = await h.post(premium, '/app/searches', {
    query: 'near=99,99',
    name: 'x',
    frequency: 'none',
  });
  assert.is(posted.status, 400);
  assert.equal(await h.api.store.searches.listSearches(premium.id), []);
});

test('the form refuses a weekly alert without an address, a bad address and an empty name (400, nothing saved)', async () => {
  for (const [form, why] of [
    [{ name: 'Cork', frequency: 'weekly', email: '' }, /Give the e-mail address/],
    [{ name: 'Cork', frequency: 'daily', email: 'not-an-address' }, /does not look right/],
    [{ name: '  ', frequency: 'none', email: '' }, /Give the search a name/],
    [{ name: 'Cork', frequency: 'hourly', email: '' }, /Choose how often/],
  ] as const) {
    const res = await h.post(premium, '/app/searches', { query: `county=${county}`, ...form });
    assert.is(res.status, 400, JSON.stringify(form));
    assert.match(res.text, why);
  }
  assert.equal(await h.api.store.searches.listSearches(premium.id), []);
});

test('POST saves and answers 303 to the list with the search focused; the alert starts at the release’s newest lead', async () => {
  const res = await h.post(premium, '/app/searches', {
    query: `county=${county}&vertical=roofing`,
    name: '<script>alert(1)</script> roofs',
    frequency: 'weekly',
    email: 'buyer@premium.example',
  });
  assert.is(res.status, 303, res.text);
  const loc = res.headers.get('location')!;
  const m = /^\/app\/searches\?focus=(ss_[0-9a-f]{24})&done=saved#search-(ss_[0-9a-f]{24})$/.exec(loc);
  assert.ok(m && m[1] === m[2], loc);
  savedId = m![1]!;
  const s = (await h.api.store.searches.getSearch(savedId))!;
  const snap = (await serverLeadReader(h.api.server.db, h.api.server.releases).snapshot())!;
  assert.equal(
    [s.account_id, s.query, s.frequency, s.email, s.watermark_lead_id, s.watermark_event_id],
    [
      premium.id,
      `vertical=roofing&county=${encodeURIComponent(county)}`,
      'weekly',
      'buyer@premium.example',
      snap.maxLeadId,
      snap.maxEventId,
    ],
  );

  const list = await h.get(premium, loc.split('#')[0]!);
  assert.is(list.status, 200);
  assert.match(list.text, /role="status"[^>]*>Search saved\./);
  assert.match(
    list.text,
    `id="search-${savedId}" class="saved-search" tabindex="-1" aria-labelledby="search-${savedId}-h" aria-current="true"`,
  );
  assert.match(list.text, '&lt;script&gt;alert(1)&lt;/script&gt; roofs', 'the name is text');
  assert.not.match(list.text, '<script>alert(1)');
  assert.match(list.text, 'Weekly e-mail of new leads to buyer@premium.example');
  assert.match(list.text, `href="/app/explorer?vertical=roofing&amp;county=${encodeURIComponent(county)}"`);
  const activity = await h.api.store.app.listActivity(premium.id);
  assert.equal([activity[0]!.event, activity[0]!.details], ['search_saved', { search_id: savedId, alert: 'weekly' }]);
  assert.not.match(JSON.stringify(activity), 'buyer@premium.example', 'the address is never logged');
});

test('"Turn into a webhook" opens the webhook form with the search’s filters and name filled in', async () => {
  const list = await h.get(premium, '/app/searches');
  const href = /href="(\/app\/webhooks\?[^"]+)">Turn into a webhook/.exec(list.text)![1]!.replace(/&amp;/g, '&');
  const form = await h.get(premium, href.split('#')[0]!);
  assert.is(form.status, 200);
  // the webhook form is the explorer's filter panel: trades as check boxes, the county a type-ahead box
  assert.match(form.text, /name="vertical" value="roofing" checked>/);
  assert.match(form.text, new RegExp(`name="county" list="[^"]+" autocomplete="off" value="${county}"`));
  assert.match(
    form.text,
    'id="wh-desc" name="description" maxlength="200" value="&lt;script&gt;alert(1)&lt;/script&gt; roofs"',
  );
});

test('rename and change the alert (303 back, focused); switching an alert on restarts it from the newest lead', async () => {
  const r = await h.post(premium, `/app/searches/${savedId}/rename`, { name: 'Roofs' });
  assert.is(r.status, 303);
  assert.is(r.headers.get('location'), `/app/searches?focus=${savedId}&done=renamed#search-${savedId}`);
  assert.is((await h.api.store.searches.getSearch(savedId))!.name, 'Roofs');
  const off = await h.post(premium, `/app/searches/${savedId}/alert`, { frequency: 'none', email: '' });
  assert.is(off.status, 303);
  assert.equal(
    [
      (await h.api.store.searches.getSearch(savedId))!.frequency,
      (await h.api.store.searches.getSearch(savedId))!.email,
    ],
    ['none', null],
  );
  await h.api.store.searches.moveAlertMark(
    savedId,
    {
      period: null,
      leadId: (await h.api.store.searches.getSearch(savedId))!.watermark_lead_id,
      eventId: (await h.api.store.searches.getSearch(savedId))!.watermark_event_id,
    },
    { period: '2026-W01', leadId: 1, eventId: 0 },
    null,
  );
  const on = await h.post(premium, `/app/searches/${savedId}/alert`, {
    frequency: 'daily',
    email: 'sales@premium.example',
  });
  assert.is(on.status, 303);
  const s = (await h.api.store.searches.getSearch(savedId))!;
  const snap = (await serverLeadReader(h.api.server.db, h.api.server.releases).snapshot())!;
  assert.equal(
    [s.frequency, s.email, s.watermark_lead_id, s.last_period],
    ['daily', 'sales@premium.example', snap.maxLeadId, null],
    'only leads after switching on are sent',
  );
  const bad = await h.post(premium, `/app/searches/${savedId}/alert`, { frequency: 'weekly', email: '' });
  assert.is(bad.status, 400);
  assert.match(bad.text, /Give the e-mail address/);
});

test('another account: its list is empty and every action on the id is a 404; delete is the owner’s', async () => {
  const list = await h.get(other, '/app/searches');
  assert.is(list.status, 200);
  assert.match(list.text, 'No saved searches yet.');
  for (const action of ['rename', 'alert', 'delete']) {
    const res = await h.post(other, `/app/searches/${savedId}/${action}`, { name: 'mine', frequency: 'none' });
    assert.is(res.status, 404, action);
  }
  assert.is((await h.api.store.searches.getSearch(savedId))!.name, 'Roofs', 'untouched');
  assert.is((await h.post(premium, '/app/searches/ss_000000000000000000000000/delete')).status, 404);
  const del = await h.post(premium, `/app/searches/${savedId}/delete`);
  assert.is(del.status, 303);
  assert.is(del.headers.get('location'), '/app/searches?done=deleted');
  assert.is(await h.api.store.searches.getSearch(savedId), null);
  assert.match((await h.get(premium, '/app/searches?done=deleted')).text, 'Search deleted.');
});

test('alerts go out only while a key works: the page says so when the account holds none', async () => {
  const none = await h.get(premium, newPath(`county=${county}`));
  assert.match(none.text, /It holds none now .*no alert is sent until you <a href="\/app\/keys">create a key<\/a>/);
  await addKey(h.api.store, premium.id, 'ent_api');
  assert.not.match((await h.get(premium, newPath(`county=${county}`))).text, 'create a key');
  await h.api.store.setAccountPlan(premium.id, 'pro'); // ent_api needs premium: the key grants nothing now
  assert.match((await h.get(premium, newPath(`county=${county}`))).text, /not in the premium plan|not in the pro plan/);
});

test.run();
