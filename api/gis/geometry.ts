/**
 * The one geometry module of nearby and area search (docs/api.md "Nearby and area search"):
 * parsing and validating `near`, `bbox` and `polygon`, and the exact test of a lead's point
 * against each. The lead index (api/engine/geo-index.ts) asks it which of the k-d tree's
 * candidates are in; the SQL paths (exports, webhooks, feeds, OGC) ask it the same of the rows
 * inside the area's envelope (api/gis/geometry-ids.ts). No other code decides whether a point
 * is in an area.
 *
 * The rules, each written once here:
 *  - `near` + `radius_m`: in when the great-circle (haversine, R = 6,371,008.8 m) distance is at
 *    most `radius_m` (edge inclusive, to `EDGE_TOLERANCE_M`: double-precision trigonometry is
 *    not exact to the last bit, so a lead within a millimetre outside the circle counts as on it);
 *  - `bbox`: minLon ≤ lon ≤ maxLon and minLat ≤ lat ≤ maxLat (edges inclusive); `parseBBox` refuses
 *    minLon > maxLon (the API serves Ireland: no box of its crosses the antimeridian, so such a box
 *    is a mistake — swapped corners —, not a box around the world's far side);
 *  - `polygon`: even–odd rule over every ring of a polygon (holes honoured), a point on any ring
 *    (outer or hole: an edge or a vertex) is inside; a MultiPolygon holds the point when any of
 *    its polygons does. The module's own crossing-number test (`inPolygon`), exact: the one
 *    arithmetic it needs, the side of an edge a point lies on (`orientation`), is decided exactly
 *    from the doubles given (a floating-point filter, then integer arithmetic when the filter
 *    cannot tell) — so "on the edge" means exactly on it. The tests compare it with turf's
 *    `booleanPointInPolygon` (the same rule), which no code here uses.
 * Leads without coordinates are never in an area.
 */
import { rememberTexts } from '../../common/lru.ts';
import type { ParamError } from '../http/errors.ts';

/** A GeoJSON bounding box: min longitude, min latitude, max longitude, max latitude. */
export type BBox = [number, number, number, number];

/**
 * A test of point `i` of a coordinate array — longitude at `xy[2i]`, latitude at `xy[2i + 1]`, the
 * layout of the k-d tree's own coordinates (api/engine/geo-index.ts). The per-point tests take a
 * position in an array, never the coordinates themselves: a double passed to a function V8 does
 * not inline is boxed, a heap allocation per call, and a county's search tests ~10,000 points
 * (~300 KB of garbage a request, and the young-generation collections it costs). `latLonTest`
 * gives the same test one (lat, lon) at a time.
 */
export type PointTest = (xy: Float64Array, i: number) => boolean;

/** A `PointTest` asked one (lat, lon) at a time (the SQL paths' rows, tests): through a two-slot array of its own. */
export function latLonTest(test: PointTest): (lat: number, lon: number) => boolean {
  const xy = new Float64Array(2);
  return (lat, lon) => {
    xy[0] = lon;
    xy[1] = lat;
    return test(xy, 0);
  };
}
/**
 * A `PointTest` over a run of points: which of points `from`…`to` (inclusive) of `xy` hold, their
 * indexes written in order to `hits` (room for to − from + 1), how many returned. The k-d tree's
 * walk asks one per leaf (api/engine/geo-index.ts): the loop over the leaf's points runs inside the
 * test, where a polygon's cell lookup is a few operations on locals, not a call per point
 * (`areaRangeTest`).
 */
export type RangeTest = (xy: Float64Array, from: number, to: number, hits: Int32Array) => number;

/** A `near` filter: the centre (WGS 84 degrees) and the radius in metres. */
export interface NearArea {
  lat: number;
  lon: number;
  radius_m: number;
}
/** A `polygon` filter: a GeoJSON Polygon or MultiPolygon (positions [longitude, latitude]). */
export type AreaGeometry =
  { type: 'Polygon'; coordinates: number[][][] } | { type: 'MultiPolygon'; coordinates: number[][][][] };

/** Mean Earth radius of the haversine distance (IUGG R1), metres. */
export const EARTH_RADIUS_M = 6_371_008.8;
/** `radius_m`: bounds and the default when `near` is given without it. */
export const RADIUS_M = { min: 1, max: 50_000, default: 1_000 } as const;
/** A lead this close outside the circle counts as on it (metres). */
export const EDGE_TOLERANCE_M = 0.001;
/** Positions of a `polygon`, all rings together, at most. */
export const POLYGON_VERTICES_MAX = 10_000;
/** Ireland's extent (the island with its coastal waters), WGS 84: a polygon must overlap it. */
const IRELAND_BBOX: BBox = [-11.5, 51.2, -5.0, 55.7];
/** The bands of the wrong-order rule: a position [a, b] with a in LAT_BAND and b in LON_BAND is [latitude, longitude]. */
const IRELAND_LAT_BAND = [51, 56] as const;
const IRELAND_LON_BAND = [-11, -5] as const;

/** The wording of each geometry mistake (the `reason` of the 400's `errors[]`). */
export const GEOMETRY_REASONS = {
  near: 'must be latitude,longitude in decimal degrees (WGS 84), e.g. 53.3498,-6.2603',
  nearRange: 'latitude must be between -90 and 90 and longitude between -180 and 180',
  nearOrder: 'looks like longitude,latitude: give the latitude first (e.g. 53.3498,-6.2603)',
  radiusWithoutNear: 'only with near',
  distanceWithoutNear: 'distance needs near',
  notJson: 'must be a GeoJSON geometry as JSON (URL-encoded in a query string)',
  notPolygon: 'must be a GeoJSON Polygon or MultiPolygon',
  badCoordinates: 'coordinates must be arrays of rings of [longitude, latitude] positions (numbers)',
  tooManyVertices: (n: number): string => `has ${n} positions; at most ${POLYGON_VERTICES_MAX} in all rings together`,
  ringTooShort: (where: string): string =>
    `${where} has fewer than 4 positions (a closed ring repeats its first position last)`,
  ringNotClosed: (where: string): string => `${where} is not closed: its last position must equal its first`,
  outOfRange: (where: string): string =>
    `${where} is outside -180…180 longitude / -90…90 latitude; GeoJSON positions are [longitude, latitude]`,
  bboxLonOrder: 'minLon must not exceed maxLon: the API serves Ireland, no box crosses the antimeridian',
  wrongOrder: (where: string): string =>
    `${where} looks like [latitude, longitude]; GeoJSON positions are [longitude, latitude]`,
  outsideIreland:
    'lies entirely outside Ireland (longitude -11.5…-5.0, latitude 51.2…55.7); GeoJSON positions are [longitude, latitude]',
  selfIntersecting: (lon: number, lat: number): string =>
    `is self-intersecting (edges cross or touch near ${lon.toFixed(6)},${lat.toFixed(6)})`,
} as const;

const NUMBER = /^\s*-?\d{1,3}(\.\d{1,15})?\s*$/;
const inBand = (x: number, [lo, hi]: readonly [number, number]): boolean => x >= lo && x <= hi;

/**
 * Parse `near` ("lat,lon"). The radius is separate (`radius_m`, `RADIUS_M`).
 *
 * @example parseNear('53.3498,-6.2603') // { lat: 53.3498, lon: -6.2603 }
 */
export function parseNear(text: string): { lat: number; lon: number } | ParamError {
  const err = (reason: string): ParamError => ({ name: 'near', reason });
  const parts = text.split(',');
  if (parts.length !== 2 || !parts.every((p) => NUMBER.test(p))) return err(GEOMETRY_REASONS.near);
  const [lat, lon] = parts.map(Number) as [number, number];
  if (inBand(lat, IRELAND_LON_BAND) && inBand(lon, IRELAND_LAT_BAND)) return err(GEOMETRY_REASONS.nearOrder);
  if (lat < -90 || lat > 90 || lon < -180 || lon > 180) return err(GEOMETRY_REASONS.nearRange);
  return { lat, lon };
}

/**
 * Parse `bbox`: 4 numbers (or 6 for OGC, heights ignored) in WGS 84 degrees, min ≤ max on both
 * axes (no antimeridian crossing: the data is Ireland's). Used by `/v1/leads` (and the exports,
 * events and saved filters) and the GIS feeds and OGC items alike.
 */
export function parseBBox(text: string, allow3d = false): BBox | ParamError {
  const parts = text.split(',').map((s) => s.trim());
  const nums = parts.map((p) => (/^-?\d+(\.\d+)?([eE][-+]?\d+)?$/.test(p) ? Number(p) : NaN));
  const err = (reason: string): ParamError => ({ name: 'bbox', reason });
  if (!(nums.length === 4 || (allow3d && nums.length === 6)) || nums.some((n) => !Number.isFinite(n))) {
    return err(
      `must be four comma-separated numbers: min longitude, min latitude, max longitude, max latitude${allow3d ? ' (or six with heights)' : ''}`,
    );
  }
  const [w, s, e, n] =
    nums.length === 6 ? [nums[0]!, nums[1]!, nums[3]!, nums[4]!] : (nums as [number, number, number, number]);
  if (w < -180 || w > 180 || e < -180 || e > 180) return err('longitudes must be between -180 and 180');
  if (s < -90 || s > 90 || n < -90 || n > 90) return err('latitudes must be between -90 and 90');
  if (w > e) return err(GEOMETRY_REASONS.bboxLonOrder);
  if (s > n) return err('min latitude must not be greater than max latitude');
  return [w, s, e, n];
}

/**
 * Parse and validate `polygon`: the GeoJSON text (or, from a JSON body, the object). The checks,
 * in order, each a 400 naming `polygon`: JSON, type, shape of the coordinates, at most
 * `POLYGON_VERTICES_MAX` positions, rings of ≥ 4 positions and closed, positions within
 * -180…180 / -90…90 and not [latitude, longitude] (`IRELAND_LAT_BAND` then `IRELAND_LON_BAND`),
 * overlapping `IRELAND_BBOX`, no edges crossing or touching (`selfIntersection`). Returns the
 * geometry as `{ type, coordinates }` with 2-number positions (heights dropped).
 */
export function parsePolygon(input: string | unknown): AreaGeometry | ParamError {
  const err = (reason: string): ParamError => ({ name: 'polygon', reason });
  let g: unknown = input;
  if (typeof input === 'string') {
    try {
      g = JSON.parse(input);
    } catch {
      return err(GEOMETRY_REASONS.notJson);
    }
  }
  if (!g || typeof g !== 'object' || Array.isArray(g)) return err(GEOMETRY_REASONS.notPolygon);
  const { type, coordinates } = g as { type?: unknown; coordinates?: unknown };
  if (type !== 'Polygon' && type !== 'MultiPolygon') return err(GEOMETRY_REASONS.notPolygon);
  const polys = type === 'Polygon' ? [coordinates] : coordinates;
  if (!Array.isArray(polys) || polys.length === 0) return err(GEOMETRY_REASONS.badCoordinates);
  let vertices = 0;
  for (const poly of polys) {
    if (!Array.isArray(poly) || poly.length === 0) return err(GEOMETRY_REASONS.badCoordinates);
    for (const ring of poly) {
      if (!Array.isArray(ring)) return err(GEOMETRY_REASONS.badCoordinates);
      for (const p of ring) {
        if (
          !Array.isArray(p) ||
          p.length < 2 ||
          p.length > 3 ||
          !p.every((x) => typeof x === 'number' && Number.isFinite(x))
        )
          return err(GEOMETRY_REASONS.badCoordinates);
      }
      vertices += ring.length;
    }
  }
  if (vertices > POLYGON_VERTICES_MAX) return err(GEOMETRY_REASONS.tooManyVertices(vertices));
  const clean = (polys as number[][][][]).map((poly) => poly.map((ring) => ring.map((p) => [p[0]!, p[1]!])));
  let box: BBox = [Infinity, Infinity, -Infinity, -Infinity];
  for (let i = 0; i < clean.length; i++) {
    for (let r = 0; r < clean[i]!.length; r++) {
      const ring = clean[i]![r]!;
      const where = `${type === 'MultiPolygon' ? `polygon ${i + 1}, ` : ''}${r === 0 ? 'the outer ring' : `hole ${r}`}`;
      if (ring.length < 4) return err(GEOMETRY_REASONS.ringTooShort(where));
      const [a, z] = [ring[0]!, ring[ring.length - 1]!];
      if (a[0] !== z[0] || a[1] !== z[1]) return err(GEOMETRY_REASONS.ringNotClosed(where));
      for (let k = 0; k < ring.length; k++) {
        const [x, y] = ring[k] as [number, number];
        const at = `position ${k + 1} of ${where}`;
        if (inBand(x, IRELAND_LAT_BAND) && inBand(y, IRELAND_LON_BAND)) return err(GEOMETRY_REASONS.wrongOrder(at));
        if (x < -180 || x > 180 || y < -90 || y > 90) return err(GEOMETRY_REASONS.outOfRange(at));
        box = [Math.min(box[0], x), Math.min(box[1], y), Math.max(box[2], x), Math.max(box[3], y)];
      }
    }
  }
  const [w, s, e, n] = IRELAND_BBOX;
  if (box[2] < w || box[0] > e || box[3] < s || box[1] > n) return err(GEOMETRY_REASONS.outsideIreland);
  const kink = selfIntersection(clean.flat());
  if (kink) return err(GEOMETRY_REASONS.selfIntersecting(kink[0], kink[1]));
  return type === 'Polygon' ? { type, coordinates: clean[0]! } : { type, coordinates: clean };
}

/** Polygon texts up to this many characters are remembered parsed (`parsePolygonText`), at most `POLYGON_CACHE.entries` of them. */
export const POLYGON_CACHE = { entries: 64, maxChars: 32_768 } as const;

/**
 * `parsePolygon` of a query's text, remembered: a drawn territory comes back with every page of
 * its results and every poll of a CRM, so its parse, checks (the self-intersection sweep) and —
 * the same object, so the same `WeakMap` entry — its index are done once. The least recently
 * used of `POLYGON_CACHE.entries` texts is forgotten; longer texts are parsed every time. The
 * geometry returned is shared between requests, so it is frozen (its canonical text for the
 * cursor's filters hash is then remembered too, api/query/paging.ts).
 */
export const parsePolygonText: (text: string) => AreaGeometry | ParamError = rememberTexts(POLYGON_CACHE, (text) =>
  deepFreeze(parsePolygon(text)),
);

/** `v` and everything in it frozen. */
function deepFreeze<T>(v: T): T {
  if (v !== null && typeof v === 'object' && !Object.isFrozen(v)) {
    for (const x of Object.values(v)) deepFreeze(x);
    Object.freeze(v);
  }
  return v;
}

/**
 * The first crossing or touching of two edges among `rings` (every ring of the geometry, holes
 * and the polygons of a MultiPolygon together), or null — what turf's `kinks` reports (it skips
 * an edge's neighbours in its own ring, the closing pair of a closed ring included), found by a
 * sweep over the edges' longitude spans instead of every pair: ~n log n for a drawn territory.
 */
export function selfIntersection(rings: readonly (readonly number[][])[]): [number, number] | null {
  interface Edge {
    ring: number;
    i: number;
    n: number;
    x1: number;
    y1: number;
    x2: number;
    y2: number;
    lo: number;
    hi: number;
  }
  const edges: Edge[] = [];
  rings.forEach((ring, r) => {
    for (let i = 0; i < ring.length - 1; i++) {
      const [x1, y1] = ring[i] as [number, number];
      const [x2, y2] = ring[i + 1] as [number, number];
      edges.push({ ring: r, i, n: ring.length - 1, x1, y1, x2, y2, lo: Math.min(x1, x2), hi: Math.max(x1, x2) });
    }
  });
  edges.sort((a, b) => a.lo - b.lo);
  const active: Edge[] = [];
  for (const e of edges) {
    for (let k = active.length - 1; k >= 0; k--) if (active[k]!.hi < e.lo) active.splice(k, 1);
    for (const f of active) {
      if (f.ring === e.ring) {
        const d = Math.abs(f.i - e.i);
        if (d === 1 || d === e.n - 1) continue; // neighbours (the ring's last edge and its first too)
      }
      if (Math.max(f.y1, f.y2) < Math.min(e.y1, e.y2) || Math.max(e.y1, e.y2) < Math.min(f.y1, f.y2)) continue;
      const hit = segmentsMeet(f, e);
      if (hit) return hit;
    }
    active.push(e);
  }
  return null;
}

/** Where two segments meet (endpoints included), or null; parallel segments never meet (turf's `kinks` rule). */
function segmentsMeet(
  a: { x1: number; y1: number; x2: number; y2: number },
  b: { x1: number; y1: number; x2: number; y2: number },
): [number, number] | null {
  const den = (b.y2 - b.y1) * (a.x2 - a.x1) - (b.x2 - b.x1) * (a.y2 - a.y1);
  if (den === 0) return null;
  const dy = a.y1 - b.y1;
  const dx = a.x1 - b.x1;
  const ua = ((b.x2 - b.x1) * dy - (b.y2 - b.y1) * dx) / den;
  const ub = ((a.x2 - a.x1) * dy - (a.y2 - a.y1) * dx) / den;
  if (ua < 0 || ua > 1 || ub < 0 || ub > 1) return null;
  return [a.x1 + ua * (a.x2 - a.x1), a.y1 + ua * (a.y2 - a.y1)];
}

// ---------------------------------------------------------------------------------------------
// The exact tests

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
 * both); the points between (1 − margin) and (1 + margin) times the radius — ~1% of a 10 km
 * circle's candidates — get haversine. Circles near a pole or across the antimeridian get
 * haversine alone.
 */
export function circleTest(c: NearArea): PointTest {
  const flat = flatCircle(c);
  if (!flat) return (xy, i) => inCircle(c, xy[2 * i + 1]!, xy[2 * i]!);
  const { k, inner, outer } = flat;
  const { lat: lat0, lon: lon0 } = c; // captured: a parsed centre's fields may be small integers or doubles (`PolygonIndex.grid`)
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

/**
 * Whether a point is in a polygon: even–odd over each polygon's rings (holes honoured), a point on
 * any ring inside; a MultiPolygon when any polygon holds it. Answered from the polygon's index
 * (`polygonIndex`, built once per geometry object): a cell wholly in or out answers at once, and
 * in a cell an edge passes near, the crossing-number rule runs over the edges of the point's
 * latitude band only — the same answer as `inPolygonExact`, which runs it over every edge.
 */
export function inPolygon(g: AreaGeometry, lat: number, lon: number): boolean {
  const ix = polygonIndexOf(g);
  return ix === null ? inPolygonExact(g, lat, lon) : indexHolds(ix, Float64Array.of(lon, lat), 0);
}

/** The exact test over every edge (the rule above, no index). */
export function inPolygonExact(g: AreaGeometry, lat: number, lon: number): boolean {
  if (g.type === 'Polygon') return ringsHold(g.coordinates, lon, lat);
  return g.coordinates.some((rings) => ringsHold(rings, lon, lat));
}

const OUT_CELL = 0;
const IN_CELL = 1;
const EDGE_CELL = 2;
/** How far (degrees, ~1 cm) around an edge's bounding box cells count as the edge's: far beyond the rounding of a cell index. */
const EDGE_MARGIN = 1e-7;

/**
 * A polygon's envelope cut into size × size cells, and its edges sorted into the grid's rows:
 *  - cells: a cell that an edge's bounding box (grown by `EDGE_MARGIN`) touches is an edge cell;
 *    every other cell holds no point of any ring, so it is wholly inside or wholly outside, and
 *    one test per run of such cells along a row (the status changes only across edge cells)
 *    decides it;
 *  - bands: the envelope cut into `BANDS_PER_ROW` times as many latitude bands as rows; band
 *    b's edges are those whose latitude span meets the band (`bandOf` of their lower and upper
 *    ends, the function a point's band is found with — monotone, so an edge whose span holds a
 *    point's latitude is always in that point's band). The crossing-number rule only ever counts
 *    an edge whose span holds the point's latitude, so the band's edges decide exactly what all
 *    edges would: a county-sized outline of 200 positions leaves a handful per band.
 *  - an edge cell's own edges, and its centre's status: a point of the cell is joined to the
 *    centre by a segment inside the cell, which meets none but the cell's edges — so when every
 *    one it meets it crosses cleanly (not at an end, not along it, neither point on it), the
 *    point's parity is the centre's flipped once per crossing (`edgeCellHolds`; one side test per
 *    edge the segment misses, the centre's side of each kept). A cell whose centre is on an edge,
 *    or whose edges are of more than one polygon of a MultiPolygon, and any touching, leave the
 *    point to its band.
 * Edges are kept in the order of the polygons (4 numbers each: ax, ay, bx, by) with the
 * polygon each belongs to, so a MultiPolygon's parity is counted polygon by polygon.
 */
interface PolygonIndex {
  /**
   * The envelope (degrees), at `W`, `S`, `E`, `N`, and the inverses of the cells' width and height
   * and of the bands' height, at `ICW`, `ICH`, `IBH`: typed, not fields, because they are read for
   * every point tested. A field's representation follows the values stored in it (an integral
   * west edge is a small integer, the next polygon's a double), so the index objects' shapes
   * multiply, and a load that has seen too many shapes boxes every double it reads — a heap
   * allocation per point.
   */
  grid: Float64Array;
  size: number;
  /**
   * The cells' centres: column i's longitude at `centres[i]`, row j's latitude at
   * `centres[size + j]` (the west edge plus i + ½ cell widths, the south edge plus j + ½ cell
   * heights), the one place they are computed — read, not recomputed from a cell's number (a
   * division) for every point of an edge cell.
   */
  centres: Float64Array;
  cells: Uint8Array;
  /** Latitude bands: how many (the inverse of their height is `grid[IBH]`). */
  bands: number;
  /** Band b's edges are `edges[4k …]` for k in [bandStart[b], bandStart[b + 1]). */
  bandStart: Int32Array;
  edges: Float64Array;
  /** The polygon (of a MultiPolygon; 0 for a Polygon) of each band edge. */
  edgePolygon: Int32Array;
  /**
   * Summed-area tables over the cells: `notIn[j·(size+1) + i]` counts the cells that are not
   * wholly inside among rows < j and columns < i (`notOut` those not wholly outside), so whether a
   * rectangle of cells is all in (or all out) is four reads (`polygonRegion`).
   */
  notIn: Uint16Array;
  notOut: Uint16Array;
  /**
   * Cell c's edges are `cellEdges[k]` for k in [cellStart[c], cellStart[c + 1]) (an index into
   * `allEdges`, 4 numbers each), and `centreSide[k]` is the side of that edge its centre lies on
   * (`orientation`); `centre[c]` holds `CENTRE_USABLE`, `CENTRE_IN` and `CENTRE_OTHERS_IN`.
   * Empty when the edge cells would hold more than `CELL_EDGES_PER_CELL_MAX` edges per cell of
   * the grid in all, or more than 65,535 (`cellStart` is 16-bit: half the memory, and a point's
   * lookup touches less of it), and then every edge cell's points go to their band.
   */
  cellStart: Uint16Array;
  cellEdges: Int32Array;
  centreSide: Int8Array;
  centre: Uint8Array;
  allEdges: Float64Array;
}
/** An edge cell's centre: its parity may be used (not on an edge; the cell's edges are of one polygon). */
const CENTRE_USABLE = 4;
/** The polygon of the cell's edges holds the centre. */
const CENTRE_IN = 1;
/** Another polygon of a MultiPolygon holds the centre (and so the whole cell: none of its edges is here). */
const CENTRE_OTHERS_IN = 2;
/** Where `PolygonIndex.grid` holds each number. */
const W = 0;
const S = 1;
const E = 2;
const N = 3;
/** Where `PolygonIndex.grid` holds the inverses of the cells' width and height and of the bands' height: a cell is found by a multiplication (a division costs several times as much, for every point tested). */
const ICW = 4;
const ICH = 5;
const IBH = 6;
/** (cell, edge) pairs kept at most, per cell of the grid (a bound on the index's memory for spiky outlines). */
const CELL_EDGES_PER_CELL_MAX = 8;
const indexes = new WeakMap<AreaGeometry, PolygonIndex | null>();

/** The index of a geometry object, built on its first use (null: a degenerate envelope, the exact test alone). */
function polygonIndexOf(g: AreaGeometry): PolygonIndex | null {
  let ix = indexes.get(g);
  if (ix === undefined) indexes.set(g, (ix = polygonIndex(g)));
  return ix;
}

/** Latitude bands per row of cells. */
export const BANDS_PER_ROW = 4;

/**
 * Rows (and columns) of a polygon's grid for its number of positions: 240 for a 200-position
 * county outline (~1 ms to build, remembered with its text, `parsePolygonText`); a finer grid
 * leaves fewer candidates in edge cells (a county's search: ~240 µs at 16 cells per √position,
 * ~275 µs at 8), a coarser one builds faster. At most 255, so the summed-area tables' counts
 * (at most 255² cells) fit 16 bits.
 */
export const gridSize = (vertices: number): number => Math.min(255, Math.max(16, 16 * Math.ceil(Math.sqrt(vertices))));

/**
 * The column / row of a cell a longitude / latitude falls in, clamped to the grid: the one formula
 * the index is built with and points and rectangles are looked up with (monotone in the
 * coordinate, which `polygonRegion` relies on).
 */
const colOf = (grid: Float64Array, size: number, x: number): number => cellOf((x - grid[W]!) * grid[ICW]!, size);
const rowOf = (grid: Float64Array, size: number, y: number): number => cellOf((y - grid[S]!) * grid[ICH]!, size);
/** A position in cells (from the envelope's west or south edge) as a cell index, clamped: below 0 (and NaN) is 0, beyond the last cell the last. */
const cellOf = (at: number, size: number): number => (at >= size - 1 ? size - 1 : at > 0 ? at | 0 : 0);

/** The band of a latitude: clamped to the envelope, monotone in `y`. */
const bandOf = (grid: Float64Array, bands: number, y: number): number => cellOf((y - grid[S]!) * grid[IBH]!, bands);

function polygonIndex(g: AreaGeometry): PolygonIndex | null {
  const polygons = g.type === 'Polygon' ? [g.coordinates] : g.coordinates;
  let w = Infinity;
  let s = Infinity;
  let e = -Infinity;
  let n = -Infinity;
  let vertices = 0;
  for (const rings of polygons) {
    for (const ring of rings) {
      vertices += ring.length;
      for (const [x, y] of ring) {
        if (x! < w) w = x!;
        if (x! > e) e = x!;
        if (y! < s) s = y!;
        if (y! > n) n = y!;
      }
    }
  }
  const size = gridSize(vertices);
  const cw = (e - w) / size;
  const ch = (n - s) / size;
  if (!(cw > 0 && ch > 0)) return null; // a degenerate envelope: the exact test alone
  const bands = size * BANDS_PER_ROW;
  const bh = (n - s) / bands;
  const grid = Float64Array.of(w, s, e, n, 1 / cw, 1 / ch, 1 / bh);
  // every edge of every ring, in polygon order, then sorted into its rows (counting first)
  const all: number[] = [];
  const allPolygon: number[] = [];
  polygons.forEach((rings, p) => {
    for (const ring of rings) {
      for (let k = 0; k + 1 < ring.length; k++) {
        all.push(ring[k]![0]!, ring[k]![1]!, ring[k + 1]![0]!, ring[k + 1]![1]!);
        allPolygon.push(p);
      }
    }
  });
  const bandStart = new Int32Array(bands + 1);
  const spans = (k: number): [number, number] => [
    bandOf(grid, bands, Math.min(all[4 * k + 1]!, all[4 * k + 3]!)),
    bandOf(grid, bands, Math.max(all[4 * k + 1]!, all[4 * k + 3]!)),
  ];
  for (let k = 0; k < allPolygon.length; k++) {
    const [j0, j1] = spans(k);
    for (let j = j0; j <= j1; j++) bandStart[j + 1]!++;
  }
  for (let j = 0; j < bands; j++) bandStart[j + 1]! += bandStart[j]!;
  const fill = bandStart.slice(0, bands);
  const edges = new Float64Array(4 * bandStart[bands]!);
  const edgePolygon = new Int32Array(bandStart[bands]!);
  for (let k = 0; k < allPolygon.length; k++) {
    const [j0, j1] = spans(k);
    for (let j = j0; j <= j1; j++) {
      const at = fill[j]!++;
      for (let c = 0; c < 4; c++) edges[4 * at + c] = all[4 * k + c]!;
      edgePolygon[at] = allPolygon[k]!;
    }
  }
  const cells = new Uint8Array(size * size);
  // an edge's cells, row by row: the span of longitudes it covers within the row's latitudes
  // (both grown by EDGE_MARGIN), so a diagonal edge marks the cells along it, not its bounding box
  const edgeCells = (k: number, visit: (cell: number) => void): void => {
    const ax = all[4 * k]!;
    const ay = all[4 * k + 1]!;
    const bx = all[4 * k + 2]!;
    const by = all[4 * k + 3]!;
    const lo = Math.min(ay, by);
    const hi = Math.max(ay, by);
    const xAt = (y: number): number => (ay === by ? ax : ax + ((y - ay) * (bx - ax)) / (by - ay));
    const j1 = rowOf(grid, size, hi + EDGE_MARGIN);
    for (let j = rowOf(grid, size, lo - EDGE_MARGIN); j <= j1; j++) {
      const y0 = Math.max(lo, s + j * ch - EDGE_MARGIN);
      const y1 = Math.min(hi, s + (j + 1) * ch + EDGE_MARGIN);
      const [x0, x1] =
        ay === by ? [Math.min(ax, bx), Math.max(ax, bx)] : [Math.min(xAt(y0), xAt(y1)), Math.max(xAt(y0), xAt(y1))];
      const i1 = colOf(grid, size, x1 + EDGE_MARGIN);
      for (let i = colOf(grid, size, x0 - EDGE_MARGIN); i <= i1; i++) visit(j * size + i);
    }
  };
  // counted first (and marked), then filled in edge order
  const cellStart = new Uint16Array(size * size + 1);
  let pairs = 0;
  for (let k = 0; k < allPolygon.length; k++) {
    edgeCells(k, (c) => {
      cells[c] = EDGE_CELL;
      if (cellStart[c + 1]! < 0xffff) cellStart[c + 1]!++; // (beyond that, pairs alone decides: no cells kept)
      pairs++;
    });
  }
  const keepCells = pairs <= Math.min(CELL_EDGES_PER_CELL_MAX * size * size, 0xffff);
  for (let c = 0; c < size * size; c++) cellStart[c + 1] = keepCells ? cellStart[c + 1]! + cellStart[c]! : 0;
  const cellEdges = new Int32Array(keepCells ? pairs : 0);
  if (keepCells) {
    const at = cellStart.slice(0, size * size);
    for (let k = 0; k < allPolygon.length; k++) edgeCells(k, (c) => void (cellEdges[at[c]!++] = k));
  }
  const centres = new Float64Array(2 * size);
  for (let i = 0; i < size; i++) {
    centres[i] = w + (i + 0.5) * cw;
    centres[size + i] = s + (i + 0.5) * ch;
  }
  const ix: PolygonIndex = {
    grid,
    size,
    centres,
    cells,
    bands,
    bandStart,
    edges,
    edgePolygon,
    notIn: new Uint16Array((size + 1) ** 2),
    notOut: new Uint16Array((size + 1) ** 2),
    cellStart,
    cellEdges,
    centreSide: new Int8Array(cellEdges.length),
    centre: new Uint8Array(keepCells ? size * size : 0),
    allEdges: Float64Array.from(all),
  };
  if (keepCells)
    for (let c = 0; c < size * size; c++) if (cells[c] === EDGE_CELL) ix.centre[c] = centreOf(ix, c, allPolygon);
  for (let j = 0; j < size; j++) {
    let status = -1; // unknown at the start of a run
    for (let i = 0; i < size; i++) {
      const at = j * size + i;
      if (cells[at] === EDGE_CELL) {
        status = -1;
        continue;
      }
      if (status < 0) {
        CENTRE[0] = ix.centres[i]!;
        CENTRE[1] = ix.centres[size + j]!;
        status = bandHolds(ix, CENTRE, 0) ? IN_CELL : OUT_CELL;
      }
      cells[at] = status;
    }
  }
  const stride = size + 1;
  for (let j = 0; j < size; j++) {
    for (let i = 0; i < size; i++) {
      const cell = cells[j * size + i]!;
      const at = (j + 1) * stride + i + 1;
      ix.notIn[at] =
        (cell !== IN_CELL ? 1 : 0) + ix.notIn[at - 1]! + ix.notIn[at - stride]! - ix.notIn[at - stride - 1]!;
      ix.notOut[at] =
        (cell !== OUT_CELL ? 1 : 0) + ix.notOut[at - 1]! + ix.notOut[at - stride]! - ix.notOut[at - stride - 1]!;
    }
  }
  return ix;
}

/**
 * How the rectangle [x0, x1] × [y0, y1] (`r[at …]`, as `areaRegion` takes it) lies against the polygon, as `indexHolds` would answer
 * each of its points: the points of the rectangle inside the envelope fall in the cells
 * colOf(max(x0, w))…colOf(min(x1, e)) × rowOf(max(y0, s))…rowOf(min(y1, n)) (the index of a point's cell
 * is monotone in its coordinates), so `INSIDE` when the rectangle is within the envelope and all
 * those cells are wholly in, `OUTSIDE` when it misses the envelope or all those cells are wholly out.
 */
function polygonRegion(ix: PolygonIndex, r: Float64Array, at: number): Region {
  const x0 = r[at]!;
  const y0 = r[at + 1]!;
  const x1 = r[at + 2]!;
  const y1 = r[at + 3]!;
  const { grid, size } = ix;
  const w = grid[W]!;
  const s = grid[S]!;
  const e = grid[E]!;
  const n = grid[N]!;
  if (x1 < w || x0 > e || y1 < s || y0 > n) return OUTSIDE;
  const i0 = colOf(grid, size, Math.max(x0, w));
  const i1 = colOf(grid, size, Math.min(x1, e)) + 1;
  const j0 = rowOf(grid, size, Math.max(y0, s));
  const j1 = rowOf(grid, size, Math.min(y1, n)) + 1;
  // (no closure here: this runs for every node of a tree walk)
  const stride = size + 1;
  const a = j1 * stride + i1;
  const b = j0 * stride + i1;
  const c = j1 * stride + i0;
  const d = j0 * stride + i0;
  if (ix.notOut[a]! - ix.notOut[b]! - ix.notOut[c]! + ix.notOut[d]! === 0) return OUTSIDE;
  if (x0 >= w && x1 <= e && y0 >= s && y1 <= n && ix.notIn[a]! - ix.notIn[b]! - ix.notIn[c]! + ix.notIn[d]! === 0)
    return INSIDE;
  return PARTLY;
}

/** `inPolygon` through the index, for point `i` of `xy` (`PointTest`): the envelope, the point's cell, and in an edge cell its edges (or its band's). */
function indexHolds(ix: PolygonIndex, xy: Float64Array, i: number): boolean {
  const lon = xy[2 * i]!;
  const lat = xy[2 * i + 1]!;
  const { grid, size } = ix;
  if (!(lon >= grid[W]! && lon <= grid[E]! && lat >= grid[S]! && lat <= grid[N]!)) return false; // outside the envelope of every ring (NaN too)
  const row = rowOf(grid, size, lat);
  const col = colOf(grid, size, lon);
  const cell = ix.cells[row * size + col]!;
  return cell === EDGE_CELL ? edgeCellHolds(ix, row, col, xy, i) : cell === IN_CELL;
}

/** Two slots for a cell's centre while the index is built (one at a time: nothing between the write and the reads yields). */
const CENTRE = new Float64Array(2);

/**
 * The centre flags of edge cell `at` (its edges' sides of the centre are written to `centreSide`):
 * usable when its edges are all of one polygon and the centre is on none; that polygon's parity at
 * the centre, and whether another polygon holds it — the crossing-number rule over the centre's
 * band, polygon by polygon.
 */
function centreOf(ix: PolygonIndex, at: number, edgePolygonOf: readonly number[]): number {
  const from = ix.cellStart[at]!;
  const to = ix.cellStart[at + 1]!;
  const polygon = edgePolygonOf[ix.cellEdges[from]!]!;
  const x = ix.centres[at % ix.size]!;
  const y = ix.centres[ix.size + Math.floor(at / ix.size)]!;
  for (let k = from; k < to; k++) {
    const e = 4 * ix.cellEdges[k]!;
    if (edgePolygonOf[ix.cellEdges[k]!] !== polygon) return 0;
    const side = orientation(ix.allEdges[e]!, ix.allEdges[e + 1]!, ix.allEdges[e + 2]!, ix.allEdges[e + 3]!, x, y);
    if (side === 0) return 0;
    ix.centreSide[k] = side;
  }
  const b = bandOf(ix.grid, ix.bands, y);
  const parity = new Map<number, boolean>();
  for (let k = ix.bandStart[b]!, end = ix.bandStart[b + 1]!; k < end; k++) {
    const r = edgeVersusPoint(ix.edges[4 * k]!, ix.edges[4 * k + 1]!, ix.edges[4 * k + 2]!, ix.edges[4 * k + 3]!, x, y);
    if (r === ON_EDGE) return 0; // the centre on an edge: no parity
    const p = ix.edgePolygon[k]!;
    if (r === CROSSES) parity.set(p, !parity.get(p));
  }
  let flags = CENTRE_USABLE | (parity.get(polygon) ? CENTRE_IN : 0);
  for (const [p, inside] of parity) if (p !== polygon && inside) flags |= CENTRE_OTHERS_IN;
  return flags;
}

/**
 * A point of edge cell `at` (point `i` of `xy`, `PointTest`): the centre's parity flipped by each of the cell's edges the
 * segment from the centre to the point crosses, when it meets each cleanly (`CROSSES` or
 * `MISSES`); on any touching, its band decides (`bandHolds`).
 */
function edgeCellHolds(ix: PolygonIndex, row: number, col: number, xy: Float64Array, i: number): boolean {
  const at = row * ix.size + col;
  const x = xy[2 * i]!;
  const y = xy[2 * i + 1]!;
  const flags = ix.centre.length > 0 ? ix.centre[at]! : 0;
  if ((flags & CENTRE_USABLE) === 0) return bandHolds(ix, xy, i);
  const cx = ix.centres[col]!;
  const cy = ix.centres[ix.size + row]!;
  const { allEdges, cellEdges, centreSide } = ix;
  let inside = (flags & CENTRE_IN) !== 0;
  for (let k = ix.cellStart[at]!, end = ix.cellStart[at + 1]!; k < end; k++) {
    const e = 4 * cellEdges[k]!;
    const ax = allEdges[e]!;
    const ay = allEdges[e + 1]!;
    const bx = allEdges[e + 2]!;
    const by = allEdges[e + 3]!;
    const side = orientation(ax, ay, bx, by, x, y);
    if (side === centreSide[k]) continue; // the point on the centre's side of the edge's line: not crossed
    if (side === 0) return bandHolds(ix, xy, i); // on the line
    // the segment crosses the edge's line: within the edge when a and b lie strictly on either side of it
    const sa = orientation(cx, cy, x, y, ax, ay);
    const sb = orientation(cx, cy, x, y, bx, by);
    if (sa === 0 || sb === 0) return bandHolds(ix, xy, i); // through an end
    if (sa !== sb) inside = !inside;
  }
  return inside || (flags & CENTRE_OTHERS_IN) !== 0;
}

/** The crossing-number rule (`ringsHold`) over the edges of the band of point `i` of `xy` (`PointTest`), polygon by polygon. */
function bandHolds(ix: PolygonIndex, xy: Float64Array, i: number): boolean {
  const x = xy[2 * i]!;
  const y = xy[2 * i + 1]!;
  const b = bandOf(ix.grid, ix.bands, y);
  const { edges, edgePolygon } = ix;
  let polygon = -1;
  let inside = false;
  for (let k = ix.bandStart[b]!, end = ix.bandStart[b + 1]!; k < end; k++) {
    if (edgePolygon[k] !== polygon) {
      if (inside) return true; // the previous polygon holds it
      polygon = edgePolygon[k]!;
    }
    const r = edgeVersusPoint(edges[4 * k]!, edges[4 * k + 1]!, edges[4 * k + 2]!, edges[4 * k + 3]!, x, y);
    if (r === ON_EDGE) return true;
    if (r === CROSSES) inside = !inside;
  }
  return inside;
}

const MISSES = 0;
const CROSSES = 1;
const ON_EDGE = 2;

/**
 * One edge a→b against the point (x, y), the crossing-number rule's one step: `CROSSES` when a
 * ray from the point towards +x crosses the edge — one end strictly above the point's latitude
 * and the other not (the half-open rule counts a vertex on the ray once), and the point on the
 * edge's inner side (`orientation`; no intersection is computed) —, `ON_EDGE` when the point is
 * on the edge (within its bounding box and `orientation` exactly 0), else `MISSES`. Only an edge
 * whose latitude span holds y can answer anything but `MISSES`.
 */
function edgeVersusPoint(ax: number, ay: number, bx: number, by: number, x: number, y: number): number {
  if (ay > y === by > y) {
    // not straddling: only a point on the edge matters (a horizontal edge at y, or an end on it)
    return (ay === y || by === y) &&
      x >= Math.min(ax, bx) &&
      x <= Math.max(ax, bx) &&
      orientation(ax, ay, bx, by, x, y) === 0
      ? ON_EDGE
      : MISSES;
  }
  const o = orientation(ax, ay, bx, by, x, y);
  if (o === 0) return ON_EDGE; // its latitude span holds y, so the line's point is on the segment
  return (by > ay ? o > 0 : o < 0) ? CROSSES : MISSES;
}

/** Even–odd crossing number of the point (x, y) over every edge of `rings` (closed: last position = first); on an edge is inside. */
function ringsHold(rings: readonly (readonly number[])[][], x: number, y: number): boolean {
  let inside = false;
  for (const ring of rings) {
    for (let i = 0; i + 1 < ring.length; i++) {
      const r = edgeVersusPoint(ring[i]![0]!, ring[i]![1]!, ring[i + 1]![0]!, ring[i + 1]![1]!, x, y);
      if (r === ON_EDGE) return true;
      if (r === CROSSES) inside = !inside;
    }
  }
  return inside;
}

/** Shewchuk's error bound of the floating-point orientation (1997, `ccwerrboundA`): (3 + 16ε)ε with ε = 2⁻⁵³. */
const ORIENTATION_BOUND = (3 + 16 * 2 ** -53) * 2 ** -53;

/**
 * The side of the line a→b the point p lies on, exactly: 1 when left (a, b, p counter-clockwise),
 * −1 when right, 0 when on the line — the sign of (ax − px)(by − py) − (ay − py)(bx − px) over the
 * exact values of the doubles given. Computed in floating point when its error bound allows (all
 * but near-collinear points), else exactly with integers (`exactOrientation`).
 */
export function orientation(ax: number, ay: number, bx: number, by: number, px: number, py: number): -1 | 0 | 1 {
  const l = (ax - px) * (by - py);
  const r = (ay - py) * (bx - px);
  const det = l - r;
  const bound = ORIENTATION_BOUND * (Math.abs(l) + Math.abs(r));
  if (det > bound) return 1;
  if (-det > bound) return -1;
  return exactOrientation(ax, ay, bx, by, px, py);
}

/** A finite double as an exact integer mantissa and binary exponent: x = m · 2^e. */
function exactParts(x: number): [bigint, number] {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x);
  const bits = view.getBigUint64(0);
  const biased = Number((bits >> 52n) & 0x7ffn);
  let m = bits & 0xfffffffffffffn;
  if (biased !== 0) m |= 0x10000000000000n;
  return [bits >> 63n ? -m : m, (biased === 0 ? 1 : biased) - 1075];
}

/** `orientation` in exact integer arithmetic: every double scaled to the smallest exponent among them. */
function exactOrientation(ax: number, ay: number, bx: number, by: number, px: number, py: number): -1 | 0 | 1 {
  const parts = [ax, ay, bx, by, px, py].map(exactParts);
  const e0 = Math.min(...parts.map(([, e]) => e));
  const [AX, AY, BX, BY, PX, PY] = parts.map(([m, e]) => m << BigInt(e - e0)) as [
    bigint,
    bigint,
    bigint,
    bigint,
    bigint,
    bigint,
  ];
  const det = (AX - PX) * (BY - PY) - (AY - PY) * (BX - PX);
  return det > 0n ? 1 : det < 0n ? -1 : 0;
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

/** The geometry filters of a query (what `areaTest` tests). */
export interface AreaFilters {
  near?: NearArea;
  bbox?: BBox;
  polygon?: AreaGeometry;
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
 * A polygon alone — a drawn territory's search, ~8,000 points a county — asks its index's test
 * (`indexHolds`) in the loop itself; every other combination asks `areaTest` point by point.
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
  // the index's own test called directly, not through `areaTest`'s closure (~8% of a county's search)
  return (xy, from, to, hits) => {
    let h = 0;
    for (let i = from; i <= to; i++) if (indexHolds(ix, xy, i)) hits[h++] = i;
    return h;
  };
}

/** How a rectangle lies against areas: no point of it in them, every point in them, or some. */
export type Region = 0 | 1 | 2;
export const OUTSIDE: Region = 0;
export const INSIDE: Region = 1;
export const PARTLY: Region = 2;

/**
 * For a search that walks a tree of rectangles (api/engine/geo-index.ts): how a rectangle
 * [x0, x1] × [y0, y1] (longitude, latitude; infinite bounds allowed), given as `r[at …]` = x0,
 * y0, x1, y1 (the walk's own stack, so no double is boxed per node: `PointTest`), lies against every area of
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
  // captured, not read from the objects per node (`PolygonIndex.grid`)
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

/** Whether any area filter is given. */
export function hasArea(f: AreaFilters): boolean {
  return f.near !== undefined || f.bbox !== undefined || f.polygon !== undefined;
}
