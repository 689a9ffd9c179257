/**
 * The tests of a lead's point against the areas of a query (the geometry of nearby and area
 * search is three files, api/gis/geometry.ts says which): the circle (`haversineM`, `inCircle`,
 * `circleTest`), the bbox (`inBBox`), the polygon through its index (api/gis/polygon-index.ts),
 * all of a query's areas at once over a point (`areaTest`), a run of points (`areaRangeTest`) or a
 * rectangle (`areaRegion`), and the boxes that hold every point an area can hold (`envelopes`).
 */
import {
  EARTH_RADIUS_M,
  EDGE_TOLERANCE_M,
  type AreaFilters,
  type AreaGeometry,
  type BBox,
  type NearArea,
  type PointTest,
  type RangeTest,
} from './geometry.ts';
import {
  E,
  indexHolds,
  inPolygonExact,
  INSIDE,
  N,
  OUTSIDE,
  PARTLY,
  polygonIndexOf,
  polygonRegion,
  S,
  W,
  type Region,
} from './polygon-index.ts';

/** A `PointTest` asked one (lat, lon) at a time (the SQL paths' rows, tests): through a two-slot array of its own. */
export function latLonTest(test: PointTest): (lat: number, lon: number) => boolean {
  const xy = new Float64Array(2);
  return (lat, lon) => {
    xy[0] = lon;
    xy[1] = lat;
    return test(xy, 0);
  };
}

const RAD = Math.PI / 180;

/** Great-circle distance in metres (haversine, `EARTH_RADIUS_M`). */
export function haversineM(lat1: number, lon1: number, lat2: number, lon2: number): number {
  const dLat = (lat2 - lat1) * RAD;
  const dLon = (lon2 - lon1) * RAD;
  const s1 = Math.sin(dLat / 2);
  const s2 = Math.sin(dLon / 2);
  const a = s1 * s1 + Math.cos(lat1 * RAD) * Math.cos(lat2 * RAD) * s2 * s2;
  return 2 * EARTH_RADIUS_M * Math.asin(Math.min(1, Math.sqrt(a)));
}

/** `distance_m` as served and as `sort=distance` orders: the haversine distance rounded to 0.1 m. */
export function servedDistance(d: number): number {
  return Math.round(d * 10) / 10;
}

/** Whether a point is within `near`'s radius (edge inclusive, `EDGE_TOLERANCE_M`). */
export function inCircle(c: NearArea, lat: number, lon: number): boolean {
  return haversineM(c.lat, c.lon, lat, lon) <= c.radius_m + EDGE_TOLERANCE_M;
}

/**
 * `inCircle` for one circle and many points (the candidates of one request): a flat distance on
 * the circle's own scale — longitude scaled by the cosine of the centre's latitude — decides the
 * points clearly inside or outside, and haversine (`inCircle`) the rest, so the answer is
 * `inCircle`'s. The flat distance is within a relative `circleMargin` of the great circle for
 * every point whose latitude is within the radius of the centre's (any other point is outside by
 * both); the points between (1 − margin) and (1 + margin) times the radius get haversine.
 * Circles near a pole or across the antimeridian get haversine alone.
 */
export function circleTest(c: NearArea): PointTest {
  const flat = flatCircle(c);
  if (!flat) return (xy, i) => inCircle(c, xy[2 * i + 1]!, xy[2 * i]!);
  const { k, inner, outer } = flat;
  const { lat: lat0, lon: lon0 } = c; // the centre captured as locals (docs/performance.md "Geometry")
  return (xy, i) => {
    const lat = xy[2 * i + 1]!;
    const lon = xy[2 * i]!;
    const dy = lat - lat0;
    const dx = (lon - lon0) * k;
    const d2 = dx * dx + dy * dy;
    if (d2 <= inner) return true;
    if (d2 >= outer) return false;
    return inCircle(c, lat, lon);
  };
}

/** `circleTest`'s flat scale and its squared bounds (degrees²), or null where it uses haversine alone. */
function flatCircle(c: NearArea): { k: number; inner: number; outer: number } | null {
  const margin = circleMargin(c);
  const span = (c.radius_m + EDGE_TOLERANCE_M) / (EARTH_RADIUS_M * RAD); // the radius in degrees of latitude
  if (margin > 0.05 || Math.abs(c.lat) > 80 || Math.abs(c.lon) + (2 * span) / Math.cos(c.lat * RAD) >= 180) return null;
  return { k: Math.cos(c.lat * RAD), inner: (span * (1 - margin)) ** 2, outer: (span * (1 + margin)) ** 2 };
}

/**
 * The relative error bound of `circleTest`'s flat distance against the great circle, for points
 * within the radius in latitude: the cosine of their latitude differs from the centre's by at
 * most about tan|φ|·Δφ, and the flat and spherical triangles by a term of order (r/R)²; twice
 * (r/R)·(tan|φ| + 1) holds both with room to spare (test/api/gis/geometry.test.ts checks it on
 * points within a hair of circles up to 50 km: an eighth of it still passes there, a twentieth fails).
 */
export function circleMargin(c: NearArea): number {
  const q = (c.radius_m + EDGE_TOLERANCE_M) / EARTH_RADIUS_M;
  return 2 * q * (Math.tan(Math.abs(c.lat) * RAD) + 1) + 1e-9;
}

/** Whether a point is in a bbox (edges inclusive; minLon > maxLon crosses the antimeridian). */
export function inBBox([w, s, e, n]: BBox, lat: number, lon: number): boolean {
  if (lat < s || lat > n) return false;
  return w <= e ? lon >= w && lon <= e : lon >= w || lon <= e;
}

/** The boxes (no antimeridian crossing: minLon ≤ maxLon) that together hold every point an area can hold. */
export function envelopes(area: { near?: NearArea; bbox?: BBox; polygon?: AreaGeometry }): BBox[] | null {
  let out: BBox[] | null = null;
  const meet = (boxes: BBox[]): void => {
    if (!out) {
      out = boxes;
      return;
    }
    const next: BBox[] = [];
    for (const a of out) {
      for (const b of boxes) {
        const box: BBox = [Math.max(a[0], b[0]), Math.max(a[1], b[1]), Math.min(a[2], b[2]), Math.min(a[3], b[3])];
        if (box[0] <= box[2] && box[1] <= box[3]) next.push(box);
      }
    }
    out = next;
  };
  if (area.near) meet(circleEnvelopes(area.near));
  if (area.bbox) {
    const [w, s, e, n] = area.bbox;
    meet(
      w <= e
        ? [[w, s, e, n]]
        : [
            [w, s, 180, n],
            [-180, s, e, n],
          ],
    );
  }
  if (area.polygon) {
    // the envelope its index holds (every ring's), else its outer rings'
    const ix = polygonIndexOf(area.polygon);
    if (ix) meet([[ix.grid[W]!, ix.grid[S]!, ix.grid[E]!, ix.grid[N]!]]);
    else {
      const b: BBox = [Infinity, Infinity, -Infinity, -Infinity];
      const polys = area.polygon.type === 'Polygon' ? [area.polygon.coordinates] : area.polygon.coordinates;
      for (const p of polys)
        for (const [x, y] of p[0]!)
          ((b[0] = Math.min(b[0], x!)),
            (b[1] = Math.min(b[1], y!)),
            (b[2] = Math.max(b[2], x!)),
            (b[3] = Math.max(b[3], y!)));
      meet([b]);
    }
  }
  return out;
}

/** Boxes holding a circle: its latitude span, and the longitude span at its widest latitude (slightly widened). */
function circleEnvelopes(c: NearArea): BBox[] {
  const dLat = ((c.radius_m + EDGE_TOLERANCE_M) / EARTH_RADIUS_M / RAD) * 1.001 + 1e-9;
  const s = Math.max(-90, c.lat - dLat);
  const n = Math.min(90, c.lat + dLat);
  const widest = Math.max(Math.abs(s), Math.abs(n));
  if (widest >= 89) return [[-180, s, 180, n]];
  const dLon = dLat / Math.cos(widest * RAD);
  const w = c.lon - dLon;
  const e = c.lon + dLon;
  if (dLon >= 180) return [[-180, s, 180, n]];
  if (w < -180)
    return [
      [w + 360, s, 180, n],
      [-180, s, e, n],
    ];
  if (e > 180)
    return [
      [w, s, 180, n],
      [-180, s, e - 360, n],
    ];
  return [[w, s, e, n]];
}

/**
 * Whether a lead's point is in every given area (a point without finite coordinates never is),
 * for one query's areas and many points (the candidates of one request, `PointTest`): the
 * polygon's index found once, not per point.
 */
export function areaTest(f: AreaFilters): PointTest {
  const { bbox, near, polygon } = f;
  const circle = near ? circleTest(near) : null;
  const ix = polygon ? polygonIndexOf(polygon) : null;
  // a polygon alone (a drawn territory's search): its index's test, NaN answered by the envelope
  if (ix && !bbox && !near) return (xy, i) => indexHolds(ix, xy, i);
  return (xy, i) => {
    const lat = xy[2 * i + 1]!;
    const lon = xy[2 * i]!;
    if (!Number.isFinite(lat) || !Number.isFinite(lon)) return false;
    if (bbox && !inBBox(bbox, lat, lon)) return false;
    if (circle && !circle(xy, i)) return false;
    if (polygon && !(ix === null ? inPolygonExact(polygon, lat, lon) : indexHolds(ix, xy, i))) return false;
    return true;
  };
}

/**
 * `areaTest` over a run of points (`RangeTest`), deciding each point exactly as `areaTest` does.
 * A polygon alone — a drawn territory's search — asks its index's test (`indexHolds`) in the loop
 * itself; every other combination asks `areaTest` point by point.
 */
export function areaRangeTest(f: AreaFilters): RangeTest {
  const ix = f.polygon && !f.bbox && !f.near ? polygonIndexOf(f.polygon) : null;
  if (!ix) {
    const test = areaTest(f);
    return (xy, from, to, hits) => {
      let h = 0;
      for (let i = from; i <= to; i++) if (test(xy, i)) hits[h++] = i;
      return h;
    };
  }
  // the index's own test called directly, not through `areaTest`'s closure
  return (xy, from, to, hits) => {
    let h = 0;
    for (let i = from; i <= to; i++) if (indexHolds(ix, xy, i)) hits[h++] = i;
    return h;
  };
}

/**
 * For a search that walks a tree of rectangles (api/engine/geo-index.ts): how a rectangle
 * [x0, x1] × [y0, y1] (longitude, latitude; infinite bounds allowed), given as `r[at …]` = x0,
 * y0, x1, y1 (the walk's own stack, as `PointTest` takes a position), lies against every area of
 * `f`, decided exactly as `areaTest` decides its points — `INSIDE` only when `areaTest` holds for
 * every point of the rectangle, `OUTSIDE` only when it holds for none, else `PARTLY` (always a safe
 * answer): a bbox by its edges, a circle by the flat distance of `circleTest` at the rectangle's
 * farthest and nearest corners (that distance grows with |Δlon| and |Δlat|, also in floating
 * point), a polygon by its cells (`polygonRegion`). Combined: `OUTSIDE` if any area says so,
 * `INSIDE` if all do.
 */
export function areaRegion(f: AreaFilters): (r: Float64Array, at: number) => Region {
  const { bbox, near, polygon } = f;
  const flat = near ? flatCircle(near) : null;
  const ix = polygon ? polygonIndexOf(polygon) : null;
  // the circle's numbers captured as locals, not read from the objects per node
  const [k, inner, outer] = flat ? [flat.k, flat.inner, flat.outer] : [1, 0, 0];
  const [lat0, lon0] = near ? [near.lat, near.lon] : [0, 0];
  return (rect, at) => {
    const x0 = rect[at]!;
    const y0 = rect[at + 1]!;
    const x1 = rect[at + 2]!;
    const y1 = rect[at + 3]!;
    let all = true;
    if (bbox) {
      const [w, s, e, n] = bbox;
      if (y1 < s || y0 > n) return OUTSIDE;
      if (w <= e ? x1 < w || x0 > e : x0 > e && x1 < w) return OUTSIDE;
      if (!(y0 >= s && y1 <= n && (w <= e ? x0 >= w && x1 <= e : x0 >= w || x1 <= e))) all = false;
    }
    if (near) {
      if (!flat) all = false;
      else {
        const ax = (x0 - lon0) * k;
        const bx = (x1 - lon0) * k;
        const ay = y0 - lat0;
        const by = y1 - lat0;
        const nx = ax <= 0 && bx >= 0 ? 0 : Math.min(ax * ax, bx * bx);
        const ny = ay <= 0 && by >= 0 ? 0 : Math.min(ay * ay, by * by);
        if (nx + ny >= outer) return OUTSIDE;
        if (!(Math.max(ax * ax, bx * bx) + Math.max(ay * ay, by * by) <= inner)) all = false;
      }
    }
    if (polygon) {
      const r = ix === null ? PARTLY : polygonRegion(ix, rect, at);
      if (r === OUTSIDE) return OUTSIDE;
      if (r === PARTLY) all = false;
    }
    return all ? INSIDE : PARTLY;
  };
}
