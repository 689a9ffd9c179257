/**
 * Parameters and pure SQL builders of the GIS endpoints: the GeoJSON feeds
 * (`/v1/feeds/leads.geojson`, `/v1/feeds/infrastructure.geojson`) and OGC API Features items
 * (`/v1/ogc/collections/{id}/items`). Both select features of one layer by the same filters
 * and page them by id ascending; they differ only in parameter names (`page_size` vs `limit`,
 * `since`/`updated_since` vs `datetime`).
 *
 * A query here only picks feature ids (`gisIdsQuery`) and counts them (`gisCountQuery`); the
 * features themselves are the release's pre-rendered lines (`api/gis/layer-index.ts`).
 */
import { readFileSync } from 'node:fs';
import { invalidParams, type ParamError } from '../errors.ts';
import { foldPlace, REASONS } from './query-common.ts';
import type { RawQuery } from '../params.ts';
import type { BBox } from '../gis/layer-index.ts';
import { decodeCursor, filtersHash, type CursorSecrets } from './paging.ts';
import type { SqlQuery } from './leads-query.ts';

export type GisLayer = 'leads' | 'infrastructure';

/** Features per page: feeds `page_size` and OGC `limit`. */
export const FEED_PAGE_SIZE_DEFAULT = 1_000;
export const OGC_LIMIT_DEFAULT = 100;
export const GIS_PAGE_MAX = 10_000;

/** The date each layer's OGC `datetime` filters on. */
export const DATETIME_COLUMN: Record<GisLayer, string> = { leads: 'received_date', infrastructure: 'first_seen' };

export interface GisFilters {
  bbox?: BBox;
  authority?: string[];
  /** first_seen ≥ since */
  since?: string;
  /** last_changed ≥ updated_since */
  updated_since?: string;
  vertical?: string[];
  min_mw?: number;
  /** OGC datetime as an inclusive date range (either end open). */
  datetime?: { from: string | null; to: string | null };
}

export interface GisRequest {
  layer: GisLayer;
  filters: GisFilters;
  limit: number;
  /** Last id of the previous page (from `cursor`), or null. */
  afterId: number | null;
  /** Hash binding cursors to the layer and filters. */
  hash: string;
}

const SCHEMA_DIR = new URL('../../schemas/', import.meta.url);
const readSchema = (f: string): Record<string, any> => JSON.parse(readFileSync(new URL(f, SCHEMA_DIR), 'utf8'));
const AUTHORITIES = new Map<string, string>((readSchema('lead.schema.json').properties.planning_authority.enum as string[]).map((a) => [foldPlace(a), a]));
const VERTICALS = readSchema('infrastructure-project.schema.json').properties.vertical.enum as string[];

/** The parameters each endpoint takes (`access_token`: see docs/gis.md; it is never a filter). */
const FEED_PARAMS: Record<GisLayer, readonly string[]> = {
  leads: ['page_size', 'bbox', 'authority', 'since', 'updated_since', 'cursor', 'access_token'],
  infrastructure: ['page_size', 'bbox', 'authority', 'since', 'updated_since', 'vertical', 'min_mw', 'cursor', 'access_token'],
};
const OGC_PARAMS = ['limit', 'bbox', 'datetime', 'cursor', 'f', 'access_token'] as const;

/** Parse `bbox`: 4 numbers (or 6 for OGC, heights ignored) in WGS 84 degrees. */
export function parseBBox(text: string, allow3d: boolean): BBox | ParamError {
  const parts = text.split(',').map((s) => s.trim());
  const nums = parts.map((p) => (/^-?\d+(\.\d+)?([eE][-+]?\d+)?$/.test(p) ? Number(p) : NaN));
  const err = (reason: string): ParamError => ({ name: 'bbox', reason });
  if (!(nums.length === 4 || (allow3d && nums.length === 6)) || nums.some((n) => !Number.isFinite(n))) {
    return err(`must be four comma-separated numbers: min longitude, min latitude, max longitude, max latitude${allow3d ? ' (or six with heights)' : ''}`);
  }
  const [w, s, e, n] = nums.length === 6 ? [nums[0]!, nums[1]!, nums[3]!, nums[4]!] : (nums as [number, number, number, number]);
  if (w < -180 || w > 180 || e < -180 || e > 180) return err('longitudes must be between -180 and 180');
  if (s < -90 || s > 90 || n < -90 || n > 90) return err('latitudes must be between -90 and 90');
  if (s > n) return err('min latitude must not be greater than max latitude');
  return [w, s, e, n];
}

/** A calendar date YYYY-MM-DD that exists. */
function isDate(s: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(s)) return false;
  const d = new Date(`${s}T00:00:00Z`);
  return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === s;
}

/** OGC `datetime`: an instant or an interval `a/b` with `..` (or empty) for an open end; RFC 3339 dates or date-times (compared by date). */
export function parseDatetime(text: string): GisFilters['datetime'] | ParamError {
  const err: ParamError = { name: 'datetime', reason: 'must be a date or date-time (RFC 3339) or an interval start/end with .. for an open end, e.g. 2025-01-01/..' };
  const one = (s: string): string | null | undefined => {
    if (s === '..' || s === '') return null;
    const m = /^(\d{4}-\d{2}-\d{2})(T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2}))?$/.exec(s);
    return m && isDate(m[1]!) ? m[1]! : undefined;
  };
  const parts = text.split('/');
  if (parts.length === 1) {
    const d = one(parts[0]!);
    return d ? { from: d, to: d } : err;
  }
  if (parts.length !== 2) return err;
  const from = one(parts[0]!);
  const to = one(parts[1]!);
  if (from === undefined || to === undefined || (from === null && to === null)) return err;
  if (from !== null && to !== null && from > to) return { name: 'datetime', reason: 'the interval start is after its end' };
  return { from, to };
}

function intParam(name: string, text: string, max: number, errors: ParamError[]): number | undefined {
  const n = /^\d{1,9}$/.test(text) ? Number(text) : NaN;
  if (!Number.isInteger(n) || n < 1 || n > max) {
    errors.push({ name, reason: `must be an integer from 1 to ${max}` });
    return undefined;
  }
  return n;
}

/**
 * Parse a GeoJSON feed request (`kind: 'feed'`) or an OGC items request (`kind: 'ogc'`).
 * Throws one 400 naming every bad parameter; unknown parameters are rejected (OGC API
 * Features /req/core/query-param-unknown).
 */
export function parseGisQuery(raw: RawQuery, layer: GisLayer, kind: 'feed' | 'ogc', secrets: CursorSecrets): GisRequest {
  const allowed = kind === 'feed' ? FEED_PARAMS[layer] : OGC_PARAMS;
  const errors: ParamError[] = [];
  const filters: GisFilters = {};
  let limit = kind === 'feed' ? FEED_PAGE_SIZE_DEFAULT : OGC_LIMIT_DEFAULT;
  let cursor: string | undefined;
  for (const [name, value] of Object.entries(raw)) {
    if (value === undefined) continue;
    if (!allowed.includes(name)) {
      errors.push({ name, reason: REASONS.unknownParameter, allowed: [...allowed] });
      continue;
    }
    const isList = name === 'authority' || name === 'vertical';
    if (Array.isArray(value) && !isList) {
      errors.push({ name, reason: REASONS.repeated });
      continue;
    }
    const text = Array.isArray(value) ? value.join(',') : value;
    switch (name) {
      case 'page_size':
      case 'limit': {
        const n = intParam(name, text, GIS_PAGE_MAX, errors);
        if (n !== undefined) limit = n;
        break;
      }
      case 'bbox': {
        const b = parseBBox(text, kind === 'ogc');
        if (Array.isArray(b)) filters.bbox = b;
        else errors.push(b);
        break;
      }
      case 'authority': {
        const names = text.split(',').map((s) => s.trim()).filter(Boolean);
        const unknown = names.filter((s) => !AUTHORITIES.has(foldPlace(s)));
        if (names.length === 0) errors.push({ name, reason: REASONS.empty });
        else if (unknown.length > 0) errors.push({ name, reason: `unknown authority ${unknown.map((u) => JSON.stringify(u)).join(', ')}`, allowed: [...AUTHORITIES.values()].sort() });
        else filters.authority = [...new Set(names.map((s) => AUTHORITIES.get(foldPlace(s))!))].sort();
        break;
      }
      case 'since':
      case 'updated_since':
        if (isDate(text)) filters[name] = text;
        else errors.push({ name, reason: REASONS.notADate });
        break;
      case 'vertical': {
        const vs = text.split(',').map((s) => s.trim()).filter(Boolean);
        if (vs.length === 0 || vs.some((v) => !VERTICALS.includes(v))) errors.push({ name, reason: REASONS.notAllowed, allowed: VERTICALS });
        else filters.vertical = [...new Set(vs)].sort();
        break;
      }
      case 'min_mw': {
        const n = /^\d+(\.\d+)?$/.test(text) ? Number(text) : NaN;
        if (!Number.isFinite(n)) errors.push({ name, reason: 'must be a number ≥ 0' });
        else filters.min_mw = n;
        break;
      }
      case 'datetime': {
        const d = parseDatetime(text);
        if (d && 'reason' in d) errors.push(d);
        else if (d) filters.datetime = d;
        break;
      }
      case 'f':
        if (!['json', 'geojson'].includes(text)) errors.push({ name, reason: REASONS.notAllowed, allowed: ['json', 'geojson'] });
        break;
      case 'cursor':
        cursor = text;
        break;
      case 'access_token':
        break; // consumed by the GIS token middleware
    }
  }
  if (errors.length > 0) throw invalidParams(errors);
  const hash = filtersHash(`gis/${layer}`, filters, 'id');
  let afterId: number | null = null;
  if (cursor !== undefined) {
    const c = decodeCursor(cursor, hash, secrets);
    if (c.key.length !== 1 || !Number.isSafeInteger(c.key[0])) throw invalidParams([{ name: 'cursor', reason: 'not a valid cursor; follow the next link unchanged' }]);
    afterId = c.key[0] as number;
  }
  return { layer, filters, limit, afterId, hash };
}

/**
 * Whether the pre-rendered layer files answer this request without a query: no filter other
 * than `bbox` (checked against the index) and, for leads, one `authority` (its own file).
 */
export function servedFromIndex(req: Pick<GisRequest, 'layer' | 'filters'>): boolean {
  const { bbox: _b, authority, ...others } = req.filters;
  if (Object.keys(others).length > 0) return false;
  return authority === undefined || (req.layer === 'leads' && authority.length === 1);
}

const round6 = (c: string): string => `round(CAST(${c} AS DOUBLE), 6)`;

/** WHERE conditions of a GIS request over a layer's table (aliased `t`), features with coordinates only. */
export function gisWhere(layer: GisLayer, f: GisFilters): SqlQuery {
  const c = ['t.lat IS NOT NULL', 't.lon IS NOT NULL', 'isfinite(t.lat)', 'isfinite(t.lon)'];
  const params: unknown[] = [];
  const inList = (col: string, vs: readonly unknown[]): void => {
    c.push(`${col} IN (${vs.map(() => '?').join(', ')})`);
    params.push(...vs);
  };
  if (f.bbox) {
    const [w, s, e, n] = f.bbox;
    c.push(`${round6('t.lat')} BETWEEN ? AND ?`);
    params.push(s, n);
    if (w <= e) c.push(`${round6('t.lon')} BETWEEN ? AND ?`);
    else c.push(`(${round6('t.lon')} >= ? OR ${round6('t.lon')} <= ?)`);
    params.push(w, e);
  }
  if (f.authority) inList('t.planning_authority', f.authority);
  if (f.since) (c.push('t.first_seen >= CAST(? AS DATE)'), params.push(f.since));
  if (f.updated_since) (c.push('t.last_changed >= CAST(? AS DATE)'), params.push(f.updated_since));
  if (f.vertical) inList('t.vertical', f.vertical);
  if (f.min_mw !== undefined) (c.push('t.capacity_mw >= ?'), params.push(f.min_mw));
  if (f.datetime) {
    const col = `t.${DATETIME_COLUMN[layer]}`;
    if (f.datetime.from) (c.push(`${col} >= CAST(? AS DATE)`), params.push(f.datetime.from));
    if (f.datetime.to) (c.push(`${col} <= CAST(? AS DATE)`), params.push(f.datetime.to));
  }
  return { sql: c.join(' AND '), params };
}

/** Ids of one page: after `afterId`, ascending, `limit` of them (callers ask for one more to see if a next page exists). */
export function gisIdsQuery(table: string, layer: GisLayer, f: GisFilters, afterId: number | null, limit: number): SqlQuery {
  const w = gisWhere(layer, f);
  const params = [...w.params];
  let sql = `SELECT t.id AS id FROM ${table} AS t WHERE ${w.sql}`;
  if (afterId !== null) (sql += ' AND t.id > ?'), params.push(afterId);
  sql += ' ORDER BY t.id LIMIT ?';
  params.push(limit);
  return { sql, params };
}

/** `numberMatched`: every feature matching the filters. */
export function gisCountQuery(table: string, layer: GisLayer, f: GisFilters): SqlQuery {
  const w = gisWhere(layer, f);
  return { sql: `SELECT count(*) AS n FROM ${table} AS t WHERE ${w.sql}`, params: w.params };
}
