/**
 * Webhooks with an area (issue 17 point 1): saved filters holding `polygon` (with a hole) or `near`
 * + `radius_m`, end to end with real components — the generator's week-1 and week-2 snapshots built
 * by the pipeline, the SQLite state file, DuckDB over the release's Parquet, a real HTTP receiver
 * on loopback. After the week-2 refresh each webhook receives exactly the new leads inside its
 * area, computed without the API's geometry module (turf; haversine in DuckDB SQL:
 * test/helpers/geo-reference.ts). The rest of dispatch is test/api/webhooks/dispatch.test.ts.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadApiConfig } from '../../../api/config.ts';
import { openApiDb, sqlString, type ApiDb } from '../../../api/duckdb/db.ts';
import { openSqliteStore } from '../../../api/state/sqlite.ts';
import type { StateStore } from '../../../api/state/store-interface.ts';
import { createDispatcher, type Dispatcher } from '../../../api/webhooks/dispatcher.ts';
import { dataDirLeadReader, type LeadReader } from '../../../api/webhooks/lead-reader.ts';
import { webhookService, type WebhookService } from '../../../api/webhooks/service.ts';
import { snapshotDate } from '../../../pipeline/synth/generate.ts';
import { addKey } from '../../helpers/api.ts';
import { referenceNear, referencePolygon, squareWithHole } from '../../helpers/geo-reference.ts';
import { startReceiver, type Receiver } from '../../helpers/webhook-receiver.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { twoReleases } from '../../helpers/two-releases.ts';
import { publishWeekOne } from '../../helpers/week-one.ts';
import { publishWeek } from '../../helpers/weekly-releases.ts';

const test = suite('webhook dispatch with areas');

let root: string;
let store: StateStore;
let rx: Receiver;
let leads: LeadReader;
let db: ApiDb;
let dispatcher: Dispatcher;
let service: WebhookService;
let accountId: number;
let now = Date.parse('2026-11-10T06:00:00Z');
const clock = (): Date => new Date(now);

/**
 * What the refresh of week `week`'s generated files at `at` publishes on top of week 1: the cached
 * weekly build's release of that week (test/helpers/weekly-releases.ts: the same generator,
 * pipeline and clock), not a build of its own.
 */
async function publish(week: number, at: string): Promise<string> {
  assert.is(at, `${snapshotDate(week)}T06:00:00Z`, 'the cached weeks are built at 06:00 of their snapshot date');
  return (await publishWeek(root, week)).asOf;
}
const WEEK2 = '2026-11-16T06:00:00Z';
const current = (): string => `read_parquet(${sqlString(join(root, 'current', 'leads.parquet'))})`;

test.before(async () => {
  root = tempDir('leads-webhooks-geo-');
  await publishWeekOne(root, join(root, 'raw')); // what publish(1, '2026-11-09T06:00:00Z') publishes, cached
  const config = loadApiConfig(
    {},
    {
      dataDir: root,
      databaseUrl: `file:${join(root, 'state.sqlite')}`,
      webhookAllowHosts: ['127.0.0.1'],
      webhookBatchMax: 50,
      webhookTimeoutMs: 2000,
    },
  );
  store = openSqliteStore(join(root, 'state.sqlite'), { now: clock });
  rx = await startReceiver();
  leads = dataDirLeadReader(root);
  db = await openApiDb({ connections: 1, threads: 1, memoryLimit: '256MB' });
  dispatcher = createDispatcher({
    store: store.webhooks,
    accounts: store,
    leads,
    config,
    clock,
    random: () => 0,
    owner: 'test',
  });
  service = webhookService({ store, leads, dispatcher, config, clock });
  accountId = (await store.createAccount('geo', 'premium')).id;
  await addKey(store, accountId, 'ent_api');
});

test.after(async () => {
  dispatcher?.close();
  await rx?.close();
  await leads?.close();
  db?.close();
  await store?.close();
});

test('polygon (with a hole) and near saved filters: the week-2 refresh delivers exactly the new leads inside each area', async () => {
  // The generator and the pipeline are deterministic: a rehearsal of both weeks in another folder
  // tells which leads week 2 brings, so the areas can be drawn around them before it comes. The
  // rehearsal is the cached week 1 + week 2 of test/helpers/two-releases.ts (same seed and clocks).
  const rehearsal = await twoReleases();
  const secondDir = join(rehearsal.dataDir, 'releases', rehearsal.second);
  const asOf2 = (JSON.parse(readFileSync(join(secondDir, 'manifest.json'), 'utf8')) as { as_of: string }).as_of;
  const comingTable = `read_parquet(${sqlString(join(secondDir, 'leads.parquet'))})`;
  const coming = await db.all<{ id: number; lat: number; lon: number; use_class: string }>(
    `SELECT id::INT AS id, lat, lon, use_class FROM ${comingTable} WHERE first_seen = DATE '${asOf2}' AND lat IS NOT NULL ORDER BY id`,
  );
  assert.ok(coming.length >= 3, `week 2 brings ${coming.length} new leads with coordinates`);
  const [x, y] = [coming[0]!, coming[1]!];
  const w = Math.min(...coming.map((l) => l.lon)) - 0.05;
  const e = Math.max(...coming.map((l) => l.lon)) + 0.05;
  const so = Math.min(...coming.map((l) => l.lat)) - 0.05;
  const no = Math.max(...coming.map((l) => l.lat)) + 0.05;
  // every new lead's box, with a hole around y: y alone is left out
  const polygon = {
    type: 'Polygon' as const,
    coordinates: [
      [
        [w, so],
        [e, so],
        [e, no],
        [w, no],
        [w, so],
      ],
      squareWithHole(y.lon, y.lat, 0.004).coordinates[0] as number[][],
    ],
  };
  const near = { lat: x.lat, lon: x.lon, radius_m: 1500 };
  const nearOther = { lat: x.lat, lon: x.lon, radius_m: 1500, use_class: x.use_class === 'house' ? 'office' : 'house' };
  const hooks: Record<string, string> = {};
  for (const [name, filter] of [
    ['polygon', `polygon=${encodeURIComponent(JSON.stringify(polygon))}`],
    ['near', `near=${near.lat},${near.lon}&radius_m=${near.radius_m}`],
    ['near_same_use', `near=${near.lat},${near.lon}&radius_m=${near.radius_m}&use_class=${x.use_class}`],
    ['near_other_use', `near=${near.lat},${near.lon}&radius_m=${near.radius_m}&use_class=${nearOther.use_class}`],
  ] as const) {
    const { webhook } = await service.create({ accountId, scope: 'ent_api', url: rx.url(`/${name}`), filter });
    hooks[name] = webhook.id;
  }
  assert.match(
    (await store.webhooks.getWebhook(hooks['polygon']!))!.filter,
    /^polygon=/,
    'kept in the canonical string',
  );

  const asOf = await publish(2, WEEK2);
  assert.is(asOf, asOf2, 'the rehearsal was the same week');
  now += 7 * 86_400_000;
  await dispatcher.plan();
  await dispatcher.deliverDue();

  const fresh = `first_seen = DATE '${asOf}'`;
  const want: Record<string, number[]> = {
    polygon: await referencePolygon(db, current(), polygon, fresh),
    near: await referenceNear(db, current(), near, fresh),
    near_same_use: await referenceNear(db, current(), near, `${fresh} AND use_class = '${x.use_class}'`),
    near_other_use: await referenceNear(db, current(), near, `${fresh} AND use_class = '${nearOther.use_class}'`),
  };
  const outerOnly = await referencePolygon(
    db,
    current(),
    { type: 'Polygon', coordinates: [polygon.coordinates[0]!] },
    fresh,
  );
  assert.equal(
    outerOnly,
    coming.map((l) => l.id),
    'the outer ring holds every new lead with coordinates',
  );
  assert.ok(
    !want['polygon']!.includes(y.id) && want['polygon']!.length === coming.length - 1,
    'the hole leaves one out',
  );
  assert.ok(want['near']!.includes(x.id) && want['near']!.length < coming.length, 'the circle holds some, not all');
  assert.ok(want['near_same_use']!.includes(x.id));
  for (const [name, ids] of Object.entries(want)) {
    const got = rx
      .requests(`/${name}`)
      .flatMap((r) => JSON.parse(r.body.toString('utf8')).leads.map((l: { id: number }) => l.id))
      .sort((a: number, b: number) => a - b);
    assert.equal(got, ids, `${name}: exactly the new leads in the area`);
  }
});

test.run();
