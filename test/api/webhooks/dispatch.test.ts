/**
 * Webhook dispatch end to end, with real components: the generator's weekly snapshots built
 * into releases by the pipeline (once, cached: test/helpers/week-one.ts and weekly-releases.ts),
 * published one after the other into the data folder, the SQLite state file, DuckDB over the release's
 * Parquet, and a real HTTP receiver on loopback. Signatures are checked by the independent
 * `standardwebhooks` package and by a plain HMAC; the clock is injected for the retry schedule;
 * a dispatcher process is killed between sending and recording.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { join } from 'node:path';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { loadApiConfig, type ApiConfig } from '../../../api/config.ts';
import { ApiError } from '../../../api/http/errors.ts';
import { openSqliteStore } from '../../../api/state/sqlite.ts';
import type { StateStore } from '../../../api/state/store-interface.ts';
import { createDispatcher, type Dispatcher } from '../../../api/webhooks/dispatcher.ts';
import { changeEvents, eventBodyFor, leadNewEvents, testEvent } from '../../../api/webhooks/events.ts';
import { enrichedFields } from '../../../api/access/masking.ts';
import { generateKey } from '../../../api/access/keys.ts';
import { dataDirLeadReader, type LeadReader } from '../../../api/webhooks/lead-reader.ts';
import { retryDelayMs } from '../../../api/webhooks/retry.ts';
import { webhookService, type WebhookService } from '../../../api/webhooks/service.ts';
import { openDb } from '../../../pipeline/lib/duckdb.ts';
import { snapshotDate } from '../../../pipeline/synth/generate.ts';
import { addKey } from '../../helpers/api.ts';
import { startReceiver, type Receiver, type Received } from '../../helpers/webhook-receiver.ts';
import { REPO_ROOT, tempDir } from '../../helpers/tmp.ts';
import { publishWeekOne } from '../../helpers/week-one.ts';
import { publishWeek } from '../../helpers/weekly-releases.ts';

const test = suite('webhook dispatch');

let root: string;
let raw: string;
let store: StateStore;
let rx: Receiver;
let leads: LeadReader;
let config: ApiConfig;
let now = Date.now();
const clock = (): Date => new Date(now);
let dispatcher: Dispatcher;
let service: WebhookService;
let accountId: number;
const secrets = new Map<string, string>(); // webhook id → secret
const ids: Record<string, string> = {};

/**
 * What the refresh of week `week`'s generated files at `at` publishes on top of the weeks before:
 * the cached weekly build's release of that week (test/helpers/weekly-releases.ts: the same
 * generator, pipeline and clock), not a build of its own.
 */
async function publish(week: number, at: string): Promise<{ asOf: string }> {
  assert.is(at, `${snapshotDate(week)}T06:00:00Z`, 'the cached weeks are built at 06:00 of their snapshot date');
  return publishWeek(root, week);
}

/** Leads of the current release (read independently of the dispatcher). */
async function sql<T>(q: string): Promise<T[]> {
  const db = await openDb();
  try {
    return await db.all<T & Record<string, unknown>>(
      q.replaceAll('LEADS', `read_parquet('${join(root, 'current', 'leads.parquet')}')`),
    );
  } finally {
    db.close();
  }
}

/** Check both signatures of a received request byte-exact, independently of our signer. */
function assertSigned(r: Received, secret: string): void {
  const realNow = Date.now;
  Date.now = () => now; // the delivery was signed at the injected time
  try {
    new StandardWebhook(secret).verify(r.body, r.headers as Record<string, string>); // throws if not valid
  } finally {
    Date.now = realNow;
  }
  const hmac = createHmac('sha256', Buffer.from(secret.slice('whsec_'.length), 'base64'))
    .update(r.body)
    .digest('hex');
  const listed = String(r.headers['x-service-signature']).split(', ');
  assert.ok(listed.includes(`sha256=${hmac}`), `X-Service-Signature ${listed.join(', ')} holds sha256=${hmac}`);
  assert.is(r.headers['x-service-timestamp'], r.headers['webhook-timestamp']);
  assert.is(JSON.parse(r.body.toString('utf8')).id, r.headers['webhook-id']);
}

const makeService = (over: Partial<ApiConfig> = {}): { d: Dispatcher; s: WebhookService } => {
  const c = { ...config, ...over };
  const d = createDispatcher({
    store: store.webhooks,
    accounts: store,
    leads,
    config: c,
    clock,
    random: () => 0,
    owner: 'test',
  });
  return { d, s: webhookService({ store, leads, dispatcher: d, config: c, clock }) };
};

async function create(name: string, filter: string, path = `/${name}`): Promise<string> {
  const { webhook, secret } = await service.create({ accountId, scope: 'ent_api', url: rx.url(path), filter });
  secrets.set(webhook.id, secret);
  ids[name] = webhook.id;
  return webhook.id;
}

test.before(async () => {
  root = tempDir('leads-webhooks-');
  raw = join(root, 'raw');
  await publishWeekOne(root, raw); // what publish(1, '2026-11-09T06:00:00Z') publishes, cached
  config = loadApiConfig(
    {},
    {
      dataDir: root,
      databaseUrl: `file:${join(root, 'state.sqlite')}`,
      webhookAllowHosts: ['127.0.0.1'],
      webhookBatchMax: 3,
      webhookTimeoutMs: 2000,
    },
  );
  store = openSqliteStore(join(root, 'state.sqlite'), { now: clock });
  rx = await startReceiver();
  leads = dataDirLeadReader(root);
  ({ d: dispatcher, s: service } = makeService());
  accountId = (await store.createAccount('acme', 'premium')).id;
  const k = generateKey('ent_api'); // webhooks send while the account holds a key that may receive them (access.test.ts)
  await store.insertKey({
    id: k.id,
    account_id: accountId,
    scope: 'ent_api',
    name: null,
    display_prefix: k.displayPrefix,
    hash: k.hash,
  });
});

test.after(async () => {
  dispatcher?.close();
  await rx?.close();
  await leads?.close();
  await store?.close();
});

test('commonwealth cannot create a webhook; bad URLs and filters are refused with the leads problem details', async () => {
  const refused = await service
    .create({ accountId, scope: 'commonwealth', url: rx.url('/x'), filter: '' })
    .catch((e: unknown) => e);
  assert.instance(refused, ApiError);
  assert.equal([(refused as ApiError).status, (refused as ApiError).code], [403, 'insufficient_scope']);
  assert.match((refused as ApiError).message, /ent_api/);
  const bad = await service
    .create({ accountId, scope: 'ent_api', url: rx.url('/x'), filter: 'county=Atlantis&vertical=solar&page=2' })
    .catch((e: unknown) => e);
  assert.equal(
    [(bad as ApiError).status, (bad as ApiError).code, (bad as ApiError).errors?.map((e) => e.name)],
    [400, 'invalid_parameter', ['page']],
  );
  const badCounty = await service
    .create({ accountId, scope: 'ent_api', url: rx.url('/x'), filter: 'county=Atlantis' })
    .catch((e: unknown) => e);
  assert.equal(
    (badCounty as ApiError).errors?.map((e) => e.name),
    ['county'],
  );
  const { s: strict } = makeService({ webhookAllowHosts: [] });
  const ssrf = await strict
    .create({ accountId, scope: 'ent_api', url: rx.url('/x'), filter: '' })
    .catch((e: unknown) => e);
  assert.equal([(ssrf as ApiError).status, (ssrf as ApiError).errors?.[0]?.name], [400, 'url']);
  assert.match((ssrf as ApiError).message, /http|private|loopback/);
  assert.equal(await store.webhooks.listWebhooks(), [], 'nothing was created');
});

test('the week-2 refresh produces the expected deliveries: only new matching leads, batched, signed, once', async () => {
  const [week1] = await sql<{ max_id: number }>('SELECT max(id)::INT AS max_id FROM LEADS');
  await create('all', '');
  await create('cork', 'county=cork'); // folded to the canonical name
  await create('roofing', 'vertical=roofing');
  await create('kerry_demolition', 'county=Kerry&demolition=1');
  assert.is((await store.webhooks.getWebhook(ids['cork']!))?.filter, 'county=Cork');
  assert.is(
    (await store.webhooks.getWebhook(ids['all']!))?.watermark_lead_id,
    week1!.max_id,
    'starts at the release it was created on',
  );
  // nothing new yet
  const before = await dispatcher.plan();
  assert.equal([before.events, before.leads], [0, 0]);

  const { asOf } = await publish(2, '2026-11-16T06:00:00Z');
  now += 3600_000;
  const planned = await dispatcher.plan();
  const sent = await dispatcher.deliverDue();
  assert.is(sent.delivered, planned.events);

  const expected = async (where: string): Promise<number[]> =>
    (
      await sql<{ id: number }>(
        `SELECT id::INT AS id FROM LEADS WHERE first_seen = DATE '${asOf}' AND ${where} ORDER BY id`,
      )
    ).map((r) => r.id);
  const want: Record<string, number[]> = {
    all: await expected('TRUE'),
    cork: await expected(`county = 'Cork'`),
    roofing: await expected(`list_contains(verticals, 'roofing')`),
    kerry_demolition: await expected(`county = 'Kerry' AND demolition`),
  };
  assert.ok(want['all']!.length >= 3, `week 2 has new leads (${want['all']!.length})`);
  assert.ok(
    want['all']!.every((id) => id > week1!.max_id),
    'new leads have ids above the week-1 watermark',
  );
  for (const [name, wantIds] of Object.entries(want)) {
    const got = rx.requests(`/${name}`);
    assert.is(got.length, Math.ceil(wantIds.length / 3), `${name}: one delivery per batch of 3`);
    const bodies = got.map((r) => JSON.parse(r.body.toString('utf8')));
    assert.equal(
      bodies.flatMap((b) => b.leads.map((l: { id: number }) => l.id)).sort((a: number, b: number) => a - b),
      wantIds,
      `${name}: exactly the new matching leads`,
    );
    for (const [i, r] of got.entries()) {
      assertSigned(r, secrets.get(ids[name]!)!);
      const b = bodies[i];
      assert.equal(
        [b.type, b.webhook_id, b.release, b.batch.count],
        ['lead.new', ids[name], (await leads.snapshot())!.releaseId, got.length],
      );
      assert.equal(b._meta, { release: b.release, scope: 'ent_api', masked: [] });
      for (const l of b.leads) {
        assert.is(l.first_seen, asOf);
        assert.ok('applicant_org' in l && 'main_contractor' in l, 'enriched fields served to ent_api');
        assert.not.ok('applicant_name' in l || 'contact_email' in l, 'no personal data');
      }
    }
    assert.equal(new Set(bodies.map((b) => b.id)).size, bodies.length, 'one event id per batch');
    const w = await store.webhooks.getWebhook(ids[name]!);
    assert.is(w?.watermark_lead_id, want['all']!.at(-1), `${name}: watermark moved to the release's highest id`);
  }
  // the same leads are never sent again
  const total = rx.requests().length;
  now += 3600_000;
  const again = await dispatcher.plan();
  await dispatcher.deliverDue();
  assert.equal([again.events, rx.requests().length], [0, total]);
  const log = await service.deliveries(ids['all']!, {});
  assert.ok(
    log.every(
      (d) => d.status === 'delivered' && d.attempts === 1 && d.last_status_code === 204 && d.last_latency_ms !== null,
    ),
  );
});

test('event types: the week-3 refresh sends lead.stage_changed (granted → commencing), lead.updated and lead.removed as the event log has them, signed; a webhook without types still gets lead.new only', async () => {
  // an account of its own: its key is revoked and replaced below
  const account = (await store.createAccount('acme-sync', 'premium')).id;
  const key = async (): Promise<string> => (await addKey(store, account, 'ent_api')).id;
  const first = await key();
  const bad = await service
    .create({ accountId: account, scope: 'ent_api', url: rx.url('/x'), filter: '', types: ['lead.created'] })
    .catch((e: unknown) => e);
  assert.equal([(bad as ApiError).status, (bad as ApiError).errors?.map((e) => e.name)], [400, ['types']]);
  const stage = await service.create({
    accountId: account,
    scope: 'ent_api',
    url: rx.url('/stage'),
    filter: '',
    types: ['lead.stage_changed'],
  });
  const every = await service.create({
    accountId: account,
    scope: 'ent_api',
    url: rx.url('/every'),
    filter: '',
    types: 'lead.removed,lead.new,lead.updated,lead.stage_changed',
  });
  assert.equal(stage.webhook.types, ['lead.stage_changed']);
  assert.equal(
    every.webhook.types,
    ['lead.new', 'lead.updated', 'lead.stage_changed', 'lead.removed'],
    'kept in one order',
  );
  assert.equal(
    (await store.webhooks.getWebhook(ids['all']!))?.types,
    ['lead.new'],
    'a webhook made without types receives lead.new',
  );
  const week2 = (await leads.snapshot())!;
  assert.ok(week2.maxEventId > 0, 'week 2 has an event log');
  assert.is(
    stage.webhook.watermark.event_id,
    week2.maxEventId,
    'starts after the events of the release it was created on',
  );
  const allBefore = rx.requests('/all').length;

  await publish(3, '2026-11-23T06:00:00Z');
  const week3 = (await leads.snapshot())!;
  now += 3600_000;
  await dispatcher.plan();
  // access is decided at send time: with the account's only ent_api key revoked, nothing is sent
  await store.revokeKey(first);
  const held = await dispatcher.deliverDue();
  assert.ok(
    held.suspended === 2 && rx.requests('/stage').length === 0 && rx.requests('/every').length === 0,
    'held while the account holds no webhook key',
  );
  await key();
  const sent = await dispatcher.deliverDue();
  assert.equal([sent.dead, sent.retrying, sent.resumed], [0, 0, 2]);

  // the week's changes, by an independent diff of the two releases' leads.parquet
  const prev = join(root, 'releases', week2.releaseId, 'leads.parquet');
  const diff = (where: string): Promise<{ id: number; before: string | null; after: string | null }[]> =>
    sql(
      `SELECT coalesce(n.id, o.id)::INT AS id, o.lead_readiness AS before, n.lead_readiness AS after FROM read_parquet('${prev}') o FULL JOIN LEADS n ON o.id = n.id WHERE ${where} ORDER BY 1`,
    );
  const moved = await diff(
    'o.id IS NOT NULL AND n.id IS NOT NULL AND (o.lead_readiness IS DISTINCT FROM n.lead_readiness OR o.status IS DISTINCT FROM n.status)',
  );
  const updated = await diff(
    'o.id IS NOT NULL AND n.id IS NOT NULL AND o.content_hash <> n.content_hash AND o.lead_readiness IS NOT DISTINCT FROM n.lead_readiness AND o.status IS NOT DISTINCT FROM n.status',
  );
  const removed = await diff('n.id IS NULL');
  const commencing = moved.filter((m) => m.after === 'commencing' && m.before !== 'commencing');
  assert.ok(commencing.length > 0, `leads moved to commencing in week 3: ${commencing.length}`);

  const got = rx.requests('/stage');
  assert.is(got.length, Math.ceil(moved.length / 3), 'one delivery per batch of 3 events');
  for (const r of got) {
    assertSigned(r, stage.secret);
    assert.is(r.headers['x-service-event'], 'lead.stage_changed');
  }
  const bodies = got.map((r) => JSON.parse(r.body.toString('utf8')));
  const events = bodies.flatMap((b) => b.events);
  assert.ok(
    bodies.every(
      (b) =>
        b.type === 'lead.stage_changed' &&
        b.release === week3.releaseId &&
        !('leads' in b) &&
        b._meta.scope === 'ent_api',
    ),
  );
  assert.ok(
    events.every((e) => e.type === 'lead.stage_changed' && e.release_id === week3.releaseId && e.id > week2.maxEventId),
  );
  assert.equal(
    events.map((e) => e.lead_id).sort((a: number, b: number) => a - b),
    moved.map((m) => m.id),
    'exactly the leads whose stage moved',
  );
  for (const m of commencing) {
    const e = events.find((x) => x.lead_id === m.id);
    assert.equal(e.changes.lead_readiness, { before: m.before, after: 'commencing' }, `lead ${m.id}`);
  }

  const everyBodies = rx.requests('/every').map((r) => JSON.parse(r.body.toString('utf8')));
  const ofType = (t: string): number[] =>
    everyBodies
      .filter((b) => b.type === t)
      .flatMap((b) => (b.events ?? b.leads).map((x: { lead_id?: number; id: number }) => x.lead_id ?? x.id))
      .sort((a: number, b: number) => a - b);
  assert.equal(
    ofType('lead.stage_changed'),
    moved.map((m) => m.id),
  );
  assert.equal(
    ofType('lead.updated'),
    updated.map((m) => m.id),
    'lead.updated: content changed, stage did not',
  );
  assert.equal(
    ofType('lead.removed'),
    removed.map((m) => m.id),
    'lead.removed: gone from the release',
  );
  assert.ok(
    ofType('lead.new').length > 0 && ofType('lead.new').every((id) => id > week2.maxLeadId),
    'and the new leads',
  );
  // ent_api: enriched before / after carried as they are
  const enriched = enrichedFields('lead');
  const carried = everyBodies
    .flatMap((b) => b.events ?? [])
    .filter((e) => enriched.some((f) => e.changes[f] && (e.changes[f].before !== null || e.changes[f].after !== null)));
  assert.ok(carried.length > 0, 'an ent_api payload carries enriched values');

  const allNew = rx
    .requests('/all')
    .slice(allBefore)
    .map((r) => JSON.parse(r.body.toString('utf8')));
  assert.ok(
    allNew.length > 0 && allNew.every((b) => b.type === 'lead.new' && Array.isArray(b.leads) && !('events' in b)),
    'the webhook without types: lead.new only',
  );
  const again = await dispatcher.plan();
  assert.is(again.events, 0, 'nothing is planned twice');
});

test('change events are masked at send time by maskChanges: enriched before / after null for a scope without them, same shape', () => {
  const changes = {
    applicant_org: { before: 'Acme Ltd', after: 'Acme Holdings Ltd' },
    lead_readiness: { before: 'granted', after: 'commencing' },
  };
  const row = {
    id: 9,
    type: 'lead.stage_changed',
    lead_id: 4,
    lead_key: 'k',
    release_id: 'r',
    observed_at: '2026-11-23',
    occurred_at: '2026-11-20',
    reason: null,
    changes: JSON.stringify(changes),
  };
  const [queued] = changeEvents({ webhookId: 'wh_x', releaseId: 'r', events: [row], batchMax: 10, createdAt: clock() });
  const cw = JSON.parse(eventBodyFor(queued!.body, 'commonwealth'));
  assert.equal(cw.events[0].changes, {
    applicant_org: { before: null, after: null },
    lead_readiness: changes.lead_readiness,
  });
  assert.ok(cw._meta.masked.some((m: { field: string }) => m.field === 'applicant_org'));
  const ea = JSON.parse(eventBodyFor(queued!.body, 'ent_api'));
  assert.equal(ea.events[0].changes, changes);
  assert.equal(Object.keys(ea.events[0]), Object.keys(cw.events[0]));
});

test('masking is applied at send time, for the scope of that moment (enriched fields null for a scope without them)', async () => {
  const lead = {
    id: 1,
    county: 'Cork',
    applicant_org: 'Acme Ltd',
    applicant_company_number: '123',
    main_contractor: 'Build Co',
  };
  const [queued] = leadNewEvents({
    webhookId: 'wh_x',
    releaseId: 'r',
    leads: [lead],
    batchMax: 10,
    createdAt: clock(),
  });
  assert.not.ok('_meta' in JSON.parse(queued!.body), 'queued without _meta: it is decided when sent');
  const body = JSON.parse(eventBodyFor(queued!.body, 'commonwealth'));
  assert.is(body.leads[0].applicant_org, null);
  assert.is(body.leads[0].main_contractor, null);
  assert.ok(body._meta.masked.some((m: { field: string }) => m.field === 'applicant_org'));
  assert.is(body._meta.scope, 'commonwealth');
  const ea = eventBodyFor(queued!.body, 'ent_api');
  assert.is(JSON.parse(ea).leads[0].applicant_org, 'Acme Ltd');
  assert.equal(JSON.parse(ea)._meta, { release: 'r', scope: 'ent_api', masked: [] });
  assert.is(eventBodyFor(queued!.body, 'ent_api'), ea, 'deterministic: the same bytes for the same scope');
  assert.equal(Object.keys(JSON.parse(ea)), [
    'id',
    'type',
    'created_at',
    'webhook_id',
    'release',
    'batch',
    'leads',
    '_meta',
  ]);
  // an entry queued masked (older queues) is never unmasked, and its _meta is replaced
  const old = JSON.stringify({ ...JSON.parse(eventBodyFor(queued!.body, 'commonwealth')) });
  const again = JSON.parse(eventBodyFor(old, 'custom'));
  assert.equal([again.leads[0].applicant_org, again._meta.scope, again._meta.masked], [null, 'custom', []]);
});

test('failures follow the retry schedule (injected clock), then dead letters replay with the same event', async () => {
  rx.script('/flaky', () => ({ status: 500 }));
  const id = await create('flaky', '');
  const first = await service.test(id, {});
  assert.equal([first.status, first.attempts, first.last_status_code], ['pending', 1, 500]);
  const waits: number[] = [];
  let d = first;
  while (d.status === 'pending') {
    const due = Date.parse(d.next_attempt_at!);
    waits.push((due - now) / 1000);
    now = due - 1000;
    await dispatcher.deliverDue();
    assert.is((await store.webhooks.getDelivery(d.id))?.attempts, d.attempts, 'not sent before it is due');
    now = due;
    await dispatcher.deliverDue();
    d = (await store.webhooks.getDelivery(d.id))!;
  }
  assert.equal(
    waits,
    [1, 2, 3, 4, 5, 6, 7].map((n) => retryDelayMs(n, () => 0) / 1000),
  );
  assert.equal(waits, [30, 120, 480, 1920, 7680, 30720, 43200]);
  assert.equal([d.status, d.attempts, d.dead_reason], ['dead', 8, 'failed 8 attempts; last: HTTP 500']);
  assert.equal(
    (await service.deliveries(id, {}, { status: 'dead' })).map((x) => x.id),
    [first.id],
    'in the dead-letter list',
  );
  const sends = rx.requests('/flaky');
  assert.is(sends.length, 8);
  assert.is(new Set(sends.map((r) => r.headers['webhook-id'])).size, 1, 'every retry carries the same event id');
  assert.is(new Set(sends.map((r) => r.body.toString('hex'))).size, 1, 'and the same body');
  // the destination recovers; the dead letter is replayed
  rx.script('/flaky', () => ({ status: 200 }));
  assert.equal(await service.replay(id, {}), [first.id]);
  await dispatcher.deliverDue();
  const done = (await store.webhooks.getDelivery(first.id))!;
  assert.equal([done.status, done.attempts, done.last_status_code], ['delivered', 1, 200]);
  const last = rx.requests('/flaky').at(-1)!;
  assert.equal(
    [last.headers['webhook-id'], last.body.toString('hex')],
    [sends[0]!.headers['webhook-id'], sends[0]!.body.toString('hex')],
  );
  assertSigned(last, secrets.get(id)!);
  assert.is((await store.webhooks.listAttempts(first.id)).length, 9, 'every attempt is in the attempt log');
});

test('Retry-After is honoured (the later of it and the schedule)', async () => {
  rx.script('/busy', () => ({ status: 503, headers: { 'Retry-After': '7200' } }));
  const id = await create('busy', '');
  const d = await service.test(id, {});
  assert.equal([d.status, d.last_status_code], ['pending', 503]);
  assert.is(Date.parse(d.next_attempt_at!) - now, 7200_000);
  await store.webhooks.setWebhookStatus(id, 'disabled', 'done with this test');
});

test('410 Gone disables the webhook and ends the delivery; a disabled webhook gets nothing', async () => {
  rx.script('/gone', () => ({ status: 410 }));
  const id = await create('gone', '');
  const d = await service.test(id, {});
  assert.equal([d.status, d.last_status_code], ['dead', 410]);
  assert.match(d.dead_reason!, /410/);
  const w = await service.get(id, {});
  assert.is(w.status, 'disabled');
  assert.match(w.disabled_reason!, /410 Gone/);
  await store.webhooks.enqueue(id, [testEvent({ webhookId: id, releaseId: null, createdAt: clock() })]);
  await dispatcher.deliverDue();
  assert.is(rx.requests('/gone').length, 1, 'no delivery to a disabled webhook');
});

test('a private destination is refused at delivery unless allow-listed', async () => {
  const id = await create('guarded', '');
  const { d: strict } = makeService({ webhookAllowHosts: [] });
  await store.webhooks.enqueue(id, [testEvent({ webhookId: id, releaseId: null, createdAt: clock() })]);
  await strict.deliverDue();
  strict.close();
  const [d] = await service.deliveries(id, {});
  assert.equal([d!.status, d!.last_status_code], ['pending', null]);
  assert.match(d!.last_error!, /private or loopback/);
  assert.is(rx.requests('/guarded').length, 0, 'nothing reached the receiver');
  await store.webhooks.setWebhookStatus(id, 'disabled', null);
});

test('a dispatcher killed between sending and recording: the delivery is re-sent with the same event id and body', async () => {
  now = Date.now(); // the child process uses the real clock: queue the delivery due now
  const id = await create('crash', '');
  const ev = testEvent({ webhookId: id, releaseId: null, createdAt: new Date() });
  await store.webhooks.enqueue(id, [ev]);
  // the queue row is due now in real time, for the child process (which uses the real clock)
  let child: ReturnType<typeof spawn> | null = null;
  const killed = new Promise<void>((resolve) => {
    rx.script('/crash', (_r, n) => {
      if (n === 1) {
        child!.kill('SIGKILL'); // sent, not yet recorded
        resolve();
        return 'hang-up';
      }
      return { status: 204 };
    });
  });
  child = spawn(process.execPath, [join(REPO_ROOT, 'bin/leads.js'), 'webhooks', 'dispatch'], {
    env: {
      ...process.env,
      DATA_DIR: root,
      DATABASE_URL: `file:${join(root, 'state.sqlite')}`,
      WEBHOOK_ALLOW_HOSTS: '127.0.0.1',
      WEBHOOK_TIMEOUT_MS: String(config.webhookTimeoutMs),
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (b: Buffer) => (stderr += b.toString()));
  const exited = new Promise<string | null>((resolve) => child!.on('exit', (_code, signal) => resolve(signal)));
  await Promise.race([killed, exited]);
  assert.is(await exited, 'SIGKILL', `the dispatcher was killed mid-delivery (stderr: ${stderr.slice(-500)})`);
  const stuck = (await store.webhooks.getDelivery(ev.id))!;
  assert.is(stuck.status, 'delivering', 'the outcome was never recorded');
  // before the lease runs out nobody re-sends; after it, the next dispatcher does
  now = Date.now() + 1000;
  await dispatcher.deliverDue();
  assert.is(rx.requests('/crash').length, 1);
  now = Date.now() + dispatcher.leaseMs + 1000;
  await dispatcher.deliverDue();
  const sends = rx.requests('/crash');
  assert.is(sends.length, 2, 'sent again after the lease');
  assert.is(sends[1]!.headers['webhook-id'], ev.id);
  assert.is(sends[0]!.headers['webhook-id'], ev.id);
  assert.ok(sends[1]!.body.equals(sends[0]!.body), 'byte-identical body');
  assertSigned(sends[1]!, secrets.get(id)!);
  const done = (await store.webhooks.getDelivery(ev.id))!;
  assert.equal([done.status, done.attempts], ['delivered', 2]);
  assert.equal(
    (await store.webhooks.listAttempts(ev.id)).map((a) => a.outcome),
    ['abandoned', 'delivered'],
  );
});

test('rotation: both secrets sign during the overlap, only the new one after', async () => {
  const id = await create('rotate', '');
  const old = secrets.get(id)!;
  const { secret } = await service.rotateSecret(id, {}, 3600_000);
  assert.is.not(secret, old);
  await service.test(id, {});
  const [during] = rx.requests('/rotate');
  assertSigned(during!, secret);
  assertSigned(during!, old);
  assert.match(String(during!.headers['x-service-signature']), /^sha256=[0-9a-f]{64}, sha256=[0-9a-f]{64}$/);
  now += 3600_000 + 1000;
  await service.test(id, {});
  const after = rx.requests('/rotate')[1]!;
  assertSigned(after, secret);
  assert.throws(() => assertSigned(after, old));
});

test.run();
