/**
 * Nearby, bbox and polygon search answer exactly (issue 17's acceptance): on the default-scale
 * release (built once by the project's generator and pipeline, cached under `.tmp/`,
 * test/helpers/scaled-release.ts), the lead index's full id sets for 200 random areas equal a
 * reference computed without the index — DuckDB SQL over the release's Parquet for radius
 * (haversine in SQL) and bbox, turf's booleanPointInPolygon over every lead for polygons — with 0
 * mismatches. The areas include polygons with holes and MultiPolygons, areas crossing authority
 * boundaries, and leads exactly on an edge, a vertex or at the radius (areas built from real lead
 * coordinates). `sort=distance` pages (offset and cursor) equal SQL's order by the served distance.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { join } from 'node:path';
import booleanPointInPolygon from '@turf/boolean-point-in-polygon';
import { openApiDb, sqlString, type ApiDb } from '../../../api/duckdb/db.ts';
import { LeadIndex } from '../../../api/engine/lead-index.ts';
import {
  EARTH_RADIUS_M,
  EDGE_TOLERANCE_M,
  parsePolygon,
  type AreaGeometry,
  type BBox,
} from '../../../api/gis/geometry.ts';
import type { LeadsFilters } from '../../../api/query/leads-query.ts';
import { cachedPack, manifestKey } from '../../helpers/pack-cache.ts';
import { scaledRelease } from '../../helpers/scaled-release.ts';
import { seededRandom } from '../../helpers/random.ts';

let db: ApiDb;
let ix: LeadIndex;
let leads: string;
/** Every lead with coordinates: id, lat, lon, authority. */
let pts: { id: number; lat: number; lon: number; authority: string }[] = [];
const authorityOf = new Map<number, string>();

test.before(async () => {
  const { id, dir } = await scaledRelease('default');
  db = await openApiDb({ connections: 1, threads: 2, memoryLimit: '1GB' });
  leads = `read_parquet(${sqlString(join(dir, 'leads.parquet'))})`;
  // built from the Parquet file as the API builds it, once per release and code (~2.5 s of CPU at
  // this scale): later runs read the parts that build made (test/helpers/pack-cache.ts)
  const parts = await cachedPack('geo-lead-index', manifestKey(id, dir), async () =>
    (await LeadIndex.load(db, { leads, search: null })).parts(),
  );
  ix = new LeadIndex(parts);
  // the SQL reference reads the columns it uses once into a table (same values and types), not the file per query
  await db.all(`CREATE TABLE ref_leads AS SELECT id, lat, lon FROM ${leads}`);
  pts = (
    await db.all<{ id: number; lat: number; lon: number; authority: string }>(
      `SELECT CAST(id AS BIGINT) AS id, CAST(lat AS DOUBLE) AS lat, CAST(lon AS DOUBLE) AS lon, planning_authority AS authority FROM ${leads} WHERE lat IS NOT NULL AND lon IS NOT NULL ORDER BY id`,
    )
  ).map((r) => ({ ...r, id: Number(r.id) }));
  for (const p of pts) authorityOf.set(p.id, p.authority);
});

test.after(() => {
  db.close();
  // what the file holds (~30 MB of small objects) is not kept for the worker's next files (test/runner/worker.ts)
  pts = [];
  authorityOf.clear();
  ix = undefined as unknown as LeadIndex;
});

/** Every id the index matches (one page holding them all). */
function indexIds(filters: LeadsFilters): number[] {
  const all = ix.page({ filters, sort: 'newest', limit: 0, offset: 0, after: null }).total;
  return ix
    .page({ filters, sort: 'newest', limit: all, offset: 0, after: null })
    .rows.map((r) => r.id)
    .sort((a, b) => a - b);
}

const HAVERSINE_SQL = `2 * ${EARTH_RADIUS_M} * asin(least(1, sqrt(pow(sin(radians(CAST(lat AS DOUBLE) - ?) / 2), 2) + cos(radians(?)) * cos(radians(CAST(lat AS DOUBLE))) * pow(sin(radians(CAST(lon AS DOUBLE) - ?) / 2), 2))))`;

async function sqlNear(lat: number, lon: number, radius: number): Promise<number[]> {
  const rows = await db.all<{ id: number }>(
    `SELECT CAST(id AS BIGINT) AS id FROM ref_leads WHERE lat IS NOT NULL AND lon IS NOT NULL AND ${HAVERSINE_SQL} <= ? ORDER BY id`,
    [lat, lat, lon, radius + EDGE_TOLERANCE_M],
  );
  return rows.map((r) => Number(r.id));
}

async function sqlBbox([w, s, e, n]: BBox): Promise<number[]> {
  const rows = await db.all<{ id: number }>(
    `SELECT CAST(id AS BIGINT) AS id FROM ref_leads WHERE CAST(lat AS DOUBLE) BETWEEN ? AND ? AND CAST(lon AS DOUBLE) BETWEEN ? AND ? ORDER BY id`,
    [s, n, w, e],
  );
  return rows.map((r) => Number(r.id));
}

function turfPolygon(g: AreaGeometry): number[] {
  // a point outside the area's bounding box (its edges included) is outside the area: turf tests
  // the others (the same answer as testing every lead, without 200,000 ring walks per polygon)
  const rings = g.type === 'Polygon' ? g.coordinates : g.coordinates.flat();
  const lons = rings.flatMap((r) => r.map((c) => c[0]!));
  const lats = rings.flatMap((r) => r.map((c) => c[1]!));
  const [w, e, s, n] = [Math.min(...lons), Math.max(...lons), Math.min(...lats), Math.max(...lats)];
  return pts
    .filter((p) => p.lon >= w && p.lon <= e && p.lat >= s && p.lat <= n)
    .filter((p) => booleanPointInPolygon([p.lon, p.lat], g))
    .map((p) => p.id);
}

const DEG = 180 / Math.PI;

/**
 * A star-shaped ring around (cx, cy): `k` vertices at increasing angles and random radii, closed;
 * `at` puts one vertex exactly on a given point (its angle and distance from the centre).
 */
function starRing(
  rnd: () => number,
  cx: number,
  cy: number,
  size: number,
  k: number,
  at?: { lon: number; lat: number },
): number[][] {
  const angles = Array.from({ length: k }, () => rnd() * 2 * Math.PI).sort((a, b) => a - b);
  const ring = angles.map((a) => {
    const r = size * (0.4 + 0.6 * rnd());
    return [cx + r * Math.cos(a) * 1.6, cy + r * Math.sin(a)];
  });
  if (at) {
    const a = Math.atan2(at.lat - cy, (at.lon - cx) / 1.6);
    const norm = (x: number): number => (x + 2 * Math.PI) % (2 * Math.PI);
    let i = angles.findIndex((x) => norm(x) > norm(a));
    if (i < 0) i = angles.length;
    ring.splice(i, 0, [at.lon, at.lat]);
    ring.sort(
      (p, q) => norm(Math.atan2(p[1]! - cy, (p[0]! - cx) / 1.6)) - norm(Math.atan2(q[1]! - cy, (q[0]! - cx) / 1.6)),
    );
  }
  ring.push([...ring[0]!]);
  return ring;
}

test('200 random areas on the default release: the index equals the reference (0 mismatches)', async () => {
  assert.ok(pts.length > 100_000, `the default release has ${pts.length} leads with coordinates`);
  const rnd = seededRandom(20261109);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  let mismatches = 0;
  let crossing = 0;
  let withHoles = 0;
  let multi = 0;
  let onEdge = 0;
  let nonEmpty = 0;
  const check = (label: string, got: number[], want: number[], mustHold: number[] = []): void => {
    if (got.join(',') !== want.join(',')) {
      mismatches++;
      const g = new Set(got);
      const w = new Set(want);
      console.log(
        `  ${label}: index ${got.length}, reference ${want.length}; only index ${got.filter((x) => !w.has(x)).slice(0, 5)}, only reference ${want.filter((x) => !g.has(x)).slice(0, 5)}`,
      );
    }
    for (const id of mustHold) assert.ok(got.includes(id), `${label}: lead ${id} on the edge is inside`);
    if (mustHold.length > 0) onEdge++;
    if (want.length > 0) nonEmpty++;
    if (new Set(want.map((id) => authorityOf.get(id))).size > 1) crossing++;
  };

  // 70 circles: centres on leads or anywhere in Ireland, radii 1 m … 50 km (log-uniform); every
  // fifth has a lead exactly at the radius (the centre due north of it by a whole number of metres)
  for (let i = 0; i < 70; i++) {
    const radius = Math.max(1, Math.min(50_000, Math.round(Math.exp(Math.log(50) + rnd() * Math.log(1000)))));
    let lat: number;
    let lon: number;
    const must: number[] = [];
    if (i % 5 === 0) {
      const p = pick(pts);
      lat = p.lat + (radius / EARTH_RADIUS_M) * DEG;
      lon = p.lon;
      must.push(p.id);
    } else if (rnd() < 0.6) {
      const p = pick(pts);
      ((lat = p.lat + (rnd() - 0.5) * 0.02), (lon = p.lon + (rnd() - 0.5) * 0.02));
    } else ((lat = 51.5 + rnd() * 3.8), (lon = -10.3 + rnd() * 4.3));
    const filters: LeadsFilters = { near: { lat, lon, radius_m: radius } };
    check(`near ${lat},${lon} r=${radius}`, indexIds(filters), await sqlNear(lat, lon, radius), must);
    if (i % 5 === 0) {
      // 1 cm beyond the radius is outside
      const p = pts.find((x) => x.id === must[0])!;
      const out = indexIds({
        near: { lat: p.lat + ((radius + 0.01) / EARTH_RADIUS_M) * DEG, lon: p.lon, radius_m: radius },
      });
      assert.not.ok(out.includes(p.id), `lead ${p.id} 1 cm beyond the radius is outside`);
    }
  }

  // 70 boxes: random sizes; every other one with its edges on real leads' coordinates
  for (let i = 0; i < 70; i++) {
    const p = pick(pts);
    const wLon = 0.002 + rnd() * (i % 7 === 0 ? 2 : 0.2);
    const hLat = 0.002 + rnd() * (i % 7 === 0 ? 1.2 : 0.12);
    let box: BBox = [p.lon - wLon * rnd(), p.lat - hLat * rnd(), 0, 0];
    box = [box[0], box[1], box[0] + wLon, box[1] + hLat];
    const must: number[] = [];
    if (i % 2 === 0) {
      const inside = pts.filter((x) => x.lon >= box[0] && x.lon <= box[2] && x.lat >= box[1] && x.lat <= box[3]);
      if (inside.length >= 2) {
        const a = pick(inside);
        const b = pick(inside);
        box = [Math.min(a.lon, b.lon), Math.min(a.lat, b.lat), Math.max(a.lon, b.lon), Math.max(a.lat, b.lat)];
        must.push(a.id, b.id);
      }
    }
    check(`bbox ${box.join(',')}`, indexIds({ bbox: box }), await sqlBbox(box), must);
  }

  // 60 polygons: star-shaped rings (some with a vertex on a lead), holes (some with a vertex on a
  // lead: on a hole's ring is inside), MultiPolygons, sizes from a street to several counties
  for (let i = 0; i < 60; i++) {
    const c = pick(pts);
    const size = i % 6 === 0 ? 0.3 + rnd() * 0.6 : 0.005 + rnd() * 0.08;
    const near = pts.filter(
      (x) =>
        Math.abs(x.lon - c.lon) < size * 0.5 &&
        Math.abs(x.lat - c.lat) < size * 0.3 &&
        (x.lon !== c.lon || x.lat !== c.lat),
    );
    const vertexLead = i % 3 === 0 && near.length > 0 ? pick(near) : undefined;
    const outer = starRing(rnd, c.lon + 1e-4, c.lat + 1e-4, size, 5 + Math.floor(rnd() * 20), vertexLead);
    const rings = [outer];
    const must: number[] = vertexLead ? [vertexLead.id] : [];
    if (i % 4 === 1) {
      // a hole: a small square around the centre lead, one corner exactly on it
      const h = size * 0.1;
      rings.push([
        [c.lon, c.lat],
        [c.lon, c.lat + h],
        [c.lon + h, c.lat + h],
        [c.lon + h, c.lat],
        [c.lon, c.lat],
      ]);
      must.push(c.id);
      withHoles++;
    }
    let g: AreaGeometry = { type: 'Polygon', coordinates: rings };
    if (i % 5 === 2) {
      const d = pick(pts);
      g = { type: 'MultiPolygon', coordinates: [rings, [starRing(rnd, d.lon + 1e-4, d.lat + 1e-4, 0.02, 8)]] };
      multi++;
    }
    const parsed = parsePolygon(JSON.stringify(g));
    if ('reason' in parsed) {
      // a random MultiPolygon's parts may overlap: that is refused, and not an area of this test
      assert.ok(/self-intersecting/.test(parsed.reason as string), `polygon ${i}: ${parsed.reason as string}`);
      i--;
      continue;
    }
    check(`polygon ${i} (${g.type})`, indexIds({ polygon: parsed }), turfPolygon(parsed), must);
  }

  // an area combined with another filter, and two areas together, as the index ANDs them
  const p = pick(pts);
  const both: LeadsFilters = {
    near: { lat: p.lat, lon: p.lon, radius_m: 20_000 },
    bbox: [p.lon - 0.1, p.lat - 0.1, p.lon + 0.3, p.lat + 0.05],
  };
  const a = new Set(await sqlNear(p.lat, p.lon, 20_000));
  check(
    'near and bbox',
    indexIds(both),
    (await sqlBbox(both.bbox!)).filter((id) => a.has(id)),
  );

  console.log(
    `  ${pts.length} leads; areas holding leads ${nonEmpty}, crossing authorities ${crossing}, with holes ${withHoles}, multi ${multi}, edge leads ${onEdge}`,
  );
  assert.is(mismatches, 0, 'areas whose index answer differs from the reference');
  assert.ok(nonEmpty > 150, `areas holding leads: ${nonEmpty}`);
  assert.ok(crossing >= 20, `areas crossing authority boundaries: ${crossing}`);
  assert.ok(withHoles >= 10 && multi >= 8, `polygons with holes ${withHoles}, MultiPolygons ${multi}`);
  assert.ok(onEdge >= 40, `areas with a lead on the edge: ${onEdge}`);
});

test('sort=distance: pages by offset and by cursor equal SQL ordered by (distance rounded to 0.1 m, id)', async () => {
  const rnd = seededRandom(7);
  for (let i = 0; i < 12; i++) {
    const p = pts[Math.floor(rnd() * pts.length)]!;
    const radius = 500 + Math.floor(rnd() * 8000);
    const want = (
      await db.all<{ id: number; d: number }>(
        `SELECT CAST(id AS BIGINT) AS id, round(${HAVERSINE_SQL}, 1) AS d FROM ref_leads WHERE lat IS NOT NULL AND ${HAVERSINE_SQL} <= ? ORDER BY d, id`,
        [p.lat, p.lat, p.lon, p.lat, p.lat, p.lon, radius + EDGE_TOLERANCE_M],
      )
    ).map((r) => `${Number(r.id)}:${r.d}`);
    const filters: LeadsFilters = { near: { lat: p.lat, lon: p.lon, radius_m: radius } };
    const got: string[] = [];
    let after: [number, number] | null = null;
    for (let page = 0; page < 1000; page++) {
      const { rows, total } = ix.page({ filters, sort: 'distance', limit: 17, offset: 0, after });
      assert.is(total, want.length);
      for (const r of rows) {
        assert.is(r.distance, r.sortValue);
        got.push(`${r.id}:${r.sortValue}`);
      }
      if (rows.length < 17) break;
      after = [rows.at(-1)!.sortValue as number, rows.at(-1)!.id];
    }
    assert.equal(got, want, `near ${p.lat},${p.lon} r=${radius}: every lead once, by distance`);
    const mid = ix
      .page({ filters, sort: 'distance', limit: 5, offset: 10, after: null })
      .rows.map((r) => `${r.id}:${r.sortValue}`);
    assert.equal(mid, want.slice(10, 15), 'offset page');
  }
});

test.run();
