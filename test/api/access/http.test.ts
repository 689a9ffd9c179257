/**
 * The access model over real HTTP (SQLite state file, tiny real release): rate-limit and budget
 * headers on every keyed response, 429 at exactly the hourly limit under concurrent requests,
 * daily row budgets for lists and detail with HEAD / dry_run quotes and the midnight reset, the
 * usage ledger, revoked and expired keys, and the failed-key throttle. Time is a settable clock.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { generateKey } from '../../../api/access/keys.ts';
import { assertProblem, startTestApi, type TestApi } from '../../helpers/api.ts';

const T0 = Date.parse('2026-11-20T10:15:00Z');
let t = T0;
const clock = () => new Date(t);
const hourReset = String(Date.parse('2026-11-20T11:00:00Z') / 1000);
const dayReset = String(Date.parse('2026-11-21T00:00:00Z') / 1000);

const test = suite('access over HTTP');
let api: TestApi;
test.before(async () => {
  api = await startTestApi({ clock, config: { keyCacheMs: 0, authFailLimit: 5, authFailWindowS: 60 } });
});
test.after(async () => {
  await api?.close();
});

/** A fresh key of `scope` on a fresh account (its own counters). */
let n = 0;
async function freshKey(
  scope: 'commonwealth' | 'ent_api' | 'ent_feed' | 'custom' = 'commonwealth',
): Promise<{ id: string; raw: string; account: string }> {
  const a = await api.store.createAccount(`acct${++n}`, 'premium');
  const k = generateKey(scope);
  await api.store.insertKey({
    id: k.id,
    account_id: a.id,
    scope,
    name: null,
    display_prefix: k.displayPrefix,
    hash: k.hash,
  });
  return { id: k.id, raw: k.raw, account: a.name };
}

test('every keyed response carries the rate-limit and budget headers (200, 400, 404)', async () => {
  t = T0;
  const k = await freshKey('commonwealth');
  const paths = ['/v1/meta', '/v1/leads?page_size=2', '/v1/leads?nope=1', '/v1/leads/999999999'];
  const statuses: number[] = [];
  for (const [i, p] of paths.entries()) {
    const res = await api.request(p, { key: k.raw });
    statuses.push(res.status);
    const h = (name: string) => res.headers.get(name);
    assert.is(h('x-ratelimit-limit'), '600', p);
    assert.is(h('x-ratelimit-remaining'), String(600 - (i + 1)), p);
    assert.is(h('x-ratelimit-reset'), hourReset, p);
    assert.is(h('ratelimit-policy'), '"hourly";q=600;w=3600', p);
    assert.is(h('ratelimit'), `"hourly";r=${600 - (i + 1)};t=2700`, p);
    assert.is(h('x-budget-limit'), '1000', p);
    assert.is(h('x-budget-reset'), dayReset, p);
  }
  assert.equal(statuses, [200, 200, 400, 404]);
  const afterList = await api.request('/v1/meta', { key: k.raw });
  assert.is(afterList.headers.get('x-budget-remaining'), '998', 'the 2 listed rows were charged');
  // uncapped scopes say so
  const feed = await freshKey('ent_feed');
  const f = await api.request('/v1/leads?page_size=3', { key: feed.raw });
  assert.is(f.headers.get('x-ratelimit-limit'), '20000');
  assert.is(f.headers.get('x-budget-limit'), 'unlimited');
  assert.is(f.headers.get('x-budget-remaining'), 'unlimited');
  const custom = await freshKey('custom');
  assert.is((await api.request('/v1/meta', { key: custom.raw })).headers.get('x-ratelimit-limit'), '120000');
  const ent = await freshKey('ent_api');
  const e = await api.request('/v1/meta', { key: ent.raw });
  assert.is(e.headers.get('x-ratelimit-limit'), '5000');
  assert.is(e.headers.get('x-budget-limit'), '5000');
});

test('hourly limit: exactly 600 of 640 concurrent requests pass, the rest are 429 with Retry-After; the next hour starts afresh', async () => {
  t = T0;
  const k = await freshKey('commonwealth');
  const results = await Promise.all(
    Array.from({ length: 640 }, () =>
      fetch(api.baseUrl + '/v1/meta', { headers: { Authorization: `Bearer ${k.raw}` } }).then(async (r) => ({
        status: r.status,
        headers: r.headers,
        body: (await r.json()) as any,
      })),
    ),
  );
  const ok = results.filter((r) => r.status === 200);
  const limited = results.filter((r) => r.status === 429);
  assert.is(ok.length, 600);
  assert.is(limited.length, 40);
  assert.equal(
    new Set(ok.map((r) => r.headers.get('x-ratelimit-remaining'))).size,
    600,
    'every passing request saw its own count',
  );
  for (const r of limited) {
    assert.is(r.body.code, 'rate_limited');
    assert.is(r.headers.get('retry-after'), '2700');
    assert.is(r.headers.get('x-ratelimit-remaining'), '0');
    assert.is(r.headers.get('x-ratelimit-reset'), hourReset);
  }
  assertProblem(await api.request('/v1/meta', { key: k.raw }), 429, 'rate_limited');
  t = Date.parse('2026-11-20T11:00:00Z');
  const next = await api.request('/v1/meta', { key: k.raw });
  assert.is(next.status, 200);
  assert.is(next.headers.get('x-ratelimit-remaining'), '599');
  t = T0;
});

test('daily row budget: lists and detail are charged per record; HEAD and dry_run quote for free; past the budget a 429 charges nothing; it resets at 00:00 UTC', async () => {
  t = T0;
  const k = await freshKey('commonwealth');
  const total = (await api.request('/v1/leads?page_size=1', { key: k.raw })).body.total as number;
  assert.ok(total >= 100, `the tiny release has ${total} leads`);
  const remaining = async () =>
    Number((await api.request('/v1/meta', { key: k.raw })).headers.get('x-budget-remaining'));
  assert.is(await remaining(), 999);
  // HEAD and dry_run: the cost, nothing charged
  const head = await api.request('/v1/leads?page_size=40', { key: k.raw, method: 'HEAD' });
  assert.is(head.status, 200);
  assert.is(head.headers.get('x-budget-cost'), '40');
  assert.is(head.text, '');
  const dry = await api.request('/v1/leads?page_size=40&dry_run=1', { key: k.raw });
  assert.is(dry.status, 200);
  assert.equal(dry.body, {
    dry_run: true,
    rows: 40,
    budget_limit: 1000,
    budget_remaining: 999,
    would_succeed: true,
    resets_at: '2026-11-21T00:00:00.000Z',
  });
  assert.is(dry.headers.get('etag'), null, 'a quote is never cached');
  const dryDetail = await api.request('/v1/infrastructure?page_size=7&dry_run=true', { key: k.raw });
  const headDetail = await api.request('/v1/infrastructure?page_size=7', { key: k.raw, method: 'HEAD' });
  assert.ok(dryDetail.body.rows > 0 && dryDetail.body.rows <= 7);
  assert.is(headDetail.headers.get('x-budget-cost'), String(dryDetail.body.rows), 'HEAD and dry_run quote the same');
  assertProblem(await api.request('/v1/leads?dry_run=maybe', { key: k.raw }), 400, 'invalid_parameter');
  assert.is(await remaining(), 999, 'quotes cost nothing');
  // detail costs one row each
  const ids = (await api.request('/v1/leads?page_size=5', { key: k.raw })).body.results.map(
    (r: { id: number }) => r.id,
  ) as number[];
  assert.is(await remaining(), 994);
  for (const id of ids.slice(0, 3)) assert.is((await api.request(`/v1/leads/${id}`, { key: k.raw })).status, 200);
  assert.is(await remaining(), 991);
  // a 304 returns no records: not charged
  const first = await api.request(`/v1/leads/${ids[0]}`, { key: k.raw });
  const again = await api.request(`/v1/leads/${ids[0]}`, {
    key: k.raw,
    headers: { 'If-None-Match': first.headers.get('etag')! },
  });
  assert.is(again.status, 304);
  assert.is(await remaining(), 990);
  // spend down to 40 rows left: 9 pages of 100 + 50 rows
  for (let i = 0; i < 9; i++)
    assert.is((await api.request(`/v1/leads?page_size=100&page=${(i % 3) + 1}`, { key: k.raw })).status, 200);
  assert.is((await api.request('/v1/leads?page_size=50', { key: k.raw })).status, 200);
  assert.is(await remaining(), 40);
  const over = await api.request('/v1/leads?page_size=41', { key: k.raw });
  assertProblem(over, 429, 'budget_exhausted');
  assert.is(over.body.rows_requested, 41);
  assert.is(over.body.rows_remaining, 40);
  assert.is(over.body.resets_at, '2026-11-21T00:00:00.000Z');
  assert.match(over.body.detail, /41 rows but 40 of today's 1,000 remain/);
  assert.is(over.headers.get('retry-after'), String(Date.parse('2026-11-21T00:00:00Z') / 1000 - T0 / 1000));
  assert.is(over.headers.get('x-budget-remaining'), '40');
  assert.is((await api.request('/v1/leads?page_size=41&dry_run=1', { key: k.raw })).body.would_succeed, false);
  assert.is(await remaining(), 40, 'the refused request charged nothing');
  assert.is(
    (await api.request('/v1/leads?page_size=40', { key: k.raw })).status,
    200,
    'exactly what remains still passes',
  );
  assertProblem(await api.request(`/v1/leads/${ids[1]}`, { key: k.raw }), 429, 'budget_exhausted');
  assert.is((await api.request('/v1/meta', { key: k.raw })).status, 200, 'requests that return no records still work');
  // a list with zero results costs nothing even at 0 remaining
  assert.is((await api.request('/v1/leads?q=zzzzqqqxxy', { key: k.raw })).status, 200);
  t = Date.parse('2026-11-21T00:00:00Z');
  const fresh = await api.request('/v1/leads?page_size=10', { key: k.raw });
  assert.is(fresh.status, 200);
  assert.is(fresh.headers.get('x-budget-remaining'), '990');
  assert.is(fresh.headers.get('x-budget-reset'), String(Date.parse('2026-11-22T00:00:00Z') / 1000));
  t = T0;
});

test('concurrent list requests never overspend the budget', async () => {
  t = Date.parse('2026-11-25T09:00:00Z');
  const k = await freshKey('commonwealth');
  const res = await Promise.all(
    Array.from({ length: 30 }, (_, i) => api.request(`/v1/leads?page_size=50&page=${(i % 4) + 1}`, { key: k.raw })),
  );
  assert.is(res.filter((r) => r.status === 200).length, 20, '20 × 50 = 1,000 rows');
  for (const r of res.filter((x) => x.status !== 200)) assertProblem(r, 429, 'budget_exhausted');
  assert.is((await api.request('/v1/meta', { key: k.raw })).headers.get('x-budget-remaining'), '0');
  t = T0;
});

test('usage ledger: every request counted per key, day and route; revoked keys stay listed; revoke → 401', async () => {
  t = Date.parse('2026-11-26T08:00:00Z');
  const a = await api.store.createAccount('ledgered', 'premium');
  const mk = async (scope: 'commonwealth' | 'ent_api') => {
    const g = generateKey(scope);
    await api.store.insertKey({
      id: g.id,
      account_id: a.id,
      scope,
      name: scope,
      display_prefix: g.displayPrefix,
      hash: g.hash,
    });
    return { id: g.id, raw: g.raw };
  };
  const k1 = await mk('ent_api');
  const k2 = await mk('commonwealth');
  for (let i = 0; i < 3; i++) await api.request('/v1/leads?page_size=4', { key: k1.raw });
  await api.request('/v1/leads?bad=1', { key: k1.raw });
  const lead = (await api.request('/v1/leads?page_size=1', { key: k2.raw })).body.results[0].id;
  await api.request(`/v1/leads/${lead}`, { key: k2.raw });
  await api.request('/v1/meta', { key: k2.raw, method: 'HEAD' });
  await api.store.revokeKey(k2.id);
  assertProblem(await api.request('/v1/meta', { key: k2.raw }), 401, 'revoked_key');
  t = Date.parse('2026-11-27T08:00:00Z');
  await api.request('/v1/meta', { key: k1.raw });
  const u = await api.request('/v1/account/usage?from=2026-11-26&to=2026-11-27', { key: k1.raw });
  assert.is(u.status, 200, u.text);
  assert.is(u.headers.get('etag'), null);
  assert.equal(u.body.account, { id: a.id, name: 'ledgered', plan: 'premium' });
  assert.is(u.body.detail_days, 90);
  const byId = new Map<string, any>(u.body.keys.map((k: { id: string }) => [k.id, k]));
  assert.equal(u.body.keys.length, 2);
  assert.is(byId.get(k1.id).status, 'active');
  assert.is(byId.get(k2.id).status, 'revoked');
  assert.ok(byId.get(k2.id).revoked_at);
  const [e1, e2] = [byId.get(k1.id), byId.get(k2.id)];
  assert.equal(e1.days, [
    {
      date: '2026-11-26',
      requests: 4,
      errors: 1,
      rows: 12,
      routes: [{ route: 'GET /v1/leads', requests: 4, errors: 1, rows: 12 }],
    },
    {
      date: '2026-11-27',
      requests: 1,
      errors: 0,
      rows: 0,
      routes: [{ route: 'GET /v1/meta', requests: 1, errors: 0, rows: 0 }],
    },
  ]);
  assert.equal(
    e2.days,
    [
      {
        date: '2026-11-26',
        requests: 3,
        errors: 0,
        rows: 2,
        routes: [
          { route: 'GET /v1/leads', requests: 1, errors: 0, rows: 1 },
          { route: 'GET /v1/leads/{id}', requests: 1, errors: 0, rows: 1 },
          { route: 'HEAD /v1/meta', requests: 1, errors: 0, rows: 0 },
        ],
      },
    ],
    'the 401 after revocation is not a request of the key',
  );
  assert.equal(u.body.totals, { requests: 8, errors: 1, rows: 14 });
  assertProblem(
    await api.request('/v1/account/usage?from=2026-11-28&to=2026-11-01', { key: k1.raw }),
    400,
    'invalid_parameter',
  );
  assertProblem(await api.request('/v1/account/usage?since=2026-11-01', { key: k1.raw }), 400, 'unknown_parameter');
  assertProblem(await api.request('/v1/account/usage?from=2026-02-30', { key: k1.raw }), 400, 'invalid_parameter');
  // another account's keys are not visible
  const other = await api.request('/v1/account/usage', { key: api.keys.ent_api });
  assert.not.ok(other.body.keys.some((k: { id: string }) => k.id === k1.id));
  t = T0;
});

test('a licensed key stops with its licence: 401 expired_key naming the licence', async () => {
  t = T0;
  const a = await api.store.createAccount('licensed-org', 'basic');
  await api.store.createLicence({
    id: 'lic_http',
    account_id: a.id,
    scope: 'ent_feed',
    seats: 1,
    expires_at: '2026-11-21T00:00:00Z',
  });
  const { createHash, randomBytes } = await import('node:crypto');
  const token = randomBytes(32).toString('base64url');
  await api.store.createClaimLink({
    token_hash: createHash('sha256').update(token).digest('hex'),
    licence_id: 'lic_http',
    expires_at: '2026-11-20T23:00:00Z',
  });
  const g = generateKey('ent_feed');
  const r = await api.store.claimLink(createHash('sha256').update(token).digest('hex'), {
    id: g.id,
    name: null,
    display_prefix: g.displayPrefix,
    hash: g.hash,
  });
  assert.ok('key' in r);
  assert.is((await api.request('/v1/meta', { key: g.raw })).status, 200);
  t = Date.parse('2026-11-21T00:00:00Z');
  const res = await api.request('/v1/meta', { key: g.raw });
  assertProblem(res, 401, 'expired_key');
  assert.match(res.body.detail, /expired with its organisation licence lic_http on 2026-11-21T00:00:00.000Z/);
  assert.match(res.headers.get('www-authenticate')!, /invalid_token/);
  t = T0;
});

test('repeated invalid keys from one address: 429 after AUTH_FAIL_LIMIT for every invalid key until the window ends, never for a valid one; no key in any log', async () => {
  t = Date.parse('2026-11-28T10:00:00Z');
  const good = await freshKey('ent_api');
  const guesses = Array.from({ length: 5 }, () => generateKey('ent_api').raw);
  for (const [i, g] of guesses.entries()) {
    const r = await api.request('/v1/meta', { key: g });
    assertProblem(r, 401, 'unknown_key');
    assert.is(r.headers.get('x-ratelimit-remaining'), String(4 - i));
    assert.is(r.headers.get('ratelimit-policy'), '"failed-key-attempts";q=5;w=60');
  }
  assertProblem(await api.request('/v1/meta', { key: null }), 401, 'missing_key'); // a missing header is not a guess
  const blocked = await api.request('/v1/meta', { key: generateKey('ent_api').raw });
  assertProblem(blocked, 429, 'too_many_failed_attempts');
  assert.is(blocked.headers.get('retry-after'), '60');
  assertProblem(await api.request('/v1/meta', { key: 'lk_nonsense' }), 429, 'too_many_failed_attempts'); // malformed: no lookup
  assertProblem(await api.request('/v1/meta', { key: guesses[0]! }), 429, 'too_many_failed_attempts');
  assert.is((await api.request('/v1/meta', { key: good.raw })).status, 200, 'a valid key is never throttled');
  assert.is((await api.request('/v1/openapi.json', { key: null })).status, 200, 'public paths are not throttled');
  t += 60_000;
  assert.is((await api.request('/v1/meta', { key: good.raw })).status, 200, 'the window ended');
  const logs = api.logs.join('\n');
  for (const g of [...guesses, good.raw, ...Object.values(api.keys)])
    assert.not.ok(logs.includes(g), 'a key reached the log');
  t = T0;
});

test("dry_run (schemas/dry-run-query.schema.json) is read before the endpoint's own parameters: its values in any case, one wording for a bad one", async () => {
  t = T0;
  const k = await freshKey('ent_api');
  const bad = { name: 'dry_run', reason: 'must be 1/true or 0/false', allowed: ['1', '0', 'true', 'false'] };
  for (const v of ['maybe', '', 'yes', '2']) {
    const res = await api.request(`/v1/leads?dry_run=${v}&colour=1`, { key: k.raw });
    assertProblem(res, 400, 'invalid_parameter');
    assert.equal(res.body.errors, [bad], v);
    assert.is(res.body.detail, 'dry_run: must be 1/true or 0/false (allowed: 1, 0, true, false)');
  }
  const twice = await api.request('/v1/meta?dry_run=1&dry_run=0', { key: k.raw });
  assertProblem(twice, 400, 'invalid_parameter');
  assert.equal(twice.body.errors, [{ name: 'dry_run', reason: 'given more than once' }]);
  for (const v of ['1', 'TRUE', 'True'])
    assert.is((await api.request(`/v1/leads?page_size=3&dry_run=${v}`, { key: k.raw })).body.rows, 3, v);
  for (const v of ['0', 'FALSE'])
    assert.is((await api.request(`/v1/leads?page_size=3&dry_run=${v}`, { key: k.raw })).body.results.length, 3, v);
  // removed before the endpoint's parser: a no-parameter endpoint takes it, and names only its own mistakes
  assert.is((await api.request('/v1/meta?dry_run=1', { key: k.raw })).body.dry_run, true);
  const usage = await api.request('/v1/account/usage?dry_run=1&from=x', { key: k.raw });
  assert.equal(usage.body.errors, [
    { name: 'from', reason: 'must be a calendar date YYYY-MM-DD (1970 or later), got "x"' },
  ]);
});

test('the OpenAPI document describes the access headers, 429 and dry_run on every keyed operation', async () => {
  const doc = (await api.request('/v1/openapi.json', { key: null })).body;
  for (const [path, item] of Object.entries<any>(doc.paths)) {
    for (const op of Object.values<any>(item)) {
      if (op.security) continue;
      assert.ok(op.responses['429'].headers['Retry-After'], `${path} 429`);
      for (const [status, res] of Object.entries<any>(op.responses)) {
        // what the code sends (issue 14 point 8): every status but 503 has the rate-limit headers;
        // a 401 reports the failed-key allowance and has no budget; a 503 has neither
        for (const h of [
          'X-RateLimit-Limit',
          'X-RateLimit-Remaining',
          'X-RateLimit-Reset',
          'RateLimit-Policy',
          'RateLimit',
        ]) {
          assert.is(Boolean(res.headers[h]), status !== '503', `${path} ${status} ${h}`);
        }
        for (const h of ['X-Budget-Limit', 'X-Budget-Remaining', 'X-Budget-Reset']) {
          assert.is(Boolean(res.headers[h]), status !== '503' && status !== '401', `${path} ${status} ${h}`);
        }
      }
      assert.ok(op.responses['503'].headers['Retry-After'], `${path} 503 Retry-After`);
      assert.ok(
        op.parameters.some((p: { name: string }) => p.name === 'dry_run'),
        `${path} dry_run`,
      );
    }
  }
  assert.ok(doc.paths['/account/usage'].get);
  assert.ok(doc.paths['/claim'].post.responses['201']);
});

test.run();
