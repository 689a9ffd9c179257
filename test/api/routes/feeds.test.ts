/**
 * GeoJSON feeds over real HTTP on two consecutive weekly releases: RFC 7946 pages walked by their
 * `next` links, stable ids across the refresh, `since` / `updated_since` / `bbox` / `authority`
 * against independent DuckDB counts, the pre-rendered and DuckDB paths giving the same features,
 * the infrastructure layer's filters and fields, `near` / `polygon` on both layers against a
 * reference computed without the API (haversine in SQL, turf), and scope refusals.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { openApiDb, sqlString, type ApiDb } from '../../../api/duckdb/db.ts';
import { LEAD_COLUMNS } from '../../../api/query/leads-query.ts';
import { assertProblem, startTestApi, type TestApi } from '../../helpers/api.ts';
import { rfc7946Errors } from '../../helpers/geojson.ts';
import { twoReleases, type TwoReleases } from '../../helpers/two-releases.ts';
import { referenceNear, referencePolygon, squareWithHole } from '../../helpers/geo-reference.ts';

let api: TestApi;
let db: ApiDb;
let two: TwoReleases;
const table = (release: string, t: string): string =>
  `read_parquet(${sqlString(join(two.dataDir, 'releases', release, `${t}.parquet`))})`;
const HAS_XY = 'lat IS NOT NULL AND lon IS NOT NULL';

test.before(async () => {
  two = await twoReleases();
  two.switchTo(two.first);
  api = await startTestApi({ config: { dataDir: two.dataDir } });
  db = await openApiDb({ connections: 1, threads: 1, memoryLimit: '256MB' });
});
test.after(async () => {
  db.close();
  await api?.close();
});

/** Every feature of a feed, following `next` links; checks each page. */
async function walkFeed(
  path: string,
  key = api.keys.ent_feed,
): Promise<{ features: any[]; matched: number; pages: number }> {
  const features: any[] = [];
  let url: string | null = path;
  let matched = -1;
  let pages = 0;
  while (url) {
    const res = await api.request(url, { key });
    assert.is(res.status, 200, res.text.slice(0, 300));
    assert.match(res.headers.get('content-type')!, /^application\/geo\+json/);
    assert.equal(rfc7946Errors(res.body), []);
    assert.is(res.body.numberReturned, res.body.features.length);
    if (matched >= 0) assert.is(res.body.numberMatched, matched, 'numberMatched is the same on every page');
    matched = res.body.numberMatched;
    features.push(...res.body.features);
    const next = res.body.links.find((l: any) => l.rel === 'next');
    url = next ? next.href.slice(api.baseUrl.length) : null;
    pages++;
  }
  return { features, matched, pages };
}

const ids = (fs: any[]): number[] => fs.map((f) => f.id);
async function expectIds(sql: string): Promise<number[]> {
  return (await db.all<{ id: number }>(`${sql} ORDER BY id`)).map((r) => r.id);
}

test('leads feed: RFC 7946 pages by next link, every lead with coordinates once, stable ids, full records with a link', async () => {
  const { features, matched, pages } = await walkFeed('/v1/feeds/leads.geojson?page_size=300');
  const expected = await expectIds(`SELECT id FROM ${table(two.first, 'leads')} WHERE ${HAS_XY}`);
  assert.is(matched, expected.length);
  assert.equal(ids(features), expected, 'each once, id order');
  assert.is(pages, Math.ceil(expected.length / 300));
  for (const f of features.slice(0, 50)) {
    assert.is(f.id, f.properties.id, 'feature id = registry id');
    assert.ok(Number.isInteger(f.id));
    assert.equal(Object.keys(f.properties), [...LEAD_COLUMNS, 'link']);
    assert.equal(f.geometry.coordinates, [f.properties.lon, f.properties.lat]);
    assert.match(f.properties.link, /^https?:\/\//);
  }
});

test('stable ids across two refreshes; since and updated_since select exactly the new and the changed', async () => {
  const byKey1 = new Map(
    (await walkFeed('/v1/feeds/leads.geojson?page_size=5000')).features.map((f) => [f.properties.lead_key, f.id]),
  );
  two.switchTo(two.second);
  await api.checkRelease();
  assert.is(api.release(), two.second);
  const second = (await walkFeed('/v1/feeds/leads.geojson?page_size=5000')).features;
  let shared = 0;
  const max1 = Math.max(...byKey1.values());
  for (const f of second) {
    const old = byKey1.get(f.properties.lead_key);
    if (old !== undefined) (shared++, assert.is(f.id, old, `id of ${f.properties.lead_key}`));
    else assert.ok(f.id > max1, `a new lead gets a new id (${f.id})`);
  }
  assert.ok(shared > 900, `${shared} leads in both releases`);

  const leads2 = table(two.second, 'leads');
  // the second release's as-of date (its newest source date, docs/releases.md): what it first saw or changed
  const asOf: string = JSON.parse(
    readFileSync(join(two.dataDir, 'releases', two.second, 'manifest.json'), 'utf8'),
  ).as_of;
  const newer = await expectIds(`SELECT id FROM ${leads2} WHERE ${HAS_XY} AND first_seen >= DATE '${asOf}'`);
  const changed = await expectIds(`SELECT id FROM ${leads2} WHERE ${HAS_XY} AND last_changed >= DATE '${asOf}'`);
  assert.ok(
    newer.length > 0 && changed.length > newer.length && changed.length < second.length,
    `${newer.length} new, ${changed.length} changed`,
  );
  const since = await walkFeed(`/v1/feeds/leads.geojson?since=${asOf}`);
  assert.equal(ids(since.features), newer);
  for (const f of since.features)
    assert.not.ok(byKey1.has(f.properties.lead_key), 'since = records first seen in the new release');
  const updated = await walkFeed(`/v1/feeds/leads.geojson?updated_since=${asOf}&page_size=5`);
  assert.equal(ids(updated.features), changed);
  assert.equal(
    ids(
      (
        await walkFeed(
          `/v1/feeds/leads.geojson?since=${new Date(Date.parse(asOf) + 86_400_000).toISOString().slice(0, 10)}`,
        )
      ).features,
    ),
    [],
  );
  two.switchTo(two.first);
  await api.checkRelease();
});

test('bbox: index path and DuckDB path agree with an independent count; every feature inside', async () => {
  const bbox = [-6.5, 53.2, -6.0, 53.5];
  const inBox = `round(lon, 6) BETWEEN ${bbox[0]} AND ${bbox[2]} AND round(lat, 6) BETWEEN ${bbox[1]} AND ${bbox[3]}`;
  const expected = await expectIds(`SELECT id FROM ${table(two.first, 'leads')} WHERE ${HAS_XY} AND ${inBox}`);
  assert.ok(expected.length > 5, `${expected.length} in the box`);
  const a = await walkFeed(`/v1/feeds/leads.geojson?bbox=${bbox.join(',')}&page_size=7`);
  assert.equal(ids(a.features), expected);
  assert.is(a.matched, expected.length);
  for (const f of a.features) {
    const [x, y] = f.geometry.coordinates;
    assert.ok(x >= bbox[0]! && x <= bbox[2]! && y >= bbox[1]! && y <= bbox[3]!, `${x},${y} inside`);
  }
  const b = await walkFeed(`/v1/feeds/leads.geojson?bbox=${bbox.join(',')}&updated_since=2000-01-01&page_size=7`);
  assert.equal(b.features, a.features, 'DuckDB-selected pages = pre-rendered pages');
  const bad = await api.request('/v1/feeds/leads.geojson?bbox=-6,53,-7', { key: api.keys.ent_feed });
  assertProblem(bad, 400, 'invalid_parameter');
  assert.is(bad.body.errors[0].name, 'bbox');
  assertProblem(
    await api.request('/v1/feeds/leads.geojson?bbox=-6,54,-5,53', { key: api.keys.ent_feed }),
    400,
    'invalid_parameter',
  );
  for (const q of [
    'since=2025-02-30',
    'updated_since=yesterday',
    'page_size=0',
    'page_size=10001',
    'county=Atlantis',
    'authority=Atlantis',
    'colour=red',
  ]) {
    assertProblem(
      await api.request(`/v1/feeds/leads.geojson?${q}`, { key: api.keys.ent_feed }),
      400,
      q.startsWith('colour') ? 'unknown_parameter' : 'invalid_parameter',
    );
  }
});

test('near + radius_m and polygon (with a hole) on both layers: every page equals the reference; combined with other filters; same 400s as /v1/leads', async () => {
  const leadsT = table(two.first, 'leads');
  const [p] = await db.all<{ id: number; lat: number; lon: number }>(
    `SELECT id, lat, lon FROM ${leadsT} WHERE lat BETWEEN 53.3 AND 53.4 AND lon BETWEEN -6.35 AND -6.2 ORDER BY id LIMIT 1`,
  );
  assert.ok(p, 'a Dublin lead');
  const near = { lat: p!.lat, lon: p!.lon, radius_m: 12_000 };
  const want = await referenceNear(db, leadsT, near);
  assert.ok(want.length > 10 && want.includes(p!.id), `${want.length} within 12 km`);
  const a = await walkFeed(
    `/v1/feeds/leads.geojson?near=${near.lat},${near.lon}&radius_m=${near.radius_m}&page_size=9`,
  );
  assert.equal(ids(a.features), want);
  assert.is(a.matched, want.length);
  const combined = await walkFeed(
    `/v1/feeds/leads.geojson?near=${near.lat},${near.lon}&radius_m=${near.radius_m}&updated_since=2000-01-01&bbox=-6.3,53.2,-6.0,53.5`,
  );
  assert.equal(
    ids(combined.features),
    await referenceNear(
      db,
      leadsT,
      near,
      'round(lon, 6) BETWEEN -6.3 AND -6.0 AND round(lat, 6) BETWEEN 53.2 AND 53.5',
    ),
  );

  const g = squareWithHole(p!.lon + 0.01, p!.lat + 0.01, 0.2, { lon: p!.lon, lat: p!.lat, size: 0.03 });
  const inPoly = await referencePolygon(db, leadsT, g);
  assert.ok(inPoly.includes(p!.id), "the lead on the hole's corner is inside");
  const holeOnly = await referencePolygon(db, leadsT, {
    type: 'Polygon',
    coordinates: [g.coordinates[1] as number[][]],
  });
  assert.ok(holeOnly.length > 1, `${holeOnly.length} leads in the hole`);
  const b = await walkFeed(`/v1/feeds/leads.geojson?polygon=${encodeURIComponent(JSON.stringify(g))}&page_size=11`);
  assert.equal(ids(b.features), inPoly);
  const both = await walkFeed(
    `/v1/feeds/leads.geojson?polygon=${encodeURIComponent(JSON.stringify(g))}&near=${near.lat},${near.lon}&radius_m=5000&authority=Dublin%20City`,
  );
  const near5 = new Set(
    await referenceNear(db, leadsT, { ...near, radius_m: 5000 }, "planning_authority = 'Dublin City'"),
  );
  assert.equal(
    ids(both.features),
    inPoly.filter((id) => near5.has(id)),
  );

  const infraT = table(two.first, 'infrastructure');
  const [q] = await db.all<{ lat: number; lon: number }>(
    `SELECT lat, lon FROM ${infraT} WHERE lat IS NOT NULL ORDER BY id LIMIT 1`,
  );
  const infraNear = { lat: q!.lat, lon: q!.lon, radius_m: 50_000 };
  const infra = await walkFeed(
    `/v1/feeds/infrastructure.geojson?near=${infraNear.lat},${infraNear.lon}&radius_m=50000&page_size=3`,
  );
  assert.equal(ids(infra.features), await referenceNear(db, infraT, infraNear));
  assert.ok(infra.features.length > 0);
  const infraPoly = squareWithHole(q!.lon, q!.lat, 0.5);
  assert.equal(
    ids(
      (await walkFeed(`/v1/feeds/infrastructure.geojson?polygon=${encodeURIComponent(JSON.stringify(infraPoly))}`))
        .features,
    ),
    await referencePolygon(db, infraT, infraPoly),
  );

  for (const [query, name] of [
    ['near=-6.26,53.35', 'near'],
    ['radius_m=100', 'radius_m'],
    ['near=53.35,-6.26&radius_m=50001', 'radius_m'],
    ['polygon=%7B%7D', 'polygon'],
    [
      `polygon=${encodeURIComponent('{"type":"Polygon","coordinates":[[[-6.3,53.33],[-6.22,53.37],[-6.22,53.33],[-6.3,53.37],[-6.3,53.33]]]}')}`,
      'polygon',
    ],
  ]) {
    for (const layer of ['leads', 'infrastructure']) {
      const res = await api.request(`/v1/feeds/${layer}.geojson?${query}`, { key: api.keys.ent_feed });
      assertProblem(res, 400, 'invalid_parameter');
      assert.equal(
        res.body.errors.map((e: any) => e.name),
        [name],
        query,
      );
      const leadsRes = await api.request(`/v1/leads?${query}`, { key: api.keys.ent_feed });
      assert.equal(res.body.errors, leadsRes.body.errors, `${query}: the same problem as /v1/leads`);
    }
  }
});

test('authority: the per-authority file and a DuckDB selection give the same features', async () => {
  const one = await walkFeed('/v1/feeds/leads.geojson?authority=cork%20city');
  const expected = await expectIds(
    `SELECT id FROM ${table(two.first, 'leads')} WHERE ${HAS_XY} AND planning_authority = 'Cork City'`,
  );
  assert.equal(ids(one.features), expected);
  const viaDb = await walkFeed('/v1/feeds/leads.geojson?authority=Cork%20City&since=1990-01-01');
  assert.equal(viaDb.features, one.features);
  const both = await walkFeed('/v1/feeds/leads.geojson?authority=Cork%20City,Kerry&page_size=10');
  assert.equal(
    ids(both.features),
    await expectIds(
      `SELECT id FROM ${table(two.first, 'leads')} WHERE ${HAS_XY} AND planning_authority IN ('Cork City', 'Kerry')`,
    ),
  );
});

test('infrastructure feed: vertical, min_mw and the leads-feed filters; applicant and connection voltage carried', async () => {
  const all = await walkFeed('/v1/feeds/infrastructure.geojson');
  const infra = table(two.first, 'infrastructure');
  assert.equal(ids(all.features), await expectIds(`SELECT id FROM ${infra} WHERE ${HAS_XY}`));
  for (const f of all.features) {
    assert.ok('applicant' in f.properties && 'connection_voltage_kv' in f.properties);
    assert.is(f.id, f.properties.id);
  }
  assert.ok(
    all.features.some((f) => f.properties.applicant !== null),
    'applicants are served to ent_feed',
  );
  const q = await walkFeed(
    '/v1/feeds/infrastructure.geojson?vertical=data_centre,wind,solar,battery_storage&min_mw=50',
  );
  assert.equal(
    ids(q.features),
    await expectIds(
      `SELECT id FROM ${infra} WHERE ${HAS_XY} AND vertical IN ('data_centre', 'wind', 'solar', 'battery_storage') AND capacity_mw >= 50`,
    ),
  );
  assert.ok(q.features.length > 0 && q.features.length < all.features.length);
  assertProblem(
    await api.request('/v1/feeds/infrastructure.geojson?vertical=coal', { key: api.keys.ent_feed }),
    400,
    'invalid_parameter',
  );
  assertProblem(
    await api.request('/v1/feeds/leads.geojson?min_mw=5', { key: api.keys.ent_feed }),
    400,
    'unknown_parameter',
  );
});

test('feeds, OGC and tokens are refused to commonwealth and ent_api with a 403 naming the scopes needed', async () => {
  for (const scope of ['commonwealth', 'ent_api'] as const) {
    for (const path of [
      '/v1/feeds/leads.geojson',
      '/v1/feeds/infrastructure.geojson',
      '/v1/feeds/token',
      '/v1/ogc',
      '/v1/ogc/collections/leads/items',
    ]) {
      const res = await api.request(path, { key: api.keys[scope] });
      assertProblem(res, 403, 'insufficient_scope');
      assert.match(res.body.detail, /ent_feed or custom/);
      assert.match(res.body.detail, new RegExp(`scope is ${scope}`));
    }
  }
  assert.is((await api.request('/v1/feeds/leads.geojson?page_size=1', { key: api.keys.custom })).status, 200);
});

test.run();
