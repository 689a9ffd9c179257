/**
 * Alert e-mails of saved searches (api/alerts/sender.ts), end to end on real components: the test
 * API on the week-1 release with its SQLite state file, searches saved there, week 2 published
 * into it, alerts sent through a real SMTP server (smtp-server on loopback, test/helpers/smtp-sink.ts)
 * and read back part by part. What each e-mail must list is read from week 2's Parquet files
 * independently of the sender.
 *
 * Checked: the new and stage-changed leads of the search (each with reference, address, stage and
 * a link to its page), masking by the account's best key (enriched fields only to ent_api and
 * above, attribution for commonwealth), a plain-text and an HTML part, RFC 8058 unsubscribe
 * headers whose link works without signing in, once per period; and, as for webhooks
 * (test/api/webhooks/send-access.test.ts), no e-mail for an account whose access ended — its only
 * key revoked, its licence expired, its plan downgraded — until access returns.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createHash, randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { generateKey } from '../../../api/access/keys.ts';
import type { Plan, Scope } from '../../../api/access/scopes.ts';
import { sendAlerts, type AlertSummary } from '../../../api/alerts/sender.ts';
import { parseSearchQuery } from '../../../api/alerts/saved-search.ts';
import { newUnsubscribeKey } from '../../../api/alerts/unsubscribe-token.ts';
import { serverLeadReader } from '../../../api/webhooks/lead-reader.ts';
import type { SavedSearch } from '../../../api/state/search-store.ts';
import { openDb } from '../../../pipeline/lib/duckdb.ts';
import { serveRelease, startTestApi, type TestApi } from '../../helpers/api.ts';
import { startSmtpSink, type SmtpSink, type SunkMessage } from '../../helpers/smtp-sink.ts';
import { leads } from '../../helpers/cli.ts';
import { weekTwoBeside, type TwoReleases } from '../../helpers/two-releases.ts';

const test = suite('alert e-mails of saved searches');

let api: TestApi;
let two: TwoReleases;
let sink: SmtpSink;
const T0 = Date.now();
/** The first send: week 2 is out, two hours on (a licence that ended an hour after T0 has expired). */
const SEND = new Date(T0 + 2 * 3_600_000);
const NEXT_WEEK = new Date(SEND.getTime() + 7 * 86_400_000);

/** What week 2 brings to a county: its new lead ids and the ids of older leads whose stage changed. */
interface Expected {
  county: string;
  newIds: number[];
  changedIds: number[];
}
let expected: Expected;
let watermark = { leadId: 0, eventId: 0 };
const searches = new Map<string, SavedSearch>();

const serveWeek = (week: 1 | 2): Promise<void> => serveRelease(api, week === 1 ? two.first : two.second);

async function account(name: string, plan: Plan, scopes: Scope[]): Promise<number> {
  const a = await api.store.createAccount(name, plan);
  for (const scope of scopes) {
    const k = generateKey(scope);
    await api.store.insertKey({
      id: k.id,
      account_id: a.id,
      scope,
      name: null,
      display_prefix: k.displayPrefix,
      hash: k.hash,
    });
  }
  return a.id;
}

/** Save a weekly search of `query` for the account, as the searches page does (watermarks of the release served now). */
async function save(accountId: number, key: string, query: string): Promise<SavedSearch> {
  const parsed = parseSearchQuery(query, api.server.releases.current().leads.places(), api.config);
  const s = await api.store.searches.createSearch({
    id: `ss_${randomBytes(12).toString('hex')}`,
    account_id: accountId,
    name: `${key} alert`,
    query: parsed.query,
    frequency: 'weekly',
    email: `${key}@buyers.example`,
    unsubscribe_key: newUnsubscribeKey(),
    watermark_lead_id: watermark.leadId,
    watermark_event_id: watermark.eventId,
  });
  searches.set(key, s);
  return s;
}

const send = (now: Date): Promise<AlertSummary> =>
  sendAlerts({
    store: api.store,
    leads: serverLeadReader(api.server.db, api.server.releases),
    config: { ...api.config, smtpUrl: sink.url, smtpFrom: 'alerts@leads.example' },
    now,
  });

const mailTo = (key: string): SunkMessage[] => sink.messages.filter((m) => m.to.includes(`${key}@buyers.example`));

/** The lead ids an e-mail part links to (`/app/explorer/<id>`), in order. */
const linked = (part: string): number[] =>
  [...part.matchAll(/\/app\/explorer\/(\d+)/g)].map((m) => Number(m[1])).filter((v, i, a) => a.indexOf(v) === i);

test.before(async () => {
  api = await startTestApi({ config: { keyCacheMs: 0 } });
  two = await weekTwoBeside(api);
  sink = await startSmtpSink();
  const snap = (await serverLeadReader(api.server.db, api.server.releases).snapshot())!;
  watermark = { leadId: snap.maxLeadId, eventId: snap.maxEventId };

  // the county where week 2 brings the most stage changes among those with new leads (read independently)
  const dir = join(two.dataDir, 'releases', two.second);
  const db = await openDb();
  try {
    const leads = `read_parquet('${join(dir, 'leads.parquet')}')`;
    const events = `read_parquet('${join(dir, 'events.parquet')}')`;
    const rows = await db.all<{ county: string; new_ids: number[]; changed_ids: number[] }>(
      `WITH n AS (SELECT county, list(id::INT ORDER BY id) AS new_ids FROM ${leads} WHERE id > ${watermark.leadId} GROUP BY county),
            c AS (SELECT l.county, list(DISTINCT e.lead_id::INT ORDER BY e.lead_id::INT) AS changed_ids FROM ${events} e JOIN ${leads} l ON l.id = e.lead_id
                  WHERE e.type = 'lead.stage_changed' AND e.id > ${watermark.eventId} AND e.lead_id <= ${watermark.leadId} GROUP BY l.county)
       SELECT n.county, n.new_ids, coalesce(c.changed_ids, []) AS changed_ids FROM n LEFT JOIN c USING (county)
       ORDER BY len(coalesce(c.changed_ids, [])) DESC, len(n.new_ids) DESC, n.county LIMIT 1`,
    );
    const r = rows[0]!;
    expected = { county: r.county, newIds: [...r.new_ids].map(Number), changedIds: [...r.changed_ids].map(Number) };
  } finally {
    db.close();
  }
  assert.ok(expected.newIds.length > 0, 'week 2 has new leads in the county');
  assert.ok(expected.changedIds.length > 0, 'and older leads whose stage changed');

  const q = `county=${encodeURIComponent(expected.county)}&sort=newest&page=2`;
  await save(await account('premium-co', 'premium', ['ent_api']), 'premium', q);
  await save(await account('cw-co', 'basic', ['commonwealth']), 'cw', q);
  const revoked = await account('revoked-co', 'premium', ['ent_api']);
  await save(revoked, 'revoked', q);
  await save(await account('downgraded-co', 'premium', ['ent_api']), 'downgraded', q);
  const licensed = (await api.store.createAccount('licensed-co', 'basic')).id;
  await save(licensed, 'licensed', q);

  // each way access ends, before week 2 is sent
  for (const k of await api.store.listKeys(revoked)) await api.store.revokeKey(k.id);
  await api.store.setAccountPlan((await api.store.getAccountByName('downgraded-co'))!.id, 'pro');
  const licence = `lic_${randomBytes(8).toString('hex')}`;
  const ends = new Date(T0 + 3_600_000).toISOString(); // an hour after T0: expired at SEND
  await api.store.createLicence({ id: licence, account_id: licensed, scope: 'ent_feed', seats: 1, expires_at: ends });
  const token = createHash('sha256').update(randomBytes(32)).digest('hex');
  await api.store.createClaimLink({ token_hash: token, licence_id: licence, expires_at: ends });
  const k = generateKey('ent_feed');
  const claimed = await api.store.claimLink(token, {
    id: k.id,
    name: 'org',
    display_prefix: k.displayPrefix,
    hash: k.hash,
  });
  assert.ok('key' in claimed, JSON.stringify(claimed));

  await serveWeek(2);
});
test.after(async () => {
  await sink?.close();
  await api?.close();
});

test('week 2: one e-mail per search with access, listing its new and stage-changed leads, masked for the best key', async () => {
  const summary = await send(SEND);
  assert.equal(
    { ...summary, release: summary.release },
    { release: two.second, searches: 5, sent: 2, already: 0, nothing_new: 0, no_access: 3, failed: 0 },
  );
  assert.is(sink.messages.length, 2);
  const [premium] = mailTo('premium');
  const [cw] = mailTo('cw');
  assert.ok(premium && cw, 'both accounts with access got their alert');
  assert.equal([premium.from, cw.from], ['alerts@leads.example', 'alerts@leads.example']);
  assert.ok(premium.text && premium.html, 'a plain-text part and an HTML part');
  assert.match(premium.headers['content-type']!, /^multipart\/alternative/);

  const shownNew = expected.newIds.slice(0, 25);
  const shownChanged = expected.changedIds.slice(0, 25);
  const counts = [
    `${expected.newIds.length} new lead${expected.newIds.length === 1 ? '' : 's'}`,
    expected.changedIds.length
      ? `${expected.changedIds.length} lead${expected.changedIds.length === 1 ? '' : 's'} changed stage`
      : null,
  ].filter(Boolean);
  assert.is(premium.headers['subject'], `premium alert: ${counts.join(', ')}`);
  for (const part of [premium.text, premium.html, cw.text!, cw.html!])
    assert.equal(linked(part), [...shownNew, ...shownChanged], 'every lead, with a link to its page, in id order');
  assert.match(premium.text, `County: ${expected.county}`);
  assert.match(premium.text, `/app/explorer?county=${encodeURIComponent(expected.county)}&sort=newest`);
  if (expected.changedIds.length) assert.match(premium.text, /Stage: .+ → .+/);

  // each lead's reference and address as week 2 has them; enriched fields only for ent_api
  const db = await openDb();
  let rows: { id: number; application_number: string; address: string | null; applicant_org: string | null }[];
  try {
    rows = await db.all(
      `SELECT id::INT AS id, application_number, address, applicant_org FROM read_parquet('${join(two.dataDir, 'releases', two.second, 'leads.parquet')}') WHERE id IN (${[...shownNew, ...shownChanged].join(',')})`,
    );
  } finally {
    db.close();
  }
  for (const r of rows) {
    assert.ok(premium.text.includes(r.application_number), `reference of ${r.id}`);
    if (r.address) assert.ok(cw.text!.includes(r.address), `address of ${r.id}`);
  }
  const orgs = rows.map((r) => r.applicant_org).filter((o): o is string => !!o);
  assert.ok(orgs.length > 0, 'some listed lead has a named applicant organisation');
  for (const o of orgs) {
    assert.ok(premium.text.includes(`Applicant: ${o}`), 'ent_api sees the applicant');
    assert.not.ok(cw.text!.includes(o) || cw.html!.includes(o), 'commonwealth never sees it');
  }
  assert.match(cw.text!, /Contains Irish public sector data/, 'commonwealth data carries its attribution');
  assert.not.match(premium.text, /Contains Irish public sector data/);

  // RFC 8058 one-click unsubscribe
  const link = /^<(http:\/\/localhost\/app\/alerts\/unsubscribe\/ss_[0-9a-f]{24}\.[A-Za-z0-9_-]{43})>$/.exec(
    premium.headers['list-unsubscribe'] ?? '',
  );
  assert.ok(link, premium.headers['list-unsubscribe']);
  assert.is(premium.headers['list-unsubscribe-post'], 'List-Unsubscribe=One-Click');
  assert.ok(premium.text.includes(link[1]!) && premium.html.includes(link[1]!), 'the link is in both parts too');
});

test('no e-mail where access ended (revoked key, expired licence, downgraded plan); the marks stay until it returns', async () => {
  for (const key of ['revoked', 'licensed', 'downgraded']) {
    assert.is(mailTo(key).length, 0, `${key}: nothing sent`);
    const s = (await api.store.searches.getSearch(searches.get(key)!.id))!;
    assert.equal([s.last_period, s.watermark_lead_id, s.last_sent_at], [null, watermark.leadId, null], key);
  }
  // the plan is premium again: the next run sends the leads held meanwhile, and only that alert
  await api.store.setAccountPlan((await api.store.getAccountByName('downgraded-co'))!.id, 'premium');
  const again = await send(new Date(SEND.getTime() + 60_000));
  assert.equal([again.sent, again.already, again.no_access], [1, 2, 2]);
  const [late] = mailTo('downgraded');
  assert.ok(late, 'sent once access returned');
  assert.equal(linked(late.text!), [...expected.newIds.slice(0, 25), ...expected.changedIds.slice(0, 25)]);
});

test('once per period: a second run in the week sends nothing; next week, nothing new means no e-mail', async () => {
  const before = sink.messages.length;
  const same = await send(new Date(SEND.getTime() + 120_000));
  assert.equal([same.sent, same.already, same.no_access], [0, 3, 2]);
  const next = await send(NEXT_WEEK);
  assert.equal([next.sent, next.nothing_new, next.no_access], [0, 3, 2]);
  assert.is(sink.messages.length, before);
  const s = (await api.store.searches.getSearch(searches.get('premium')!.id))!;
  assert.match(s.last_period!, /^\d{4}-W\d{2}$/);
  assert.is(s.last_sent_at, SEND.toISOString(), 'last sent stays the e-mail’s time');
});

test('the unsubscribe link works without signing in: GET confirms, POST (one-click) stops the alert; a forged token is 404', async () => {
  const [premium] = mailTo('premium');
  const url = /^<(.+)>$/.exec(premium!.headers['list-unsubscribe']!)![1]!.replace('http://localhost', api.baseUrl);
  const page = await fetch(url);
  assert.is(page.status, 200);
  const text = await page.text();
  assert.match(text, /Stop the weekly e-mail of the saved search <strong>premium alert<\/strong>/);
  const forged = url.slice(0, -3) + (url.endsWith('AAA') ? 'BBB' : 'AAA');
  assert.is((await fetch(forged)).status, 404);
  assert.is((await fetch(forged, { method: 'POST' })).status, 404);
  // a mail client's one-click: no cookie, no CSRF token, no Origin
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: 'List-Unsubscribe=One-Click',
  });
  assert.is(res.status, 200, await res.clone().text());
  assert.match(await res.text(), /No more e-mails will be sent/);
  const s = (await api.store.searches.getSearch(searches.get('premium')!.id))!;
  assert.is(s.frequency, 'none');
  assert.not.ok(
    (await api.store.searches.alertSearches()).some((x) => x.id === s.id),
    'no longer among the alerts to send',
  );
  const log = await api.store.app.listActivity(s.account_id);
  assert.equal([log[0]!.event, log[0]!.details], ['alert_unsubscribed', { search_id: s.id }]);
  assert.not.match(JSON.stringify(log), '@buyers.example', 'the address is not logged');
});

test('two senders at once (a timer and an operator): exactly one e-mail', async () => {
  // the commonwealth search as if week 2 had not been sent yet
  const s = (await api.store.searches.getSearch(searches.get('cw')!.id))!;
  assert.ok(
    await api.store.searches.moveAlertMark(
      s.id,
      { period: s.last_period, leadId: s.watermark_lead_id, eventId: s.watermark_event_id },
      { period: null, leadId: watermark.leadId, eventId: watermark.eventId },
      null,
    ),
  );
  const before = mailTo('cw').length;
  const at = new Date(NEXT_WEEK.getTime() + 60_000);
  const [a, b] = await Promise.all([send(at), send(at)]);
  assert.is(a.sent + b.sent, 1, JSON.stringify([a, b]));
  assert.is(mailTo('cw').length, before + 1);
});

test('leads alerts send: the operators’ command (JSON summary; a bad --now is a usage error)', async () => {
  const run = (...args: string[]) =>
    leads(['alerts', 'send', ...args], {
      ...process.env,
      DATA_DIR: api.dataDir,
      DATABASE_URL: `file:${join(api.dataDir, 'state.sqlite')}`,
      PUBLIC_BASE_URL: 'http://localhost/v1',
      SMTP_URL: sink.url,
    });
  const bad = await run('--now', 'yesterday');
  assert.is(bad.code, 2, bad.stderr);
  assert.match(bad.stderr, /--now must be an ISO-8601 instant/);
  const later = new Date(NEXT_WEEK.getTime() + 7 * 86_400_000).toISOString();
  const r = await run('--now', later, '--json');
  assert.is(r.code, 0, r.stderr);
  const summary = JSON.parse(r.stdout) as AlertSummary;
  assert.equal(
    [summary.release, summary.searches, summary.sent, summary.nothing_new, summary.no_access],
    [two.second, 4, 0, 2, 2],
  );
  assert.not.match(r.stderr, '@buyers.example', 'addresses are never logged');
});

test.run();
