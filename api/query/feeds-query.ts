/**
 * Parameters and pure SQL builders of the GIS endpoints: the GeoJSON feeds
 * (`/v1/feeds/leads.geojson`, `/v1/feeds/infrastructure.geojson`) and OGC API Features items
 * (`/v1/ogc/collections/{id}/items`). Both select features of one layer by the same filters
 * and page them by id ascending; they differ only in parameter names (`page_size` vs `limit`,
 * `since`/`updated_since` vs `datetime`). Their parameters are `schemas/gis-feed-query.schema.json`
 * and `schemas/ogc-items-query.schema.json`, parsed by `parseQuery`; `parseBBox` and
 * `parseDatetime` are the typed post-parsers of what JSON Schema cannot say.
 *
 * A query here only picks feature ids (`gisIdsQuery`) and counts them (`gisCountQuery`); the
 * features themselves are the release's pre-rendered lines (`api/gis/layer-index.ts`).
 */
import { invalidParams, type ParamError } from '../errors.ts';
import { foldPlace, REASONS } from './query-common.ts';
import { parseQuery, querySchema, schemaFile, schemaVariant, type RawQuery } from './parse-query.ts';
import { parseBBox, type BBox } from '../gis/geometry.ts';
import { decodeCursor, filtersHash, type CursorSecrets } from './paging.ts';
import type { SqlQuery } from './leads-query.ts';

export type GisLayer = 'leads' | 'infrastructure';

type Json = Record<string, any>;

/** The query schema of the feeds (`schemas/gis-feed-query.schema.json`; `vertical` and `min_mw` are the infrastructure layer's). */
const FEED_SCHEMA = querySchema('gis-feed-query.schema.json');
/** The query schema of OGC items (`schemas/ogc-items-query.schema.json`). */
const OGC_SCHEMA = querySchema('ogc-items-query.schema.json');
const INFRA_ONLY = ['vertical', 'min_mw'];
const FEED_SCHEMAS: Record<GisLayer, Json> = {
  leads: schemaVariant(FEED_SCHEMA, 'leads', (name) => !INFRA_ONLY.includes(name)),
  infrastructure: FEED_SCHEMA,
};

/** The query schema of a GIS endpoint: a layer's feed or the OGC items (both layers alike). */
export function gisQuerySchema(kind: 'feed' | 'ogc', layer: GisLayer = 'leads'): Json {
  return kind === 'ogc' ? OGC_SCHEMA : FEED_SCHEMAS[layer];
}

/** Features per page: feeds `page_size` and OGC `limit` (defaults and maximum as the schemas say). */
export const FEED_PAGE_SIZE_DEFAULT: number = FEED_SCHEMA.properties.page_size.default;
export const OGC_LIMIT_DEFAULT: number = OGC_SCHEMA.properties.limit.default;
export const GIS_PAGE_MAX: number = FEED_SCHEMA.properties.page_size.maximum;

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

/** fold(name) → canonical planning authority (the lead schema's enum). */
const AUTHORITIES = new Map<string, string>((schemaFile('lead.schema.json').properties.planning_authority.enum as string[]).map((a) => [foldPlace(a), a]));

export { parseBBox };

/** A calendar date YYYY-MM-DD that exists (the date of an OGC datetime). */
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

/**
 * Parse a GeoJSON feed request (`kind: 'feed'`) or an OGC items request (`kind: 'ogc'`) with
 * `parseQuery` against the endpoint's schema. Throws one 400 naming every bad parameter; unknown
 * parameters are rejected, naming the accepted ones (OGC API Features
 * /req/core/query-param-unknown). `access_token` is accepted and never a filter (the GIS token
 * middleware consumed it, docs/gis.md).
 */
export function parseGisQuery(raw: RawQuery, layer: GisLayer, kind: 'feed' | 'ogc', secrets: CursorSecrets): GisRequest {
  const q = parseQuery(gisQuerySchema(kind, layer), raw, {
    listAllowed: true,
    parsers: { bbox: (text) => parseBBox(text, kind === 'ogc'), datetime: (text) => parseDatetime(text) },
  });
  const { errors } = q;
  const v = q.values as Record<string, any>;
  const filters: GisFilters = {};
  // filters in query order (their hash is of a stable JSON, so the order is only cosmetic)
  for (const name of Object.keys(v)) {
    switch (name) {
      case 'bbox':
      case 'since':
      case 'updated_since':
      case 'min_mw':
      case 'datetime':
        (filters as Record<string, unknown>)[name] = v[name];
        break;
      case 'authority': {
        const names = v[name] as string[];
        const unknown = names.filter((s) => !AUTHORITIES.has(foldPlace(s)));
        if (unknown.length > 0) errors.push({ name, reason: REASONS.unknownValues('authority', unknown), allowed: [...AUTHORITIES.values()].sort() });
        else filters.authority = [...new Set(names.map((s) => AUTHORITIES.get(foldPlace(s))!))].sort();
        break;
      }
      case 'vertical':
        filters.vertical = [...new Set(v[name] as string[])].sort();
        break;
    }
  }
  if (errors.length > 0) throw invalidParams(errors);
  const limit: number = (kind === 'feed' ? v.page_size : v.limit) ?? (kind === 'feed' ? FEED_PAGE_SIZE_DEFAULT : OGC_LIMIT_DEFAULT);
  const hash = filtersHash(`gis/${layer}`, filters, 'id');
  let afterId: number | null = null;
  if (v.cursor !== undefined) {
    const c = decodeCursor(v.cursor as string, hash, secrets);
    if (c.key.length !== 1 || !Number.isSafeInteger(c.key[0])) throw invalidParams([{ name: 'cursor', reason: REASONS.badCursor('follow the next link unchanged') }]);
    afterId = c.key[0] as number;
  }
  return { layer, filters, limit, afterId, hash };
}

const OGC_META_SCHEMA = querySchema('ogc-meta-query.schema.json');
const TOKEN_SCHEMA = querySchema('gis-token-query.schema.json');

/** The query schema of the OGC metadata resources (`f=json`, `access_token`) and of `/feeds/token` (`ttl`). */
export function gisOtherQuerySchema(what: 'ogc-meta' | 'token'): Json {
  return what === 'ogc-meta' ? OGC_META_SCHEMA : TOKEN_SCHEMA;
}

/** Lifetime of a GIS token in seconds: default and bounds of `ttl` (schemas/gis-token-query.schema.json). */
export const GIS_TOKEN_TTL: { readonly default: number; readonly min: number; readonly max: number } = {
  default: TOKEN_SCHEMA.properties.ttl.default,
  min: TOKEN_SCHEMA.properties.ttl.minimum,
  max: TOKEN_SCHEMA.properties.ttl.maximum,
};

/** Check the query of an OGC metadata resource: only `f=json` and `access_token`. Throws one 400. */
export function parseOgcMetaQuery(raw: RawQuery): void {
  const q = parseQuery(OGC_META_SCHEMA, raw, { listAllowed: true });
  if (q.errors.length > 0) throw invalidParams(q.errors);
}

/** The `ttl` of `GET /feeds/token` (seconds; default GIS_TOKEN_TTL.default). Throws one 400. */
export function parseGisTokenQuery(raw: RawQuery): { ttl: number } {
  const q = parseQuery(TOKEN_SCHEMA, raw, { listAllowed: true });
  if (q.errors.length > 0) throw invalidParams(q.errors);
  return { ttl: (q.values['ttl'] as number | undefined) ?? GIS_TOKEN_TTL.default };
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
