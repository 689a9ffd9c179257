/**
 * Webhooks act with the access that exists when they send (issue 13, section 2), over real HTTP
 * and the real CLI: the API server on the week-1 release with its SQLite state file, the week-2
 * release published into it later, deliveries to a real receiver on loopback. For each way
 * access ends — the account's only ent_api key revoked, its ent_feed licence expired (injected
 * clock), its plan downgraded from premium to pro — the next dispatch sends nothing, the delivery
 * log and `GET /v1/webhooks` say why, and once the account holds a key that may receive the
 * webhook again the deliveries held meanwhile are sent, masked for the scope of that moment.
 * A retry is masked for the access at its own send time, not the first attempt's.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createHash, randomBytes } from 'node:crypto';
import { renameSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { generateKey } from '../../../api/access/keys.ts';
import type { Scope } from '../../../api/access/scopes.ts';
import { createDispatcher } from '../../../api/webhooks/dispatcher.ts';
import { serverLeadReader } from '../../../api/webhooks/lead-reader.ts';
import { openDb } from '../../../pipeline/lib/duckdb.ts';
import { assertProblem, startTestApi, type TestApi } from '../../helpers/api.ts';
import { twoReleases, type TwoReleases } from '../../helpers/two-releases.ts';
import { startReceiver, type Received, type Receiver } from '../../helpers/webhook-receiver.ts';
import { leads as runLeads } from '../../helpers/cli.ts';

const test = suite('webhooks act with the access that exists when they send');

let api: TestApi;
let rx: Receiver;
let two: TwoReleases;
// the server's clock (key expiry, the dispatcher); starts at the real time so the CLI (real clock) agrees
let now = Date.now();
const clock = (): Date => new Date(now);

test.before(async () => {
  two = await twoReleases();
  api = await startTestApi({ clock, config: { webhookAllowHosts: ['127.0.0.1'], keyCacheMs: 0 } });
  assert.is(api.release(), two.first, 'the test API serves the same week-1 release');
  symlinkSync(join(two.dataDir, 'releases', two.second), join(api.dataDir, 'releases', two.second));
  rx = await startReceiver();
});
test.after(async () => {
  await rx?.close();
  await api?.close();
});

/** Serve week 1 or week 2 (the pipeline's atomic switch of `current`, then the server's poll). */
async function serveWeek(week: 1 | 2): Promise<void> {
  const id = week === 1 ? two.first : two.second;
  const tmp = join(api.dataDir, `.current-${id}-${randomBytes(4).toString('hex')}`);
  symlinkSync(`releases/${id}`, tmp);
  renameSync(tmp, join(api.dataDir, 'current'));
  await api.checkRelease();
  assert.is(api.release(), id);
}

/** The `leads` CLI in process (test/helpers/cli.ts) on the server's data folder and state file (its own store connection, real clock). */
function leads(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return runLeads(args, {
    ...process.env,
    DATA_DIR: api.dataDir,
    DATABASE_URL: `file:${join(api.dataDir, 'state.sqlite')}`,
    WEBHOOK_ALLOW_HOSTS: '127.0.0.1',
  });
}

async function cli(...args: string[]): Promise<any> {
  const r = await leads(...args);
  assert.is(r.code, 0, `leads ${args.join(' ')}: ${r.stderr}`);
  return args.includes('--json') ? JSON.parse(r.stdout) : r.stdout;
}

/** What the server's scheduler runs (plan, then send what is due), in process on the server's clock. */
async function dispatch(): Promise<{
  planned: { events: number; leads: number };
  sent: { attempted: number; delivered: number; held: number; suspended: number; resumed: number };
}> {
  const d = createDispatcher({
    store: api.store.webhooks,
    accounts: api.store,
    leads: serverLeadReader(api.server.db, api.server.releases),
    config: api.config,
    clock,
    random: () => 0,
    owner: 'test',
  });
  try {
    return { planned: await d.plan(), sent: await d.deliverDue() };
  } finally {
    d.close();
  }
}

/** Ids of the served release's leads above `watermark` (read from its Parquet, independently of the API). */
async function leadIdsAbove(watermark: number): Promise<number[]> {
  const db = await openDb();
  try {
    const rows = await db.all<{ id: number }>(
      `SELECT id::INT AS id FROM read_parquet('${join(api.dataDir, 'current', 'leads.parquet')}') WHERE id > ${watermark} ORDER BY id`,
    );
    return rows.map((r) => r.id);
  } finally {
    db.close();
  }
}

async function newKey(account: string, scope: Scope): Promise<{ id: string; raw: string }> {
  const a = (await api.store.getAccountByName(account))!;
  const k = generateKey(scope);
  await api.store.insertKey({
    id: k.id,
    account_id: a.id,
    scope,
    name: null,
    display_prefix: k.displayPrefix,
    hash: k.hash,
  });
  return { id: k.id, raw: k.raw };
}

/** A licensed key claimed under a new licence of `scope` ending at `expiresAt`. */
async function licensedKey(
  account: string,
  scope: 'ent_feed' | 'custom',
  expiresAt: Date,
): Promise<{ id: string; raw: string; licence: string }> {
  const a = (await api.store.getAccountByName(account))!;
  const licence = `lic_${randomBytes(8).toString('hex')}`;
  await api.store.createLicence({
    id: licence,
    account_id: a.id,
    scope,
    seats: 1,
    expires_at: expiresAt.toISOString(),
  });
  const token = createHash('sha256').update(randomBytes(32)).digest('hex');
  await api.store.createClaimLink({ token_hash: token, licence_id: licence, expires_at: expiresAt.toISOString() });
  const k = generateKey(scope);
  const r = await api.store.claimLink(token, { id: k.id, name: 'org', display_prefix: k.displayPrefix, hash: k.hash });
  assert.ok('key' in r, JSON.stringify(r));
  return { id: k.id, raw: k.raw, licence };
}

async function createWebhook(key: string, path: string): Promise<{ id: string; watermark: number }> {
  const res = await api.request('/v1/webhooks', { method: 'POST', key, body: { url: rx.url(path) } });
  assert.is(res.status, 201, res.text);
  return { id: res.body.id, watermark: res.body.watermark.lead_id };
}

const bodies = (path: string): any[] => rx.requests(path).map((r: Received) => JSON.parse(r.body.toString('utf8')));
const NO_KEY = /^the account holds no active ent_api, ent_feed or custom key/;

/** The webhook as `GET /v1/webhooks` (the list) shows it to `key`, and its detail agrees. */
async function shown(id: string, key: string): Promise<any> {
  const list = await api.request('/v1/webhooks', { key });
  assert.is(list.status, 200, list.text);
  const w = list.body.results.find((x: { id: string }) => x.id === id);
  assert.ok(w, `${id} is listed`);
  assert.equal((await api.request(`/v1/webhooks/${id}`, { key })).body, w);
  return w;
}

/** Week 2's leads for the webhook are held: not sent, in the log as suspended with the reason. */
async function assertHeld(id: string, path: string, key: string, why: RegExp, wantLeads: number[]): Promise<void> {
  assert.is(rx.requests(path).length, 0, 'nothing reached the receiver');
  const w = await shown(id, key);
  assert.equal(
    [w.status, w.access.state, w.access.scope, w.access.reason],
    ['active', 'suspended', null, 'no_active_key'],
  );
  assert.match(w.access.detail, NO_KEY);
  assert.match(w.access.detail, why);
  assert.type(w.access.suspended_at, 'string', 'the dispatcher recorded when it held them');
  const log = await api.request(`/v1/webhooks/${id}/deliveries`, { key });
  assert.is(log.status, 200, log.text);
  assert.ok(log.body.results.length > 0, 'the held deliveries are in the log');
  for (const d of log.body.results) {
    assert.equal(
      [d.type, d.status, d.attempts, d.last_attempt_at],
      ['lead.new', 'suspended', 0, null],
      'held, never attempted',
    );
    assert.is(d.suspended_reason, w.access.detail);
  }
  assert.is(
    log.body.results.reduce((n: number, d: { lead_count: number }) => n + d.lead_count, 0),
    wantLeads.length,
    'every new lead is queued, none lost',
  );
  assert.equal(
    (await api.request(`/v1/webhooks/${id}/deliveries?status=suspended`, { key })).body.results.length,
    log.body.results.length,
  );
}

/** The held leads arrived, each delivery masked for `scope` (enriched: nothing masked), exactly once. */
async function assertDelivered(
  id: string,
  path: string,
  key: string,
  scope: Scope,
  wantLeads: number[],
): Promise<void> {
  const got = bodies(path);
  assert.ok(got.length > 0);
  assert.equal(
    got.flatMap((b) => b.leads.map((l: { id: number }) => l.id)).sort((a: number, b: number) => a - b),
    wantLeads,
    'exactly the leads held meanwhile',
  );
  for (const b of got) {
    assert.equal(b._meta, { release: two.second, scope, masked: [] });
    for (const l of b.leads) assert.ok('applicant_org' in l && 'applicant_company_number' in l);
  }
  const w = await shown(id, key);
  assert.equal(w.access, { state: 'ok', scope, reason: null, detail: null, suspended_at: null });
  const log = (await api.request(`/v1/webhooks/${id}/deliveries`, { key })).body.results;
  assert.ok(
    log.every(
      (d: { status: string; attempts: number; suspended_reason: null }) =>
        d.status === 'delivered' && d.attempts === 1 && d.suspended_reason === null,
    ),
    JSON.stringify(log),
  );
}

test("revocation: the account's only ent_api key revoked → nothing is sent, the log and GET /v1/webhooks say why; a new ent_api key → the held leads are sent", async () => {
  await serveWeek(1);
  await api.store.createAccount('acme', 'premium');
  const ent = await newKey('acme', 'ent_api');
  const cw = await newKey('acme', 'commonwealth');
  const hook = await createWebhook(ent.raw, '/acme');

  await cli('keys', 'revoke', ent.id);
  assertProblem(await api.request('/v1/leads', { key: ent.raw }), 401, 'revoked_key');
  await serveWeek(2);
  const want = await leadIdsAbove(hook.watermark);
  assert.ok(want.length >= 2, `week 2 brings new leads (${want.length})`);
  const run = await cli('webhooks', 'dispatch', '--json');
  assert.ok(run.planned.events > 0 && run.planned.leads >= want.length, JSON.stringify(run));
  assert.equal(
    bodies('/acme').map((b) => b._meta),
    [],
    'nothing is sent once the only ent_api key is revoked',
  );
  assert.equal([run.sent.attempted, run.sent.delivered, run.sent.suspended], [0, 0, 1], JSON.stringify(run.sent));
  await assertHeld(hook.id, '/acme', cw.raw, new RegExp(`${ent.id} \\(ent_api\\) was revoked at `), want);
  const listed = await cli('webhooks', 'list', '--account', 'acme', '--json');
  assert.equal(listed[0].access.state, 'suspended', "the operators' list says it too");
  assert.match(
    (await leads('webhooks', 'list', '--account', 'acme')).stdout,
    /suspended: the account holds no active ent_api/,
  );
  // dispatching again still sends nothing
  assert.equal((await cli('webhooks', 'dispatch', '--json')).sent.attempted, 0);
  assert.is(rx.requests('/acme').length, 0);

  const renewed = await cli('keys', 'create', '--account', 'acme', '--scope', 'ent_api', '--json');
  assert.equal((await shown(hook.id, renewed.key)).access.state, 'ok', 'a new ent_api key: it sends again');
  const resumed = await cli('webhooks', 'dispatch', '--json');
  assert.equal(
    [resumed.sent.resumed, resumed.sent.delivered, resumed.sent.held],
    [1, run.planned.events, 0],
    JSON.stringify(resumed.sent),
  );
  await assertDelivered(hook.id, '/acme', renewed.key, 'ent_api', want);
});

test('plan downgrade premium → pro: the ent_api key stops granting ent_api everywhere (403 insufficient_plan) and the webhook is held; premium again → sent', async () => {
  await serveWeek(1);
  await api.store.createAccount('bravo', 'premium');
  const ent = await newKey('bravo', 'ent_api');
  const cw = await newKey('bravo', 'commonwealth');
  const hook = await createWebhook(ent.raw, '/bravo');

  const down = await cli('accounts', 'set-plan', '--name', 'bravo', '--plan', 'pro', '--json');
  assert.equal(
    [down.plan, down.previous_plan, down.keys_without_access],
    ['pro', 'premium', [{ id: ent.id, scope: 'ent_api' }]],
  );
  assert.match(
    (await leads('accounts', 'set-plan', '--name', 'bravo', '--plan', 'pro')).stderr,
    /no longer grant access .*403 insufficient_plan/,
  );
  // every channel: the API (lists, detail, webhooks) refuses the key; commonwealth keys keep working
  for (const path of ['/v1/leads?page_size=1', '/v1/meta', '/v1/webhooks', `/v1/webhooks/${hook.id}`]) {
    const res = await api.request(path, { key: ent.raw });
    assertProblem(res, 403, 'insufficient_plan');
    assert.match(res.body.detail, /needs the premium plan; account bravo is on the pro plan/);
  }
  assertProblem(
    await api.request(`/v1/webhooks/${hook.id}/test`, { method: 'POST', key: ent.raw }),
    403,
    'insufficient_plan',
  );
  const open = await api.request('/v1/leads?page_size=1', { key: cw.raw });
  assert.equal([open.status, open.body._meta.scope], [200, 'commonwealth']);
  assert.is(open.body.results[0].applicant_org, null);
  const refused = await leads('keys', 'create', '--account', 'bravo', '--scope', 'ent_api');
  assert.match(refused.stderr, /need the premium plan; account plan is pro/);

  await serveWeek(2);
  const want = await leadIdsAbove(hook.watermark);
  const run = await cli('webhooks', 'dispatch', '--json');
  assert.equal([run.sent.attempted, run.sent.suspended], [0, 1], JSON.stringify(run.sent));
  await assertHeld(
    hook.id,
    '/bravo',
    cw.raw,
    new RegExp(`${ent.id} \\(ent_api\\) needs the premium plan and the account is on pro`),
    want,
  );

  await cli('accounts', 'set-plan', '--name', 'bravo', '--plan', 'premium', '--json');
  assert.is((await api.request('/v1/leads?page_size=1', { key: ent.raw })).status, 200, 'the same key works again');
  const resumed = await cli('webhooks', 'dispatch', '--json');
  assert.equal([resumed.sent.resumed, resumed.sent.delivered], [1, run.planned.events]);
  await assertDelivered(hook.id, '/bravo', ent.raw, 'ent_api', want);
});

test("licence expiry: the ent_feed licence ends (injected clock) → nothing is sent, the log and GET /v1/webhooks say why; a renewed licence's key → the held leads are sent", async () => {
  await serveWeek(1);
  const account = await api.store.createAccount('harbour', 'basic');
  const cw = await newKey(account.name, 'commonwealth');
  const feed = await licensedKey(account.name, 'ent_feed', new Date(now + 86_400_000));
  const hook = await createWebhook(feed.raw, '/harbour');

  now += 2 * 86_400_000; // past the licence's end
  assertProblem(await api.request('/v1/meta', { key: feed.raw }), 401, 'expired_key');
  await serveWeek(2);
  const want = await leadIdsAbove(hook.watermark);
  const run = await dispatch();
  assert.ok(run.planned.events > 0);
  assert.equal(
    bodies('/harbour').map((b) => b._meta),
    [],
    'nothing is sent once the ent_feed licence has ended',
  );
  assert.equal([run.sent.attempted, run.sent.suspended], [0, 1], JSON.stringify(run.sent));
  await assertHeld(
    hook.id,
    '/harbour',
    cw.raw,
    new RegExp(`${feed.id} \\(ent_feed\\) expired with licence ${feed.licence} at `),
    want,
  );

  const renewed = await licensedKey(account.name, 'ent_feed', new Date(now + 365 * 86_400_000));
  const resumed = await dispatch();
  assert.equal([resumed.sent.resumed, resumed.sent.delivered], [1, run.planned.events]);
  await assertDelivered(hook.id, '/harbour', renewed.raw, 'ent_feed', want);
});

test('a retry is masked for the access at its own send time: custom at the first attempt, ent_api after the custom licence ended; held once no key is left', async () => {
  await serveWeek(1);
  const account = await api.store.createAccount('delta', 'premium');
  const ent = await newKey(account.name, 'ent_api');
  const custom = await licensedKey(account.name, 'custom', new Date(now + 3600_000));
  const hook = await createWebhook(custom.raw, '/delta');
  rx.script('/delta', (_r, n) => ({ status: n === 1 ? 503 : 204 }));
  await serveWeek(2);
  const want = await leadIdsAbove(hook.watermark);
  await dispatch();
  const first = bodies('/delta');
  assert.ok(first.length >= 1);
  assert.is(first[0]._meta.scope, 'custom', 'the first attempt: the account holds the custom key');
  assert.is(rx.requests('/delta').filter((r) => r.headers['webhook-id'] === first[0].id).length, 1);

  now += 2 * 3600_000; // the custom licence ends; the retry (due after 30 s) is sent now
  await dispatch();
  const sends = rx.requests('/delta').filter((r) => r.headers['webhook-id'] === first[0].id);
  assert.is(sends.length, 2, 'retried once, same event id');
  const retry = JSON.parse(sends[1]!.body.toString('utf8'));
  assert.equal(
    retry._meta,
    { release: two.second, scope: 'ent_api', masked: [] },
    'masked for the access at the retry',
  );
  assert.equal(retry.leads, first[0].leads, 'the same leads');
  assert.equal(
    bodies('/delta')
      .flatMap((b) => b.leads.map((l: { id: number }) => l.id))
      .filter((id, i, a) => a.indexOf(id) === i)
      .sort((a, b) => a - b),
    want,
  );

  // no webhook key left: suspended the moment the last one goes (GET /v1/webhooks says so before
  // any dispatcher run); a test event is held, not sent
  await api.store.revokeKey(ent.id);
  await api.store.revokeKey(custom.id); // (already expired on the server's clock; revoked for the CLI, which runs on the real one)
  const sent = rx.requests('/delta').length;
  const cw = await newKey(account.name, 'commonwealth');
  const before = await shown(hook.id, cw.raw); // a commonwealth key of the account may read its webhooks
  assert.equal(
    [before.access.state, before.access.scope, before.access.suspended_at],
    ['suspended', null, null],
    'suspended now; not yet held by a dispatcher',
  );
  assert.match(before.access.detail, new RegExp(`${ent.id} \\(ent_api\\) was revoked at `));
  assert.match(before.access.detail, new RegExp(`${custom.id} \\(custom\\) was revoked at `));
  const t = await leads('webhooks', 'test', hook.id);
  assert.is(t.code, 1);
  assert.match(t.stdout, /suspended, not sent \(the account holds no active ent_api, ent_feed or custom key/);
  await dispatch();
  assert.is(rx.requests('/delta').length, sent, 'nothing sent without access');
  const w = await shown(hook.id, cw.raw);
  assert.equal([w.access.state, w.access.reason], ['suspended', 'no_active_key']);
});

test.run();
