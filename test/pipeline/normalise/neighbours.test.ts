import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  forEachNeighbour,
  haversineMeters,
  nearestNeighbours,
  PointColumns,
  type Neighbour,
} from '../../../pipeline/normalise/neighbours.ts';

type P = { id: number; lat: number | null; lon: number | null };

// One degree of latitude on the mean-radius sphere is 111,195.08 m.
const LAT0 = 53.35;
const LON0 = -6.26;
const north = (id: number, metres: number): P => ({ id, lat: LAT0 + metres / 111_195.08, lon: LON0 });

test('haversineMeters: known distances', () => {
  const cases: [number, number, number, number, number][] = [
    [LAT0, LON0, LAT0, LON0, 0],
    [LAT0, LON0, LAT0 + 0.01, LON0, 1112],
    [0, 0, 0, 1, 111_195],
    [53.3498, -6.2603, 51.8985, -8.4756, 219_700], // Dublin → Cork, ~220 km
  ];
  for (const [a, b, c, d, expected] of cases) {
    const got = haversineMeters(a, b, c, d);
    assert.ok(Math.abs(got - expected) <= (expected > 100_000 ? 1_000 : 1), `${got} vs ${expected}`);
  }
});

test('nearest first, within the radius, at most k, rounded metres', () => {
  const points = [
    north(1, 0),
    north(2, 100.4),
    north(3, 1000),
    north(4, 4999),
    north(5, 5001.2),
    { id: 6, lat: null, lon: null },
  ];
  const got = nearestNeighbours(points, 3, 5000).filter((n) => n.lead_id === 1);
  assert.equal(got, [
    { lead_id: 1, neighbour_id: 2, distance_m: 100, rank: 1 },
    { lead_id: 1, neighbour_id: 3, distance_m: 1000, rank: 2 },
    { lead_id: 1, neighbour_id: 4, distance_m: 4999, rank: 3 },
  ]);
  const all = nearestNeighbours(points);
  assert.not.ok(
    all.some((n) => n.lead_id === 6 || n.neighbour_id === 6),
    'no coordinates: skipped',
  );
  assert.not.ok(
    all.some((n) => n.lead_id === 1 && n.neighbour_id === 5),
    'beyond maxMeters',
  );
  assert.not.ok(
    all.some((n) => n.lead_id === n.neighbour_id),
    'never its own neighbour',
  );
});

test('ties on the rounded distance go to the lower id, whatever the input order', () => {
  const east = (id: number, m: number): P => ({
    id,
    lat: LAT0,
    lon: LON0 + m / (111_195.08 * Math.cos((LAT0 * Math.PI) / 180)),
  });
  const west = (id: number, m: number): P => ({
    id,
    lat: LAT0,
    lon: LON0 - m / (111_195.08 * Math.cos((LAT0 * Math.PI) / 180)),
  });
  const points = [
    east(9, 500),
    west(4, 500),
    { id: 1, lat: LAT0, lon: LON0 },
    east(7, 500.2),
    { id: 3, lat: LAT0, lon: LON0 },
  ];
  const a = nearestNeighbours(points, 3, 5000);
  const b = nearestNeighbours([...points].reverse(), 3, 5000);
  assert.equal(a, b);
  assert.equal(
    a.filter((n) => n.lead_id === 1).map((n) => [n.neighbour_id, n.distance_m]),
    [
      [3, 0],
      [4, 500],
      [7, 500],
    ],
  );
});

test('output is ordered by lead_id then rank; empty input gives nothing', () => {
  const got = nearestNeighbours([north(5, 0), north(2, 10), north(9, 20)], 2, 100);
  assert.equal(
    got.map((n) => [n.lead_id, n.rank]),
    [
      [2, 1],
      [2, 2],
      [5, 1],
      [5, 2],
      [9, 1],
      [9, 2],
    ],
  );
  assert.equal(nearestNeighbours([]), []);
  assert.equal(nearestNeighbours([north(1, 0)]), []);
});

test('bad arguments throw', () => {
  assert.throws(() => nearestNeighbours([north(1, 0)], 0), /k must/);
  assert.throws(() => nearestNeighbours([north(1, 0)], 1.5), /k must/);
  assert.throws(() => nearestNeighbours([north(1, 0)], 5, 0), /maxMeters/);
  assert.throws(() => nearestNeighbours([north(1, 0)], 5, Number.NaN), /maxMeters/);
  assert.throws(() => nearestNeighbours([north(1, 0), north(1, 5)]), /appears twice/);
});

/** The obvious O(n²) answer, to check the grid against. */
function bruteForce(points: P[], k: number, maxMeters: number): Neighbour[] {
  const ok = points.filter((p) => p.lat !== null && p.lon !== null).sort((a, b) => a.id - b.id);
  const out: Neighbour[] = [];
  for (const p of ok) {
    const cands = ok
      .filter((q) => q.id !== p.id)
      .map((q) => ({ id: q.id, d: Math.round(haversineMeters(p.lat!, p.lon!, q.lat!, q.lon!)) }))
      .filter((c) => c.d <= maxMeters)
      .sort((x, y) => x.d - y.d || x.id - y.id)
      .slice(0, k);
    cands.forEach((c, i) => out.push({ lead_id: p.id, neighbour_id: c.id, distance_m: c.d, rank: i + 1 }));
  }
  return out;
}

test('matches brute force on clustered and sparse random points', () => {
  let seed = 7;
  const rnd = (): number => (seed = (seed * 16807) % 2147483647) / 2147483647;
  const points: P[] = [];
  for (let i = 0; i < 1200; i++) {
    const dense = i % 3 === 0;
    points.push({
      id: 1000 + ((i * 7919) % 1200),
      lat: dense ? 53.34 + rnd() * 0.01 : 51.5 + rnd() * 3.8,
      lon: dense ? -6.27 + rnd() * 0.015 : -10 + rnd() * 4,
    });
  }
  points.push({ id: 5000, lat: 53.345, lon: -6.265 }, { id: 5001, lat: 53.345, lon: -6.265 }); // same spot
  const cases: [number, number][] = [
    [5, 5000],
    [1, 300],
    [3, 40_000],
    [8, 1234],
    [4, 250_000],
  ];
  for (const [k, max] of cases)
    assert.equal(nearestNeighbours(points, k, max), bruteForce(points, k, max), `k=${k} max=${max}`);
});

test('PointColumns: the same neighbours as the objects, nulls kept, past its first 1,024 points', () => {
  const objects: { id: number; lat: number | null; lon: number | null }[] = [];
  const columns = new PointColumns();
  for (let i = 0; i < 2500; i++) {
    const p = { id: 5000 - i, lat: i % 97 === 0 ? null : 53 + (i % 50) * 0.001, lon: -6 - (i % 37) * 0.001 };
    objects.push(p);
    columns.push(p.id, p.lat, p.lon);
  }
  assert.is(columns.length, 2500);
  assert.equal([...columns], objects);
  const fromColumns: Neighbour[] = [];
  forEachNeighbour(columns, (n) => void fromColumns.push(n));
  assert.equal(fromColumns, nearestNeighbours(objects));
  columns.clear();
  assert.is(columns.length, 0);
});

test.run();
