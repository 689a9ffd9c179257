/**
 * The geo-search bench's pure parts: the county outline (a simple polygon holding every lead of
 * the county, boundary leads included, checked with turf), the seeded workload, and how the
 * PostGIS peer reads a request's geo parameters and builds its SQL. No PostgreSQL needed.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { booleanPointInPolygon } from '@turf/boolean-point-in-polygon';
import { kinks } from '@turf/kinks';
import {
  countyOutline,
  geoWorkload,
  NEARBY_RADII_M,
  OUTLINE_VERTICES,
  POLYGON_COUNTIES,
  type LeadPoint,
} from '../../bench/geo-search.ts';
import { geoSearchOf, postgisNearbyQuery, postgisPolygonQuery } from '../../bench/postgis.ts';
import { prng } from '../../bench/api.ts';

/** `n` points scattered around (lat, lon) within ±spread degrees, seeded. */
function scatter(
  n: number,
  lat: number,
  lon: number,
  spread: number,
  seed: number,
  county = 'X',
  firstId = 1,
): LeadPoint[] {
  const r = prng(seed);
  return Array.from({ length: n }, (_, i) => ({
    id: firstId + i,
    lat: +(lat + (r() - 0.5) * 2 * spread).toFixed(6),
    lon: +(lon + (r() - 0.5) * 2 * spread).toFixed(6),
    county,
  }));
}

test('the county outline is a closed, simple polygon of OUTLINE_VERTICES vertices holding every lead of the county', () => {
  const arc = Array.from({ length: 40 }, (_, i) => ({
    lat: +(53 + Math.sin((i / 39) * (Math.PI / 3))).toFixed(6),
    lon: +(-8 + Math.cos((i / 39) * (Math.PI / 3))).toFixed(6),
  }));
  const cases: [string, { lat: number; lon: number }[]][] = [
    ['3,000 scattered', scatter(3_000, 53.0, -8.0, 0.4, 1)],
    ['400 scattered', scatter(400, 52.2, -9.5, 0.3, 2)],
    ['50 scattered', scatter(50, 54.5, -8.1, 0.2, 3)],
    ['an arc (empty sectors on one side)', arc],
    ['one lead', [{ lat: 53.3, lon: -6.2 }]],
  ];
  for (const [name, pts] of cases) {
    const outline = countyOutline(pts);
    assert.ok(outline, name);
    const ring = outline.coordinates[0]!;
    assert.equal(ring[0], ring[ring.length - 1], `${name}: closed`);
    assert.is(ring.length - 1, OUTLINE_VERTICES, name);
    assert.is(new Set(ring.slice(1).map((v) => v.join())).size, OUTLINE_VERTICES, `${name}: distinct vertices`);
    assert.is(kinks(outline).features.length, 0, `${name}: no self-intersection`);
    const outside = pts.filter((p) => !booleanPointInPolygon([p.lon, p.lat], outline));
    assert.equal(outside, [], `${name}: every lead inside`);
  }
  assert.is(countyOutline([]), null);
});

test('the workload is seeded: the same centres and polygons for the same release, nearby at each radius, polygons by POST', () => {
  const counties = ['A', 'B', 'C', 'D', 'E', 'F', 'G', 'H', 'I'];
  const pts = counties.flatMap((c, i) =>
    scatter(200 + 50 * i, 52 + (i % 3), -9 + Math.floor(i / 3), 0.2, 10 + i, c, 1 + i * 1_000),
  );
  const a = geoWorkload(pts);
  const b = geoWorkload(pts);
  assert.equal(a, b);
  assert.equal(
    a.scenarios.map((s) => s.name),
    [...NEARBY_RADII_M.map((r) => `nearby ${r / 1000} km`), 'polygon (county)'],
  );
  for (const [i, r] of NEARBY_RADII_M.entries()) {
    const s = a.scenarios[i]!;
    assert.ok(s.requests.length > 0 && s.checked.length > 0);
    for (const q of s.requests) assert.match(q.suffix, new RegExp(`^\\?near=-?[\\d.]+,-?[\\d.]+&radius_m=${r}$`));
  }
  // the polygons: the counties ranked around the median lead count, each a POST with a GeoJSON polygon
  assert.is(a.counties.length, POLYGON_COUNTIES);
  assert.equal(
    a.counties.map((c) => c.county),
    ['H', 'G', 'F', 'E', 'D', 'C'],
  );
  const poly = a.scenarios[2]!;
  assert.equal(poly.checked, poly.requests);
  for (const q of poly.requests) {
    assert.is(q.method, 'POST');
    assert.is(q.suffix, '/search');
    assert.is((JSON.parse(q.body!) as { polygon: { type: string } }).polygon.type, 'Polygon');
  }
  assert.is.not(
    geoWorkload(pts, 18).scenarios[0]!.requests[0]!.suffix + geoWorkload(pts, 18).scenarios[0]!.requests[1]!.suffix,
    a.scenarios[0]!.requests[0]!.suffix + a.scenarios[0]!.requests[1]!.suffix,
  );
});

test('the PostGIS peer reads near (lat first) with radius_m, or polygon as text or object, like the API', () => {
  assert.equal(geoSearchOf({ near: '53.35,-6.26', radius_m: '10000' }), { near: [53.35, -6.26], radiusM: 10_000 });
  assert.equal(geoSearchOf({ near: '53.35,-6.26' }), { near: [53.35, -6.26], radiusM: 1_000 });
  const polygon = {
    type: 'Polygon',
    coordinates: [
      [
        [-6, 53],
        [-6.1, 53],
        [-6.1, 53.1],
        [-6, 53],
      ],
    ],
  };
  assert.equal(geoSearchOf({ polygon }), { polygon: JSON.stringify(polygon) });
  assert.equal(geoSearchOf({ polygon: JSON.stringify(polygon) }), { polygon: JSON.stringify(polygon) });
  assert.is(geoSearchOf({ near: 'Dublin' }), null);
  assert.is(geoSearchOf({}), null);
});

test("the peer asks PostGIS the API's questions: great circle ≤ radius on the sphere, boundary-inclusive intersection, default order, 25 rows with the total", () => {
  const near = postgisNearbyQuery(['id', 'county']);
  assert.match(near, /ST_DWithin\(g\.geog, ST_SetSRID\(ST_MakePoint\(\$2, \$1\), 4326\)::geography, \$3, false\)/);
  const area = postgisPolygonQuery(['id', 'county']);
  assert.match(area, /ST_Intersects\(g\.geom, ST_SetSRID\(ST_GeomFromGeoJSON\(\$1\), 4326\)\)/);
  for (const sql of [near, area]) {
    assert.match(sql, /count\(\*\) OVER \(\) AS total/);
    assert.match(sql, /ORDER BY g\.received_date DESC, g\.id DESC LIMIT 25/);
    assert.match(sql, /SELECT t\.total::int AS _total.*b\.id, b\.county/s);
  }
});

test.run();
