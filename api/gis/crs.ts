/**
 * OGC API – Features – Part 2 (CRS by reference) for the OGC items: the CRSs offered
 * (`SUPPORTED_CRS`, from schemas/ogc-crs-query.schema.json), the `crs` / `bbox-crs` parameters,
 * and the rewriting of a pre-rendered feature line's coordinates into EPSG:2157 (Irish
 * Transverse Mercator) with proj4. Features are stored in CRS84; ITM coordinates are computed per
 * answer from the line's rounded lon/lat, to 3 decimals (millimetres).
 */
import { readFileSync } from 'node:fs';
import proj4 from 'proj4';
import { ITM_PROJ4 } from '../../common/crs.ts';
import { invalidParams, type ParamError } from '../http/errors.ts';
import type { RawQuery } from '../query/leads-params.ts';

const SCHEMA = JSON.parse(
  readFileSync(new URL('../../schemas/ogc-crs-query.schema.json', import.meta.url), 'utf8'),
) as {
  properties: Record<'crs' | 'bbox-crs', { enum: string[]; default: string }>;
};
export const CRS84 = 'http://www.opengis.net/def/crs/OGC/1.3/CRS84';
export const EPSG_2157 = 'http://www.opengis.net/def/crs/EPSG/0/2157';
/** The CRSs of every collection (`crs` list), storage CRS first. */
export const SUPPORTED_CRS: readonly string[] = SCHEMA.properties.crs.enum;
export const CRS_PARAMS = ['crs', 'bbox-crs'] as const;
export const CONFORMANCE_CRS = 'http://www.opengis.net/spec/ogcapi-features-2/1.0/conf/crs';

const itm = proj4('EPSG:4326', ITM_PROJ4);

/** CRS84 lon/lat → ITM easting/northing (metres, 3 decimals). */
export function toItm(lon: number, lat: number): [number, number] {
  const [e, n] = itm.forward([lon, lat]) as [number, number];
  return [Math.round(e * 1000) / 1000, Math.round(n * 1000) / 1000];
}

export interface CrsRequest {
  /** The answer's CRS. */
  crs: string;
  /** Whether the request named `crs` (the answer then carries `Content-Crs`). */
  explicit: boolean;
}

/**
 * Take `crs` and `bbox-crs` out of an OGC request's query: the answer's CRS, and the rest of the
 * query for the Part 1 parser — with an ITM `bbox` replaced by the CRS84 box that holds it.
 * `allowBboxCrs`: false on one feature (only `crs` applies). Throws one 400 naming every bad value.
 */
export function parseCrsQuery(raw: RawQuery, allowBboxCrs: boolean): { crs: CrsRequest; rest: RawQuery } {
  const rest: RawQuery = { ...raw };
  const errors: ParamError[] = [];
  const one = (name: 'crs' | 'bbox-crs'): string | undefined => {
    const given = raw[name];
    delete rest[name];
    if (given === undefined) return undefined;
    // the same value repeated is one (GDAL 3.6 adds its connection URL's crs to next links that carry it already)
    const v = Array.isArray(given) && new Set(given).size === 1 ? given[0]! : given;
    if (Array.isArray(v)) errors.push({ name, reason: 'must be given once' });
    else if (!SCHEMA.properties[name].enum.includes(v))
      errors.push({ name, reason: 'not an allowed value', allowed: [...SCHEMA.properties[name].enum] });
    else return v;
    return undefined;
  };
  const crs = one('crs');
  let bboxCrs: string | undefined;
  if (allowBboxCrs) bboxCrs = one('bbox-crs');
  if (bboxCrs === EPSG_2157 && typeof raw['bbox'] === 'string') {
    const box = itmBoxToCrs84(raw['bbox']);
    if (typeof box === 'string') rest['bbox'] = box;
    else errors.push(box);
  }
  if (errors.length > 0) throw invalidParams(errors);
  return { crs: { crs: crs ?? CRS84, explicit: crs !== undefined }, rest };
}

/** An ITM `bbox` (4 numbers, or 6 with heights) as the CRS84 box that holds it, edges densified, 6 decimals rounded outwards. */
export function itmBoxToCrs84(text: string): string | ParamError {
  const nums = text.split(',').map((s) => (/^-?\d+(\.\d+)?([eE][-+]?\d+)?$/.test(s.trim()) ? Number(s) : NaN));
  if (!(nums.length === 4 || nums.length === 6) || nums.some((n) => !Number.isFinite(n))) {
    return {
      name: 'bbox',
      reason:
        'with bbox-crs EPSG:2157: four numbers (or six with heights): min easting, min northing, max easting, max northing, in metres',
    };
  }
  const [w, s, e, n] =
    nums.length === 6 ? [nums[0]!, nums[1]!, nums[3]!, nums[4]!] : (nums as [number, number, number, number]);
  if (w > e || s > n) return { name: 'bbox', reason: 'min easting / northing must not be greater than the max' };
  if (w < -1e7 || e > 1e7 || s < -1e7 || n > 1e7) return { name: 'bbox', reason: 'ITM coordinates out of range' };
  let [minLon, minLat, maxLon, maxLat] = [Infinity, Infinity, -Infinity, -Infinity];
  const STEPS = 32;
  for (let i = 0; i <= STEPS; i++) {
    const t = i / STEPS;
    for (const [x, y] of [
      [w + (e - w) * t, s],
      [w + (e - w) * t, n],
      [w, s + (n - s) * t],
      [e, s + (n - s) * t],
    ] as const) {
      const [lon, lat] = itm.inverse([x, y]) as [number, number];
      ((minLon = Math.min(minLon, lon)),
        (maxLon = Math.max(maxLon, lon)),
        (minLat = Math.min(minLat, lat)),
        (maxLat = Math.max(maxLat, lat)));
    }
  }
  const down = (v: number): number => Math.floor(v * 1e6) / 1e6;
  const up = (v: number): number => Math.ceil(v * 1e6) / 1e6;
  const clamp = (v: number, lim: number): number => Math.max(-lim, Math.min(lim, v));
  return [clamp(down(minLon), 180), clamp(down(minLat), 90), clamp(up(maxLon), 180), clamp(up(maxLat), 90)].join(',');
}

const PREFIX =
  /^(\{"type":"Feature","id":\d+,"geometry":\{"type":"Point","coordinates":\[)(-?[0-9.eE+-]+),(-?[0-9.eE+-]+)\]/;

/** A pre-rendered feature line with its point in `crs` (the line itself for CRS84). */
export function lineInCrs(line: string, crs: string): string {
  if (crs === CRS84) return line;
  const m = PREFIX.exec(line);
  if (!m) throw new Error('not a pre-rendered Point feature line');
  const [x, y] = toItm(Number(m[2]), Number(m[3]));
  return `${m[1]}${x},${y}]${line.slice(m[0].length)}`;
}

/** The `Content-Crs` header value of an answer in `crs`. */
export function contentCrs(crs: string): string {
  return `<${crs}>`;
}
