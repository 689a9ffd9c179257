/**
 * The OpenAPI operations and response schemas of the exports, GeoJSON feeds and OGC API
 * Features (issue 5), merged into the document by `api/openapi.ts`. The export filters are the
 * properties of `schemas/leads-query.schema.json` (without paging and sort), so the two lists
 * cannot drift apart.
 */
import { readFileSync } from 'node:fs';
import type { Endpoint } from './openapi.ts';
import { EXPORT_LIMIT_DEFAULT, EXPORT_LIMIT_MAX } from './query/export-query.ts';
import { FEED_PAGE_SIZE_DEFAULT, GIS_PAGE_MAX, OGC_LIMIT_DEFAULT } from './query/feeds-query.ts';
import { GIS_TOKEN_TTL_DEFAULT_S, GIS_TOKEN_TTL_MAX_S } from './gis/token.ts';

type Json = Record<string, any>;

const ref = (name: string): Json => ({ $ref: `#/components/schemas/${name}` });
const leadsQuery = (): Json => JSON.parse(readFileSync(new URL('../schemas/leads-query.schema.json', import.meta.url), 'utf8')) as Json;

/** The `/v1/leads` filters as a query schema (no `page`, `page_size`, `sort`, `cursor`), plus `extra`. */
function exportQuery(extra: Json): Json {
  const s = leadsQuery();
  const { page: _p, page_size: _ps, sort: _s, cursor: _c, ...filters } = s.properties as Json;
  return { type: 'object', properties: { ...filters, ...extra } };
}

const DATE = { type: 'string', format: 'date', pattern: '^\\d{4}-\\d{2}-\\d{2}$' };
const BBOX = {
  type: 'string',
  pattern: '^-?\\d+(\\.\\d+)?(,-?\\d+(\\.\\d+)?){3}$',
  description: 'Bounding box `minLon,minLat,maxLon,maxLat` (WGS 84 degrees, edges included; minLon > maxLon crosses the antimeridian).',
  examples: ['-6.4,53.2,-6.1,53.45'],
};
const ACCESS_TOKEN = {
  type: 'string',
  pattern: '^gt_[A-Za-z0-9_-]+$',
  description: 'For GIS clients that can only add query parameters: a token from `/feeds/token` instead of the Authorization header (never both). Every link in the response carries it on; it is redacted from logs and problem bodies.',
};
const CURSOR = { type: 'string', description: 'Opaque cursor; follow the `next` link rather than building it.' };

const feedQuery = (infra: boolean): Json => ({
  type: 'object',
  properties: {
    page_size: { type: 'integer', minimum: 1, maximum: GIS_PAGE_MAX, default: FEED_PAGE_SIZE_DEFAULT, description: `Features per page (default ${FEED_PAGE_SIZE_DEFAULT}, at most ${GIS_PAGE_MAX}).` },
    bbox: BBOX,
    authority: { type: 'array', items: { type: 'string' }, description: 'Planning authorities, any case and accents; comma-separated values match any of them.' },
    since: { ...DATE, description: 'Records first seen (`first_seen`) on or after this date: new records.' },
    updated_since: { ...DATE, description: 'Records changed (`last_changed`) on or after this date: new or updated records.' },
    ...(infra
      ? {
          vertical: { type: 'array', items: { $ref: 'infrastructure-project.schema.json#/properties/vertical' }, description: 'Infrastructure verticals, comma-separated (any of them).' },
          min_mw: { type: 'number', minimum: 0, description: 'Minimum capacity in MW (projects without a capacity are left out).' },
        }
      : {}),
    cursor: CURSOR,
    access_token: ACCESS_TOKEN,
  },
});

/** `crs` and `bbox-crs` of the OGC items (OGC API Features Part 2), read from their query schema. */
const OGC_CRS_QUERY = JSON.parse(readFileSync(new URL('../schemas/ogc-crs-query.schema.json', import.meta.url), 'utf8')) as Json;

const ogcItemsQuery: Json = {
  type: 'object',
  properties: {
    limit: { type: 'integer', minimum: 1, maximum: GIS_PAGE_MAX, default: OGC_LIMIT_DEFAULT, description: `Features per page (default ${OGC_LIMIT_DEFAULT}, at most ${GIS_PAGE_MAX}).` },
    bbox: { ...BBOX, pattern: '^-?\\d+(\\.\\d+)?(,-?\\d+(\\.\\d+)?){3}(,-?\\d+(\\.\\d+)?,-?\\d+(\\.\\d+)?)?$', description: `${BBOX.description} Six numbers (with heights) are accepted; heights are ignored.` },
    datetime: {
      type: 'string',
      description: 'A date / date-time or an interval `start/end` (`..` for an open end), compared by date with `received_date` (leads) or `first_seen` (infrastructure).',
      examples: ['2025-01-01/..'],
    },
    f: { type: 'string', enum: ['json', 'geojson'], description: 'Output format (GeoJSON only).' },
    cursor: CURSOR,
    access_token: ACCESS_TOKEN,
    // OGC API Features Part 2 (issue 17.5): declared in schemas/ogc-crs-query.schema.json
    ...OGC_CRS_QUERY.properties,
  },
};

const metaQuery: Json = { type: 'object', properties: { f: { type: 'string', enum: ['json'], description: 'Output format (JSON only).' }, access_token: ACCESS_TOKEN } };
const collectionId = { name: 'collectionId', in: 'path', required: true, description: 'Collection: `leads` or `infrastructure`.', schema: { type: 'string' } };

const FILE_FORMATS = [
  ['csv', 'text/csv', 'CSV (RFC 4180): a header with every lead column, in schema order, the same for every scope (enriched columns blank for scopes without them, never dropped); CRLF line ends; text quoted, lists joined with `;`, dates `YYYY-MM-DD`, booleans `true`/`false`, NULL as an empty field. Written by DuckDB\'s CSV writer and streamed while it writes; gzip with `Accept-Encoding: gzip`.'],
  ['jsonl', 'application/x-ndjson', 'JSON Lines: one lead object per line, the same keys and values as `GET /leads` results (enriched fields null for scopes without them). Written by DuckDB\'s JSON writer and streamed while it writes; gzip with `Accept-Encoding: gzip`.'],
  ['parquet', 'application/vnd.apache.parquet', 'Parquet (ZSTD): one row per lead, every lead column with its type (enriched columns typed NULL for scopes without them), for loading into data warehouses. Written by DuckDB to a temporary file, then sent with its `Content-Length`.'],
] as const;

/** The operations of this issue. */
export function exportEndpoints(): Endpoint[] {
  const files: Endpoint[] = FILE_FORMATS.map(([ext, type, what]) => ({
    method: 'get',
    path: `/export/applications.${ext}`,
    tag: 'Exports',
    summary: `Whole filtered set as ${ext === 'jsonl' ? 'JSON Lines' : ext.toUpperCase()}`,
    description:
      `${what} The filters of \`/leads\` (AND across filters, OR within one); rows in the release's order, newest first (received_date descending; no sort, so an export never holds every row in memory). The file is named in \`Content-Disposition\` (\`applications-<release>.${ext}\`). ` +
      'The whole filtered count is charged to the daily row budget (commonwealth, ent_api) before any byte is sent; a larger file is refused with 429 `budget_exhausted`. ' +
      '`HEAD` or `dry_run=1` say what it would cost (`X-Export-Rows`, `X-Budget-Cost`; `dry_run=1` as a BudgetQuote) and charge nothing. ' +
      'The file is written to a temp file readable by the server alone; when the exports running on the server hold their temp space, a new one waits a few seconds, then gets 503 `export_busy` with `Retry-After` (not charged).',
    query: exportQuery({}), // dry_run: added to every keyed operation by the access model (api/access/openapi.ts)
    ok: { schema: { type: 'string', description: `The ${ext} file.` }, type, description: `The ${ext} file (or, with \`dry_run=1\`, an application/json BudgetQuote).`, alt: { type: 'application/json', schema: ref('BudgetQuote') } },
    errors: [400, 429],
    cached: true,
  }));
  return [
    {
      method: 'get',
      path: '/export/applications',
      tag: 'Exports',
      summary: 'Cursor-paginated JSON export',
      description:
        `The filtered leads in id order, \`limit\` per page (default ${EXPORT_LIMIT_DEFAULT}, at most ${EXPORT_LIMIT_MAX}); pass \`next_cursor\` as \`cursor\` (with the same filters) until it is null. ` +
        'A cursor is pinned to the release the export started on, so a release published meanwhile does not change the export; it stays valid while that release is kept on disk (RELEASE_RETENTION_WEEKS), then 410 `cursor_expired`. Each page is charged to the daily row budget.',
      query: exportQuery({
        limit: { type: 'integer', minimum: 1, maximum: EXPORT_LIMIT_MAX, default: EXPORT_LIMIT_DEFAULT, description: `Records per page (default ${EXPORT_LIMIT_DEFAULT}, at most ${EXPORT_LIMIT_MAX}).` },
        cursor: { type: 'string', description: 'The `next_cursor` of the previous page.' },
      }),
      ok: { schema: ref('ExportPage'), description: 'A page of the export.' },
      errors: [400, 410, 429],
      cached: true,
    },
    ...files,
    ...(['leads', 'infrastructure'] as const).map(
      (layer): Endpoint => ({
        method: 'get',
        path: `/feeds/${layer}.geojson`,
        tag: 'GIS',
        summary: layer === 'leads' ? 'Leads as a GeoJSON layer' : 'Infrastructure projects as a GeoJSON layer',
        description:
          'An RFC 7946 FeatureCollection (`application/geo+json`) of Point features in id order: `id` is the stable registry id, `properties` the full record plus `link` (its public page)' +
          (layer === 'infrastructure' ? ', including `applicant` and, where published, `connection_voltage_kv`' : '') +
          '. Page by following the `next` link; `numberMatched` counts every matching feature. Records without coordinates are not in the layer. Scopes ent_feed and custom only.',
        query: feedQuery(layer === 'infrastructure'),
        ok: { schema: ref('GeojsonPage'), type: 'application/geo+json', description: 'A page of features.' },
        errors: [400, 429],
        cached: true,
      }),
    ),
    {
      method: 'get',
      path: '/feeds/token',
      tag: 'GIS',
      summary: 'A query-parameter token for GIS clients',
      description:
        'For GIS clients that cannot send an Authorization header: a token sealing this key (AES-256-GCM under the server secret) with an expiry, to pass as `access_token=` on `/feeds/…` and `/ogc…` URLs. ' +
        `Valid for \`ttl\` seconds (default ${GIS_TOKEN_TTL_DEFAULT_S}, at most ${GIS_TOKEN_TTL_MAX_S}) and only while the key is active. Needs the Bearer header; scopes ent_feed and custom.`,
      query: { type: 'object', properties: { ttl: { type: 'integer', minimum: 60, maximum: GIS_TOKEN_TTL_MAX_S, default: GIS_TOKEN_TTL_DEFAULT_S, description: 'Lifetime in seconds.' } } },
      ok: { schema: ref('GisToken'), description: 'The token.' },
      errors: [400],
      cached: true,
    },
    {
      method: 'get',
      path: '/ogc',
      tag: 'GIS',
      summary: 'OGC API Features landing page',
      description: 'OGC API – Features Part 1 (core, GeoJSON): links to the API definition, the conformance classes and the collections. Add `<base>/v1/ogc` as an OGC API Features connection in QGIS, ArcGIS or GDAL (`OAPIF:`), with the Bearer key as HTTP header or an `access_token`. Scopes ent_feed and custom.',
      query: metaQuery,
      ok: { schema: ref('OgcLandingPage'), description: 'The landing page.' },
      errors: [400],
      cached: true,
    },
    {
      method: 'get',
      path: '/ogc/conformance',
      tag: 'GIS',
      summary: 'OGC API Features conformance classes',
      description: 'The conformance classes implemented: core and GeoJSON.',
      query: metaQuery,
      ok: { schema: ref('OgcConformance'), description: 'The conformance declaration.' },
      errors: [400],
      cached: true,
    },
    {
      method: 'get',
      path: '/ogc/collections',
      tag: 'GIS',
      summary: 'OGC API Features collections',
      description: 'The collections `leads` and `infrastructure` with their spatial and temporal extents.',
      query: metaQuery,
      ok: { schema: ref('OgcCollections'), description: 'The collections.' },
      errors: [400],
      cached: true,
    },
    {
      method: 'get',
      path: '/ogc/collections/{collectionId}',
      tag: 'GIS',
      summary: 'One OGC API Features collection',
      description: 'A collection with its extent and a link to its items.',
      pathParams: [collectionId],
      query: metaQuery,
      ok: { schema: ref('OgcCollection'), description: 'The collection.' },
      errors: [400, 404],
      cached: true,
    },
    {
      method: 'get',
      path: '/ogc/collections/{collectionId}/items',
      tag: 'GIS',
      summary: 'Features of a collection',
      description: 'The same features as the GeoJSON feeds: `bbox`, `datetime` and `limit`, paged by the `next` link, `numberMatched` / `numberReturned`. Unknown parameters are a 400.',
      pathParams: [collectionId],
      query: ogcItemsQuery,
      ok: { schema: ref('GeojsonPage'), type: 'application/geo+json', description: 'A page of features.' },
      errors: [400, 404, 429],
      cached: true,
    },
    {
      method: 'get',
      path: '/ogc/collections/{collectionId}/items/{featureId}',
      tag: 'GIS',
      summary: 'One feature',
      description: 'One feature by its stable id, with `self` and `collection` links.',
      pathParams: [collectionId, { name: 'featureId', in: 'path', required: true, description: 'The feature (record) id.', schema: { type: 'integer', minimum: 1 } }],
      query: { ...metaQuery, properties: { ...metaQuery['properties'], crs: OGC_CRS_QUERY.properties.crs } },
      ok: { schema: ref('GeojsonPage/$defs/feature'), type: 'application/geo+json', description: 'The feature.' },
      errors: [400, 404, 429],
      cached: true,
    },
  ];
}

const LINKS = { type: 'array', description: 'Links (OGC API Common).', items: ref('GeojsonPage/$defs/link') };

/** Response schemas of these operations that are not files in `schemas/`. */
export function exportResponseSchemas(): Json {
  const collection: Json = {
    type: 'object',
    description: 'An OGC API Features collection.',
    properties: {
      id: { type: 'string', description: 'Collection id.' },
      title: { type: 'string', description: 'Title.' },
      description: { type: 'string', description: 'What it holds.' },
      itemType: { type: 'string', description: 'Always feature.' },
      crs: { type: 'array', description: 'Coordinate reference systems the items can be asked in (`crs`): CRS84 and EPSG:2157 (OGC API Features Part 2).', items: { type: 'string' } },
      storageCrs: { type: 'string', description: 'The CRS the features are stored in (CRS84): asked in it, they are served without a transformation.' },
      extent: { type: 'object', description: 'Spatial (bbox, CRS84) and temporal (interval) extent.' },
      links: LINKS,
    },
    required: ['id', 'links', 'extent'],
  };
  return {
    GisToken: {
      type: 'object',
      description: 'A GIS query token.',
      properties: {
        access_token: { type: 'string', pattern: '^gt_[A-Za-z0-9_-]+$', description: 'Pass as `access_token=` on GIS URLs.' },
        token_type: { type: 'string', const: 'query', description: 'Always query.' },
        expires_at: { type: 'string', format: 'date-time', description: 'Expiry.' },
        expires_in: { type: 'integer', description: 'Seconds until expiry.' },
        key_id: { type: 'string', description: 'Id of the key the token stands for.' },
        usage: { type: 'string', description: 'How to use it.' },
      },
      required: ['access_token', 'token_type', 'expires_at', 'expires_in', 'key_id'],
      additionalProperties: false,
    },
    OgcLandingPage: {
      type: 'object',
      description: 'OGC API landing page.',
      properties: { title: { type: 'string', description: 'Title.' }, description: { type: 'string', description: 'Description.' }, links: LINKS },
      required: ['links'],
    },
    OgcConformance: {
      type: 'object',
      description: 'OGC API conformance declaration.',
      properties: { conformsTo: { type: 'array', description: 'Conformance class URIs.', items: { type: 'string', format: 'uri' } } },
      required: ['conformsTo'],
    },
    OgcCollection: collection,
    OgcCollections: {
      type: 'object',
      description: 'OGC API collections.',
      properties: { links: LINKS, collections: { type: 'array', description: 'The collections.', items: ref('OgcCollection') } },
      required: ['links', 'collections'],
    },
  };
}
