/**
 * What the tile routes keep per release: each layer's tile source (api/gis/tiles.ts), built on
 * first use from one query of the release's table, and an LRU of rendered tiles (empty ones
 * included), so a map panning over the same area renders each tile once. Sources are kept for
 * the newest two releases; the LRU is keyed by release, so an old release's tiles age out.
 */
import { Lru } from '../../common/lru.ts';
import type { ApiDb } from '../duckdb/db.ts';
import type { GisLayer } from '../query/feeds-query.ts';
import type { Release } from '../releases/release.ts';
import {
  buildTileSource,
  CLUSTER_FIELDS,
  CLUSTER_MAX_ZOOM,
  renderTile,
  TILE_MAX_ZOOM,
  tileFields,
  tileSourceQuery,
  type TileSource,
  type TileSourceRow,
} from './tiles.ts';

/** Rendered tiles kept in memory (a tile of a busy area is a few tens of KB). */
export const TILE_CACHE_ENTRIES = 4096;

export interface RenderedTile {
  mvt: Buffer;
  /** Records (not clusters) in the tile: what it charges. */
  records: number;
}

export interface ReleaseTiles {
  source(layer: GisLayer): Promise<TileSource>;
  /** The tile, or null when it is empty. */
  tile(layer: GisLayer, z: number, x: number, y: number): Promise<RenderedTile | null>;
}

/** A cache of `ReleaseTiles` for the newest `keep` releases, sharing one LRU of rendered tiles. */
export function releaseTiles(
  db: ApiDb,
  keep = 2,
  entries = TILE_CACHE_ENTRIES,
): (release: Pick<Release, 'id' | 'tables'>) => ReleaseTiles {
  const byRelease = new Map<string, ReleaseTiles>();
  const lru = new Lru<string, RenderedTile | null>(entries);
  return (release) => {
    let r = byRelease.get(release.id);
    if (!r) {
      const sources = new Map<GisLayer, Promise<TileSource>>();
      const source = (layer: GisLayer): Promise<TileSource> => {
        let p = sources.get(layer);
        if (!p) {
          const q = tileSourceQuery(release.tables[layer], layer);
          p = db.all<TileSourceRow>(q.sql, q.params).then((rows) => buildTileSource(layer, rows));
          p.catch(() => sources.delete(layer));
          sources.set(layer, p);
        }
        return p;
      };
      r = {
        source,
        async tile(layer, z, x, y) {
          const key = `${release.id}/${layer}/${z}/${x}/${y}`;
          const hit = lru.get(key);
          if (hit !== undefined) return hit;
          const t = renderTile(await source(layer), z, x, y);
          const out = t ? { mvt: t.mvt, records: t.records } : null;
          lru.set(key, out);
          return out;
        },
      };
      byRelease.set(release.id, r);
      while (byRelease.size > keep) byRelease.delete(byRelease.keys().next().value!);
    }
    return r;
  };
}

const TITLES: Record<GisLayer, { name: string; description: string }> = {
  leads: {
    name: 'Construction leads',
    description: 'Planning applications and commencement notices with coordinates, clustered at zooms 0–12.',
  },
  infrastructure: {
    name: 'Strategic infrastructure and energy projects',
    description: 'Data centres, wind, solar, battery storage and grid projects, clustered at zooms 0–12.',
  },
};

/**
 * The TileJSON 3.0.0 document of a layer. `tilesUrl` is the absolute `{z}/{x}/{y}` template
 * (with the request's access_token, if any); `version` is the release id, so a client sees a
 * new release.
 */
export function tileJson(
  layer: GisLayer,
  source: TileSource,
  releaseId: string,
  tilesUrl: string,
): Record<string, unknown> {
  const bounds = source.bounds ?? [-10.7, 51.3, -5.4, 55.5];
  const fields: Record<string, string> = {};
  // values are the field types, as tippecanoe writes them and GDAL's MVT driver reads them (METADATA_FILE)
  for (const f of [...CLUSTER_FIELDS, ...tileFields(layer)]) fields[f.name] = f.type;
  return {
    tilejson: '3.0.0',
    name: TITLES[layer].name,
    description: TITLES[layer].description,
    version: releaseId,
    attribution:
      'Contains Irish public sector data (planning authorities, BCMS, An Coimisiún Pleanála, EirGrid, SEAI) licensed under CC BY 4.0.',
    scheme: 'xyz',
    tiles: [tilesUrl],
    minzoom: 0,
    maxzoom: TILE_MAX_ZOOM,
    bounds,
    center: [Number(((bounds[0] + bounds[2]) / 2).toFixed(6)), Number(((bounds[1] + bounds[3]) / 2).toFixed(6)), 7],
    vector_layers: [
      {
        id: layer,
        description:
          `${TITLES[layer].description} Features with cluster=true stand for point_count records (zooms 0–${CLUSTER_MAX_ZOOM}). ` +
          [...CLUSTER_FIELDS, ...tileFields(layer)].map((f) => `${f.name}: ${f.description}`).join(' '),
        minzoom: 0,
        maxzoom: TILE_MAX_ZOOM,
        fields,
      },
    ],
  };
}
