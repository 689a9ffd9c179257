/**
 * Issue 14, points 1, 7, 8, 10 and 13, and issue 13 §3.4 (signed cursors), over real HTTP
 * against the tiny release: each test fails on the code before the fix.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { assertProblem, startTestApi, type TestApi } from '../helpers/api.ts';
import { budgetReset, utcDay } from '../../api/access/limits.ts';

// A fixed clock inside a UTC day: budgets reset at the next 00:00 UTC, the hourly window at 11:00.
const NOW = new Date('2026-11-20T10:30:00Z');
let api: TestApi;
const keyId = async (scope: string): Promise<string> => (await api.store.listKeys()).find((k) => k.scope === scope)!.id;

test.before(async () => {
  api = await startTestApi({ clock: () => NOW });
});
test.after(async () => {
  await api?.close();
});

test('1. usage: a date that is not a calendar day is a 400 naming the parameter, never a 500', async () => {
  for (const [q, name] of [
    ['to=DUBLIN', 'to'],
    ['to=2026-13-45', 'to'],
    ['from=2026-13-01', 'from'],
    ['to=2026-01-32', 'to'],
    ['from=2026-00-10', 'from'],
    ['to=2026-02-30', 'to'],
    ['from=1969-12-31', 'from'],
  ] as const) {
    const res = await api.request(`/v1/account/usage?${q}`);
    assertProblem(res, 400, 'invalid_parameter');
    assert.equal(
      res.body.errors.map((e: { name: string }) => e.name),
      [name],
      q,
    );
    assert.match(res.body.detail, new RegExp(`^${name}: must be a calendar date YYYY-MM-DD`), q);
  }
  assert.is((await api.request('/v1/account/usage?from=2026-02-28&to=2026-03-01')).status, 200);
});

test('7. a budget-exhausted 429 says when the refused request can next succeed: 00:00 UTC, not the next hour', async () => {
  const id = await keyId('commonwealth');
  await api.store.chargeRows(id, utcDay(NOW.getTime()), 1000, 1000);
  const res = await api.request('/v1/leads?page_size=1', { key: api.keys.commonwealth });
  assertProblem(res, 429, 'budget_exhausted');
  const midnight = budgetReset(NOW.getTime());
  assert.is(res.headers.get('x-ratelimit-reset'), String(midnight));
  assert.is(res.headers.get('retry-after'), String(midnight - NOW.getTime() / 1000));
  assert.is(res.headers.get('x-budget-reset'), String(midnight));
  // 10. "1 rows" → "1 row"
  assert.match(res.body.detail, /would return 1 row but 0 of today's 1,000 remain/);
  // a request refused by the hourly limit still names the end of the hour (unchanged)
  const ok = await api.request('/v1/meta', { key: api.keys.commonwealth });
  assert.is(ok.headers.get('x-ratelimit-reset'), String(Date.UTC(2026, 10, 20, 11) / 1000));
});

test('7. an error on a CSV / JSON Lines / Parquet export carries no Content-Disposition: attachment', async () => {
  const id = await keyId('ent_api');
  await api.store.chargeRows(id, utcDay(NOW.getTime()), 5000, 5000);
  for (const ext of ['csv', 'jsonl', 'parquet']) {
    const res = await api.request(`/v1/export/applications.${ext}`);
    assertProblem(res, 429, 'budget_exhausted');
    assert.is(res.headers.get('content-disposition'), null, ext);
  }
});

test('8. every 401 carries the failed-key allowance of the client address (also a missing key)', async () => {
  const missing = await api.request('/v1/leads', { key: null });
  assertProblem(missing, 401, 'missing_key');
  assert.is(missing.headers.get('x-ratelimit-limit'), String(api.config.authFailLimit));
  assert.is(
    missing.headers.get('ratelimit-policy'),
    `"failed-key-attempts";q=${api.config.authFailLimit};w=${api.config.authFailWindowS}`,
  );
  assert.ok(Number(missing.headers.get('x-ratelimit-reset')) > NOW.getTime() / 1000);
  assert.is(missing.headers.get('x-budget-limit'), null, 'no key, no row budget');
  const remaining = Number(missing.headers.get('x-ratelimit-remaining'));
  // an unknown key counts: the allowance shown drops by one; a missing key does not count
  const unknown = await api.request('/v1/leads', { key: 'lk_ea_' + 'A'.repeat(43) });
  assertProblem(unknown, 401, 'unknown_key');
  assert.is(Number(unknown.headers.get('x-ratelimit-remaining')), remaining - 1);
  const again = await api.request('/v1/leads', { key: null });
  assert.is(Number(again.headers.get('x-ratelimit-remaining')), remaining - 1);
  // a GIS access_token that does not open: a 401 with the same headers
  const token = await api.request('/v1/feeds/leads.geojson?access_token=gt_notatoken', { key: null });
  assertProblem(token, 401, 'invalid_token');
  assert.is(Number(token.headers.get('x-ratelimit-remaining')), remaining - 1);
});

test('10. status takes every lifecycle stage as well as the groups; min_value takes decimals; a negative value says so', async () => {
  const byStage = await api.request('/v1/leads?status=commencing&page_size=100', { key: api.keys.ent_feed });
  assert.is(byStage.status, 200);
  const byReadiness = await api.request('/v1/leads?readiness=commencing&page_size=100', { key: api.keys.ent_feed });
  assert.ok(byStage.body.total > 0, 'the tiny release has commencing leads');
  assert.is(byStage.body.total, byReadiness.body.total);
  assert.ok(byStage.body.results.every((l: { lead_readiness: string }) => l.lead_readiness === 'commencing'));
  // a group and a stage of another group: OR
  const closed = await api.request('/v1/leads?status=closed', { key: api.keys.ent_feed });
  const mixed = await api.request('/v1/leads?status=closed,commencing', { key: api.keys.ent_feed });
  assert.is(mixed.body.total, closed.body.total + byStage.body.total);
  // with a readiness filter beside it: AND (here nothing can match)
  const none = await api.request('/v1/leads?status=commencing&readiness=granted', { key: api.keys.ent_feed });
  assert.is(none.status, 200);
  assert.is(none.body.total, 0);
  const bad = await api.request('/v1/leads?status=bogus', { key: api.keys.ent_feed });
  assertProblem(bad, 400, 'invalid_parameter');
  assert.ok(bad.body.errors[0].allowed.includes('commencing') && bad.body.errors[0].allowed.includes('active'));

  const whole = await api.request('/v1/leads?min_value=250000', { key: api.keys.ent_feed });
  const decimal = await api.request('/v1/leads?min_value=249999.5', { key: api.keys.ent_feed });
  assert.is(decimal.status, 200);
  assert.ok(decimal.body.total >= whole.body.total);
  // the SQL path (exports, DuckDB) takes the decimal too, with the same answer
  const exported = await api.request('/v1/export/applications?min_value=249999.5&limit=10000', {
    key: api.keys.ent_feed,
  });
  assert.is(exported.status, 200);
  assert.is(exported.body.count, decimal.body.total);
  const negative = await api.request('/v1/leads?min_value=-5', { key: api.keys.ent_feed });
  assertProblem(negative, 400, 'invalid_parameter');
  assert.equal(negative.body.errors, [{ name: 'min_value', reason: 'must not be negative' }]);
  const units = await api.request('/v1/leads?min_units=1.5', { key: api.keys.ent_feed });
  assert.equal(units.body.errors, [{ name: 'min_units', reason: 'must be a whole number' }]);
});

test('10. /intel/analytics without section answers a summary linking every section', async () => {
  const res = await api.request('/v1/intel/analytics', { key: api.keys.ent_feed });
  assert.is(res.status, 200);
  assert.equal(
    res.body.sections.map((s: { section: string }) => s.section),
    ['price_index', 'yields', 'emerging_zones', 'material_costs'],
  );
  for (const s of res.body.sections) {
    const page = await api.request(new URL(s.href).pathname + new URL(s.href).search, { key: api.keys.ent_feed });
    assert.is(page.status, 200, s.href);
    assert.is(page.body.total, s.total, s.section);
  }
  // with other parameters but no section: still a 400 naming section
  const res2 = await api.request('/v1/intel/analytics?county=Cork', { key: api.keys.ent_feed });
  assertProblem(res2, 400, 'invalid_parameter');
  assert.is(res2.body.errors[0].name, 'section');
});

/** The `next` target of a Link header, as a path the test client can request. */
const nextOf = (res: { headers: Headers }, rel = 'next'): string | null => {
  const link = res.headers.get('link');
  const m = link && new RegExp(`<([^>]+)>; rel="${rel}"`).exec(link);
  if (!m) return null;
  const u = new URL(m[1]!);
  assert.is(`${u.protocol}//${u.host}`, api.baseUrl, 'the link is absolute, on the origin the request came to');
  return u.pathname + u.search;
};

test('13. every paged response carries Link rel="next" with the URL the body gives', async () => {
  const key = api.keys.ent_feed;
  // leads: page numbers and cursors
  const p1 = await api.request('/v1/leads?county=Cork&page_size=2&page=1', { key });
  const next = nextOf(p1)!;
  assert.ok(
    next.includes(`cursor=${encodeURIComponent(p1.body.next_cursor)}`) &&
      !next.includes('page=1') &&
      next.includes('county=Cork'),
    next,
  );
  const p2 = await api.request(next, { key });
  const p2b = await api.request(`/v1/leads?county=Cork&page_size=2&page=2`, { key });
  assert.equal(
    p2.body.results.map((l: { id: number }) => l.id),
    p2b.body.results.map((l: { id: number }) => l.id),
  );
  // the last page has none
  const last = await api.request('/v1/leads?page_size=100&county=Cork', { key });
  if (last.body.next_cursor === null) assert.is(last.headers.get('link'), null);
  // infrastructure
  const infra = await api.request('/v1/infrastructure?page_size=2', { key });
  assert.ok(nextOf(infra)!.includes(`cursor=${encodeURIComponent(infra.body.next_cursor)}`));
  // cursor export
  const exp = await api.request('/v1/export/applications?limit=2', { key });
  assert.ok(nextOf(exp)!.endsWith(`cursor=${encodeURIComponent(exp.body.next_cursor)}`));
  const exp2 = await api.request(nextOf(exp)!, { key });
  assert.is(exp2.status, 200);
  // feeds and OGC items: the body's own next link
  for (const path of ['/v1/feeds/leads.geojson?page_size=2', '/v1/ogc/collections/leads/items?limit=2']) {
    const res = await api.request(path, { key });
    const bodyNext = res.body.links.find((l: { rel: string }) => l.rel === 'next').href as string;
    assert.is(res.headers.get('link'), `<${bodyNext}>; rel="next"`, path);
  }
  // usage: the previous period, and the next one up to today
  const usage = await api.request('/v1/account/usage?from=2026-11-01&to=2026-11-10', { key });
  assert.is(nextOf(usage, 'prev'), '/v1/account/usage?from=2026-10-22&to=2026-10-31');
  assert.is(nextOf(usage), '/v1/account/usage?from=2026-11-11&to=2026-11-20');
  const today = await api.request('/v1/account/usage', { key });
  assert.is(nextOf(today), null, 'no next period after today');
});

/** A cursor with its payload replaced (the tag kept): what a client forging a cursor sends. */
const forge = (cursor: string, edit: (p: { k: unknown[]; r: string; f: string }) => void): string => {
  const [payload, sig] = cursor.split('.') as [string, string];
  const p = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  edit(p);
  return `${Buffer.from(JSON.stringify(p)).toString('base64url')}.${sig}`;
};

test('issue 13 3.4: a forged export cursor naming another release, or a tampered leads cursor, is a 400 problem', async () => {
  const key = api.keys.ent_feed;
  const exp = await api.request('/v1/export/applications?limit=2', { key });
  const other = await api.request(
    `/v1/export/applications?limit=2&cursor=${encodeURIComponent(forge(exp.body.next_cursor, (p) => (p.r = '../../etc')))}`,
    { key },
  );
  assertProblem(other, 400, 'invalid_parameter');
  assert.match(other.body.detail, /^cursor: not a valid cursor of this API/);
  const renamed = await api.request(
    `/v1/export/applications?limit=2&cursor=${encodeURIComponent(forge(exp.body.next_cursor, (p) => (p.r = '20250101T000000Z')))}`,
    { key },
  );
  assertProblem(renamed, 400, 'invalid_parameter');
  const leads = await api.request('/v1/leads?page_size=2', { key });
  const moved = forge(leads.body.next_cursor, (p) => (p.k = ['2099-01-01', 1]));
  assertProblem(
    await api.request(`/v1/leads?page_size=2&cursor=${encodeURIComponent(moved)}`, { key }),
    400,
    'invalid_parameter',
  );
  // the genuine cursor still works
  assert.is(
    (await api.request(`/v1/leads?page_size=2&cursor=${encodeURIComponent(leads.body.next_cursor)}`, { key })).status,
    200,
  );
});

test('issue 13 3.4: after a rotation a cursor signed with the previous secret still works; without it, a 400 (GIS tokens rotate alike)', async () => {
  const A = 'cursor-secret-A-0123456789abcdef0123456789';
  const B = 'cursor-secret-B-fedcba9876543210fedcba9876';
  const before = await startTestApi({ config: { cursorSecret: A, gisTokenSecret: A } });
  let cursor: string;
  let feedCursor: string;
  let token: string;
  try {
    cursor = (await before.request('/v1/leads?page_size=2&county=Cork', { key: before.keys.ent_feed })).body
      .next_cursor;
    const feed = (await before.request('/v1/feeds/leads.geojson?page_size=2', { key: before.keys.ent_feed })).body;
    feedCursor = new URL(feed.links.find((l: { rel: string }) => l.rel === 'next').href).searchParams.get('cursor')!;
    token = (await before.request('/v1/feeds/token', { key: before.keys.ent_feed })).body.access_token;
  } finally {
    await before.close();
  }
  const rotated = await startTestApi({
    config: { cursorSecret: B, cursorSecretsPrevious: [A], gisTokenSecret: B, gisTokenSecretsPrevious: [A] },
  });
  const dropped = await startTestApi({ config: { cursorSecret: B, gisTokenSecret: B } });
  try {
    const q = `/v1/leads?page_size=2&county=Cork&cursor=${encodeURIComponent(cursor)}`;
    const ok = await rotated.request(q, { key: rotated.keys.ent_feed });
    assert.is(ok.status, 200);
    assert.ok(ok.body.next_cursor === null || ok.body.next_cursor !== cursor);
    assertProblem(await dropped.request(q, { key: dropped.keys.ent_feed }), 400, 'invalid_parameter');
    // the GIS next link's cursor and the access_token (both made before the rotation); the
    // token carries the old server's key, which the new server does not know: the token opens
    // (not invalid_token) and its key is then refused as unknown
    const f = `/v1/feeds/leads.geojson?page_size=2&cursor=${encodeURIComponent(feedCursor)}`;
    assert.is((await rotated.request(f, { key: rotated.keys.ent_feed })).status, 200);
    assertProblem(await dropped.request(f, { key: dropped.keys.ent_feed }), 400, 'invalid_parameter');
    assertProblem(
      await rotated.request(`/v1/feeds/leads.geojson?access_token=${token}`, { key: null }),
      401,
      'unknown_key',
    );
    assertProblem(
      await dropped.request(`/v1/feeds/leads.geojson?access_token=${token}`, { key: null }),
      401,
      'invalid_token',
    );
  } finally {
    await rotated.close();
    await dropped.close();
  }
});

test.run();
