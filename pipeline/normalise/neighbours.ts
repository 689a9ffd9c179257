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
  if (!Number.isInteger(k) || k < 1) throw new RangeError(`k must be a positive integer, got ${k}`);
  if (!(maxMeters > 0) || !Number.isFinite(maxMeters))
    throw new RangeError(`maxMeters must be a positive number, got ${maxMeters}`);

  const usable = points
    .filter((p): p is { id: number; lat: number; lon: number } => isCoordinate(p.lat, 90) && isCoordinate(p.lon, 180))
    .sort((a, b) => a.id - b.id);
  for (let i = 1; i < usable.length; i++) {
    if (usable[i]!.id === usable[i - 1]!.id) throw new RangeError(`point id ${usable[i]!.id} appears twice`);
  }
  if (usable.length === 0) return [];

  // Locations: distinct coordinates, each with its point ids in ascending order.
  const locationOf = new Map<string, number>();
  const locIds: number[][] = [];
  const latList: number[] = [];
  const lonList: number[] = [];
  const pointLoc = new Int32Array(usable.length);
  usable.forEach((p, i) => {
    const key = `${p.lat},${p.lon}`;
    let loc = locationOf.get(key);
    if (loc === undefined) {
      loc = locIds.length;
      locationOf.set(key, loc);
      locIds.push([]);
      latList.push(p.lat);
      lonList.push(p.lon);
    }
    locIds[loc]!.push(p.id);
    pointLoc[i] = loc;
  });
  const nLoc = locIds.length;
  const lats = Float64Array.from(latList);
  const lons = Float64Array.from(lonList);

  // Metres per degree, as lower bounds: a degree of latitude is R·RAD everywhere on the sphere;
  // a degree of longitude is at least R·RAD·cos(latitude furthest from the equator). The 0.99
  // absorbs the difference between great-circle and flat distance at this scale.
  const maxAbsLat = lats.reduce((m, v) => Math.max(m, Math.abs(v)), 0);
  const mPerDegLat = EARTH_RADIUS_M * RAD;
  const mPerDegLon = Math.max(EARTH_RADIUS_M * RAD * Math.cos(Math.min(maxAbsLat, 89.9) * RAD) * 0.99, 1e-6);
  const reach = maxMeters + 1; // a rounded distance <= maxMeters needs a raw one < maxMeters + 0.5
  const cellLat = reach / mPerDegLat;
  const cellLon = Math.min(reach / mPerDegLon, 360);

  // Grid cells of locations, each sorted by latitude.
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
  const cellKey = (x: number, y: number): number => (x - minX + 1) * height + (y - minY + 1);
  const members = new Map<number, number[]>();
  for (let i = 0; i < nLoc; i++) {
    const key = cellKey(cx[i]!, cy[i]!);
    const list = members.get(key);
    if (list) list.push(i);
    else members.set(key, [i]);
  }
  const cells = new Map<number, { locs: Int32Array; lats: Float64Array }>();
  for (const [key, list] of members) {
    list.sort((a, b) => lats[a]! - lats[b]!);
    const cellLats = new Float64Array(list.length);
    for (let m = 0; m < list.length; m++) cellLats[m] = lats[list[m]!]!;
    cells.set(key, { locs: Int32Array.from(list), lats: cellLats });
  }

  // Per location: its best k points at other locations, sorted by (distance, id).
  const bestD = new Float64Array(nLoc * k);
  const bestId = new Float64Array(nLoc * k);
  const bestN = new Int32Array(nLoc);
  for (let i = 0; i < nLoc; i++) {
    const base = i * k;
    const last = base + k - 1;
    let found = 0;
    let limit = maxMeters; // the k-th best distance once k are found
    const lat = lats[i]!;
    const lon = lons[i]!;
    for (const [dx, dy] of BLOCK) {
      const cell = cells.get(cellKey(cx[i]! + dx, cy[i]! + dy));
      if (!cell) continue;
      // Skip a side cell that is further away in longitude than anything still useful.
      if (dx !== 0) {
        const edge = (cx[i]! + (dx > 0 ? dx : dx + 1)) * cellLon;
        if (Math.abs(edge - lon) * mPerDegLon - 0.5 > limit) continue;
      }
      // Scan outward from the query latitude, nearest latitude first, while the latitude gap
      // alone (a lower bound of the distance) can still reach the k-th best.
      const cellLats = cell.lats;
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
        // Insert the location's points (ascending ids) while they beat the k-th best.
        for (const id of locIds[j]!) {
          if (found === k && (d > bestD[last]! || (d === bestD[last]! && id > bestId[last]!))) break;
          let pos = found < k ? base + found++ : last;
          while (pos > base && (bestD[pos - 1]! > d || (bestD[pos - 1]! === d && bestId[pos - 1]! > id))) {
            bestD[pos] = bestD[pos - 1]!;
            bestId[pos] = bestId[pos - 1]!;
            pos--;
          }
          bestD[pos] = d;
          bestId[pos] = id;
          if (found === k) limit = bestD[last]!;
        }
      }
    }
    bestN[i] = found;
  }

  // Each point: the other points at its own location (distance 0) merged with its location's
  // best, by (distance, id).
  const out: Neighbour[] = [];
  for (let p = 0; p < usable.length; p++) {
    const id = usable[p]!.id;
    const loc = pointLoc[p]!;
    const same = locIds[loc]!;
    const base = loc * k;
    let a = 0; // index into same
    let b = 0; // index into best
    for (let rank = 1; rank <= k; rank++) {
      if (a < same.length && same[a] === id) a++;
      const haveA = a < same.length;
      const haveB = b < bestN[loc]!;
      if (!haveA && !haveB) break;
      const takeA = haveA && (!haveB || bestD[base + b]! > 0 || same[a]! < bestId[base + b]!);
      if (takeA) out.push({ lead_id: id, neighbour_id: same[a++]!, distance_m: 0, rank });
      else {
        out.push({ lead_id: id, neighbour_id: bestId[base + b]!, distance_m: bestD[base + b]!, rank });
        b++;
      }
    }
  }
  return out;
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
