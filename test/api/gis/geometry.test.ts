/**
 * The geometry module: `near` / `polygon` parsing with each fault named, the edge rules, the
 * self-intersection sweep against turf's `kinks` (the reference) on random rings, and the module's
 * own point-in-polygon (`inPolygon`, `orientation`) against turf's `booleanPointInPolygon` (the
 * reference, used by no API code) and against exact rational cases a float formula gets wrong.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import kinks from '@turf/kinks';
import booleanPointInPolygon from '@turf/boolean-point-in-polygon';
import {
  EARTH_RADIUS_M,
  parseNear,
  parsePolygon,
  parsePolygonText,
  POLYGON_CACHE,
  POLYGON_VERTICES_MAX,
  selfIntersection,
  type AreaGeometry,
} from '../../../api/gis/geometry.ts';
import {
  BANDS_PER_ROW,
  gridSize,
  inPolygon,
  inPolygonExact,
  INSIDE,
  orientation,
  OUTSIDE,
  PARTLY,
} from '../../../api/gis/polygon-index.ts';
import {
  areaRangeTest,
  areaRegion,
  areaTest,
  circleMargin,
  circleTest,
  envelopes,
  haversineM,
  inBBox,
  inCircle,
  latLonTest,
  servedDistance,
} from '../../../api/gis/point-tests.ts';
import { seededRandom } from '../../helpers/random.ts';

const square = (x: number, y: number, d: number): number[][] => [
  [x, y],
  [x + d, y],
  [x + d, y + d],
  [x, y + d],
  [x, y],
];
const reason = (v: unknown): string => (v as { reason: string }).reason;
/**
 * `k` positions at even angles around (cx, cy), each at `r · (least + spread · rnd())` (longitude
 * stretched 1.6×, as Ireland's degrees are): a star-shaped ring, not closed.
 */
const starRing = (
  rnd: () => number,
  cx: number,
  cy: number,
  r: number,
  k: number,
  least: number,
  spread: number,
): number[][] =>
  Array.from({ length: k }, (_, i) => {
    const a = (2 * Math.PI * i) / k;
    const d = r * (least + spread * rnd());
    return [cx + 1.6 * d * Math.cos(a), cy + d * Math.sin(a)];
  });

test('parseNear: latitude first; ranges; longitude,latitude in Ireland refused', () => {
  assert.equal(parseNear('53.3498,-6.2603'), { lat: 53.3498, lon: -6.2603 });
  assert.equal(parseNear(' 53.3 , -6.2 '), { lat: 53.3, lon: -6.2 });
  assert.match(reason(parseNear('-6.2603,53.3498')), /latitude first/);
  assert.match(reason(parseNear('95,10')), /between -90 and 90/);
  assert.match(reason(parseNear('53.3')), /latitude,longitude/);
  assert.match(reason(parseNear('53.3,-6.2,1')), /latitude,longitude/);
  assert.match(reason(parseNear('abc,def')), /latitude,longitude/);
});

test('parsePolygon: every fault named, in the documented order', () => {
  const ok: AreaGeometry = { type: 'Polygon', coordinates: [square(-6.3, 53.3, 0.05)] };
  assert.equal(parsePolygon(JSON.stringify(ok)), ok);
  assert.equal(parsePolygon({ ...ok, bbox: [1, 2, 3, 4] }), ok, 'an object (JSON body); extra members dropped');
  const cases: [unknown, RegExp][] = [
    ['{"type":', /as JSON/],
    [{ type: 'Point', coordinates: [-6.3, 53.3] }, /Polygon or MultiPolygon/],
    [{ type: 'Feature', geometry: ok }, /Polygon or MultiPolygon/],
    [{ type: 'Polygon', coordinates: [[[-6.3, '53.3']]] }, /positions \(numbers\)/],
    [
      {
        type: 'Polygon',
        coordinates: [
          [
            [-6.3, 53.3],
            [-6.2, 53.3],
            [-6.3, 53.3],
          ],
        ],
      },
      /outer ring has fewer than 4 positions/,
    ],
    [
      {
        type: 'Polygon',
        coordinates: [
          [
            [-6.3, 53.3],
            [-6.2, 53.3],
            [-6.2, 53.4],
            [-6.3, 53.4],
          ],
        ],
      },
      /outer ring is not closed/,
    ],
    [
      {
        type: 'Polygon',
        coordinates: [
          square(-6.3, 53.3, 0.1),
          [
            [-6.28, 53.32],
            [-6.27, 53.32],
            [-6.27, 53.33],
            [-6.28, 53.32],
            [-6.0, 53.0],
          ],
        ],
      },
      /hole 1 is not closed/,
    ],
    [
      { type: 'Polygon', coordinates: [square(53.3, -6.3, 0.05)] },
      /position 1 of the outer ring looks like \[latitude, longitude\]/,
    ],
    [{ type: 'Polygon', coordinates: [square(-6.3, 93.3, 0.05)] }, /outside -180…180 longitude \/ -90…90 latitude/],
    [{ type: 'Polygon', coordinates: [square(2.3, 48.8, 0.05)] }, /entirely outside Ireland/],
    [
      {
        type: 'Polygon',
        coordinates: [
          [
            [-6.3, 53.3],
            [-6.2, 53.4],
            [-6.2, 53.3],
            [-6.3, 53.4],
            [-6.3, 53.3],
          ],
        ],
      },
      /self-intersecting/,
    ],
    [
      { type: 'MultiPolygon', coordinates: [[square(-6.3, 53.3, 0.1)], [square(-6.25, 53.35, 0.1)]] },
      /self-intersecting/,
    ],
    [{ type: 'Polygon', coordinates: [square(-6.3, 53.3, 0.1), square(-6.3, 53.3, 0.05)] }, /self-intersecting/], // a hole touching its outer ring
  ];
  for (const [input, want] of cases)
    assert.match(
      reason(parsePolygon(typeof input === 'string' ? input : JSON.stringify(input))),
      want,
      JSON.stringify(input).slice(0, 80),
    );
  // more than POLYGON_VERTICES_MAX positions
  const n = POLYGON_VERTICES_MAX + 1;
  const ring = Array.from({ length: n - 1 }, (_, i) => [
    -7 + 0.5 * Math.cos((2 * Math.PI * i) / (n - 1)),
    53 + 0.3 * Math.sin((2 * Math.PI * i) / (n - 1)),
  ]);
  ring.push([...ring[0]!]);
  assert.match(reason(parsePolygon({ type: 'Polygon', coordinates: [ring] })), /has 10001 positions; at most 10000/);
  // exactly the maximum is accepted (and checked for crossings by the sweep, quickly)
  const max = ring.slice(0, -2).concat([[...ring[0]!]]);
  assert.is(max.length, POLYGON_VERTICES_MAX);
  assert.not.ok('reason' in (parsePolygon({ type: 'Polygon', coordinates: [max] }) as object));
});

test('selfIntersection agrees with turf kinks on 400 random rings (the reference)', () => {
  const rnd = seededRandom(17);
  let crossing = 0;
  for (let i = 0; i < 400; i++) {
    const k = 4 + Math.floor(rnd() * 12);
    const ring = Array.from({ length: k }, () => [-7 + rnd(), 53 + rnd()]);
    if (i % 2 === 0) {
      // star-shaped (simple) half of the time
      ring.sort((a, b) => Math.atan2(a[1]! - 53.5, a[0]! + 6.5) - Math.atan2(b[1]! - 53.5, b[0]! + 6.5));
    }
    ring.push([...ring[0]!]);
    const rings = i % 5 === 0 ? [ring, square(-6.6, 53.4, 0.2)] : [ring];
    const want = kinks({ type: 'Polygon', coordinates: rings }).features.length > 0;
    assert.is(selfIntersection(rings) !== null, want, `ring ${i}: ${JSON.stringify(rings)}`);
    if (want) crossing++;
  }
  assert.ok(crossing > 100 && crossing < 350, `${crossing} of 400 cross`);
});

test('edges: radius inclusive to 1 mm; bbox and polygon edges, vertices and hole rings inside', () => {
  const c = { lat: 53.3, lon: -6.3, radius_m: 1000 };
  const north = (m: number): number => c.lat + (m / EARTH_RADIUS_M) * (180 / Math.PI);
  assert.ok(inCircle(c, north(1000), c.lon));
  assert.ok(inCircle(c, north(1000.0009), c.lon));
  assert.not.ok(inCircle(c, north(1000.01), c.lon));
  assert.ok(Math.abs(haversineM(c.lat, c.lon, north(1000), c.lon) - 1000) < 1e-6);
  assert.is(servedDistance(999.96), 1000);
  assert.ok(inBBox([-6.3, 53.3, -6.2, 53.4], 53.3, -6.2), 'corner');
  assert.ok(inBBox([170, -10, -170, 10], 0, 179), 'across the antimeridian');
  assert.not.ok(inBBox([170, -10, -170, 10], 0, 0));
  const holed: AreaGeometry = { type: 'Polygon', coordinates: [square(-6.3, 53.3, 0.1), square(-6.27, 53.33, 0.02)] };
  assert.ok(inPolygon(holed, 53.3, -6.3), 'outer vertex');
  assert.ok(inPolygon(holed, 53.3, -6.25), 'outer edge');
  assert.ok(inPolygon(holed, 53.33, -6.26), 'hole edge');
  assert.not.ok(inPolygon(holed, 53.34, -6.26), 'inside the hole');
  assert.ok(inPolygon(holed, 53.31, -6.29));
  // envelopes hold the circle, widened; nothing beyond the pole or the antimeridian is lost
  const [[w, s0, e, n]] = envelopes({ near: c })! as [[number, number, number, number]];
  assert.ok(s0 < north(-1000) && n > north(1000) && w < c.lon && e > c.lon);
  assert.is(envelopes({ near: { lat: 0, lon: 179.99, radius_m: 5000 } })!.length, 2);
});

test('orientation is exact: one ulp off a line is off it, where the plain float formula says on it', () => {
  const naive = (ax: number, ay: number, bx: number, by: number, px: number, py: number): number =>
    Math.sign((ax - px) * (by - py) - (ay - py) * (bx - px));
  // points on the line y = x·k through real-looking coordinates, and one ulp beside them
  const a = [-6.3, 53.3] as const;
  const b = [-6.2, 53.4] as const;
  let floatWrong = 0;
  const rnd = seededRandom(5);
  for (let i = 0; i < 2000; i++) {
    const t = rnd();
    const x = a[0] + t * (b[0] - a[0]);
    const y = a[1] + t * (b[1] - a[1]);
    const up = y + Math.abs(y) * Number.EPSILON; // the next double above (|y| in [32, 64): ulp = 2^-47)
    // exact sign by rationals: both sides scaled to integers (every double here is a multiple of 2^-52)
    const I = (v: number): bigint => BigInt(v * 2 ** 52);
    const exact = (py: number): number => {
      const d = (I(a[0]) - I(x)) * (I(b[1]) - I(py)) - (I(a[1]) - I(py)) * (I(b[0]) - I(x));
      return d > 0n ? 1 : d < 0n ? -1 : 0;
    };
    assert.is(orientation(a[0], a[1], b[0], b[1], x, y), exact(y), `t=${t}`);
    assert.is(orientation(a[0], a[1], b[0], b[1], x, up), exact(up), `t=${t}, one ulp up`);
    if (naive(a[0], a[1], b[0], b[1], x, up) !== exact(up) || naive(a[0], a[1], b[0], b[1], x, y) !== exact(y))
      floatWrong++;
  }
  // Shewchuk's grid: p = (0.5 + i·2⁻⁵³, 0.5 + j·2⁻⁵³) against the line (12, 12)–(24, 24), where the
  // float formula errs often
  const J = (v: number): bigint => BigInt(v * 2 ** 53);
  for (let i = 0; i < 64; i++) {
    for (let j = 0; j < 64; j++) {
      const px = 0.5 + i * 2 ** -53;
      const py = 0.5 + j * 2 ** -53;
      const d = (J(12) - J(px)) * (J(24) - J(py)) - (J(12) - J(py)) * (J(24) - J(px));
      const want = d > 0n ? 1 : d < 0n ? -1 : 0;
      assert.is(orientation(12, 12, 24, 24, px, py), want, `grid ${i},${j}`);
      if (naive(12, 12, 24, 24, px, py) !== want) floatWrong++;
    }
  }
  assert.ok(floatWrong > 100, `the cases reach where a plain float formula errs (${floatWrong} times)`);
  // exactly representable points on a diagonal edge: inside; the next double beside: by the side
  const tri: AreaGeometry = {
    type: 'Polygon',
    coordinates: [
      [
        [-6.5, 53],
        [-6.25, 53.25],
        [-6.5, 53.25],
        [-6.5, 53],
      ],
    ],
  };
  assert.ok(inPolygon(tri, 53.125, -6.375), 'on the diagonal edge');
  assert.not.ok(inPolygon(tri, 53.125, -6.375 + 2 ** -50), 'one ulp east of it: outside');
  assert.ok(inPolygon(tri, 53.125, -6.375 - 2 ** -50), 'one ulp west of it: inside');
  assert.ok(inPolygon(tri, 53.25, -6.25) && inPolygon(tri, 53.25, -6.4), 'vertex, horizontal edge');
  assert.not.ok(inPolygon(tri, 53.25 + 2 ** -47, -6.4), 'one ulp above the top edge');
});

test('inPolygon equals turf booleanPointInPolygon (the reference) on 60,000 points of random polygons with holes and MultiPolygons', () => {
  const rnd = seededRandom(23);
  const star = (cx: number, cy: number, r: number, k: number): number[][] => {
    const ring = Array.from({ length: k }, (_, i) => (2 * Math.PI * (i + rnd() * 0.8)) / k).map((a) => {
      const d = r * (0.3 + 0.7 * rnd());
      return [cx + d * Math.cos(a), cy + d * Math.sin(a)];
    });
    return [...ring, [...ring[0]!]];
  };
  let mismatches = 0;
  let inside = 0;
  let onRing = 0;
  for (let i = 0; i < 300; i++) {
    const cx = -8 + rnd() * 2;
    const cy = 52 + rnd() * 2;
    const r = 0.01 + rnd() * 0.5;
    const polys: number[][][][] = [[star(cx, cy, r, 3 + Math.floor(rnd() * 30))]];
    if (i % 3 === 0) polys[0]!.push(square(cx - r * 0.1, cy - r * 0.1, r * 0.15)); // a hole (may poke out: even–odd for both)
    if (i % 4 === 0) polys.push([star(cx + 2 * r, cy, r * 0.5, 6)]);
    const g: AreaGeometry =
      polys.length === 1 ? { type: 'Polygon', coordinates: polys[0]! } : { type: 'MultiPolygon', coordinates: polys };
    const vertices = polys.flat(2);
    for (let j = 0; j < 200; j++) {
      let x: number;
      let y: number;
      const kind = j % 4;
      const [vx, vy] = vertices[Math.floor(rnd() * vertices.length)] as [number, number];
      if (kind === 0)
        ((x = vx), (y = vy), onRing++); // a vertex
      else if (kind === 1)
        ((x = vx + (rnd() - 0.5) * 1e-9), (y = vy + (rnd() - 0.5) * 1e-9)); // a hair from one
      else ((x = cx + (rnd() - 0.5) * 3 * r), (y = cy + (rnd() - 0.5) * 3 * r));
      const want = booleanPointInPolygon([x, y], g);
      if (inPolygon(g, y, x) !== want) mismatches++;
      if (want) inside++;
    }
  }
  assert.is(mismatches, 0);
  assert.ok(inside > 10_000 && inside < 50_000 && onRing > 10_000, `inside ${inside}, on a vertex ${onRing}`);
});

test('the cell grid answers as the exact test: 40,000 points of a 200-position county-sized polygon with a hole, on a dense lattice and on every edge', () => {
  const ring = Array.from({ length: 200 }, (_, i) => {
    const a = (2 * Math.PI * i) / 200;
    const r = 0.35 + 0.08 * Math.sin(5 * a) + 0.02 * Math.cos(17 * a);
    return [-7.25 + 1.6 * r * Math.cos(a), 52.65 + r * Math.sin(a)];
  });
  const g: AreaGeometry = { type: 'Polygon', coordinates: [[...ring, [...ring[0]!]], square(-7.3, 52.6, 0.1)] };
  let mismatches = 0;
  let inside = 0;
  for (let j = 0; j < 150; j++) {
    for (let i = 0; i < 200; i++) {
      const lon = -7.95 + (i / 199) * 1.4;
      const lat = 52.15 + (j / 149) * 1.0;
      const want = inPolygonExact(g, lat, lon);
      if (inPolygon(g, lat, lon) !== want) mismatches++;
      if (want) inside++;
    }
  }
  // points on the edges (the rule: inside) and a hair either side of each edge's midpoint
  for (const r of g.coordinates) {
    for (let k = 0; k + 1 < r.length; k++) {
      const [ax, ay] = r[k] as [number, number];
      const [bx, by] = r[k + 1] as [number, number];
      for (const t of [0, 0.5]) {
        for (const d of [0, 1e-12, -1e-12, 1e-8, -1e-8]) {
          const lon = ax + t * (bx - ax) + d;
          const lat = ay + t * (by - ay) - d;
          if (inPolygon(g, lat, lon) !== inPolygonExact(g, lat, lon)) mismatches++;
        }
      }
    }
  }
  assert.is(mismatches, 0);
  assert.ok(inside > 5_000 && inside < 25_000, `inside ${inside}`);
});

test("an edge cell's centre decides as the exact test, also where the segment to the centre touches a vertex or an edge: dyadic lattices", () => {
  // 10…16 positions make a 64 × 64 grid, 50…64 a 128 × 128 one (`gridSize`); over [-8, -7] × [52, 53]
  // the cells' centres are then odd multiples of 1/128 (1/256): with vertices on the 1/256 lattice,
  // some sit on centres and edges pass through others; the points are that lattice (on edges, on
  // vertices, on centres) and, beyond each vertex, points on the line from its cell's centre
  // through it (the segment to the centre passes through the vertex): every touching case of
  // `edgeCellHolds`, in exact coordinates
  const rnd = seededRandom(11);
  let mismatches = 0;
  let tested = 0;
  let inside = 0;
  for (let t = 0; t < 12; t++) {
    const multi = t % 3 === 2;
    const size = multi ? 128 : 64;
    const snap = (v: number): number => Math.round(v * 256) / 256;
    // a star-shaped ring (angles in order: simple), on the lattice
    const star = (cx: number, cy: number, r: number, n: number): number[][] => {
      const ring = Array.from({ length: n }, (_, i) => {
        const a = (2 * Math.PI * (i + 0.3 * rnd())) / n;
        const d = r * (0.4 + 0.6 * rnd());
        return [-8 + snap(cx + d * Math.cos(a)), 52 + snap(cy + d * Math.sin(a))];
      });
      return [...ring, [...ring[0]!]];
    };
    const strip = (y: number): number[][] => [
      [-8, y],
      [-7, y],
      [-7, y + 1 / 64],
      [-8, y + 1 / 64],
      [-8, y],
    ];
    // a MultiPolygon: two strips spanning the envelope [-8, -7] × [52, 53], and two stars, the
    // second inside the first's hole-free body half the time (nested polygons: parity per polygon)
    const g: AreaGeometry = multi
      ? {
          type: 'MultiPolygon',
          coordinates: [
            [strip(52)],
            [strip(53 - 1 / 64)],
            [star(0.35, 0.5, 0.3, 20)],
            [star(t % 2 ? 0.35 : 0.75, 0.5, 0.12, 20)],
          ],
        }
      : {
          type: 'Polygon',
          coordinates: [
            [
              [-8, 52],
              [-7, 52],
              [-7, 53],
              [-8, 53],
              [-8, 52],
            ],
            star(0.5, 0.5, 0.45, 5 + (t % 6)),
          ],
        };
    const positions = (multi ? (g.coordinates as number[][][][]).flat(2) : (g.coordinates as number[][][]).flat(1))
      .length;
    assert.is(gridSize(positions), size, `${positions} positions`);
    const points: [number, number][] = [];
    for (let j = 0; j <= 256; j++) for (let i = 0; i <= 256; i++) points.push([-8 + i / 256, 52 + j / 256]);
    const centre = (v: number, lo: number): number => lo + (Math.floor((v - lo) * size) + 0.5) / size;
    for (const [vx, vy] of (multi
      ? (g.coordinates as number[][][][]).flat(2)
      : (g.coordinates as number[][][]).flat(1)) as [number, number][]) {
      const [cx, cy] = [centre(vx, -8), centre(vy, 52)];
      for (const t of [1.25, 1.5, 2, 3]) points.push([cx + t * (vx - cx), cy + t * (vy - cy)]);
    }
    for (const [lon, lat] of points) {
      const want = inPolygonExact(g, lat, lon);
      tested++;
      if (want) inside++;
      if (inPolygon(g, lat, lon) !== want) mismatches++;
    }
  }
  assert.is(mismatches, 0, `${mismatches} of ${tested}`);
  assert.ok(inside > tested / 5 && inside < (tested * 4) / 5, `inside ${inside} of ${tested}`);
});

test("the index's latitude bands answer as every edge would: MultiPolygons with holes, points on band lines, vertices and horizontal edges", () => {
  const rnd = seededRandom(41);
  let mismatches = 0;
  let tested = 0;
  for (let t = 0; t < 8; t++) {
    const cx = -8 + rnd() * 2;
    const cy = 52.5 + rnd();
    const r = 0.05 + rnd() * 0.4;
    const k = 20 + Math.floor(rnd() * 120);
    const ring = starRing(rnd, cx, cy, r, k, 0.5, 0.5);
    // a second polygon of horizontal and vertical edges only, beside the first, with a hole
    const box = square(cx + 2 * r, cy - r / 2, r);
    const hole = square(cx + 2.25 * r, cy - r / 4, r / 2).reverse();
    const g: AreaGeometry = {
      type: 'MultiPolygon',
      coordinates: [
        [[...ring, [...ring[0]!]], square(cx - r / 8, cy - r / 8, r / 8)],
        [box, hole],
      ],
    };
    const ys = g.coordinates.flat(2).map((p) => p[1]!);
    const [s, n] = [Math.min(...ys), Math.max(...ys)];
    const xs = g.coordinates.flat(2).map((p) => p[0]!);
    const [w, e] = [Math.min(...xs), Math.max(...xs)];
    // latitudes: every vertex's, and the lines between the index's rows and between its bands
    const lats = new Set(ys);
    const rows = gridSize(ys.length);
    for (const lines of [rows, rows * BANDS_PER_ROW])
      for (let j = 0; j <= lines; j++) lats.add(s + j * ((n - s) / lines));
    const lons = [...new Set(xs)].filter((_, i) => i % 9 === 0);
    for (let i = 0; i <= 24; i++) lons.push(w + ((e - w) * i) / 24);
    for (const lat of lats) {
      for (const lon of lons) {
        tested++;
        if (inPolygon(g, lat, lon) !== inPolygonExact(g, lat, lon)) mismatches++;
      }
    }
  }
  assert.is(mismatches, 0, `${mismatches} of ${tested}`);
  assert.ok(tested > 50_000, `${tested} points`);
});

test('circleTest answers as inCircle (haversine) on 400,000 points within a hair of circles of 1 m … 50 km, in Ireland and far from it', () => {
  const rnd = seededRandom(7);
  const R = EARTH_RADIUS_M;
  const rad = Math.PI / 180;
  // the point at `d` metres from (lat, lon) on bearing `b` (the great-circle destination)
  const destination = (lat: number, lon: number, d: number, b: number): [number, number] => {
    const p1 = lat * rad;
    const a = d / R;
    const p2 = Math.asin(Math.sin(p1) * Math.cos(a) + Math.cos(p1) * Math.sin(a) * Math.cos(b));
    const l2 =
      lon * rad + Math.atan2(Math.sin(b) * Math.sin(a) * Math.cos(p1), Math.cos(a) - Math.sin(p1) * Math.sin(p2));
    return [p2 / rad, l2 / rad];
  };
  let mismatches = 0;
  let inside = 0;
  for (let t = 0; t < 2_000; t++) {
    const far = t % 10 === 0; // a few centres far from Ireland: high latitudes, the south
    const lat = far ? -70 + rnd() * 145 : 51.4 + rnd() * 4;
    const lon = far ? -170 + rnd() * 340 : -10.5 + rnd() * 5;
    const radius_m = Math.round(Math.exp(rnd() * Math.log(50_000)));
    const c = { lat, lon, radius_m };
    const test = latLonTest(circleTest(c));
    const m = circleMargin(c);
    for (let j = 0; j < 200; j++) {
      // around the edge: within 3 margins of it, a hair (1 mm) either side, and anywhere in the envelope
      const kind = j % 4;
      const d =
        kind === 0
          ? radius_m * (1 + (rnd() - 0.5) * 6 * m)
          : kind === 1
            ? radius_m + (rnd() - 0.5) * 0.004
            : radius_m * 1.5 * rnd();
      const [y, x] =
        kind === 3
          ? [
              lat + (rnd() - 0.5) * 2.2 * (radius_m / R / rad),
              lon + ((rnd() - 0.5) * 2.2 * (radius_m / R / rad)) / Math.cos(lat * rad),
            ]
          : destination(lat, lon, d, rnd() * 2 * Math.PI);
      const want = inCircle(c, y, x);
      if (test(y, x) !== want) mismatches++;
      if (want) inside++;
    }
  }
  assert.is(mismatches, 0);
  assert.ok(inside > 100_000 && inside < 300_000, `inside ${inside}`);
});

test('parsePolygonText remembers the last texts parsed (the same geometry object, so the same index), forgets the least recent, never a long text', () => {
  const text = (i: number): string =>
    JSON.stringify({ type: 'Polygon', coordinates: [square(-6.3 + i * 1e-4, 53.3, 0.05)] });
  const first = parsePolygonText(text(0));
  assert.equal(first, parsePolygon(text(0)));
  assert.ok(parsePolygonText(text(0)) === first, 'the same text: the same object');
  assert.ok(parsePolygonText(text(1)) !== first);
  for (let i = 2; i < POLYGON_CACHE.entries; i++) parsePolygonText(text(i));
  assert.ok(parsePolygonText(text(0)) === first, 'still known (and now the most recent)');
  parsePolygonText(text(POLYGON_CACHE.entries)); // one too many: text(1), the least recent, goes
  assert.ok(parsePolygonText(text(0)) === first);
  const one = parsePolygonText(text(1));
  assert.ok(parsePolygonText(text(1)) === one, 'parsed again, then remembered');
  const bad = parsePolygonText('{"type":');
  assert.ok(parsePolygonText('{"type":') === bad, 'a mistake is remembered too');
  const ring = Array.from({ length: 2_000 }, (_, i) => [
    -6.3 + 0.05 * Math.cos((2 * Math.PI * i) / 2_000),
    53.3 + 0.05 * Math.sin((2 * Math.PI * i) / 2_000),
  ]);
  const long = JSON.stringify({ type: 'Polygon', coordinates: [[...ring, ring[0]]] });
  assert.ok(long.length > POLYGON_CACHE.maxChars);
  assert.ok(parsePolygonText(long) !== parsePolygonText(long), 'a long text is parsed every time');
});

test('areaRegion decides a rectangle as areaTest decides its points: INSIDE only when all are in, OUTSIDE only when none (bbox, circles, polygons, together)', () => {
  const rnd = seededRandom(99);
  const counts = { [INSIDE]: 0, [OUTSIDE]: 0, [PARTLY]: 0 } as Record<number, number>;
  let wrong = 0;
  for (let t = 0; t < 300; t++) {
    const cx = -8 + rnd() * 2;
    const cy = 52.5 + rnd();
    const r = 0.02 + rnd() * 0.3;
    const k = 8 + Math.floor(rnd() * 60);
    const ring = starRing(rnd, cx, cy, r, k, 0.4, 0.6);
    const polygon: AreaGeometry = {
      type: 'Polygon',
      coordinates: [[...ring, [...ring[0]!]], square(cx - r / 10, cy - r / 10, r / 10)],
    };
    const near = { lat: cy + (rnd() - 0.5) * r, lon: cx + (rnd() - 0.5) * r, radius_m: 500 + rnd() * 30_000 };
    const bbox: [number, number, number, number] = [cx - r * rnd(), cy - r * rnd(), cx + r * rnd(), cy + r * rnd()];
    const areas = [{ polygon }, { near }, { bbox }, { polygon, near }, { bbox, near }][t % 5]!;
    const inAreas = areaRegion(areas);
    const rect = new Float64Array(4);
    const region = (x0: number, y0: number, x1: number, y1: number): number => {
      rect.set([x0, y0, x1, y1]);
      return inAreas(rect, 0);
    };
    const test = latLonTest(areaTest(areas));
    for (let q = 0; q < 60; q++) {
      // rectangles from tiny to larger than the area, some with infinite sides (the tree's first nodes)
      const size = r * 2 ** (-8 * rnd());
      const x0 = q % 15 === 0 ? -Infinity : cx + (rnd() - 0.6) * 2.4 * r;
      const y0 = q % 17 === 0 ? -Infinity : cy + (rnd() - 0.6) * 2 * r;
      const x1 = q % 13 === 0 ? Infinity : (Number.isFinite(x0) ? x0 : cx) + size * 1.6;
      const y1 = q % 11 === 0 ? Infinity : (Number.isFinite(y0) ? y0 : cy) + size;
      const got = region(x0, y0, x1, y1);
      counts[got]!++;
      if (got === PARTLY) continue;
      // the corners, the sides and a lattice of the (finite part of the) rectangle
      const fx0 = Number.isFinite(x0) ? x0 : cx - 3 * r;
      const fx1 = Number.isFinite(x1) ? x1 : cx + 3 * r;
      const fy0 = Number.isFinite(y0) ? y0 : cy - 3 * r;
      const fy1 = Number.isFinite(y1) ? y1 : cy + 3 * r;
      for (let i = 0; i <= 12; i++) {
        for (let j = 0; j <= 12; j++) {
          const x = i === 12 ? fx1 : fx0 + ((fx1 - fx0) * i) / 12;
          const y = j === 12 ? fy1 : fy0 + ((fy1 - fy0) * j) / 12;
          if (test(y, x) !== (got === INSIDE)) wrong++;
        }
      }
    }
  }
  assert.is(wrong, 0);
  assert.ok(counts[INSIDE]! > 500 && counts[OUTSIDE]! > 2_000 && counts[PARTLY]! > 2_000, JSON.stringify(counts));
});

test('areaRangeTest holds over a run of points exactly the points areaTest holds, in order (a polygon alone has its own loop; every other combination too)', () => {
  const rnd = seededRandom(5);
  let compared = 0;
  let held = 0;
  let wrong = 0;
  for (let t = 0; t < 120; t++) {
    const cx = -8 + rnd() * 2;
    const cy = 52.5 + rnd();
    const r = 0.02 + rnd() * 0.3;
    const ring = starRing(rnd, cx, cy, r, 8 + Math.floor(rnd() * 200), 0.3, 0.7);
    const other = starRing(rnd, cx + 3 * r, cy, r / 2, 12, 0.5, 0.5);
    const polygon: AreaGeometry =
      t % 4 === 3
        ? {
            type: 'MultiPolygon',
            coordinates: [
              [[...ring, [...ring[0]!]], square(cx - r / 10, cy - r / 10, r / 10)],
              [[...other, [...other[0]!]]],
            ],
          }
        : { type: 'Polygon', coordinates: [[...ring, [...ring[0]!]], square(cx - r / 10, cy - r / 10, r / 10)] };
    const near = { lat: cy, lon: cx, radius_m: 500 + rnd() * 30_000 };
    const bbox: [number, number, number, number] = [cx - r * rnd(), cy - r * rnd(), cx + r * rnd(), cy + r * rnd()];
    const areas = [{ polygon }, { polygon }, { near }, { bbox }, { polygon, near }, { polygon, bbox }][t % 6]!;
    // points around the area, some on its vertices (on an edge: inside), some without coordinates
    const n = 400;
    const xy = new Float64Array(2 * n);
    for (let i = 0; i < n; i++) {
      const v = ring[Math.floor(rnd() * ring.length)]!;
      const [x, y] =
        i % 50 === 7
          ? [NaN, NaN]
          : i % 9 === 0
            ? [v[0]!, v[1]!]
            : [cx + (rnd() - 0.5) * 4.5 * r, cy + (rnd() - 0.5) * 3 * r];
      xy[2 * i] = x;
      xy[2 * i + 1] = y;
    }
    const one = areaTest(areas);
    const run = areaRangeTest(areas);
    const hits = new Int32Array(n);
    for (let from = 0; from < n;) {
      const to = Math.min(n - 1, from + Math.floor(rnd() * 70)); // runs of 1 to 70 points, as a leaf's
      const want: number[] = [];
      for (let i = from; i <= to; i++) if (one(xy, i)) want.push(i);
      const got = Array.from(hits.subarray(0, run(xy, from, to, hits)));
      if (got.join() !== want.join()) wrong++;
      compared += to - from + 1;
      held += want.length;
      from = to + 1;
    }
  }
  assert.is(wrong, 0);
  assert.ok(compared === 120 * 400 && held > 5_000 && held < compared - 5_000, `${held} of ${compared}`);
});

test.run();
