/**
 * GeoJSON feeds (spec 2.10, 4.4), for scopes with the `geojsonFeeds` capability (ent_feed, custom):
 *
 * - `GET /v1/feeds/leads.geojson` — `page_size`, `bbox`, `authority`, `since`, `updated_since`;
 * - `GET /v1/feeds/infrastructure.geojson` — the same plus `vertical` and `min_mw`;
 * - `GET /v1/feeds/token` — a short-lived `access_token` for GIS clients that can only add query
 *   parameters (api/gis/token.ts).
 *
 * Pages are FeatureCollections of the release's pre-rendered features in id order, with
 * `numberMatched` / `numberReturned` and a `next` link (carrying `cursor`, and `access_token`
 * when the request used one) while more follow. Selection: api/gis/features.ts.
 */
import Router from '@koa/router';
import type { ApiConfig } from '../config.ts';
import type { AppDeps } from '../http/app-deps.ts';
import type { AppContext, AppState } from '../http/context.ts';
import { requireCapability } from '../access/capability.ts';
import { charging, served } from '../access/budget.ts';
import { featurePage, releaseLayersCache, type ReleaseLayers } from '../gis/features.ts';
import { sendFeaturePage } from '../gis/respond.ts';
import { mintGisToken } from '../gis/token.ts';
import { parseGisQuery, parseGisTokenQuery, type GisLayer } from '../query/feeds-query.ts';
import type { Release } from '../releases/release.ts';

/** The feeds router (paths relative to the /v1 mount). `tokenKey`: the AES key of GIS tokens. */
export function feedsRouter(
  config: ApiConfig,
  deps: Pick<AppDeps, 'db' | 'clock'> & { tokenKey: Buffer; layers?: (r: Release) => ReleaseLayers },
): Router<AppState> {
  const router = new Router<AppState>();
  const layersFor = deps.layers ?? releaseLayersCache();

  const feed = (layer: GisLayer) =>
    charging(async (ctx: AppContext) => {
      const { release, key } = ctx.state;
      requireCapability(key.scope, 'geojsonFeeds');
      const req = parseGisQuery(ctx.query, layer, 'feed', config, release.leads.places());
      const page = await featurePage(deps.db, release, layersFor(release), req, key.scope);
      return served(page.numberReturned, () =>
        sendFeaturePage(ctx, page, {
          layer,
          path: `/v1/feeds/${layer}.geojson`,
          hash: req.hash,
          now: deps.clock(),
          cursors: config,
        }),
      );
    });
  router.get('/feeds/leads.geojson', feed('leads'));
  router.get('/feeds/infrastructure.geojson', feed('infrastructure'));

  router.get('/feeds/token', async (ctx: AppContext) => {
    requireCapability(ctx.state.key.scope, 'geojsonFeeds');
    const { ttl } = parseGisTokenQuery(ctx.query);
    const apiKey = /^Bearer\s+(\S+)\s*$/i.exec(ctx.get('Authorization'))?.[1] ?? '';
    const expires = Math.floor(deps.clock().getTime() / 1000) + ttl;
    ctx.set('Cache-Control', 'no-store');
    ctx.body = {
      access_token: mintGisToken(apiKey, expires, deps.tokenKey),
      token_type: 'query',
      expires_at: new Date(expires * 1000).toISOString(),
      expires_in: ttl,
      key_id: ctx.state.key.id,
      usage:
        'add access_token=<token> to /v1/feeds/… or /v1/ogc URLs instead of the Authorization header; every link in the responses carries it on',
    };
  });

  return router;
}
