/**
 * OGC API Features Part 2 on the OGC items (api/gis/crs.ts): EPSG:2157 answers equal the
 * pipeline's own ITM conversion (pipeline/lib/itm.ts, an independent proj4 use) of the CRS84
 * answers within 1 m, `bbox-crs` in ITM selects every feature inside the ITM box, the CRS list
 * on collections, `Content-Crs`, and 400s for CRSs not offered.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { wgs84ToItm } from '../../../pipeline/lib/itm.ts';
import { CRS84, EPSG_2157, itmBoxToCrs84, lineInCrs, SUPPORTED_CRS } from '../../../api/gis/crs.ts';
import { assertProblem, startTestApi, type TestApi } from '../../helpers/api.ts';

let api: TestApi;
test.before(async () => {
  api = await startTestApi();
});
test.after(async () => {
  await api?.close();
});
const get = (path: string) => api.request(path, { key: api.keys.ent_feed });
type F = { id: number; geometry: { coordinates: [number, number] }; properties: Record<string, unknown> };

test("items and one feature in EPSG:2157: the pipeline's ITM of the CRS84 coordinates within 1 m, properties unchanged", async () => {
  const wgs = await get('/v1/ogc/collections/leads/items?limit=500');
  const itm = await get(`/v1/ogc/collections/leads/items?limit=500&crs=${encodeURIComponent(EPSG_2157)}`);
  assert.is(itm.status, 200);
  assert.is(itm.headers.get('content-crs'), `<${EPSG_2157}>`);
  assert.is(wgs.headers.get('content-crs'), `<${CRS84}>`);
  const a = wgs.body.features as F[];
  const b = itm.body.features as F[];
  assert.is(b.length, a.length);
  assert.is(itm.body.numberMatched, wgs.body.numberMatched);
  for (let i = 0; i < a.length; i++) {
    assert.is(b[i]!.id, a[i]!.id);
    const ref = wgs84ToItm(...a[i]!.geometry.coordinates);
    const [e, n] = b[i]!.geometry.coordinates;
    assert.ok(
      Math.hypot(e - ref.easting, n - ref.northing) < 1,
      `feature ${a[i]!.id}: ${e},${n} vs ${ref.easting},${ref.northing}`,
    );
    assert.equal(b[i]!.properties, a[i]!.properties);
  }
  const next = (itm.body.links as { rel: string; href: string }[]).find((l) => l.rel === 'next');
  if (next) assert.ok(next.href.includes('crs='), 'the next link keeps the crs');
  const one = await get(`/v1/ogc/collections/leads/items/${a[0]!.id}?crs=${encodeURIComponent(EPSG_2157)}`);
  assert.is(one.status, 200);
  assert.equal(one.body.geometry.coordinates, b[0]!.geometry.coordinates);
  assert.is(one.headers.get('content-crs'), `<${EPSG_2157}>`);
});

test('bbox-crs EPSG:2157: every feature inside the ITM box is answered, none outside its CRS84 envelope', async () => {
  const all = (await get('/v1/ogc/collections/leads/items?limit=10000')).body.features as F[];
  const box = [680000, 700000, 740000, 760000]; // around Dublin, metres
  const res = await get(
    `/v1/ogc/collections/leads/items?limit=10000&bbox=${box.join(',')}&bbox-crs=${encodeURIComponent(EPSG_2157)}`,
  );
  assert.is(res.status, 200);
  const got = new Set((res.body.features as F[]).map((f) => f.id));
  const inside = all.filter((f) => {
    const p = wgs84ToItm(...f.geometry.coordinates);
    return p.easting >= box[0]! && p.easting <= box[2]! && p.northing >= box[1]! && p.northing <= box[3]!;
  });
  assert.ok(inside.length > 0, 'the box holds some leads');
  for (const f of inside) assert.ok(got.has(f.id), `feature ${f.id} inside the ITM box`);
  const env = itmBoxToCrs84(box.join(',')) as string;
  const [w, s, e, n] = env.split(',').map(Number) as [number, number, number, number];
  for (const f of res.body.features as F[]) {
    const [lon, lat] = f.geometry.coordinates;
    assert.ok(lon >= w && lon <= e && lat >= s && lat <= n);
  }
  assert.ok(got.size <= inside.length * 1.1 + 5, 'the slivers between the boxes stay thin');
});

test('collections list the CRSs; conformance has Part 2; bad values are 400', async () => {
  const c = await get('/v1/ogc/collections/leads');
  assert.equal(c.body.crs, [CRS84, EPSG_2157]);
  assert.equal(SUPPORTED_CRS, [CRS84, EPSG_2157]);
  assert.is(c.body.storageCrs, CRS84);
  assert.ok(
    (await get('/v1/ogc/conformance')).body.conformsTo.includes(
      'http://www.opengis.net/spec/ogcapi-features-2/1.0/conf/crs',
    ),
  );
  assertProblem(await get('/v1/ogc/collections/leads/items?crs=EPSG:4326'), 400, 'invalid_parameter');
  assertProblem(
    await get(`/v1/ogc/collections/leads/items?bbox=1,2,3&bbox-crs=${encodeURIComponent(EPSG_2157)}`),
    400,
    'invalid_parameter',
  );
  assertProblem(
    await get(`/v1/ogc/collections/leads/items/1?bbox-crs=${encodeURIComponent(EPSG_2157)}`),
    400,
    'unknown_parameter',
  );
  // a client that adds crs to every request (GDAL 3.6) gets the metadata unchanged; a bad value is still a 400
  assert.equal((await get(`/v1/ogc/collections/leads?crs=${encodeURIComponent(EPSG_2157)}`)).body.crs, c.body.crs);
  assert.is((await get(`/v1/ogc?crs=${encodeURIComponent(EPSG_2157)}`)).status, 200);
  assertProblem(await get('/v1/ogc/collections?crs=EPSG:2157'), 400, 'invalid_parameter');
});

test('lineInCrs rewrites only the geometry', () => {
  const line =
    '{"type":"Feature","id":3,"geometry":{"type":"Point","coordinates":[-6.26,53.35]},"properties":{"lon":-6.26,"lat":53.35}}';
  assert.is(lineInCrs(line, CRS84), line);
  const out = JSON.parse(lineInCrs(line, EPSG_2157));
  assert.equal(out.properties, { lon: -6.26, lat: 53.35 });
  const ref = wgs84ToItm(-6.26, 53.35);
  assert.ok(
    Math.abs(out.geometry.coordinates[0] - ref.easting) < 0.1 &&
      Math.abs(out.geometry.coordinates[1] - ref.northing) < 0.1,
  );
});

test.run();
