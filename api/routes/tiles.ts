/**
 * Vector tiles for maps (issue 17.4), for the scopes with the `geojsonFeeds` capability
 * (ent_feed, custom), like the GeoJSON feeds and OGC API Features:
 *
 *   GET /v1/tiles/{layer}.json             TileJSON 3.0.0 of `leads` or `infrastructure`
 *   GET /v1/tiles/{layer}/{z}/{x}/{y}.mvt  one Mapbox Vector Tile (zooms 0–16, XYZ scheme)
 *
 * A tile with nothing in it is `204 No Content` (MapLibre, OpenLayers and GDAL treat it as an
 * empty tile). A tile's point features carry `TILE_FIELDS` (never an enriched field, so every
 * scope gets the same bytes); zooms 0–12 are clustered. 200 answers have the weak ETag of the
 * conditional middleware (release, path, scope) and a matching `If-None-Match` is a 304 without
 * rendering. A tile charges the row budget for the records in it (clusters are free). Auth: the
 * Bearer header or `access_token` (the TileJSON's `tiles` URL carries the request's token on).
 * Rendering: api/gis/tiles.ts.
 */
import Router from '@koa/router';
import type { ApiConfig } from '../config.ts';
import type { AppDeps } from '../http/app-deps.ts';
import type { AppContext, AppState } from '../http/context.ts';
import { requireCapability } from '../access/capability.ts';
import { served, type Served } from '../access/budget.ts';
import { mount, type Operation } from './operation.ts';
import { schemaRef } from '../openapi/endpoint.ts';
import { invalidParams, notFound } from '../http/errors.ts';
import { parseQuery, querySchema } from '../query/parse-query.ts';
import { gisHref } from '../gis/links.ts';
import { releaseTiles, tileJson, type ReleaseTiles } from '../gis/tile-cache.ts';
import { CLUSTER_MAX_ZOOM, MVT_TYPE, TILE_MAX_ZOOM, validTile } from '../gis/tiles.ts';
import type { GisLayer } from '../query/feeds-query.ts';
import type { Release } from '../releases/release.ts';

const isLayer = (id: string): id is GisLayer => id === 'leads' || id === 'infrastructure';

/** Only `access_token` (consumed by the GIS token middleware) may be in the query (schemas/tiles-query.schema.json). */
function noParams(ctx: AppContext): void {
  const { errors } = parseQuery(querySchema('tiles-query.schema.json'), ctx.query, { listAllowed: true });
  if (errors.length > 0) throw invalidParams(errors);
}

/** What the tile operations share: each release's tiles (source, cache). */
interface TilesEnv {
  tilesFor: (r: Release) => ReleaseTiles;
}

/** `GET /v1/tiles/{layer}.json`: the layer's TileJSON. */
async function tileJsonOf(ctx: AppContext, env: TilesEnv): Promise<void> {
  requireCapability(ctx.state.key.scope, 'geojsonFeeds');
  const layer = ctx.params['layer'] ?? '';
  if (!isLayer(layer)) throw notFound(`tile layer ${layer}`);
  noParams(ctx);
  const { release } = ctx.state;
  const source = await env.tilesFor(release).source(layer);
  ctx.body = tileJson(layer, source, release.id, gisHref(ctx, `/v1/tiles/${layer}/{z}/{x}/{y}.mvt`));
}

/** `GET /v1/tiles/{layer}/{z}/{x}/{y}.mvt`: one tile, charged for the records (not clusters) in it. */
async function vectorTile(ctx: AppContext, env: TilesEnv): Promise<Served> {
  requireCapability(ctx.state.key.scope, 'geojsonFeeds');
  const layer = ctx.params['layer'] ?? '';
  if (!isLayer(layer)) throw notFound(`tile layer ${layer}`);
  const [z, x, y] = (['z', 'x', 'y'] as const).map((k) => {
    const s = ctx.params[k] ?? '';
    return /^\d{1,9}$/.test(s) ? Number(s) : NaN;
  }) as [number, number, number];
  if (!validTile(z, x, y)) {
    const errors = [];
    if (!(Number.isInteger(z) && z >= 0 && z <= TILE_MAX_ZOOM))
      errors.push({ name: 'z', reason: `must be an integer zoom from 0 to ${TILE_MAX_ZOOM}` });
    else {
      for (const [name, v] of [
        ['x', x],
        ['y', y],
      ] as const) {
        if (!(Number.isInteger(v) && v >= 0 && v < 2 ** z))
          errors.push({ name, reason: `must be an integer from 0 to ${2 ** z - 1} at zoom ${z}` });
      }
    }
    throw invalidParams(errors);
  }
  noParams(ctx);
  const tile = await env.tilesFor(ctx.state.release).tile(layer, z, x, y);
  return served(tile?.records ?? 0, () => {
    if (!tile) {
      ctx.status = 204;
      return;
    }
    ctx.type = MVT_TYPE;
    ctx.body = tile.mvt;
  });
}

/** The layer of a tile path. */
const layerParam = {
  name: 'layer',
  in: 'path',
  required: true,
  description: 'The GIS layer.',
  schema: { enum: ['leads', 'infrastructure'] },
};

/** The tile operations (paths relative to the /v1 mount). */
export const TILES_OPERATIONS: readonly Operation<TilesEnv>[] = [
  {
    method: 'get',
    path: '/tiles/{layer}.json',
    tag: 'GIS',
    summary: 'TileJSON of a vector tile layer',
    description:
      'A TileJSON 3.0.0 document for MapLibre GL, OpenLayers, QGIS or GDAL: the tile URL template, zooms, bounds, and the fields of the features. `version` is the release id. ' +
      'Scopes ent_feed and custom. Add the key to tile requests as the Bearer header (MapLibre: `transformRequest`) or use an `access_token` (carried on in `tiles`).',
    pathParams: [layerParam],
    query: querySchema('tiles-query.schema.json'),
    ok: { schema: schemaRef('TilesetMeta'), description: 'The TileJSON document.' },
    errors: [400, 404],
    cached: true,
    handler: tileJsonOf,
  },
  {
    method: 'get',
    path: '/tiles/{layer}/{z}/{x}/{y}.mvt',
    tag: 'GIS',
    summary: 'One vector tile (Mapbox Vector Tile)',
    description:
      `A Mapbox Vector Tile (v2, extent 4096, buffer 64) of the layer in the XYZ scheme, zooms 0–${TILE_MAX_ZOOM}, with one layer named after it. The same features as the GeoJSON feeds; ` +
      `at zooms 0–${CLUSTER_MAX_ZOOM} points are clustered on a 32-pixel grid (\`cluster: true\`, \`point_count\`), beyond that every record is a point with its id and a few fields ` +
      '(never enriched fields, so every scope gets the same tile). A tile with nothing in it is 204. Charged to the row budget for the records (not clusters) in it. Scopes ent_feed and custom.',
    pathParams: [
      layerParam,
      {
        name: 'z',
        in: 'path',
        required: true,
        description: `Zoom, 0–${TILE_MAX_ZOOM}.`,
        schema: { type: 'integer', minimum: 0, maximum: TILE_MAX_ZOOM },
      },
      {
        name: 'x',
        in: 'path',
        required: true,
        description: 'Column, 0 to 2^z − 1.',
        schema: { type: 'integer', minimum: 0 },
      },
      {
        name: 'y',
        in: 'path',
        required: true,
        description: 'Row from the north, 0 to 2^z − 1.',
        schema: { type: 'integer', minimum: 0 },
      },
    ],
    query: querySchema('tiles-query.schema.json'),
    ok: {
      schema: { type: 'string', format: 'binary', description: 'The tile (Protocol Buffers).' },
      type: 'application/vnd.mapbox-vector-tile',
      description: 'The tile.',
      empty: 'The tile is empty: nothing of the layer is in it.',
    },
    errors: [400, 404, 429],
    cached: true,
    handler: vectorTile,
  },
];

/** The tiles router (paths relative to the /v1 mount). */
export function tilesRouter(
  _config: ApiConfig,
  deps: Pick<AppDeps, 'db'> & { tiles?: (r: Release) => ReleaseTiles },
): Router<AppState> {
  return mount(TILES_OPERATIONS, { tilesFor: deps.tiles ?? releaseTiles(deps.db) });
}
