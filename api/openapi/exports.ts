/**
 * The OpenAPI operations and response schemas of the exports, GeoJSON feeds and OGC API
 * Features (issue 5), merged into the document by `api/openapi/document.ts`. Their query parameters are
 * the schemas the parsers use (`schemas/export-query.schema.json`, whose filters are references
 * to `leads-query.schema.json`; `gis-feed-query.schema.json`; `ogc-items-query.schema.json`), so
 * the document and the code cannot drift apart.
 */
import type { Endpoint } from './endpoint.ts';
import { EXPORT_LIMIT_DEFAULT, EXPORT_LIMIT_MAX, exportQuerySchema } from '../query/export-query.ts';
import { GIS_TOKEN_TTL, gisOtherQuerySchema, gisQuerySchema } from '../query/feeds-query.ts';

type Json = Record<string, any>;

const ref = (name: string): Json => ({ $ref: `#/components/schemas/${name}` });
const metaQuery: Json = gisOtherQuerySchema('ogc-meta');
const collectionId = {
  name: 'collectionId',
  in: 'path',
  required: true,
  description: 'Collection: `leads` or `infrastructure`.',
  schema: { type: 'string' },
};

const FILE_FORMATS = [
  [
    'csv',
    'text/csv',
    "CSV (RFC 4180): a header with every lead column, in schema order, the same for every scope (enriched columns blank for scopes without them, never dropped); CRLF line ends; text quoted, lists joined with `;`, dates `YYYY-MM-DD`, booleans `true`/`false`, NULL as an empty field. Written by DuckDB's CSV writer and streamed while it writes; gzip with `Accept-Encoding: gzip`.",
  ],
  [
    'jsonl',
    'application/x-ndjson',
    "JSON Lines: one lead object per line, the same keys and values as `GET /leads` results (enriched fields null for scopes without them). Written by DuckDB's JSON writer and streamed while it writes; gzip with `Accept-Encoding: gzip`.",
  ],
  [
    'parquet',
    'application/vnd.apache.parquet',
    'Parquet (ZSTD): one row per lead, every lead column with its type (enriched columns typed NULL for scopes without them), for loading into data warehouses. Written by DuckDB to a temporary file, then sent with its `Content-Length`.',
  ],
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
      'The whole filtered count is charged to the daily row budget (commonwealth, ent_api) before any byte is sent; a file larger than what is left today is refused with 429 `budget_exhausted` (retry after the reset), one larger than the whole daily budget with 403 `budget_too_small` (narrow it: filters, `changed_since`, `/events`). ' +
      "`HEAD` (the GET's status and headers, no file written) or `dry_run=1` say what it would cost (`X-Export-Rows`, `X-Budget-Cost`; `dry_run=1` as a BudgetQuote, `application/vnd.leads.quote+json`) and charge nothing. " +
      'The file is written to a temp file readable by the server alone; when the exports running on the server hold their temp space, a new one waits a few seconds, then gets 503 `export_busy` with `Retry-After` (not charged); one export expected to take more than the whole temp bound gets 507 `export_too_large` (not charged), and one that passes it while it is written is stopped (the response is cut).',
    query: exportQuerySchema('file'), // dry_run: added to every keyed operation by the access model (api/openapi/access.ts)
    ok: {
      schema: { type: 'string', description: `The ${ext} file.` },
      type,
      description: `The ${ext} file (or, with \`dry_run=1\`, a BudgetQuote as application/vnd.leads.quote+json).`,
    },
    errors: [400, 429, 507],
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
      query: exportQuerySchema('page'),
      ok: { schema: ref('ExportPage'), description: 'A page of the export.' },
      errors: [400, 410, 429],
      cached: true,
    },
    ...files,
    ...(['leads', 'infrastructure'] as const).map((layer): Endpoint => ({
      method: 'get',
      path: `/feeds/${layer}.geojson`,
      tag: 'GIS',
      summary: layer === 'leads' ? 'Leads as a GeoJSON layer' : 'Infrastructure projects as a GeoJSON layer',
      description:
        'An RFC 7946 FeatureCollection (`application/geo+json`) of Point features in id order: `id` is the stable registry id, `properties` the full record plus `link` (its public page)' +
        (layer === 'infrastructure' ? ', including `applicant` and, where published, `connection_voltage_kv`' : '') +
        '. Page by following the `next` link; `numberMatched` counts every matching feature. Records without coordinates are not in the layer. ' +
        '`bbox`, and `near` + `radius_m` and `polygon` as on `GET /leads` (same rules, same 400 problems; WGS 84), select by area. ' +
        (layer === 'leads'
          ? 'Every filter of `GET /leads` (`vertical`, `status`, `use_class`, `min_value`, `county`, `q`, …) selects too, with the same values, rules and 400 problems: `numberMatched` is the `total` of `GET /leads` with the same filters counting only leads with coordinates (`q` filters; features stay in id order). '
          : '') +
        'Scopes ent_feed and custom only.',
      query: gisQuerySchema('feed', layer),
      ok: { schema: ref('GeojsonPage'), type: 'application/geo+json', description: 'A page of features.' },
      errors: [400, 429],
      cached: true,
    })),
    {
      method: 'get',
      path: '/feeds/token',
      tag: 'GIS',
      summary: 'A query-parameter token for GIS clients',
      description:
        'For GIS clients that cannot send an Authorization header: a token sealing this key (AES-256-GCM under the server secret) with an expiry, to pass as `access_token=` on `/feeds/…` and `/ogc…` URLs. ' +
        `Valid for \`ttl\` seconds (default ${GIS_TOKEN_TTL.default}, at most ${GIS_TOKEN_TTL.max}) and only while the key is active. Needs the Bearer header; scopes ent_feed and custom.`,
      query: gisOtherQuerySchema('token'),
      ok: { schema: ref('GisToken'), description: 'The token.' },
      errors: [400],
      cached: true,
    },
    {
      method: 'get',
      path: '/ogc',
      tag: 'GIS',
      summary: 'OGC API Features landing page',
      description:
        'OGC API – Features Part 1 (core, GeoJSON): links to the API definition, the conformance classes and the collections. Add `<base>/v1/ogc` as an OGC API Features connection in QGIS, ArcGIS or GDAL (`OAPIF:`), with the Bearer key as HTTP header or an `access_token`. Scopes ent_feed and custom.',
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
      description:
        'The same features as the GeoJSON feeds: `bbox` (in `bbox-crs`), `near` + `radius_m` and `polygon` (as on `GET /leads`; always WGS 84, whatever `crs` / `bbox-crs` say), `datetime` and `limit`, ' +
        'paged by the `next` link, `numberMatched` / `numberReturned`. The collection `leads` also takes every filter of `GET /leads` (the parameters below marked so; listed by its `queryables`), with the same values, rules and 400 problems; ' +
        'on `infrastructure` they are a 400 `unknown_parameter`. Unknown parameters are a 400.',
      pathParams: [collectionId],
      query: gisQuerySchema('ogc'),
      ok: { schema: ref('GeojsonPage'), type: 'application/geo+json', description: 'A page of features.' },
      errors: [400, 404, 429],
      cached: true,
    },
    {
      method: 'get',
      path: '/ogc/collections/{collectionId}/queryables',
      tag: 'GIS',
      summary: "The attribute filters of a collection's items",
      description:
        'A JSON Schema (`application/schema+json`, OGC API Features Part 3 "Queryables") whose properties are the query parameters that filter the items by attribute: for `leads` the dates (`changed_since`, `created_since`) and every other filter of `GET /leads` (derived from the same declarations); ' +
        'for `infrastructure` the dates. They are query parameters of `…/items` (no CQL2 `filter`). The collection links to it (rel `http://www.opengis.net/def/rel/ogc/1.0/queryables`).',
      pathParams: [collectionId],
      query: metaQuery,
      ok: { schema: ref('OgcQueryables'), type: 'application/schema+json', description: 'The queryables.' },
      errors: [400, 404],
      cached: true,
    },
    {
      method: 'get',
      path: '/ogc/collections/{collectionId}/items/{featureId}',
      tag: 'GIS',
      summary: 'One feature',
      description: 'One feature by its stable id, with `self` and `collection` links.',
      pathParams: [
        collectionId,
        {
          name: 'featureId',
          in: 'path',
          required: true,
          description: 'The feature (record) id.',
          schema: { type: 'integer', minimum: 1 },
        },
      ],
      query: metaQuery, // crs too (schemas/ogc-meta-query.schema.json)
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
      crs: {
        type: 'array',
        description:
          'Coordinate reference systems the items can be asked in (`crs`): CRS84 and EPSG:2157 (OGC API Features Part 2).',
        items: { type: 'string' },
      },
      storageCrs: {
        type: 'string',
        description:
          'The CRS the features are stored in (CRS84): asked in it, they are served without a transformation.',
      },
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
        access_token: {
          type: 'string',
          pattern: '^gt_[A-Za-z0-9_-]+$',
          description: 'Pass as `access_token=` on GIS URLs.',
        },
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
      properties: {
        title: { type: 'string', description: 'Title.' },
        description: { type: 'string', description: 'Description.' },
        links: LINKS,
      },
      required: ['links'],
    },
    OgcConformance: {
      type: 'object',
      description: 'OGC API conformance declaration.',
      properties: {
        conformsTo: { type: 'array', description: 'Conformance class URIs.', items: { type: 'string', format: 'uri' } },
      },
      required: ['conformsTo'],
    },
    OgcCollection: collection,
    OgcQueryables: {
      type: 'object',
      description:
        'The queryables of a collection (OGC API Features Part 3): a JSON Schema of the attribute filters of its items, one property per query parameter.',
      properties: {
        $schema: { type: 'string', description: 'The JSON Schema dialect (2020-12).' },
        $id: { type: 'string', format: 'uri', description: "This document's URL." },
        type: { type: 'string', const: 'object', description: 'Always object.' },
        title: { type: 'string', description: "The collection's title." },
        description: { type: 'string', description: 'How the properties are used.' },
        properties: {
          type: 'object',
          description:
            "Per query parameter, its JSON Schema (type, enum, bounds, description); `geometry` is the feature's point.",
          additionalProperties: { type: 'object' },
        },
        additionalProperties: { type: 'boolean', description: 'Always false: other parameters are refused.' },
      },
      required: ['$schema', '$id', 'type', 'properties'],
    },
    OgcCollections: {
      type: 'object',
      description: 'OGC API collections.',
      properties: {
        links: LINKS,
        collections: { type: 'array', description: 'The collections.', items: ref('OgcCollection') },
      },
      required: ['links', 'collections'],
    },
  };
}
