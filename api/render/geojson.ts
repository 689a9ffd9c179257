/**
 * GeoJSON renderer (RFC 7946): a FeatureCollection assembled from pre-rendered Feature texts
 * (no parse / re-serialise of the features), with the paging members of OGC API Features
 * (`numberMatched`, `numberReturned`, `timeStamp`, `links`) and `_meta`, which RFC 7946 §6.1
 * allows as foreign members. Media type `application/geo+json`.
 */
import type { Link } from '../gis/links.ts';
import type { ResponseMeta } from '../access/masking.ts';

export const GEOJSON_TYPE = 'application/geo+json';

/** The FeatureCollection, as bytes: `features` is the comma-separated feature JSON of the page. */
export function featureCollection(
  features: Buffer,
  opts: { numberReturned: number; numberMatched: number; links: Link[]; timeStamp: string; meta?: ResponseMeta },
): Buffer {
  const head = {
    type: 'FeatureCollection',
    numberMatched: opts.numberMatched,
    numberReturned: opts.numberReturned,
    timeStamp: opts.timeStamp,
    links: opts.links,
    ...(opts.meta ? { _meta: opts.meta } : {}),
  };
  const json = JSON.stringify(head);
  return Buffer.concat([Buffer.from(`${json.slice(0, -1)},"features":[`), features, Buffer.from(']}')]);
}

/** One Feature text with `links` added as a foreign member. */
export function featureWithLinks(feature: string, links: Link[]): string {
  return `${feature.slice(0, -1)},"links":${JSON.stringify(links)}}`;
}
