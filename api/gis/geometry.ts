/**
 * The geometry of nearby and area search (docs/api.md "Nearby and area search"), three files
 * without a circle among them: this one — the types, the constants and the parsers validating
 * `near`, `bbox` and `polygon` (they use no point test) —, api/gis/polygon-index.ts — the exact
 * side test (`orientation`), the crossing-number rule and a polygon's index —, and
 * api/gis/point-tests.ts — the exact test of a lead's point (and of a rectangle) against each
 * area, and the areas' envelopes. The lead index (api/engine/geo-index.ts) asks point-tests.ts
 * which of the k-d tree's candidates are in; the SQL paths (exports, webhooks, feeds, OGC) ask it
 * the same of the rows inside the area's envelope (api/gis/geometry-ids.ts). No other code
 * decides whether a point is in an area.
 *
 * The rules, each written once in these three files:
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
 * position in an array, never the coordinates themselves (why: docs/performance.md "Geometry").
 * `latLonTest` gives the same test one (lat, lon) at a time.
 */
export type PointTest = (xy: Float64Array, i: number) => boolean;

/**
 * A `PointTest` over a run of points: which of points `from`…`to` (inclusive) of `xy` hold, their
 * indexes written in order to `hits` (room for to − from + 1), how many returned. The k-d tree's
 * walk asks one per leaf (api/engine/geo-index.ts): the loop over the leaf's points runs inside the
 * test (`areaRangeTest`).
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

/** The geometry filters of a query (what `areaTest` tests). */
export interface AreaFilters {
  near?: NearArea;
  bbox?: BBox;
  polygon?: AreaGeometry;
}

/** Whether any area filter is given. */
export function hasArea(f: AreaFilters): boolean {
  return f.near !== undefined || f.bbox !== undefined || f.polygon !== undefined;
}
