/**
 * The pure parts of alerts (api/alerts/): the period an alert is sent once in (UTC day, ISO week
 * across year ends), unsubscribe tokens (signed per search, tamper and cross-search refused), the
 * access rule at send time for each way access ends, and the e-mail's two parts (names escaped in
 * HTML, masked fields left out, the RFC 8058 headers).
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { alertPeriod } from '../../../api/alerts/sender.ts';
import {
  newUnsubscribeKey,
  tokenSearchId,
  tokenValid,
  unsubscribeToken,
} from '../../../api/alerts/unsubscribe-token.ts';
import { alertAccess } from '../../../api/alerts/alert-access.ts';
import { alertMail } from '../../../api/alerts/alert-mail.ts';
import type { ApiKey } from '../../../api/state/store-interface.ts';
import { apiKey as key } from '../../helpers/api-key.ts';

test('alertPeriod: the UTC day, or the ISO week (Monday to Sunday; week 1 holds the first Thursday)', () => {
  const cases: [string, string, string][] = [
    ['2026-11-27T07:00:00Z', '2026-11-27', '2026-W48'], // a Friday
    ['2026-11-23T00:00:00Z', '2026-11-23', '2026-W48'], // its Monday
    ['2026-11-29T23:59:59Z', '2026-11-29', '2026-W48'], // its Sunday
    ['2026-11-30T00:00:00Z', '2026-11-30', '2026-W49'],
    ['2026-01-01T12:00:00Z', '2026-01-01', '2026-W01'], // a Thursday
    ['2027-01-01T12:00:00Z', '2027-01-01', '2026-W53'], // a Friday: the last week of 2026
    ['2024-12-30T12:00:00Z', '2024-12-30', '2025-W01'], // a Monday: the first week of 2025
  ];
  for (const [at, day, week] of cases) {
    assert.is(alertPeriod('daily', new Date(at)), day, at);
    assert.is(alertPeriod('weekly', new Date(at)), week, at);
  }
});

test('unsubscribe tokens: signed per search, checked whole; another search, a tampered or foreign token fails', () => {
  const a = { id: 'ss_0123456789abcdef01234567', unsubscribe_key: newUnsubscribeKey() };
  const b = { id: 'ss_89abcdef0123456789abcdef', unsubscribe_key: newUnsubscribeKey() };
  const t = unsubscribeToken(a);
  assert.match(t, /^ss_[0-9a-f]{24}\.[A-Za-z0-9_-]{43}$/);
  assert.is(tokenSearchId(t), a.id);
  assert.ok(tokenValid(t, a));
  assert.not.ok(tokenValid(t, b), 'another search');
  assert.not.ok(tokenValid(t, { ...a, unsubscribe_key: newUnsubscribeKey() }), 'another key');
  assert.not.ok(tokenValid(`${b.id}.${t.split('.')[1]}`, b), 'a signature moved to another id');
  const flipped = t.slice(0, -1) + (t.endsWith('A') ? 'B' : 'A');
  assert.not.ok(tokenValid(flipped, a));
  for (const bad of ['', 'ss_1.x', `${t}x`, t.replace('ss_', 'wh_')]) assert.is(tokenSearchId(bad), null, bad);
});

const NOW = new Date('2026-11-27T07:00:00Z');

test('alertAccess: the best scope among keys that grant theirs now; none for each way access ends', () => {
  assert.equal(alertAccess({ plan: 'premium' }, [key('commonwealth'), key('ent_api')], NOW), {
    scope: 'ent_api',
    detail: null,
  });
  assert.equal(alertAccess({ plan: 'basic' }, [key('commonwealth')], NOW), { scope: 'commonwealth', detail: null });
  // downgraded: ent_api needs premium, the commonwealth key still grants its own scope
  assert.equal(alertAccess({ plan: 'pro' }, [key('commonwealth'), key('ent_api')], NOW).scope, 'commonwealth');
  const ended: [string, ApiKey[], string, RegExp][] = [
    ['revoked', [key('ent_api', { status: 'revoked', revoked_at: '2026-11-20T00:00:00Z' })], 'premium', /was revoked/],
    [
      'licence expired',
      [key('ent_feed', { licence_id: 'lic_1', expires_at: '2026-11-27T06:59:59Z' })],
      'basic',
      /expired with licence lic_1/,
    ],
    ['downgraded', [key('ent_api')], 'pro', /needs the premium plan and the account is on pro/],
    ['no key', [key('commonwealth', { id: 'key_app_1', status: 'revoked' })], 'premium', /it holds none/],
  ];
  for (const [what, keys, plan, why] of ended) {
    const a = alertAccess({ plan: plan as 'pro' }, keys, NOW);
    assert.is(a.scope, null, what);
    assert.match(a.detail!, why, what);
  }
  assert.equal(alertAccess(null, [key('custom')], NOW), { scope: null, detail: 'the account no longer exists' });
});

test('alertMail: a text and an HTML part with the same leads, names escaped, masked fields left out, RFC 8058 headers', () => {
  const lead = (id: number, o: Record<string, unknown> = {}) => ({
    id,
    application_number: `24/${id}`,
    address: `${id} Main Street, Mallow`,
    planning_authority: 'Cork County',
    county: 'Cork',
    lead_readiness: 'commencing',
    description: 'Roof replacement <b>and</b> solar panels',
    applicant_org: null,
    main_contractor: null,
    ...o,
  });
  const m = alertMail({
    searchName: 'Roofs <script>',
    searchWords: 'Trade: Roofing; County: Cork',
    frequency: 'weekly',
    releaseId: 'r2',
    appBase: 'https://leads.example.ie/app',
    query: 'vertical=roofing&county=Cork',
    newLeads: [lead(7, { applicant_org: 'Munster Roofing Ltd' }), lead(9)],
    newTotal: 30,
    changed: [{ lead: lead(3), before: 'granted', after: 'commencing' }],
    changedTotal: 1,
    unsubscribeUrl: 'https://leads.example.ie/app/alerts/unsubscribe/ss_x.y',
    attribution: null,
  });
  assert.is(m.subject, 'Roofs <script>: 30 new leads, 1 lead changed stage');
  assert.equal(m.headers, {
    'List-Unsubscribe': '<https://leads.example.ie/app/alerts/unsubscribe/ss_x.y>',
    'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
    'Auto-Submitted': 'auto-generated',
  });
  for (const part of [m.text, m.html]) {
    for (const id of [7, 9, 3]) assert.match(part, `https://leads.example.ie/app/explorer/${id}"`.slice(0, -1));
    assert.match(part, '24/7 — 7 Main Street, Mallow');
    assert.match(part, 'Munster Roofing Ltd');
    assert.match(part, 'Commencing');
    assert.match(part, '28 more');
    assert.match(part, 'https://leads.example.ie/app/alerts/unsubscribe/ss_x.y');
  }
  assert.match(m.text, 'Stage: Granted → Commencing');
  assert.not.match(m.text, 'Main contractor', 'a masked (null) field is left out');
  assert.match(m.html, 'Roofs &lt;script&gt;');
  assert.not.match(m.html, '<script>');
  assert.not.match(m.html, '<b>and</b>');
});

test.run();
