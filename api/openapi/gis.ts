/**
 * The OpenAPI operations of issue 17's GIS additions: vector tiles and TileJSON
 * (api/routes/tiles.ts) and the planning authorities with freshness (api/routes/authorities.ts).
 * Response schemas are in schemas/ (`tileset-meta`, `authorities-page`).
 */
import type { Endpoint } from './endpoint.ts';
import { CLUSTER_MAX_ZOOM, TILE_MAX_ZOOM } from '../gis/tiles.ts';
import { querySchema } from '../query/parse-query.ts';

const ref = (name: string): Record<string, unknown> => ({ $ref: `#/components/schemas/${name}` });
const layerParam = {
  name: 'layer',
  in: 'path',
  required: true,
  description: 'The GIS layer.',
  schema: { enum: ['leads', 'infrastructure'] },
};

/** Tiles, TileJSON and authorities. */
export function gisEndpoints(): Endpoint[] {
  return [
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
      ok: { schema: ref('TilesetMeta'), description: 'The TileJSON document.' },
      errors: [400, 404],
      cached: true,
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
    },
    {
      method: 'get',
      path: '/authorities',
      tag: 'Meta',
      summary: 'Planning authorities with leads by status, bounding box and freshness per source',
      description:
        'The planning authorities of the release: county, leads by status, bounding box, and per source (planning register, BCMS commencement notices) when the source was read from its publisher ' +
        'and the newest application date it held for the authority — so "no new leads" (a recent `read_at`, few new leads) can be told from "no new data" (an old `newest_date`). ' +
        'Computed by the pipeline into the release. Any key; no row budget. A release built before this existed answers 503 `authorities_unavailable`.',
      ok: { schema: ref('AuthoritiesPage'), description: 'The authorities.' },
      errors: [400],
      cached: true,
    },
  ];
}
