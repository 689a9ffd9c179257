/**
 * The answer of a paged GeoJSON layer, shared by the feeds (`/v1/feeds/*.geojson`) and OGC API
 * Features (`/v1/ogc/collections/{id}/items`): the FeatureCollection with `numberMatched` /
 * `numberReturned`, a `self` link, a `next` link when more remain (the cursor carries the page's
 * last id, the release and the filters' hash), any extra links, and `_meta` for the scope.
 */
import type { AppContext } from '../http/context.ts';
import { maskedFor, responseMeta } from '../access/masking.ts';
import type { GisLayer } from '../query/feeds-query.ts';
import { encodeCursor, type CursorSecrets } from '../query/paging.ts';
import { setPageLinks } from '../render/link-header.ts';
import { featureCollection, GEOJSON_TYPE } from '../render/geojson.ts';
import type { FeaturePage } from './features.ts';
import { gisHref, sameQuery, type Link } from './links.ts';

export function sendFeaturePage(
  ctx: AppContext,
  page: FeaturePage,
  o: {
    layer: GisLayer;
    path: string;
    hash: string;
    now: Date;
    cursors: CursorSecrets;
    selfTitle?: string;
    extraLinks?: Link[];
  },
): void {
  const { release, key } = ctx.state;
  const cursor = typeof ctx.query['cursor'] === 'string' ? ctx.query['cursor'] : undefined;
  const links: Link[] = [
    {
      href: gisHref(ctx, o.path, sameQuery(ctx, cursor)),
      rel: 'self',
      type: GEOJSON_TYPE,
      ...(o.selfTitle ? { title: o.selfTitle } : {}),
    },
    ...(o.extraLinks ?? []),
  ];
  if (page.nextAfterId !== null) {
    const next = gisHref(ctx, o.path, sameQuery(ctx, encodeCursor([page.nextAfterId], release.id, o.hash, o.cursors)));
    links.push({ href: next, rel: 'next', type: GEOJSON_TYPE, title: 'next page' });
    setPageLinks(ctx, { next }); // the same URL as the body's next link (RFC 8288)
  }
  ctx.type = GEOJSON_TYPE;
  ctx.body = featureCollection(page.features, {
    numberReturned: page.numberReturned,
    numberMatched: page.numberMatched,
    links,
    timeStamp: o.now.toISOString(),
    meta: responseMeta(
      release.id,
      key.scope,
      maskedFor(o.layer === 'leads' ? 'lead' : 'infrastructure-project', key.scope),
    ),
  });
}
