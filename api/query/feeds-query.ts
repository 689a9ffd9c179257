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
import { invalidParams, type ParamError } from '../http/errors.ts';
import { foldPlace, REASONS } from './query-common.ts';
import { parseQuery, querySchema, schemaFile, schemaVariant, type ParsedQuery, type RawQuery } from './parse-query.ts';
import { parseBBox, type AreaGeometry, type BBox, type NearArea } from '../gis/geometry.ts';
import { areaFiltersOf, LEAD_FILTER_PARSERS, leadFiltersOf, placeNames, type PlaceNames } from './leads-params.ts';
import {
  areaIdsCondition,
  filterClauses,
  filterParams,
  FILTERS,
  filtersOfKind,
  type GeometryFilter,
  type LeadFilter,
} from './lead-filters.ts';
import { decodeCursor, filtersHash, type CursorSecrets } from './paging.ts';
import { leadsFrom, normalisedFilters, type LeadsFilters, type SearchSource, type SqlQuery } from './leads-query.ts';

export type GisLayer = 'leads' | 'infrastructure';

type Json = Record<string, any>;

/** The query schema of the feeds (`schemas/gis-feed-query.schema.json`; `vertical` and `min_mw` are the infrastructure layer's). */
const FEED_SCHEMA = querySchema('gis-feed-query.schema.json');
/** The query schema of OGC items (`schemas/ogc-items-query.schema.json`). */
const OGC_SCHEMA = querySchema('ogc-items-query.schema.json');
const INFRA_ONLY = ['vertical', 'min_mw'];

/**
 * The lead filters of `/v1/leads` the leads layer (feed and OGC collection `leads`) takes beside
 * the GIS parameters: every filter of the table but those the GIS endpoints already have in their
 * own form — `bbox` (four or six numbers, `bbox-crs`), `authority`, the dates with a GIS alias
 * (`changed_since` / `updated_since`, `created_since` / `since`) and the areas of
 * `GIS_AREA_FILTERS`. `q` is among them: a filter there (the leads holding its words), features
 * stay in id order (no relevance sort). Parsed by `leadFiltersOf`, as on `/v1/leads`.
 */
export const GIS_LEAD_FILTERS: readonly LeadFilter[] = FILTERS.filter(
  (f) => f.kind !== 'geometry' && f.name !== 'authority' && !(f.kind === 'date' && f.alias),
);
/** Their query parameters, in the filter table's order. */
export const GIS_LEAD_PARAMS: readonly string[] = GIS_LEAD_FILTERS.flatMap(filterParams);

/**
 * A GIS schema with the lead filters added before `cursor`, each a `$ref` to its declaration in
 * `leads-query.schema.json` (so the parser, the OpenAPI document and the OGC queryables read one
 * declaration); `note` prefixes their descriptions.
 */
function withLeadFilters(schema: Json, variant: string, keep: (name: string) => boolean, note: string): Json {
  return schemaVariant(schema, variant, keep, (props) => {
    const entries = Object.entries(props);
    for (const k of Object.keys(props)) delete props[k];
    for (const [k, v] of entries) {
      if (k === 'cursor') {
        for (const name of GIS_LEAD_PARAMS) {
          const declared = querySchema('leads-query.schema.json').properties[name] as Json;
          props[name] = {
            $ref: `leads-query.schema.json#/properties/${name}`,
            description: `${note}${declared.description as string}`,
          };
        }
      }
      props[k] = v;
    }
  });
}

const FEED_SCHEMAS: Record<GisLayer, Json> = {
  leads: withLeadFilters(
    FEED_SCHEMA,
    'leads',
    (name) => !INFRA_ONLY.includes(name),
    'A filter of `GET /leads`, the same values and rules: ',
  ),
  infrastructure: FEED_SCHEMA,
};
/** OGC items: the collection `leads` takes the lead filters too; `infrastructure` does not (a 400 naming them). */
const OGC_SCHEMAS: Record<GisLayer, Json> = {
  leads: withLeadFilters(
    OGC_SCHEMA,
    'leads',
    () => true,
    'Collection `leads` only (on `infrastructure` a 400 `unknown_parameter`); a filter of `GET /leads`, the same values and rules: ',
  ),
  infrastructure: OGC_SCHEMA,
};

/**
 * The query schema of a GIS endpoint: a layer's feed or a collection's OGC items. The OGC
 * document's one operation for both collections shows the `leads` one (its extra parameters
 * say they are the `leads` collection's only).
 */
export function gisQuerySchema(kind: 'feed' | 'ogc', layer: GisLayer = 'leads'): Json {
  return kind === 'ogc' ? OGC_SCHEMAS[layer] : FEED_SCHEMAS[layer];
}

/** Features per page: feeds `page_size` and OGC `limit` (defaults and maximum as the schemas say). */
export const FEED_PAGE_SIZE_DEFAULT: number = FEED_SCHEMA.properties.page_size.default;
export const OGC_LIMIT_DEFAULT: number = OGC_SCHEMA.properties.limit.default;
export const GIS_PAGE_MAX: number = FEED_SCHEMA.properties.page_size.maximum;

/** The date each layer's OGC `datetime` filters on. */
export const DATETIME_COLUMN: Record<GisLayer, string> = { leads: 'received_date', infrastructure: 'first_seen' };

/**
 * The geometry filters of `/v1/leads` the feeds and OGC items take too: every one but `bbox` (theirs
 * is their own: OGC's six numbers and `bbox-crs`), i.e. `near` with `radius_m` and `polygon` —
 * declared in the filter table, parsed by its parsers, each a `$ref` to its declaration in
 * `leads-query.schema.json` in the feed and items schemas (test/api/query/feeds-query.test.ts
 * checks both schemas name them). In WGS 84 whatever `crs` / `bbox-crs` say.
 */
export const GIS_AREA_FILTERS: readonly GeometryFilter[] = filtersOfKind('geometry').filter((f) => f.shape !== 'bbox');
/** Their query parameters (`near`, `radius_m`, `polygon`). */
export const GIS_AREA_PARAMS: readonly string[] = GIS_AREA_FILTERS.flatMap((f) =>
  f.companion ? [f.name, f.companion.name] : [f.name],
);
const AREA_PARSERS = Object.fromEntries(GIS_AREA_FILTERS.map((f) => [f.name, LEAD_FILTER_PARSERS[f.name]!]));

/** The date filters' canonical names and the feeds' first spellings (the `GisFilters` members). */
const GIS_DATE_ALIASES = [
  ['changed_since', 'updated_since'],
  ['created_since', 'since'],
] as const;

export interface GisFilters {
  bbox?: BBox;
  /** `near` with its `radius_m` (tested by api/gis/geometry.ts; the ids go into the query, `areaIds`). */
  near?: NearArea;
  /** `polygon` (likewise). */
  polygon?: AreaGeometry;
  authority?: string[];
  /** first_seen ≥ since */
  since?: string;
  /** last_changed ≥ updated_since */
  updated_since?: string;
  vertical?: string[];
  min_mw?: number;
  /** OGC datetime as an inclusive date range (either end open). */
  datetime?: { from: string | null; to: string | null };
  /** The leads layer's filters of the filter table (`GIS_LEAD_FILTERS`), as `/v1/leads` parses them. */
  lead?: LeadsFilters;
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
const AUTHORITIES = new Map<string, string>(
  (schemaFile('lead.schema.json').properties.planning_authority.enum as string[]).map((a) => [foldPlace(a), a]),
);

/** A calendar date YYYY-MM-DD that exists (the date of an OGC datetime). */
function isDate(s: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(s)) return false;
  const d = new Date(`${s}T00:00:00Z`);
  return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === s;
}

/** OGC `datetime`: an instant or an interval `a/b` with `..` (or empty) for an open end; RFC 3339 dates or date-times (compared by date). */
export function parseDatetime(text: string): GisFilters['datetime'] | ParamError {
  const err: ParamError = {
    name: 'datetime',
    reason:
      'must be a date or date-time (RFC 3339) or an interval start/end with .. for an open end, e.g. 2025-01-01/..',
  };
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
  if (from !== null && to !== null && from > to)
    return { name: 'datetime', reason: 'the interval start is after its end' };
  return { from, to };
}

/**
 * Parse a GeoJSON feed request (`kind: 'feed'`) or an OGC items request (`kind: 'ogc'`) with
 * `parseQuery` against the endpoint's schema. Throws one 400 naming every bad parameter; unknown
 * parameters are rejected, naming the accepted ones (OGC API Features
 * /req/core/query-param-unknown). `access_token` is accepted and never a filter (the GIS token
 * middleware consumed it, docs/gis.md).
 */
export function parseGisQuery(
  raw: RawQuery,
  layer: GisLayer,
  kind: 'feed' | 'ogc',
  secrets: CursorSecrets,
  places: PlaceNames = NO_PLACES,
): GisRequest {
  const q = parseQuery(gisQuerySchema(kind, layer), raw, {
    listAllowed: true,
    parsers: {
      bbox: (text) => parseBBox(text, kind === 'ogc'),
      datetime: (text) => parseDatetime(text),
      ...AREA_PARSERS,
    },
  });
  const { errors } = q;
  const v = q.values as Record<string, any>;
  const filters: GisFilters = { ...areaFiltersOf(q, GIS_AREA_FILTERS, errors) };
  // filters in query order (their hash is of a stable JSON, so the order is only cosmetic)
  // the API's one spelling (`changed_since`, `created_since`, as on /v1/leads) and the feeds' first
  // (`updated_since`, `since`) are one filter each; a pair given with two values is an error
  for (const [canonical, alias] of GIS_DATE_ALIASES) {
    if (v[canonical] === undefined) continue;
    if (v[alias] !== undefined && v[alias] !== v[canonical])
      errors.push({ name: alias, reason: REASONS.aliasOf(canonical) });
    v[alias] = v[canonical];
    delete v[canonical];
  }
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
        if (unknown.length > 0)
          errors.push({
            name,
            reason: REASONS.unknownValues('authority', unknown),
            allowed: [...AUTHORITIES.values()].sort(),
          });
        else filters.authority = [...new Set(names.map((s) => AUTHORITIES.get(foldPlace(s))!))].sort();
        break;
      }
      case 'vertical':
        if (layer === 'infrastructure') filters.vertical = [...new Set(v[name] as string[])].sort();
        break;
    }
  }
  if (layer === 'leads') {
    const lead = gisLeadFiltersOf(q, places, errors);
    if (Object.keys(lead).length > 0) filters.lead = normalisedFilters(lead);
  }
  if (errors.length > 0) throw invalidParams(errors);
  const limit: number =
    (kind === 'feed' ? v.page_size : v.limit) ?? (kind === 'feed' ? FEED_PAGE_SIZE_DEFAULT : OGC_LIMIT_DEFAULT);
  const hash = filtersHash(`gis/${layer}`, filters, 'id');
  let afterId: number | null = null;
  if (v.cursor !== undefined) {
    const c = decodeCursor(v.cursor as string, hash, secrets);
    if (c.key.length !== 1 || !Number.isSafeInteger(c.key[0]))
      throw invalidParams([{ name: 'cursor', reason: REASONS.badCursor('follow the next link unchanged') }]);
    afterId = c.key[0] as number;
  }
  return { layer, filters, limit, afterId, hash };
}

/** Places of a release without leads: every `multi` value is unknown (tests parse without a release). */
const NO_PLACES: PlaceNames = placeNames([]);

/**
 * The lead filters of a parsed leads-layer query: `leadFiltersOf` (the `/v1/leads` rules: canonical
 * `multi` values through `places`, `status` as stages, a date range's order) over the
 * `GIS_LEAD_PARAMS` given. Errors are added to `errors`.
 */
function gisLeadFiltersOf(q: ParsedQuery, places: PlaceNames, errors: ParamError[]): LeadsFilters {
  const values: Record<string, unknown> = {};
  for (const name of GIS_LEAD_PARAMS) if (q.values[name] !== undefined) values[name] = q.values[name];
  return leadFiltersOf({ values, bad: q.bad }, places, errors);
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

/** Whether a GIS request has `near` or `polygon` (its queries then need `areaIds`). */
function gisHasArea(f: GisFilters): boolean {
  return f.near !== undefined || f.polygon !== undefined;
}

/** Where a GIS query reads: the layer's table and, for the leads layer's `q`, the release's search index. */
export interface GisSource {
  table: string;
  /** The search index (`leadsSource(…).search`); null when the release has none (`q` then matches nothing). */
  search?: SearchSource | null;
}

/**
 * WHERE conditions of a GIS request over a layer's table (aliased `l`, as the filter table's
 * clauses read it), features with coordinates only. The leads layer's lead filters are the filter
 * table's own clauses (`filterClauses`, as for `/v1/leads` in SQL, the exports and webhooks).
 * `near` / `polygon` are not evaluated in SQL: `areaIds` are the ids of the layer's features in
 * them (api/gis/geometry-ids.ts `areaIds`, the one geometry module) — required when either is given.
 */
export function gisWhere(layer: GisLayer, f: GisFilters, areaIds?: readonly number[]): SqlQuery {
  const c = ['l.lat IS NOT NULL', 'l.lon IS NOT NULL', 'isfinite(l.lat)', 'isfinite(l.lon)'];
  const params: unknown[] = [];
  if (gisHasArea(f)) {
    if (!areaIds) throw new Error('near / polygon need the ids of the features in the area (areaIds)');
    c.push(areaIdsCondition('l.id', areaIds, 'duckdb', (v) => (params.push(v), '?')));
  }
  const inList = (col: string, vs: readonly unknown[]): void => {
    c.push(`${col} IN (${vs.map(() => '?').join(', ')})`);
    params.push(...vs);
  };
  if (f.bbox) {
    const [w, s, e, n] = f.bbox;
    c.push(`${round6('l.lat')} BETWEEN ? AND ?`);
    params.push(s, n);
    if (w <= e) c.push(`${round6('l.lon')} BETWEEN ? AND ?`);
    else c.push(`(${round6('l.lon')} >= ? OR ${round6('l.lon')} <= ?)`);
    params.push(w, e);
  }
  if (f.authority) inList('l.planning_authority', f.authority);
  if (f.since) (c.push('l.first_seen >= CAST(? AS DATE)'), params.push(f.since));
  if (f.updated_since) (c.push('l.last_changed >= CAST(? AS DATE)'), params.push(f.updated_since));
  if (f.vertical) inList('l.vertical', f.vertical);
  if (f.min_mw !== undefined) (c.push('l.capacity_mw >= ?'), params.push(f.min_mw));
  if (f.datetime) {
    const col = `l.${DATETIME_COLUMN[layer]}`;
    if (f.datetime.from) (c.push(`${col} >= CAST(? AS DATE)`), params.push(f.datetime.from));
    if (f.datetime.to) (c.push(`${col} <= CAST(? AS DATE)`), params.push(f.datetime.to));
  }
  if (f.lead && layer === 'leads') {
    const lead = filterClauses(f.lead, 'duckdb'); // no geometry among them (GIS_LEAD_FILTERS); `q` is the FROM's join
    c.push(...lead.clauses);
    params.push(...lead.params);
  }
  return { sql: c.join(' AND '), params };
}

/** FROM of a GIS query: the table `l`, joined with the BM25 scores of `q` (only leads holding its words) as on `/v1/leads` (`leadsFrom`). */
function gisFrom(src: GisSource, f: GisFilters): SqlQuery {
  const q = f.lead?.q;
  if (q === undefined) return { sql: `${src.table} AS l`, params: [] };
  if (!src.search) return { sql: `(SELECT * FROM ${src.table} WHERE FALSE) AS l`, params: [] }; // no search index: `q` matches nothing
  return leadsFrom({ leads: src.table, search: src.search }, q);
}

/** Ids of one page: after `afterId`, ascending, `limit` of them (callers ask for one more to see if a next page exists); `areaIds` as `gisWhere`. */
export function gisIdsQuery(
  src: GisSource,
  layer: GisLayer,
  f: GisFilters,
  afterId: number | null,
  limit: number,
  areaIds?: readonly number[],
): SqlQuery {
  const from = gisFrom(src, f);
  const w = gisWhere(layer, f, areaIds);
  const params = [...from.params, ...w.params];
  let sql = `SELECT l.id AS id FROM ${from.sql} WHERE ${w.sql}`;
  if (afterId !== null) ((sql += ' AND l.id > ?'), params.push(afterId));
  sql += ' ORDER BY l.id LIMIT ?';
  params.push(limit);
  return { sql, params };
}

/** `numberMatched`: every feature matching the filters; `areaIds` as `gisWhere`. */
export function gisCountQuery(src: GisSource, layer: GisLayer, f: GisFilters, areaIds?: readonly number[]): SqlQuery {
  const from = gisFrom(src, f);
  const w = gisWhere(layer, f, areaIds);
  return { sql: `SELECT count(*) AS n FROM ${from.sql} WHERE ${w.sql}`, params: [...from.params, ...w.params] };
}
