/**
 * One page of GeoJSON features of a layer for a GIS request (feeds and OGC items), answered from
 * the release's pre-rendered lines:
 *
 * - whole layer, `bbox`, or (leads) one `authority`: from the layer index alone — no query;
 * - any other filter: DuckDB picks the page's ids and the count (`gisIdsQuery`,
 *   `gisCountQuery`; `near` / `polygon` as the ids in the area, api/gis/geometry-ids.ts, as on the
 *   exports; the leads layer's lead filters — `vertical`, `status`, `min_value`, `q`, … — by the
 *   filter table's SQL clauses, as the exports and webhooks run them), the lines come from the
 *   national layer file by id.
 *
 * Properties are masked by `maskRecord` when the scope may not see enriched fields (the feeds'
 * scopes all may, so the prepared bytes are served as they are).
 */
import { readFileSync } from 'node:fs';
import type { ApiDb } from '../duckdb/db.ts';
import { maskedFor, maskRecord } from '../access/masking.ts';
import type { Release } from '../releases/release.ts';
import { loadedReleaseSources } from '../releases/release-lookups.ts';
import type { Scope } from '../access/scopes.ts';
import { gisCountQuery, gisIdsQuery, servedFromIndex, type GisLayer, type GisRequest } from '../query/feeds-query.ts';
import { CRS84, lineInCrs } from './crs.ts';
import { areaIds } from './geometry-ids.ts';
import {
  buildLayerIndex,
  inBBox,
  mergeLayerIndexes,
  positionAfter,
  positionOf,
  readFeatures,
  readFeaturesJoined,
  type LayerIndex,
} from './layer-index.ts';

export interface FeaturePage {
  /** The features' JSON, id ascending, comma-separated (the inside of the `features` array). */
  features: Buffer;
  numberReturned: number;
  numberMatched: number;
  /** Id of the last feature when more follow (for the next link), else null. */
  nextAfterId: number | null;
}

interface PrerenderedLayer {
  name: string;
  /** The layer's file; absent on a layer made of `parts` (the national leads layer since issue 17). */
  file?: string;
  /** Names of the layers whose lines make up this one. */
  parts?: string[];
  features: number;
  bbox: [number, number, number, number] | null;
  authority?: string;
}

/** What the GIS routes keep per release: the layer list and the indexes built so far. */
export interface ReleaseLayers {
  layers: PrerenderedLayer[];
  index(layerName: string): Promise<LayerIndex>;
}

/** A cache of `ReleaseLayers` for the newest `keep` releases. */
export function releaseLayersCache(keep = 2): (release: Pick<Release, 'id' | 'path'>) => ReleaseLayers {
  const cache = new Map<string, ReleaseLayers>();
  return (release) => {
    let r = cache.get(release.id);
    if (!r) {
      const { layers } = JSON.parse(readFileSync(release.path('geojson/index.json'), 'utf8')) as {
        layers: PrerenderedLayer[];
      };
      const built = new Map<string, Promise<LayerIndex>>();
      r = {
        layers,
        index(name) {
          let p = built.get(name);
          if (!p) {
            const layer = layers.find((l) => l.name === name);
            if (!layer) throw new Error(`release ${release.id} has no pre-rendered layer ${name}`);
            if (layer.file) p = buildLayerIndex(release.path(layer.file));
            else if (layer.parts) p = Promise.all(layer.parts.map((part) => r!.index(part))).then(mergeLayerIndexes);
            else throw new Error(`release ${release.id}: pre-rendered layer ${name} has neither a file nor parts`);
            p.catch(() => built.delete(name));
            built.set(name, p);
          }
          return p;
        },
      };
      cache.set(release.id, r);
      while (cache.size > keep) cache.delete(cache.keys().next().value!);
    }
    return r;
  };
}

/** The layer's table in the release. */
const TABLE: Record<GisLayer, (r: Release) => string> = {
  leads: (r) => r.tables.leads,
  infrastructure: (r) => r.tables.infrastructure,
};

/** Select and read one page of features; `crs` (OGC Part 2, api/gis/crs.ts): the coordinates' CRS, CRS84 when absent. */
export async function featurePage(
  db: ApiDb,
  release: Release,
  layers: ReleaseLayers,
  req: GisRequest,
  scope: Scope,
  crs: string = CRS84,
): Promise<FeaturePage> {
  const national = await layers.index(req.layer);
  let positions: number[];
  let matched: number;
  let more: boolean;
  let index = national;
  if (servedFromIndex(req)) {
    if (req.filters.authority) {
      const own = layers.layers.find((l) => l.authority === req.filters.authority![0] && l.name.startsWith('leads/'));
      if (!own) return { features: Buffer.alloc(0), numberReturned: 0, numberMatched: 0, nextAfterId: null };
      index = await layers.index(own.name);
    }
    const bbox = req.filters.bbox;
    positions = [];
    more = false;
    const start = req.afterId === null ? 0 : positionAfter(index, req.afterId);
    if (!bbox) {
      matched = index.ids.length;
      for (let p = start; p < index.ids.length && positions.length < req.limit; p++) positions.push(p);
      more = start + positions.length < index.ids.length;
    } else {
      matched = 0;
      for (let p = 0; p < index.ids.length; p++) {
        if (!inBBox(bbox, index.lon[p]!, index.lat[p]!)) continue;
        matched++;
        if (p < start) continue;
        if (positions.length < req.limit) positions.push(p);
        else more = true;
      }
    }
  } else {
    const table = TABLE[req.layer](release);
    // the leads layer's `q`: the release's search index, as `/v1/leads` in SQL reads it
    const src = {
      table,
      search:
        req.layer === 'leads' && req.filters.lead?.q !== undefined ? loadedReleaseSources(release).leads.search : null,
    };
    const { near, polygon } = req.filters;
    // near / polygon: the ids of the layer's features in the area, tested by the one geometry module
    const inArea = await areaIds(db, table, { ...(near ? { near } : {}), ...(polygon ? { polygon } : {}) });
    const ids = gisIdsQuery(src, req.layer, req.filters, req.afterId, req.limit + 1, inArea);
    const count = gisCountQuery(src, req.layer, req.filters, inArea);
    const [rows, [n]] = await Promise.all([
      db.all<{ id: number }>(ids.sql, ids.params),
      db.all<{ n: number }>(count.sql, count.params),
    ]);
    matched = Number(n?.n ?? 0);
    more = rows.length > req.limit;
    positions = (more ? rows.slice(0, req.limit) : rows).map((r) => {
      const p = positionOf(national, r.id);
      if (p < 0)
        throw new Error(`feature ${r.id} of ${req.layer} is not in the pre-rendered layer of release ${release.id}`);
      return p;
    });
  }
  const kind = req.layer === 'leads' ? 'lead' : 'infrastructure-project';
  let features: Buffer;
  const masked = maskedFor(kind, scope).length > 0;
  if (!masked && crs === CRS84) features = await readFeaturesJoined(index, positions);
  else {
    const texts = (await readFeatures(index, positions)).map((text) => {
      if (!masked) return lineInCrs(text, crs);
      const f = JSON.parse(lineInCrs(text, crs)) as { properties: Record<string, unknown> };
      f.properties = maskRecord(kind, f.properties, scope).record;
      return JSON.stringify(f);
    });
    features = Buffer.from(texts.join(','));
  }
  const lastPos = positions.at(-1);
  return {
    features,
    numberReturned: positions.length,
    numberMatched: matched,
    nextAfterId: more && lastPos !== undefined ? index.ids[lastPos]! : null,
  };
}

/** One feature by id (coordinates in `crs`), or null. */
export async function featureById(
  layers: ReleaseLayers,
  layer: GisLayer,
  id: number,
  scope: Scope,
  crs: string = CRS84,
): Promise<string | null> {
  const index = await layers.index(layer);
  const p = positionOf(index, id);
  if (p < 0) return null;
  const text = lineInCrs((await readFeatures(index, [p]))[0]!, crs);
  if (maskedFor(layer === 'leads' ? 'lead' : 'infrastructure-project', scope).length === 0) return text;
  const f = JSON.parse(text) as { properties: Record<string, unknown> };
  f.properties = maskRecord(layer === 'leads' ? 'lead' : 'infrastructure-project', f.properties, scope).record;
  return JSON.stringify(f);
}
