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
import { served, type Served } from '../access/budget.ts';
import { mount, type Operation } from './operation.ts';
import { schemaRef } from '../openapi/endpoint.ts';
import { featurePage, releaseLayersCache, type ReleaseLayers } from '../gis/features.ts';
import { sendFeaturePage } from '../gis/respond.ts';
import { mintGisToken } from '../gis/token.ts';
import {
  GIS_TOKEN_TTL,
  gisOtherQuerySchema,
  gisQuerySchema,
  parseGisQuery,
  parseGisTokenQuery,
  type GisLayer,
} from '../query/feeds-query.ts';
import type { Release } from '../releases/release.ts';

/** What the feed operations share. */
interface FeedsEnv {
  config: ApiConfig;
  deps: Pick<AppDeps, 'db' | 'clock'> & { tokenKey: Buffer };
  layersFor: (r: Release) => ReleaseLayers;
}

/** `GET /v1/feeds/{layer}.geojson`: one page of the layer's features. */
async function feedPage(ctx: AppContext, layer: GisLayer, { config, deps, layersFor }: FeedsEnv): Promise<Served> {
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
}

/** `GET /v1/feeds/token`: a short-lived query-parameter token sealing the caller's key. */
function feedToken(ctx: AppContext, { deps }: FeedsEnv): void {
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
}

/** The feed operations (paths relative to the /v1 mount). */
export const FEEDS_OPERATIONS: readonly Operation<FeedsEnv>[] = [
  ...(['leads', 'infrastructure'] as const).map((layer): Operation<FeedsEnv> => ({
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
    ok: { schema: schemaRef('GeojsonPage'), type: 'application/geo+json', description: 'A page of features.' },
    errors: [400, 429],
    cached: true,
    handler: (ctx, env) => feedPage(ctx, layer, env),
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
    ok: { schema: schemaRef('GisToken'), description: 'The token.' },
    errors: [400],
    cached: true,
    handler: feedToken,
  },
];

/** The feeds router (paths relative to the /v1 mount). `tokenKey`: the AES key of GIS tokens. */
export function feedsRouter(
  config: ApiConfig,
  deps: Pick<AppDeps, 'db' | 'clock'> & { tokenKey: Buffer; layers?: (r: Release) => ReleaseLayers },
): Router<AppState> {
  return mount(FEEDS_OPERATIONS, { config, deps, layersFor: deps.layers ?? releaseLayersCache() });
}
