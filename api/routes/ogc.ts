/**
 * OGC API – Features, Part 1: Core (OGC 17-069r4) over the GIS layers, mounted at `/v1/ogc`, so
 * QGIS, ArcGIS and GDAL can add the service as a connection:
 *
 *   /v1/ogc                                         landing page
 *   /v1/ogc/conformance                             conformance classes (core, geojson)
 *   /v1/ogc/collections                             the collections `leads` and `infrastructure`
 *   /v1/ogc/collections/{collectionId}              one collection (spatial and temporal extent)
 *   /v1/ogc/collections/{collectionId}/items        features: bbox, limit, datetime, next links;
 *                                                   `leads` also every filter of /v1/leads
 *   /v1/ogc/collections/{collectionId}/queryables   the attribute filters as JSON Schema (api/gis/queryables.ts)
 *   /v1/ogc/collections/{collectionId}/items/{featureId}   one feature
 *
 * Same features and selection as the GeoJSON feeds (api/gis/features.ts), same scopes
 * (ent_feed, custom). Auth: the Bearer header (spec 5.6) or `access_token` (api/gis/token.ts),
 * which every link carries on. `datetime` filters leads by `received_date` and infrastructure
 * projects by `first_seen`. Coordinates are CRS84 (WGS 84 longitude, latitude), or EPSG:2157
 * (Irish Transverse Mercator) with `crs` — OGC API Features Part 2 (api/gis/crs.ts): `crs` on
 * items and one feature, `bbox-crs` on items, the `crs` list and `storageCrs` on each
 * collection, `Content-Crs` on every answer with features.
 */
import Router from '@koa/router';
import type { ApiConfig } from '../config.ts';
import type { AppDeps } from '../http/app-deps.ts';
import type { AppContext, AppState } from '../http/context.ts';
import { requireCapability } from '../access/capability.ts';
import { served, type Served } from '../access/budget.ts';
import { mount, type Operation } from './operation.ts';
import { schemaRef } from '../openapi/endpoint.ts';
import { notFound } from '../http/errors.ts';
import { featureById, featurePage, releaseLayersCache, type ReleaseLayers } from '../gis/features.ts';
import { gisHref } from '../gis/links.ts';
import { queryables, QUERYABLES_REL, QUERYABLES_TYPE } from '../gis/queryables.ts';
import { CONFORMANCE_CRS, contentCrs, CRS84, parseCrsQuery, SUPPORTED_CRS } from '../gis/crs.ts';
import { sendFeaturePage } from '../gis/respond.ts';
import {
  DATETIME_COLUMN,
  gisOtherQuerySchema,
  gisQuerySchema,
  parseGisQuery,
  parseOgcMetaQuery,
  type GisLayer,
} from '../query/feeds-query.ts';
import type { Release } from '../releases/release.ts';
import { featureWithLinks, GEOJSON_TYPE } from '../render/geojson.ts';

export { CRS84 };
const CONFORMANCE = [
  'http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/core',
  'http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/geojson',
  CONFORMANCE_CRS,
];

const COLLECTIONS: Record<GisLayer, { title: string; description: string }> = {
  leads: {
    title: 'Construction leads',
    description:
      'Planning applications and commencement notices with coordinates: every lead field as properties, `link` to the public record page. The items take every filter of `/v1/leads` (see the queryables).',
  },
  infrastructure: {
    title: 'Strategic infrastructure and energy projects',
    description:
      'Data centres, wind, solar, battery storage and grid projects with coordinates, with applicant and connection voltage where published.',
  },
};
const isLayer = (id: string): id is GisLayer => id === 'leads' || id === 'infrastructure';

/** What the OGC operations share. */
interface OgcEnv {
  config: ApiConfig;
  deps: Pick<AppDeps, 'db' | 'clock'>;
  layersFor: (r: Release) => ReleaseLayers;
  temporal: (release: Release) => Promise<Record<GisLayer, [string | null, string | null]>>;
}

/** Temporal extent of each layer (min and max of its datetime column), per release (the last two). */
function temporalExtents(
  db: Pick<AppDeps, 'db'>['db'],
): (release: Release) => Promise<Record<GisLayer, [string | null, string | null]>> {
  const extents = new Map<string, Promise<Record<GisLayer, [string | null, string | null]>>>();
  return (release) => {
    let p = extents.get(release.id);
    if (!p) {
      p = (async () => {
        const out = {} as Record<GisLayer, [string | null, string | null]>;
        for (const layer of ['leads', 'infrastructure'] as const) {
          const col = DATETIME_COLUMN[layer];
          const [r] = await db.all<{ lo: string | null; hi: string | null }>(
            `SELECT min(${col}) AS lo, max(${col}) AS hi FROM ${release.tables[layer]}`,
          );
          out[layer] = [r?.lo ?? null, r?.hi ?? null];
        }
        return out;
      })();
      p.catch(() => extents.delete(release.id));
      extents.set(release.id, p);
      while (extents.size > 2) extents.delete(extents.keys().next().value!);
    }
    return p;
  };
}

/**
 * Only `f=json`, `access_token` and `crs` on the metadata resources
 * (schemas/ogc-meta-query.schema.json): `crs` changes nothing there but is accepted so a client
 * that adds it to every request (GDAL 3.6's OAPIF driver with `?crs=` in its connection URL) is
 * served; a repeated identical `crs` counts once (api/gis/crs.ts).
 */
function metaParams(ctx: AppContext, query: AppContext['query'] = ctx.query): void {
  parseOgcMetaQuery(parseCrsQuery(query, false).rest);
}

/** The scopes with GeoJSON feeds (ent_feed, custom). */
function guard(ctx: AppContext): void {
  requireCapability(ctx.state.key.scope, 'geojsonFeeds');
}

/** A collection's description: its extents and links. */
async function collection(ctx: AppContext, layer: GisLayer, env: OgcEnv): Promise<Record<string, unknown>> {
  const { release } = ctx.state;
  const prerendered = env.layersFor(release).layers.find((l) => l.name === layer);
  const [lo, hi] = (await env.temporal(release))[layer];
  const base = `/v1/ogc/collections/${layer}`;
  return {
    id: layer,
    ...COLLECTIONS[layer],
    itemType: 'feature',
    crs: SUPPORTED_CRS,
    storageCrs: CRS84,
    extent: {
      spatial: { bbox: [prerendered?.bbox ?? [-10.7, 51.3, -5.4, 55.5]], crs: CRS84 },
      temporal: {
        interval: [[lo ? `${lo}T00:00:00Z` : null, hi ? `${hi}T23:59:59Z` : null]],
        trs: 'http://www.opengis.net/def/uom/ISO-8601/0/Gregorian',
      },
    },
    links: [
      {
        href: gisHref(ctx, base),
        rel: ctx.path === base ? 'self' : 'collection',
        type: 'application/json',
        title: COLLECTIONS[layer].title,
      },
      {
        href: gisHref(ctx, `${base}/items`),
        rel: 'items',
        type: GEOJSON_TYPE,
        title: `${COLLECTIONS[layer].title} (GeoJSON)`,
      },
      {
        href: gisHref(ctx, `${base}/queryables`),
        rel: QUERYABLES_REL,
        type: QUERYABLES_TYPE,
        title: `${COLLECTIONS[layer].title}: the attribute filters of its items`,
      },
    ],
  };
}

/** `GET /v1/ogc`: the landing page. */
async function landingPage(ctx: AppContext): Promise<void> {
  guard(ctx);
  metaParams(ctx);
  ctx.body = {
    title: 'Irish Construction Leads — OGC API Features',
    description:
      'Construction leads and infrastructure projects of the current weekly release as OGC API Features (Part 1: Core, GeoJSON).',
    links: [
      { href: gisHref(ctx, '/v1/ogc'), rel: 'self', type: 'application/json', title: 'this document' },
      {
        href: `${ctx.protocol}://${ctx.host}/v1/openapi.json`,
        rel: 'service-desc',
        type: 'application/vnd.oai.openapi+json;version=3.1',
        title: 'the API definition',
      },
      {
        href: `${ctx.protocol}://${ctx.host}/v1/docs`,
        rel: 'service-doc',
        type: 'text/html',
        title: 'the API documentation',
      },
      {
        href: gisHref(ctx, '/v1/ogc/conformance'),
        rel: 'conformance',
        type: 'application/json',
        title: 'conformance classes',
      },
      { href: gisHref(ctx, '/v1/ogc/collections'), rel: 'data', type: 'application/json', title: 'collections' },
    ],
  };
}

/** `GET /v1/ogc/conformance`. */
async function conformance(ctx: AppContext): Promise<void> {
  guard(ctx);
  metaParams(ctx);
  ctx.body = { conformsTo: CONFORMANCE };
}

/** `GET /v1/ogc/collections`. */
async function collections(ctx: AppContext, env: OgcEnv): Promise<void> {
  guard(ctx);
  metaParams(ctx);
  ctx.body = {
    links: [{ href: gisHref(ctx, '/v1/ogc/collections'), rel: 'self', type: 'application/json', title: 'collections' }],
    collections: [await collection(ctx, 'leads', env), await collection(ctx, 'infrastructure', env)],
  };
}

/** `GET /v1/ogc/collections/{collectionId}`. */
async function oneCollection(ctx: AppContext, env: OgcEnv): Promise<void> {
  guard(ctx);
  const id = ctx.params['collectionId'] ?? '';
  if (!isLayer(id)) throw notFound(`collection ${id}`);
  metaParams(ctx);
  ctx.body = await collection(ctx, id, env);
}

/** `GET /v1/ogc/collections/{collectionId}/items`: one page of features. */
async function items(ctx: AppContext, env: OgcEnv): Promise<Served> {
  guard(ctx);
  const { release, key } = ctx.state;
  const layer = ctx.params['collectionId'] ?? '';
  if (!isLayer(layer)) throw notFound(`collection ${layer}`);
  const { crs, rest } = parseCrsQuery(ctx.query, true);
  const req = parseGisQuery(rest, layer, 'ogc', env.config, release.leads.places());
  const page = await featurePage(env.deps.db, release, env.layersFor(release), req, key.scope, crs.crs);
  ctx.set('Content-Crs', contentCrs(crs.crs));
  return served(page.numberReturned, () =>
    sendFeaturePage(ctx, page, {
      layer,
      path: `/v1/ogc/collections/${layer}/items`,
      hash: req.hash,
      now: env.deps.clock(),
      cursors: env.config,
      selfTitle: 'this page',
      extraLinks: [
        {
          href: gisHref(ctx, `/v1/ogc/collections/${layer}`),
          rel: 'collection',
          type: 'application/json',
          title: COLLECTIONS[layer].title,
        },
      ],
    }),
  );
}

/** `GET /v1/ogc/collections/{collectionId}/queryables`. */
async function collectionQueryables(ctx: AppContext): Promise<void> {
  guard(ctx);
  const layer = ctx.params['collectionId'] ?? '';
  if (!isLayer(layer)) throw notFound(`collection ${layer}`);
  metaParams(ctx);
  ctx.type = QUERYABLES_TYPE;
  ctx.body = queryables(layer, gisHref(ctx, `/v1/ogc/collections/${layer}/queryables`), COLLECTIONS[layer].title);
}

/** `GET /v1/ogc/collections/{collectionId}/items/{featureId}`. */
async function oneFeature(ctx: AppContext, env: OgcEnv): Promise<Served> {
  guard(ctx);
  const { release, key } = ctx.state;
  const layer = ctx.params['collectionId'] ?? '';
  if (!isLayer(layer)) throw notFound(`collection ${layer}`);
  const { crs, rest } = parseCrsQuery(ctx.query, false);
  metaParams(ctx, rest);
  const fid = ctx.params['featureId'] ?? '';
  if (!/^[1-9][0-9]{0,14}$/.test(fid)) throw notFound(`feature ${fid} of ${layer}`);
  const text = await featureById(env.layersFor(release), layer, Number(fid), key.scope, crs.crs);
  if (!text) throw notFound(`feature ${fid} of ${layer}`);
  return served(1, () => {
    ctx.set('Content-Crs', contentCrs(crs.crs));
    ctx.type = GEOJSON_TYPE;
    ctx.body = featureWithLinks(text, [
      {
        href: gisHref(ctx, `/v1/ogc/collections/${layer}/items/${fid}`),
        rel: 'self',
        type: GEOJSON_TYPE,
        title: 'this feature',
      },
      {
        href: gisHref(ctx, `/v1/ogc/collections/${layer}`),
        rel: 'collection',
        type: 'application/json',
        title: COLLECTIONS[layer].title,
      },
    ]);
  });
}

/** The collection of `{collectionId}`. */
const collectionId = {
  name: 'collectionId',
  in: 'path',
  required: true,
  description: 'Collection: `leads` or `infrastructure`.',
  schema: { type: 'string' },
};
const metaQuery = gisOtherQuerySchema('ogc-meta');

/** The OGC operations (paths relative to the /v1 mount). */
export const OGC_OPERATIONS: readonly Operation<OgcEnv>[] = [
  {
    method: 'get',
    path: '/ogc',
    tag: 'GIS',
    summary: 'OGC API Features landing page',
    description:
      'OGC API – Features Part 1 (core, GeoJSON): links to the API definition, the conformance classes and the collections. Add `<base>/v1/ogc` as an OGC API Features connection in QGIS, ArcGIS or GDAL (`OAPIF:`), with the Bearer key as HTTP header or an `access_token`. Scopes ent_feed and custom.',
    query: metaQuery,
    ok: { schema: schemaRef('OgcLandingPage'), description: 'The landing page.' },
    errors: [400],
    cached: true,
    handler: landingPage,
  },
  {
    method: 'get',
    path: '/ogc/conformance',
    tag: 'GIS',
    summary: 'OGC API Features conformance classes',
    description: 'The conformance classes implemented: core and GeoJSON.',
    query: metaQuery,
    ok: { schema: schemaRef('OgcConformance'), description: 'The conformance declaration.' },
    errors: [400],
    cached: true,
    handler: conformance,
  },
  {
    method: 'get',
    path: '/ogc/collections',
    tag: 'GIS',
    summary: 'OGC API Features collections',
    description: 'The collections `leads` and `infrastructure` with their spatial and temporal extents.',
    query: metaQuery,
    ok: { schema: schemaRef('OgcCollections'), description: 'The collections.' },
    errors: [400],
    cached: true,
    handler: collections,
  },
  {
    method: 'get',
    path: '/ogc/collections/{collectionId}',
    tag: 'GIS',
    summary: 'One OGC API Features collection',
    description: 'A collection with its extent and a link to its items.',
    pathParams: [collectionId],
    query: metaQuery,
    ok: { schema: schemaRef('OgcCollection'), description: 'The collection.' },
    errors: [400, 404],
    cached: true,
    handler: oneCollection,
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
    ok: { schema: schemaRef('GeojsonPage'), type: 'application/geo+json', description: 'A page of features.' },
    errors: [400, 404, 429],
    cached: true,
    handler: items,
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
    ok: { schema: schemaRef('OgcQueryables'), type: 'application/schema+json', description: 'The queryables.' },
    errors: [400, 404],
    cached: true,
    handler: collectionQueryables,
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
    ok: { schema: schemaRef('GeojsonPage/$defs/feature'), type: 'application/geo+json', description: 'The feature.' },
    errors: [400, 404, 429],
    cached: true,
    handler: oneFeature,
  },
];

/** The OGC router (paths relative to the /v1 mount). */
export function ogcRouter(
  config: ApiConfig,
  deps: Pick<AppDeps, 'db' | 'clock'> & { layers?: (r: Release) => ReleaseLayers },
): Router<AppState> {
  return mount(OGC_OPERATIONS, {
    config,
    deps,
    layersFor: deps.layers ?? releaseLayersCache(),
    temporal: temporalExtents(deps.db),
  });
}
