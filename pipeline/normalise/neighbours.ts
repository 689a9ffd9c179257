/**
 * Nearest-neighbour leads: for each lead with coordinates, the k closest other leads within a
 * radius ("other projects near this one"), found with grid bucketing plus a latitude sweep
 * inside each cell, so dense city centres and empty bog both stay fast.
 */

export interface Neighbour {
  lead_id: number;
  neighbour_id: number;
  /** Great-circle (haversine) distance, rounded to the metre. */
  distance_m: number;
  /** 1 = nearest. */
  rank: number;
}

/** Mean Earth radius (IUGG), metres. */
const EARTH_RADIUS_M = 6_371_008.8;
const RAD = Math.PI / 180;

/** Haversine distance in metres between two WGS84 points. */
export function haversineMeters(lat1: number, lon1: number, lat2: number, lon2: number): number {
  const dLat = (lat2 - lat1) * RAD;
  const dLon = (lon2 - lon1) * RAD;
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(lat1 * RAD) * Math.cos(lat2 * RAD) * Math.sin(dLon / 2) ** 2;
  return 2 * EARTH_RADIUS_M * Math.asin(Math.min(1, Math.sqrt(h)));
}

/**
 * For every point with coordinates, up to `k` other points within `maxMeters`, nearest first.
 * Distances are haversine metres rounded to the metre; equal rounded distances are ordered by
 * neighbour id, so the result does not depend on input order. Points without coordinates (or
 * with non-finite ones) get no neighbours and are no one's neighbour. Output is ordered by
 * lead_id, then rank. Throws RangeError on a bad `k` or `maxMeters`, or a repeated id.
 *
 * How: points sharing exact coordinates are grouped into one location (geocoders put many
 * applications on the same spot); locations are bucketed in a grid of cells at least
 * `maxMeters` across, so every neighbour lies in the 3×3 block around a location; within a cell
 * locations are sorted by latitude and scanned outward from the query's latitude only while the
 * latitude gap alone could still beat the current k-th distance. That keeps a dense city centre
 * (thousands of points per cell) to a few dozen distance computations per point.
 *
 * @example nearestNeighbours(leads.map(({ id, lat, lon }) => ({ id, lat, lon })), 5, 5000)
 */
export function nearestNeighbours(
  points: { id: number; lat: number | null; lon: number | null }[],
  k = 5,
  maxMeters = 5000,
): Neighbour[] {
  const out: Neighbour[] = [];
  forEachNeighbour(points, (n) => void out.push(n), k, maxMeters);
  return out;
}

/**
 * Points kept as three growable columns (24 bytes a point, no object each): the refresh adds every
 * lead as it streams past and finds the neighbours once all are in.
 */
export class PointColumns {
  length = 0;
  private ids = new Float64Array(1024);
  private lats = new Float64Array(1024);
  private lons = new Float64Array(1024);

  /** Add a point; a null coordinate is kept as NaN (such a point has no neighbours). */
  push(id: number, lat: number | null, lon: number | null): void {
    if (this.length === this.ids.length) {
      const grow = (a: Float64Array<ArrayBuffer>): Float64Array<ArrayBuffer> => {
        const b = new Float64Array(a.length * 2);
        b.set(a);
        return b;
      };
      this.ids = grow(this.ids);
      this.lats = grow(this.lats);
      this.lons = grow(this.lons);
    }
    this.ids[this.length] = id;
    this.lats[this.length] = lat ?? NaN;
    this.lons[this.length] = lon ?? NaN;
    this.length++;
  }

  /** The points as objects (null for a missing coordinate). */
  *[Symbol.iterator](): Generator<{ id: number; lat: number | null; lon: number | null }> {
    for (let i = 0; i < this.length; i++) {
      const lat = this.lats[i]!;
      const lon = this.lons[i]!;
      yield { id: this.ids[i]!, lat: Number.isNaN(lat) ? null : lat, lon: Number.isNaN(lon) ? null : lon };
    }
  }

  /** Drop every point and the columns' memory. */
  clear(): void {
    this.length = 0;
    this.ids = new Float64Array(0);
    this.lats = new Float64Array(0);
    this.lons = new Float64Array(0);
  }
}

/**
 * `nearestNeighbours` handing each neighbour row to `emit` as it is found, in the same order,
 * instead of returning them all (the refresh writes ~5 per lead straight to their staging file).
 * Returns the rows emitted.
 */
export function forEachNeighbour(
  points: Iterable<{ id: number; lat: number | null; lon: number | null }>,
  emit: (n: Neighbour) => void,
  k = 5,
  maxMeters = 5000,
): number {
  checkArguments(k, maxMeters);
  const usable = usablePoints(points);
  if (usable.length === 0) return 0;
  const locations = groupLocations(usable);
  const grid = locationGrid(locations, maxMeters);
  const best = bestPerLocation(locations, grid, k, maxMeters);
  let n = 0;
  for (let p = 0; p < usable.length; p++) {
    const loc = locations.pointLoc[p]!;
    n += emitPointNeighbours(usable[p]!.id, loc, locations.ids[loc]!, best, emit);
  }
  return n;
}

type Point = { id: number; lat: number; lon: number };

/** Distinct coordinates: each location's point ids (ascending), its latitude and longitude. */
interface Locations {
  ids: number[][];
  lats: Float64Array;
  lons: Float64Array;
  /** The location of each usable point, by the point's index. */
  pointLoc: Int32Array;
}

/** Locations bucketed in cells at least the radius across, each cell sorted by latitude. */
interface Grid {
  /** Lower bounds of metres per degree (see `locationGrid`). */
  mPerDegLat: number;
  mPerDegLon: number;
  cellLon: number;
  /** Each location's cell column and row. */
  cx: Int32Array;
  cy: Int32Array;
  key: (x: number, y: number) => number;
  cells: Map<number, Cell>;
}

interface Cell {
  locs: Int32Array;
  lats: Float64Array;
}

/** Per location, its best k points at other locations sorted by (distance, id): `n[loc]` of them from `loc * k`. */
interface Best {
  k: number;
  d: Float64Array;
  id: Float64Array;
  n: Int32Array;
}

/** The k best found so far for one location, and the distance a candidate must not exceed. */
interface Search {
  base: number;
  found: number;
  limit: number;
}

function checkArguments(k: number, maxMeters: number): void {
  if (!Number.isInteger(k) || k < 1) throw new RangeError(`k must be a positive integer, got ${k}`);
  if (!(maxMeters > 0) || !Number.isFinite(maxMeters))
    throw new RangeError(`maxMeters must be a positive number, got ${maxMeters}`);
}

/** The points with valid coordinates, by id; throws on a repeated id. */
function usablePoints(points: Iterable<{ id: number; lat: number | null; lon: number | null }>): Point[] {
  const usable: Point[] = [];
  for (const p of points) if (isCoordinate(p.lat, 90) && isCoordinate(p.lon, 180)) usable.push(p as Point);
  usable.sort((a, b) => a.id - b.id);
  for (let i = 1; i < usable.length; i++) {
    if (usable[i]!.id === usable[i - 1]!.id) throw new RangeError(`point id ${usable[i]!.id} appears twice`);
  }
  return usable;
}

/** Group points sharing exact coordinates into locations (in order of first appearance). */
function groupLocations(usable: Point[]): Locations {
  const locationOf = new Map<string, number>();
  const ids: number[][] = [];
  const latList: number[] = [];
  const lonList: number[] = [];
  const pointLoc = new Int32Array(usable.length);
  usable.forEach((p, i) => {
    const key = `${p.lat},${p.lon}`;
    let loc = locationOf.get(key);
    if (loc === undefined) {
      loc = ids.length;
      locationOf.set(key, loc);
      ids.push([]);
      latList.push(p.lat);
      lonList.push(p.lon);
    }
    ids[loc]!.push(p.id);
    pointLoc[i] = loc;
  });
  return { ids, lats: Float64Array.from(latList), lons: Float64Array.from(lonList), pointLoc };
}

/**
 * Bucket the locations in a grid of cells at least `maxMeters` across, so every neighbour lies
 * in the 3×3 block around a location.
 *
 * Metres per degree, as lower bounds: a degree of latitude is R·RAD everywhere on the sphere;
 * a degree of longitude is at least R·RAD·cos(latitude furthest from the equator). The 0.99
 * absorbs the difference between great-circle and flat distance at this scale.
 */
function locationGrid({ lats, lons }: Locations, maxMeters: number): Grid {
  const maxAbsLat = lats.reduce((m, v) => Math.max(m, Math.abs(v)), 0);
  const mPerDegLat = EARTH_RADIUS_M * RAD;
  const mPerDegLon = Math.max(EARTH_RADIUS_M * RAD * Math.cos(Math.min(maxAbsLat, 89.9) * RAD) * 0.99, 1e-6);
  const reach = maxMeters + 1; // a rounded distance <= maxMeters needs a raw one < maxMeters + 0.5
  const cellLat = reach / mPerDegLat;
  const cellLon = Math.min(reach / mPerDegLon, 360);
  const nLoc = lats.length;
  const cx = new Int32Array(nLoc);
  const cy = new Int32Array(nLoc);
  let minX = Infinity;
  let minY = Infinity;
  let maxY = -Infinity;
  for (let i = 0; i < nLoc; i++) {
    cx[i] = Math.floor(lons[i]! / cellLon);
    cy[i] = Math.floor(lats[i]! / cellLat);
    minX = Math.min(minX, cx[i]!);
    minY = Math.min(minY, cy[i]!);
    maxY = Math.max(maxY, cy[i]!);
  }
  const height = maxY - minY + 3; // room for the y ± 1 neighbours
  const key = (x: number, y: number): number => (x - minX + 1) * height + (y - minY + 1);
  return { mPerDegLat, mPerDegLon, cellLon, cx, cy, key, cells: cellsByLatitude(lats, cx, cy, key) };
}

/** The grid's cells: their locations sorted by latitude, with those latitudes. */
function cellsByLatitude(
  lats: Float64Array,
  cx: Int32Array,
  cy: Int32Array,
  key: (x: number, y: number) => number,
): Map<number, Cell> {
  const members = new Map<number, number[]>();
  for (let i = 0; i < lats.length; i++) {
    const k = key(cx[i]!, cy[i]!);
    const list = members.get(k);
    if (list) list.push(i);
    else members.set(k, [i]);
  }
  const cells = new Map<number, Cell>();
  for (const [k, list] of members) {
    list.sort((a, b) => lats[a]! - lats[b]!);
    const cellLats = new Float64Array(list.length);
    for (let m = 0; m < list.length; m++) cellLats[m] = lats[list[m]!]!;
    cells.set(k, { locs: Int32Array.from(list), lats: cellLats });
  }
  return cells;
}

/** For every location, its best k points at other locations within `maxMeters`. */
function bestPerLocation(locations: Locations, grid: Grid, k: number, maxMeters: number): Best {
  const nLoc = locations.lats.length;
  const best: Best = { k, d: new Float64Array(nLoc * k), id: new Float64Array(nLoc * k), n: new Int32Array(nLoc) };
  for (let i = 0; i < nLoc; i++) {
    const search: Search = { base: i * k, found: 0, limit: maxMeters }; // limit: the k-th best once k are found
    for (const [dx, dy] of BLOCK) {
      const cell = grid.cells.get(grid.key(grid.cx[i]! + dx, grid.cy[i]! + dy));
      if (!cell || beyondSideCell(grid, i, dx, locations.lons[i]!, search.limit)) continue;
      scanCell(cell, i, locations, grid, best, search);
    }
    best.n[i] = search.found;
  }
  return best;
}

/** Whether the side cell `dx` columns away is further in longitude than anything still useful. */
function beyondSideCell(grid: Grid, i: number, dx: number, lon: number, limit: number): boolean {
  if (dx === 0) return false;
  const edge = (grid.cx[i]! + (dx > 0 ? dx : dx + 1)) * grid.cellLon;
  return Math.abs(edge - lon) * grid.mPerDegLon - 0.5 > limit;
}

/**
 * Scan one cell outward from location `i`'s latitude, nearest latitude first, while the latitude
 * gap alone (a lower bound of the distance) can still reach the k-th best; offer each location
 * within the limit to `i`'s best.
 */
function scanCell(cell: Cell, i: number, locations: Locations, grid: Grid, best: Best, search: Search): void {
  const { lats, lons } = locations;
  const lat = lats[i]!;
  const lon = lons[i]!;
  const { mPerDegLat, mPerDegLon } = grid;
  const cellLats = cell.lats;
  let limit = search.limit;
  let hi = lowerBound(cellLats, lat);
  let lo = hi - 1;
  while (lo >= 0 || hi < cellLats.length) {
    const gapHi = hi < cellLats.length ? cellLats[hi]! - lat : Infinity;
    const gapLo = lo >= 0 ? lat - cellLats[lo]! : Infinity;
    const up = gapHi <= gapLo;
    if ((up ? gapHi : gapLo) * mPerDegLat - 0.5 > limit) break;
    const j = cell.locs[up ? hi++ : lo--]!;
    if (j === i) continue;
    // Cheap flat lower bound first; the haversine only for candidates that may count.
    const bx = (lons[j]! - lon) * mPerDegLon;
    const by = (lats[j]! - lat) * mPerDegLat * 0.99;
    const reachSq = limit + 0.5;
    if (bx * bx + by * by > reachSq * reachSq) continue;
    const d = Math.round(haversineMeters(lat, lon, lats[j]!, lons[j]!));
    if (d > limit) continue;
    limit = offerLocation(locations.ids[j]!, d, best, search);
  }
}

/** Insert a location's points (ascending ids) at distance `d` while they beat the k-th best; returns the new limit. */
function offerLocation(ids: number[], d: number, best: Best, search: Search): number {
  const { k, d: bestD, id: bestId } = best;
  const base = search.base;
  const last = base + k - 1;
  for (const id of ids) {
    if (search.found === k && (d > bestD[last]! || (d === bestD[last]! && id > bestId[last]!))) break;
    let pos = search.found < k ? base + search.found++ : last;
    while (pos > base && (bestD[pos - 1]! > d || (bestD[pos - 1]! === d && bestId[pos - 1]! > id))) {
      bestD[pos] = bestD[pos - 1]!;
      bestId[pos] = bestId[pos - 1]!;
      pos--;
    }
    bestD[pos] = d;
    bestId[pos] = id;
    if (search.found === k) search.limit = bestD[last]!;
  }
  return search.limit;
}

/**
 * Emit point `id`'s neighbours: `same` (the ids at its location `loc`, itself skipped) merged with
 * `loc`'s best, by (distance, id), at most k, by rank. Returns how many.
 */
function emitPointNeighbours(
  id: number,
  loc: number,
  same: number[],
  best: Best,
  emit: (n: Neighbour) => void,
): number {
  const base = loc * best.k;
  let a = 0; // index into same
  let b = 0; // index into best
  let rank = 1;
  for (; rank <= best.k; rank++) {
    if (a < same.length && same[a] === id) a++;
    const haveA = a < same.length;
    const haveB = b < best.n[loc]!;
    if (!haveA && !haveB) break;
    const takeA = haveA && (!haveB || best.d[base + b]! > 0 || same[a]! < best.id[base + b]!);
    if (takeA) emit({ lead_id: id, neighbour_id: same[a++]!, distance_m: 0, rank });
    else {
      emit({ lead_id: id, neighbour_id: best.id[base + b]!, distance_m: best.d[base + b]!, rank });
      b++;
    }
  }
  return rank - 1;
}

/** The 3×3 block of cells around a location, its own cell first. */
const BLOCK: readonly (readonly [number, number])[] = [
  [0, 0],
  [0, -1],
  [0, 1],
  [-1, 0],
  [1, 0],
  [-1, -1],
  [-1, 1],
  [1, -1],
  [1, 1],
];

/** First index in the ascending `xs` whose value is >= `x`. */
function lowerBound(xs: Float64Array, x: number): number {
  let lo = 0;
  let hi = xs.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (xs[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function isCoordinate(v: number | null, limit: number): v is number {
  return typeof v === 'number' && Number.isFinite(v) && Math.abs(v) <= limit;
}
