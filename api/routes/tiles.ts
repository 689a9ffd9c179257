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
import { charging, served } from '../access/budget.ts';
import { invalidParams, notFound } from '../http/errors.ts';
import { parseQuery, querySchema } from '../query/parse-query.ts';
import { gisHref } from '../gis/links.ts';
import { releaseTiles, tileJson, type ReleaseTiles } from '../gis/tile-cache.ts';
import { MVT_TYPE, TILE_MAX_ZOOM, validTile } from '../gis/tiles.ts';
import type { GisLayer } from '../query/feeds-query.ts';
import type { Release } from '../releases/release.ts';

const isLayer = (id: string): id is GisLayer => id === 'leads' || id === 'infrastructure';

/** Only `access_token` (consumed by the GIS token middleware) may be in the query (schemas/tiles-query.schema.json). */
function noParams(ctx: AppContext): void {
  const { errors } = parseQuery(querySchema('tiles-query.schema.json'), ctx.query, { listAllowed: true });
  if (errors.length > 0) throw invalidParams(errors);
}

/** The tiles router (paths relative to the /v1 mount). */
export function tilesRouter(
  _config: ApiConfig,
  deps: Pick<AppDeps, 'db'> & { tiles?: (r: Release) => ReleaseTiles },
): Router<AppState> {
  const router = new Router<AppState>();
  const tilesFor = deps.tiles ?? releaseTiles(deps.db);

  router.get('/tiles/:layer.json', async (ctx: AppContext) => {
    requireCapability(ctx.state.key.scope, 'geojsonFeeds');
    const layer = ctx.params['layer'] ?? '';
    if (!isLayer(layer)) throw notFound(`tile layer ${layer}`);
    noParams(ctx);
    const { release } = ctx.state;
    const source = await tilesFor(release).source(layer);
    ctx.body = tileJson(layer, source, release.id, gisHref(ctx, `/v1/tiles/${layer}/{z}/{x}/{y}.mvt`));
  });

  router.get(
    '/tiles/:layer/:z/:x/:y.mvt',
    charging(async (ctx: AppContext) => {
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
      const tile = await tilesFor(ctx.state.release).tile(layer, z, x, y);
      return served(tile?.records ?? 0, () => {
        if (!tile) {
          ctx.status = 204;
          return;
        }
        ctx.type = MVT_TYPE;
        ctx.body = tile.mvt;
      });
    }),
  );

  return router;
}
