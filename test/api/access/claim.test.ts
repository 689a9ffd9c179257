/**
 * The claim calls without a browser: CSRF and replay defences, body validation, link expiry and
 * licence end, and `leads licences claim` / `licences create|link|list` / `usage` / the self-serve
 * key rules of `keys create` through the real CLI against a running test API.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { issueClaimLink, licenceEnd, parseClaimLink, selfServeRefusal } from '../../../api/access/licences.ts';
import { generateKey, KEY_PATTERN } from '../../../api/access/keys.ts';
import { assertProblem, startTestApi, type TestApi } from '../../helpers/api.ts';
import { leads as runLeads } from '../../helpers/cli.ts';

let t = Date.parse('2026-11-20T10:00:00Z');
let api: TestApi;
test.before(async () => {
  api = await startTestApi({ clock: () => new Date(t), config: { keyCacheMs: 0 } });
});
test.after(async () => {
  await api?.close();
});

const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(api.baseUrl + '/v1' + path, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  }).then(async (r) => ({
    status: r.status,
    headers: r.headers,
    body: (await r.json().catch(() => null)) as any,
  }));

function leads(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return runLeads(args, {
    ...process.env,
    DATA_DIR: api.dataDir,
    DATABASE_URL: '',
    PUBLIC_BASE_URL: api.baseUrl + '/v1',
  });
}

test('pure rules: plans, licence end, claim links', () => {
  assert.is(selfServeRefusal('commonwealth', 'basic'), null);
  assert.is(selfServeRefusal('ent_api', 'premium'), null);
  assert.match(selfServeRefusal('ent_api', 'pro')!, /premium plan/);
  assert.match(selfServeRefusal('ent_feed', 'premium')!, /leads licences create/);
  assert.match(selfServeRefusal('custom', 'premium')!, /organisation licence/);
  assert.is(licenceEnd('2027-06-30'), '2027-07-01T00:00:00.000Z');
  assert.is(licenceEnd('2027-02-30'), null);
  assert.is(licenceEnd('30/06/2027'), null);
  const tok = 'A'.repeat(43);
  assert.equal(parseClaimLink(`https://api.example.ie/v1/claim#${tok}`), {
    base: 'https://api.example.ie/v1',
    token: tok,
  });
  assert.is(parseClaimLink(`https://api.example.ie/v1/claim#short`), null);
  assert.is(parseClaimLink(`https://api.example.ie/v1/docs#${tok}`), null);
  assert.is(parseClaimLink('not a url'), null);
});

test('claim calls: JSON only, same origin only, validated, single use, expiring', async () => {
  t = Date.parse('2026-11-20T10:00:00Z');
  const org = await api.store.createAccount('org-http', 'basic');
  const lic = await api.store.createLicence({
    id: 'lic_h',
    account_id: org.id,
    scope: 'custom',
    seats: 5,
    expires_at: licenceEnd('2026-12-31')!,
  });
  const { url } = await issueClaimLink(api.store, lic, api.baseUrl + '/v1', { now: new Date(t), days: 2 });
  const token = parseClaimLink(url)!.token;
  const k = generateKey('custom');
  const claim = { token, key_hash: k.hash, display_prefix: k.displayPrefix };
  // CSRF: a form post, a foreign Origin, a cross-site fetch
  const form = await fetch(api.baseUrl + '/v1/claim', {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: `token=${token}`,
  });
  assert.is(form.status, 415);
  const evil = await post('/claim', claim, { Origin: 'https://evil.example' });
  assert.is(evil.body?.code, 'cross_origin_request', JSON.stringify(evil));
  assert.is((await post('/claim', claim, { 'Sec-Fetch-Site': 'cross-site' })).status, 403);
  assert.is((await post('/claim/lookup', { token }, { Origin: 'https://evil.example' })).status, 403);
  // validation
  const bad = await post('/claim', { token: 'x', key_hash: 'nothex', display_prefix: 'lk_ea_abcd', extra: 1 });
  assert.is(bad.status, 400);
  assert.equal(bad.body.errors.map((e: { name: string }) => e.name).sort(), [
    'display_prefix',
    'extra',
    'key_hash',
    'token',
  ]);
  assert.is((await post('/claim', '{not json')).body.code, 'invalid_body');
  assert.is((await post('/claim', 'x'.repeat(5000))).status, 413);
  const wrongScope = generateKey('ent_feed');
  assert.is(
    (await post('/claim', { ...claim, display_prefix: wrongScope.displayPrefix })).status,
    400,
    'prefix of another scope',
  );
  assert.is((await post('/claim/lookup', { token: 'B'.repeat(43) })).body.code, 'claim_link_unknown');
  // nothing above used the link
  const look = await post('/claim/lookup', { token });
  assert.is(look.status, 200);
  assert.equal(look.body, {
    organisation: 'org-http',
    licence_id: 'lic_h',
    scope: 'custom',
    key_prefix: 'lk_cu_',
    seats: 5,
    seats_used: 0,
    licence_expires_at: '2027-01-01T00:00:00.000Z',
    link_expires_at: '2026-11-22T10:00:00.000Z',
  });
  assert.is(look.headers.get('cache-control'), 'no-store');
  const made = await post('/claim', { ...claim, name: 'ops' }, { Origin: api.baseUrl });
  assert.is(made.status, 201);
  assert.equal(Object.keys(made.body).sort(), [
    'created_at',
    'display_prefix',
    'expires_at',
    'id',
    'licence_id',
    'organisation',
    'scope',
  ]);
  assert.is((await api.request('/v1/meta', { key: k.raw })).status, 200);
  // replay
  const replay = await post('/claim', { ...claim, key_hash: generateKey('custom').hash });
  assert.is(replay.status, 410);
  assert.is(replay.body.code, 'claim_link_used');
  assert.is((await post('/claim/lookup', { token })).body.code, 'claim_link_used');
  // link expiry, then licence end
  const { url: url2 } = await issueClaimLink(api.store, lic, api.baseUrl + '/v1', { now: new Date(t), days: 1 });
  t = Date.parse('2026-11-21T10:00:00Z');
  assert.is((await post('/claim/lookup', { token: parseClaimLink(url2)!.token })).body.code, 'claim_link_expired');
  const { url: url3 } = await issueClaimLink(api.store, lic, api.baseUrl + '/v1', { now: new Date(t), days: 30 });
  assert.is(
    (
      await api.store.getClaimLink(
        (await import('../../../api/access/licences.ts')).hashToken(parseClaimLink(url3)!.token),
      )
    )?.expires_at,
    '2026-12-21T10:00:00.000Z',
  );
  t = Date.parse('2027-01-01T00:00:00Z');
  const ended = await post('/claim', {
    token: parseClaimLink(url3)!.token,
    key_hash: generateKey('custom').hash,
    display_prefix: generateKey('custom').displayPrefix,
  });
  assert.is(
    ended.body.code,
    'claim_link_expired',
    'a link never outlives its licence (licence_expired: see the store contract)',
  );
  assertProblem(await api.request('/v1/meta', { key: k.raw }), 401, 'expired_key');
  t = Date.parse('2026-11-20T10:00:00Z');
});

test('CLI: keys create plan rules, licensed scopes refused, at most 10 active self-serve keys (racing creations)', async () => {
  t = Date.now();
  assert.is((await leads('accounts', 'create', '--name', 'shop', '--plan', 'pro')).code, 0);
  const ent = await leads('keys', 'create', '--account', 'shop', '--scope', 'ent_api');
  assert.is(ent.code, 1);
  assert.match(ent.stderr, /ent_api \(enriched\) keys need the premium plan; account plan is pro/);
  for (const scope of ['ent_feed', 'custom']) {
    const r = await leads('keys', 'create', '--account', 'shop', '--scope', scope);
    assert.is(r.code, 1);
    assert.match(r.stderr, /organisation licence: record one with 'leads licences create/);
  }
  const racing = await Promise.all(
    Array.from({ length: 12 }, () => leads('keys', 'create', '--account', 'shop', '--scope', 'commonwealth', '--json')),
  );
  const ok = racing.filter((r) => r.code === 0);
  assert.is(ok.length, 10);
  for (const r of racing.filter((x) => x.code !== 0)) {
    assert.is(r.code, 1);
    assert.match(r.stderr, /already holds 10 active self-serve keys/);
    assert.is(r.stdout, '', 'no key printed on refusal');
  }
  const first = JSON.parse(ok[0]!.stdout) as { id: string; key: string };
  assert.is((await leads('keys', 'revoke', first.id)).code, 0);
  assert.is(
    (await leads('keys', 'create', '--account', 'shop', '--scope', 'commonwealth', '--json')).code,
    0,
    'revoking frees a place',
  );
  assert.is(
    (await api.store.listKeys((await api.store.getAccountByName('shop'))!.id)).length,
    11,
    'the revoked key is kept',
  );
});

test('CLI: licences create → claim from a terminal → key works; single use; seats; list; usage --csv', async () => {
  t = Date.now();
  assert.is((await leads('accounts', 'create', '--name', 'county-gis', '--plan', 'basic')).code, 0);
  const created = await leads(
    'licences',
    'create',
    '--org',
    'county-gis',
    '--scope',
    'custom',
    '--seats',
    '1',
    '--expires',
    '2099-12-31',
    '--json',
  );
  assert.is(created.code, 0, created.stderr);
  const lic = JSON.parse(created.stdout) as {
    id: string;
    claim_link: string;
    seats: number;
    expires_at: string;
    scope: string;
  };
  assert.match(lic.claim_link, new RegExp(`^${api.baseUrl}/v1/claim#[A-Za-z0-9_-]{43}$`));
  assert.equal([lic.scope, lic.seats, lic.expires_at], ['custom', 1, '2100-01-01T00:00:00.000Z']);
  const claimed = await leads('licences', 'claim', lic.claim_link, '--json');
  assert.is(claimed.code, 0, claimed.stderr);
  const k = JSON.parse(claimed.stdout);
  assert.equal(Object.keys(k), ['id', 'key', 'scope']);
  assert.is(k.scope, 'custom');
  assert.match(k.key, KEY_PATTERN);
  const res = await api.request('/v1/meta', { key: k.key });
  assert.is(res.status, 200);
  assert.is(res.headers.get('x-ratelimit-limit'), '120000');
  const replay = await leads('licences', 'claim', lic.claim_link, '--json');
  assert.is(replay.code, 1);
  assert.match(replay.stderr, /already been used/);
  const more = await leads('licences', 'link', lic.id, '--json');
  assert.is(more.code, 1);
  assert.match(more.stderr, /every seat/);
  const listed = JSON.parse((await leads('licences', 'list', '--org', 'county-gis', '--json')).stdout);
  assert.equal(
    listed.map((l: { id: string; seats_used: number }) => [l.id, l.seats_used]),
    [[lic.id, 1]],
  );
  for (const [args, code, msg] of [
    [
      ['licences', 'create', '--org', 'county-gis', '--scope', 'ent_api', '--seats', '1', '--expires', '2099-12-31'],
      2,
      /--scope must be one of ent_feed, custom/,
    ],
    [
      ['licences', 'create', '--org', 'county-gis', '--scope', 'custom', '--seats', '0', '--expires', '2099-12-31'],
      2,
      /--seats must be a positive integer/,
    ],
    [
      ['licences', 'create', '--org', 'county-gis', '--scope', 'custom', '--seats', '2', '--expires', '2099-02-30'],
      2,
      /--expires must be/,
    ],
    [
      ['licences', 'create', '--org', 'nobody', '--scope', 'custom', '--seats', '2', '--expires', '2099-01-30'],
      1,
      /no account named 'nobody'/,
    ],
    [['licences', 'claim', 'https://x/v1/claim#short'], 2, /not a claim link/],
    [['usage'], 2, /--account is required/],
  ] as [string[], number, RegExp][]) {
    const r = await leads(...args);
    assert.is(r.code, code, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, msg);
  }
  // the ledger as CSV for operators (the API flushes within a second)
  await api.server.ledger.flush();
  const csv = await leads('usage', '--account', 'county-gis', '--csv');
  assert.is(csv.code, 0, csv.stderr);
  const lines = csv.stdout.trim().split('\n');
  assert.is(lines[0], 'account,key_id,key_name,scope,status,licence_id,date,requests,errors,rows');
  assert.ok(
    lines.some((l) => l.startsWith(`county-gis,${k.id},,custom,active,${lic.id},`) && l.endsWith(',1,0,0')),
    lines.join('\n'),
  );
  const table = await leads('usage', '--account', 'county-gis');
  assert.match(table.stdout, k.id);
  for (const out of [created.stdout, csv.stdout, table.stdout, listed])
    assert.not.ok(JSON.stringify(out).includes(k.key), 'the key is printed only by claim');
});

test.run();
