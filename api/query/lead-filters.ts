/**
 * The lead filters of `GET /v1/leads` (and of the exports and webhook saved filters, which take
 * the same query), declared once. Each entry names the parameter, its kind, the leads column it
 * reads and its documentation; everything else is derived from this table:
 *  - the query schema `schemas/leads-query.schema.json` and so the OpenAPI parameters
 *    (`leadsQueryJsonSchema`; the checked-in file is regenerated with
 *    `node --import tsx api/query/write-query-schemas.ts` and a test fails when they differ);
 *  - the parser (api/query/leads-params.ts: list / number / boolean shaping and per-kind extraction);
 *  - the SQL clauses (`filterClauses`, used by api/query/leads-query.ts for pages, exports and
 *    webhooks, and by bench/baseline-pg.ts in PostgreSQL's dialect);
 *  - the in-memory index (api/engine/lead-index.ts: one evaluation strategy per kind);
 *  - the canonical saved-filter string (api/webhooks/saved-filter.ts: parameters in table order);
 *  - the random queries of test/api/engine/lead-index.test.ts.
 *
 * Kinds: `text` (free-text search over the search index), `enum` (values fixed by the schema; a
 * comma list matching any), `multi` (values as published in the release, matched through a
 * folder; a comma list matching any), `range` (a number, `column >= value`), `flag` (a boolean,
 * `column = value`), `date` (YYYY-MM-DD, inclusive bound `from` or `to` on a date column; a `to`
 * before the `from` of the same column is a 400), `key` (one value matched exactly, ignoring case
 * and surrounding spaces, on a column with a value per lead — the council's reference: looked up in
 * a sorted key index, not a bitset per value, and an unknown value simply matches nothing),
 * `geometry` (an area over the lat / lon columns — `near` with its `radius_m`, `bbox`, `polygon` —
 * parsed and tested by the one geometry module api/gis/geometry.ts; the index answers from a k-d
 * tree, the SQL paths take the matching ids, `areaIds` in api/gis/geometry-ids.ts). A new
 * filter of an existing kind is one entry here (plus its column in the release).
 */
import { READINESS_VALUES, STATUS_OF } from '../../common/lead-lifecycle.ts';
import { SCALES, USE_CLASS_CODES, VERTICAL_CODES, WORKS_KINDS } from '../../common/lead-vocabulary.ts';
import { RADIUS_M, type AreaGeometry, type BBox, type NearArea } from '../gis/geometry.ts';

/** How a `multi` filter's values are folded before they are looked up among the release's values. */
export type FilterFold = 'place' | 'text';

interface FilterBase {
  /** Query parameter. */
  readonly name: string;
  /** Leads column it reads. */
  readonly column: string;
  /** Documentation (the schema's and OpenAPI's `description`). */
  readonly doc: string;
  readonly examples?: readonly unknown[];
}

export interface TextFilter extends FilterBase {
  readonly kind: 'text';
  readonly maxLength: number;
}
export interface EnumFilter extends FilterBase {
  readonly kind: 'enum';
  readonly values: readonly string[];
  /** The column holds a list (a lead matches when its list holds a wanted value). */
  readonly listColumn?: boolean;
  /** Extra schema annotations (`x-…`). */
  readonly annotations?: Readonly<Record<string, unknown>>;
}
export interface MultiFilter extends FilterBase {
  readonly kind: 'multi';
  readonly fold: FilterFold;
}
export interface RangeFilter extends FilterBase {
  readonly kind: 'range';
  readonly type: 'number' | 'integer';
}
export interface FlagFilter extends FilterBase {
  readonly kind: 'flag';
}
export interface DateFilter extends FilterBase {
  readonly kind: 'date';
  readonly bound: 'from' | 'to';
  /** Another spelling accepted for the same filter (the GIS feeds' `updated_since` / `since`); the name is canonical. */
  readonly alias?: string;
}
export interface KeyFilter extends FilterBase {
  readonly kind: 'key';
  readonly maxLength: number;
}
/** A parameter that belongs to a geometry filter and means nothing alone (`radius_m` of `near`). */
export interface Companion {
  readonly name: string;
  readonly doc: string;
  readonly min: number;
  readonly max: number;
  readonly default: number;
}
export interface GeometryFilter extends FilterBase {
  readonly kind: 'geometry';
  /** `circle`: `near` (lat,lon) with `radius_m`; `bbox`: minLon,minLat,maxLon,maxLat; `polygon`: a GeoJSON Polygon / MultiPolygon. */
  readonly shape: 'circle' | 'bbox' | 'polygon';
  /** The longitude column (`column` is the latitude's). */
  readonly lonColumn: string;
  readonly companion?: Companion;
}
export type LeadFilter =
  TextFilter | EnumFilter | MultiFilter | RangeFilter | FlagFilter | DateFilter | KeyFilter | GeometryFilter;
export type FilterKind = LeadFilter['kind'];

const READINESS = READINESS_VALUES;
const LIST = 'Comma-separated values match any of them (OR).';

/** The lead filters, in the order of the schema, the SQL clauses and the canonical saved-filter string. */
export const LEAD_FILTERS = [
  {
    name: 'q',
    kind: 'text',
    column: 'description',
    maxLength: 200,
    examples: ['roof extension', '"heat pump" solar*', 'attic OR loft conversion'],
    doc:
      "Free-text search over description, address, authority and application number, ranked by BM25 over the release's search index (words stemmed, accents and case ignored, " +
      'stopwords dropped). Every word is required (`kitchen extension`: leads holding both); `"heat pump"` is a phrase (those words, in that order, next to each other, as written); ' +
      '`solar*` a prefix (any word starting with at least 3 letters or digits); `solar OR wind` either (OR binds tighter than the implicit AND: `attic OR loft conversion` = ' +
      '(attic OR loft) AND conversion). Malformed syntax (an unbalanced quote, a lone OR, a bare or short `*`) is a 400 naming `q`. See docs/search.md.',
  },
  {
    name: 'vertical',
    kind: 'enum',
    column: 'verticals',
    listColumn: true,
    examples: [['solar', 'roofing']],
    doc: `Trade verticals: a lead matches when it is relevant to the vertical. ${LIST}`,
    values: VERTICAL_CODES,
  },
  {
    name: 'explicit_vertical',
    kind: 'enum',
    column: 'explicit_verticals',
    listColumn: true,
    examples: [['roofing']],
    doc: `Trade verticals the description itself names (\`explicit_verticals\`: its trade words, e.g. "dormer" → \`roofing\`), not only implied by the kind of build (an extension implies \`groundworks\`; \`vertical=\` matches both). A supplier who wants the jobs whose text names their trade asks \`explicit_vertical=roofing\`. ${LIST}`,
    values: VERTICAL_CODES,
  },
  {
    name: 'authority',
    kind: 'multi',
    column: 'planning_authority',
    fold: 'place',
    examples: [['Dublin City']],
    doc: `Planning authorities, matched regardless of case and accents (\`dun laoghaire-rathdown\`). ${LIST}`,
  },
  {
    name: 'county',
    kind: 'multi',
    column: 'county',
    fold: 'place',
    examples: [['Cork']],
    doc: `Counties, matched regardless of case and accents. ${LIST}`,
  },
  {
    name: 'readiness',
    kind: 'enum',
    column: 'lead_readiness',
    values: READINESS,
    examples: [['commencing']],
    doc: `Lifecycle stages (\`lead_readiness\`). ${LIST}`,
  },
  {
    name: 'status',
    kind: 'enum',
    column: 'status',
    values: ['planning', 'approved', 'active', 'closed', ...READINESS],
    examples: [['commencing'], ['active']],
    annotations: { 'x-status-of': STATUS_OF },
    doc: `Lifecycle filter: a coarse status group (\`planning\`, \`approved\`, \`active\`, \`closed\`) or any lifecycle stage of \`readiness\` (\`commencing\`, …), which matches exactly that stage. ${LIST}`,
  },
  {
    name: 'use_class',
    kind: 'enum',
    column: 'use_class',
    examples: [['data_centre']],
    doc: `Use classes. ${LIST}`,
    values: USE_CLASS_CODES,
  },
  {
    name: 'works_kind',
    kind: 'enum',
    column: 'works_kind',
    examples: [['new_works', 'extension_of_duration']],
    values: WORKS_KINDS,
    doc: `Kinds of works (\`works_kind\`): \`new_works\`, \`extension_of_duration\`, \`outline\`, \`retention\`, \`amendment\`, \`declaration\`. Lists without this filter show every kind; \`retention\`, \`amendment\` and \`declaration\` leads have no work to sell and no verticals, so any \`vertical=\` filter leaves them out. ${LIST}`,
  },
  {
    name: 'scale',
    kind: 'enum',
    column: 'scale',
    values: SCALES,
    examples: [['major']],
    doc: `Project scale bands. ${LIST}`,
  },
  {
    name: 'application_type',
    kind: 'multi',
    column: 'application_type',
    fold: 'text',
    examples: [['PERMISSION', 'RETENTION']],
    doc: `Application types as published by the authority (\`application_type\`: \`PERMISSION\`, \`RETENTION\`, \`OUTLINE PERMISSION\`, …), matched regardless of case and accents; leads without one never match. ${LIST}`,
  },
  {
    name: 'min_value',
    kind: 'range',
    column: 'est_value',
    type: 'number',
    examples: [1000000],
    doc: 'Minimum estimated value (`est_value`) in euros; decimals allowed (`250000.50`).',
  },
  {
    name: 'min_units',
    kind: 'range',
    column: 'num_units',
    type: 'integer',
    examples: [10],
    doc: 'Minimum number of residential units (`num_units`); leads without a unit count never match.',
  },
  {
    name: 'has_contact',
    kind: 'flag',
    column: 'has_contact',
    doc: '`true`/`1`: only leads whose source held contact details; `false`/`0`: only those without.',
  },
  {
    name: 'demolition',
    kind: 'flag',
    column: 'demolition',
    doc: '`1`/`true`: only projects involving demolition; `0`/`false`: only those without.',
  },
  {
    name: 'received_from',
    kind: 'date',
    column: 'received_date',
    bound: 'from',
    examples: ['2025-01-01'],
    doc: 'Only leads received on or after this date (`received_date >= received_from`), `YYYY-MM-DD`.',
  },
  {
    name: 'received_to',
    kind: 'date',
    column: 'received_date',
    bound: 'to',
    examples: ['2025-12-31'],
    doc: 'Only leads received on or before this date (`received_date <= received_to`), `YYYY-MM-DD`; not before `received_from`.',
  },
  {
    name: 'changed_since',
    kind: 'date',
    column: 'last_changed',
    bound: 'from',
    alias: 'updated_since',
    examples: ['2026-11-16'],
    doc: "Only leads that changed or appeared on or after this date (`last_changed >= changed_since`; `last_changed` is the as-of date of the release that last changed the lead), `YYYY-MM-DD`. `updated_since` (the GIS feeds' spelling) is accepted as an alias. For every change with its before / after values, and removals, read `GET /events`.",
  },
  {
    name: 'created_since',
    kind: 'date',
    column: 'first_seen',
    bound: 'from',
    alias: 'since',
    examples: ['2026-11-16'],
    doc: "Only leads that first appeared on or after this date (`first_seen >= created_since`), `YYYY-MM-DD`. `since` (the GIS feeds' spelling) is accepted as an alias.",
  },
  {
    name: 'application_number',
    kind: 'key',
    column: 'application_number',
    maxLength: 60,
    examples: ['26/02170'],
    doc: "The planning authority's own reference (`application_number`, e.g. `26/02170`), matched exactly, ignoring case and surrounding spaces; references repeat across authorities, so combine with `authority`. An unknown reference matches nothing.",
  },
  {
    name: 'near',
    kind: 'geometry',
    shape: 'circle',
    column: 'lat',
    lonColumn: 'lon',
    examples: ['53.3498,-6.2603'],
    doc: 'Leads within `radius_m` of this point: `latitude,longitude` in WGS 84 decimal degrees (latitude first; a value that looks like longitude,latitude in Ireland is refused). In when the great-circle (haversine, R = 6,371,008.8 m) distance is at most `radius_m` (edge inclusive, to 1 mm). Each result then carries `distance_m`; `sort=distance` orders by it. Leads without coordinates never match.',
    companion: {
      name: 'radius_m',
      min: RADIUS_M.min,
      max: RADIUS_M.max,
      default: RADIUS_M.default,
      doc: `Radius of \`near\` in whole metres, ${RADIUS_M.min}…${RADIUS_M.max} (default ${RADIUS_M.default}); only with \`near\`.`,
    },
  },
  {
    name: 'bbox',
    kind: 'geometry',
    shape: 'bbox',
    column: 'lat',
    lonColumn: 'lon',
    examples: ['-6.40,53.25,-6.10,53.42'],
    doc: 'Leads inside a box: `minLon,minLat,maxLon,maxLat` in WGS 84 decimal degrees (the GeoJSON / OGC order), edges inclusive. Leads without coordinates never match.',
  },
  {
    name: 'polygon',
    kind: 'geometry',
    shape: 'polygon',
    column: 'lat',
    lonColumn: 'lon',
    examples: [
      '{"type":"Polygon","coordinates":[[[-6.30,53.33],[-6.22,53.33],[-6.22,53.37],[-6.30,53.37],[-6.30,53.33]]]}',
    ],
    doc: 'Leads inside an area: a GeoJSON Polygon or MultiPolygon as JSON (URL-encoded; positions `[longitude, latitude]`), holes honoured, a lead on any ring counts as inside. At most 10,000 positions; rings closed, of 4 positions or more, not crossing or touching; within Ireland. Longer areas: `POST /leads/search`. Leads without coordinates never match.',
  },
] as const satisfies readonly LeadFilter[];

type Decl = (typeof LEAD_FILTERS)[number];
type ValueOf<F extends Decl> = F extends { kind: 'geometry'; shape: 'circle' }
  ? NearArea
  : F extends { kind: 'geometry'; shape: 'bbox' }
    ? BBox
    : F extends { kind: 'geometry' }
      ? AreaGeometry
      : F['kind'] extends 'text' | 'date' | 'key'
        ? string
        : F['kind'] extends 'enum' | 'multi'
          ? string[]
          : F['kind'] extends 'range'
            ? number
            : boolean;

/** Filters after validation (`multi` filters hold the release's canonical values; `near` its radius). */
export type LeadsFilters = { [F in Decl as F['name']]?: ValueOf<F> };
export type LeadFilterName = keyof LeadsFilters;

/** The table as its general type (for code that walks it). */
export const FILTERS: readonly LeadFilter[] = LEAD_FILTERS;

/** A filter's declaration by parameter name. */
export const FILTER_BY_NAME: ReadonlyMap<string, LeadFilter> = new Map(FILTERS.map((f) => [f.name, f]));

/** The filters of some kinds. */
export function filtersOfKind<K extends FilterKind>(...kinds: K[]): Extract<LeadFilter, { kind: K }>[] {
  return FILTERS.filter((f): f is Extract<LeadFilter, { kind: K }> => (kinds as FilterKind[]).includes(f.kind));
}

/** Every query parameter of a filter: its name, its alias's and its companion's (`near`, `radius_m`). */
export function filterParams(f: LeadFilter): string[] {
  if (f.kind === 'date' && f.alias) return [f.name, f.alias];
  return f.kind === 'geometry' && f.companion ? [f.name, f.companion.name] : [f.name];
}

/** Fold a `key` filter's value (and its column's) for matching: surrounding spaces and case ignored. */
export function foldKey(s: string): string {
  return s.trim().toLowerCase();
}

/**
 * A filter's value as query parameters (the canonical saved-filter string; `near` gives `near`
 * and `radius_m`, a polygon its GeoJSON text).
 *
 * @example filterQueryPairs(FILTER_BY_NAME.get('near')!, { lat: 53.35, lon: -6.26, radius_m: 500 }) // [['near', '53.35,-6.26'], ['radius_m', '500']]
 */
export function filterQueryPairs(f: LeadFilter, v: unknown): [string, string][] {
  if (f.kind === 'geometry') {
    if (f.shape === 'circle') {
      const n = v as NearArea;
      return [
        [f.name, `${n.lat},${n.lon}`],
        [f.companion!.name, String(n.radius_m)],
      ];
    }
    return [[f.name, f.shape === 'bbox' ? (v as BBox).join(',') : JSON.stringify(v)]];
  }
  return [[f.name, Array.isArray(v) ? v.map(String).join(',') : String(v)]];
}

/** The lifecycle stage → status group map of `status` (its `x-status-of`). */
export const STATUS_GROUP_OF: Readonly<Record<string, string>> = STATUS_OF;

/** `[from, to]` pairs of date filters on one column (a `to` before its `from` is refused). */
export function datePairs(): readonly (readonly [DateFilter, DateFilter])[] {
  return DATE_PAIRS; // (the filter table is fixed: made once, read by every leads query parsed)
}
const DATE_PAIRS: readonly (readonly [DateFilter, DateFilter])[] = (() => {
  const dates = filtersOfKind('date');
  return dates
    .filter((f) => f.bound === 'from')
    .flatMap((from) => {
      const to = dates.find((t) => t.bound === 'to' && t.column === from.column);
      return to ? [[from, to] as const] : [];
    });
})();

// ---------------------------------------------------------------------------------------------
// Schema

type Json = Record<string, unknown>;

/** The JSON Schema property of one filter (parsed form: lists are arrays). */
export function filterSchema(f: LeadFilter): Json {
  const ex = f.examples ? { examples: f.examples } : {};
  const list = (items: Json): Json => ({ type: 'array', description: f.doc, items, minItems: 1, maxItems: 40, ...ex });
  switch (f.kind) {
    case 'text':
      return { type: 'string', description: f.doc, minLength: 1, maxLength: f.maxLength, ...ex };
    case 'enum':
      return { ...list({ type: 'string', enum: f.values }), ...f.annotations };
    case 'multi':
      return list({ type: 'string', minLength: 1, maxLength: 60 });
    case 'range':
      return { type: f.type, description: f.doc, minimum: 0, ...ex };
    case 'flag':
      return { type: 'boolean', description: f.doc, ...ex };
    case 'date':
      return { type: 'string', format: 'date', description: f.doc, ...ex };
    case 'key':
      return { type: 'string', description: f.doc, minLength: 1, maxLength: f.maxLength, ...ex };
    case 'geometry':
      return {
        type: 'string',
        description: f.doc,
        minLength: 1,
        ...(f.shape === 'polygon' ? {} : { maxLength: 200 }),
        ...ex,
      };
  }
}

/** The schema properties of a filter: its own, its alias's (`updated_since`), its companion's (`radius_m`). */
function filterProperties(f: LeadFilter): [string, Json][] {
  const own: [string, Json] = [f.name, filterSchema(f)];
  if (f.kind === 'date' && f.alias) {
    const { examples: _e, ...rest } = filterSchema(f);
    return [own, [f.alias, { ...rest, description: `Alias of \`${f.name}\` (the same filter; give one of the two).` }]];
  }
  if (f.kind !== 'geometry' || !f.companion) return [own];
  const c = f.companion;
  return [
    own,
    [c.name, { type: 'integer', description: c.doc, minimum: c.min, maximum: c.max, examples: [c.default] }],
  ];
}

/**
 * The orders of `GET /leads` (`sort`): `relevance` only with `q`, `distance` only with `near`. Declared
 * here, beside the filters, so the query schema, the parser and the SQL builders share one list.
 */
export const LEADS_SORT_NAMES = [
  'newest',
  'oldest',
  'value_desc',
  'value_asc',
  'last_changed',
  'last_changed_asc',
  'relevance',
  'distance',
] as const;

/** The non-filter parameters of `GET /leads`: sort and paging. */
const LEADS_PAGING_SCHEMA: Json = {
  sort: {
    type: 'string',
    description:
      "Order of results: `newest` (received_date descending, the default without `q`), `oldest`, `value_desc`, `value_asc`, `last_changed` (last_changed descending: the most recently changed first), `last_changed_asc` (the oldest change first: a mirror resuming from a cursor), `relevance` (BM25 score; only with `q`, and the default with `q`), or `distance` (`distance_m` ascending; only with `near`). Ties are broken by id (ascending for `relevance` and `distance`, otherwise in the sort's direction). Every sort pages with `cursor` (keyset).",
    enum: [...LEADS_SORT_NAMES],
  },
  page: {
    type: 'integer',
    description:
      'Page number, 1-based (default 1; at most PAGE_MAX, default 100: use `cursor` beyond). Not with `cursor`.',
    minimum: 1,
    examples: [2],
  },
  page_size: {
    type: 'integer',
    description: 'Results per page (default PAGE_SIZE_DEFAULT = 25, at most PAGE_SIZE_MAX = 100).',
    minimum: 1,
    examples: [25],
  },
  cursor: {
    type: 'string',
    description:
      'Opaque keyset cursor: the `next_cursor` of the previous response, with the same filters and sort. Not with `page`. Signed by the server: an altered cursor is refused.',
    pattern: '^[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+$',
    maxLength: 1000,
  },
};

/** `schemas/leads-query.schema.json`, generated from the table (the checked-in file must equal it). */
export function leadsQueryJsonSchema(): Json {
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $id: 'https://schemas.leads.ie/v1/leads-query.schema.json',
    title: 'Leads query',
    description:
      'Query parameters of `GET /leads`, after parsing: comma-separated lists become arrays, integers and booleans are parsed. Filters combine with AND; the values of one list filter combine with OR. Any other parameter is rejected (`unknown_parameter`). Paging limits that depend on the server configuration (`page` at most PAGE_MAX, `page_size` at most PAGE_SIZE_MAX) are checked after this schema.',
    type: 'object',
    properties: { ...Object.fromEntries(FILTERS.flatMap(filterProperties)), ...LEADS_PAGING_SCHEMA },
    additionalProperties: false,
  };
}

/**
 * The JSON body of `POST /leads/search`: the members of `GET /leads`' query (derived from
 * `leadsQueryJsonSchema`), each also accepted as its query text; lists as arrays, `near` as
 * `{lat, lon}`, `bbox` as 4 numbers, `polygon` as a GeoJSON object. The route turns the body into
 * the query (api/routes/leads.ts `searchBodyAsQuery`) and parses it as the GET's.
 */
export function leadsSearchBodySchema(): Json {
  const q = leadsQueryJsonSchema() as { properties: Record<string, Json> };
  const text = { type: 'string', description: 'As in the query string.' };
  const props: Record<string, Json> = {};
  for (const [name, p] of Object.entries(q.properties)) {
    const { description, examples: _e, ...rest } = p;
    const f = FILTER_BY_NAME.get(name);
    let alts: Json[] = [rest, ...(p.type === 'string' ? [] : [text])];
    if (f?.kind === 'geometry' && f.shape === 'circle') {
      alts = [
        rest,
        {
          type: 'object',
          properties: {
            lat: { type: 'number', minimum: -90, maximum: 90 },
            lon: { type: 'number', minimum: -180, maximum: 180 },
          },
          required: ['lat', 'lon'],
          additionalProperties: false,
        },
      ];
    } else if (f?.kind === 'geometry' && f.shape === 'bbox') {
      alts = [
        rest,
        {
          type: 'array',
          items: { type: 'number' },
          minItems: 4,
          maxItems: 4,
          description: 'minLon, minLat, maxLon, maxLat',
        },
      ];
    } else if (f?.kind === 'geometry') {
      alts = [
        {
          type: 'object',
          description: 'A GeoJSON Polygon or MultiPolygon geometry (RFC 7946), positions [longitude, latitude].',
          properties: { type: { enum: ['Polygon', 'MultiPolygon'] }, coordinates: { type: 'array' } },
          required: ['type', 'coordinates'],
        },
        rest,
      ];
    }
    props[name] = alts.length === 1 ? { description, ...alts[0] } : { description, anyOf: alts }; // a one-schema anyOf is that schema
  }
  return {
    type: 'object',
    description: 'The parameters of `GET /leads` as JSON members (same names, same rules).',
    properties: props,
    additionalProperties: false,
  };
}

// ---------------------------------------------------------------------------------------------
// SQL

/** The SQL dialect of the clauses: DuckDB (`?`, one per value) or PostgreSQL (`$n`, arrays bound whole). */
export type FilterDialect = 'duckdb' | 'postgres';

/**
 * The WHERE conditions of the filters (AND across filters, OR within a list) over the leads
 * table aliased `l`, in table order, with their bound values. `text` (`q`) has no condition
 * here: it is a join with the search index (leads-query.ts `leadsFrom`). `first` numbers
 * PostgreSQL's placeholders. The `geometry` filters are not evaluated in SQL: the caller passes
 * `areaIds`, the ids of the leads in every given area (api/gis/geometry-ids.ts, by the one
 * geometry module), and they become one `l.id IN (…)` condition; geometry filters without
 * `areaIds` throw.
 *
 * @example filterClauses({ county: ['Cork'], min_value: 1e6 })
 *   // { clauses: ['l.county IN (?)', 'l.est_value >= ?'], params: ['Cork', 1000000] }
 */
export function filterClauses(
  filters: LeadsFilters,
  dialect: FilterDialect = 'duckdb',
  first = 1,
  areaIds?: readonly number[],
): { clauses: string[]; params: unknown[] } {
  let areaDone = false;
  const clauses: string[] = [];
  const params: unknown[] = [];
  const p = (v: unknown): string => {
    params.push(v);
    return dialect === 'duckdb' ? '?' : `$${first + params.length - 1}`;
  };
  const given = filters as Record<string, unknown>;
  for (const f of FILTERS) {
    const v = given[f.name];
    if (v === undefined) continue;
    const col = `l.${f.column}`;
    switch (f.kind) {
      case 'text':
        break;
      case 'enum':
      case 'multi': {
        const vs = v as string[];
        if (vs.length === 0) break;
        const listColumn = f.kind === 'enum' && f.listColumn === true;
        if (dialect === 'postgres')
          clauses.push(listColumn ? `${col} && ${p(vs)}::text[]` : `${col} = ANY(${p(vs)}::text[])`);
        else if (!listColumn) clauses.push(`${col} IN (${vs.map(p).join(', ')})`);
        else if (vs.length === 1) clauses.push(`list_contains(${col}, ${p(vs[0])})`);
        else clauses.push(`(${vs.map((x) => `list_contains(${col}, ${p(x)})`).join(' OR ')})`);
        break;
      }
      case 'range':
        clauses.push(`${col} >= ${p(v)}`);
        break;
      case 'flag':
        clauses.push(`${col} = ${p(v)}`);
        break;
      case 'date':
        clauses.push(
          `${col} ${f.bound === 'from' ? '>=' : '<='} ${dialect === 'duckdb' ? `CAST(${p(v)} AS DATE)` : `${p(v)}::date`}`,
        );
        break;
      case 'key':
        clauses.push(`lower(${dialect === 'duckdb' ? 'trim' : 'btrim'}(${col})) = ${p(foldKey(v as string))}`);
        break;
      case 'geometry': {
        if (areaDone) break;
        areaDone = true;
        if (!areaIds) throw new Error(`the geometry filter ${f.name} needs the ids of the leads in its area (areaIds)`);
        clauses.push(areaIdsCondition('l.id', areaIds, dialect, p));
        break;
      }
    }
  }
  return { clauses, params };
}

/**
 * The one SQL condition of the geometry filters: `idColumn` among `ids` (the ids in every given
 * area, from api/gis/geometry-ids.ts), binding its value through `bind`. Used by `filterClauses`
 * (alias `l`) and by the GIS feeds' and OGC items' queries (alias `t`, api/query/feeds-query.ts).
 *
 * @example areaIdsCondition('t.id', [3, 9], 'duckdb', bind) // "t.id IN (SELECT CAST(unnest(string_split(?, ',')) AS BIGINT))", bound '3,9'
 */
export function areaIdsCondition(
  idColumn: string,
  ids: readonly number[],
  dialect: FilterDialect,
  bind: (v: unknown) => string,
): string {
  if (ids.length === 0) return 'FALSE';
  if (dialect === 'postgres') return `${idColumn} = ANY(${bind([...ids])}::bigint[])`;
  return `${idColumn} IN (SELECT CAST(unnest(string_split(${bind(ids.join(','))}, ',')) AS BIGINT))`;
}
