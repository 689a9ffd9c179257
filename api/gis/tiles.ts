/**
 * Mapbox Vector Tiles of the GIS layers (`GET /v1/tiles/{layer}/{z}/{x}/{y}.mvt`, spec 2.10's
 * "pre-rendered tiles" for maps), built from a per-release, in-memory tile source:
 *
 * - the layer's points (the same features as the GeoJSON feeds: every record with coordinates,
 *   rounded to 6 decimals) with a few declared fields each (`TILE_FIELDS`);
 * - at zooms 0–`CLUSTER_MAX_ZOOM`, the points clustered on a grid of `CLUSTER_CELL_PX` pixel
 *   cells (a cell of one point is the point itself; a cell of several is one feature with
 *   `cluster: true` and `point_count`, at the points' mean position). Each level is built from
 *   the next finer one, so all levels cost one pass over the points;
 * - a k-d tree (kdbush) per level, so a tile is a range query, then geojson-vt (clip, project to
 *   the 4096 extent with a 64-unit buffer) and vt-pbf (encode).
 *
 * Tile fields are never enriched fields (fields the schemas mark `x-enriched` are dropped from
 * the declaration by `tileFields`), so every scope allowed the layer gets the same tile: same
 * shape, nothing to mask. Pre-rendering low zooms in the pipeline does not pay: with the cluster
 * levels in memory a zoom-0 to zoom-8 tile over Ireland is a range query over at most a few
 * thousand cells (docs/gis.md has the measurements); rendered tiles are kept in an LRU.
 */
import geojsonvt from 'geojson-vt';
import { fromGeojsonVt } from 'vt-pbf';
import KDBush from 'kdbush';
import type { Feature, Point } from 'geojson';
import { enrichedFields, type MaskKind } from '../access/masking.ts';
import type { GisLayer } from '../query/feeds-query.ts';

/** The deepest zoom a tile is served at (clients over-zoom beyond it). */
export const TILE_MAX_ZOOM = 16;
/** Zooms up to this one are clustered; beyond it every point is its own feature. */
export const CLUSTER_MAX_ZOOM = 12;
/** Cluster cell size in pixels of a 256-pixel tile (8 × 8 cells a tile). */
export const CLUSTER_CELL_PX = 32;
/** Tile extent and buffer (geojson-vt / MVT units). */
export const TILE_EXTENT = 4096;
export const TILE_BUFFER = 64;
export const MVT_TYPE = 'application/vnd.mapbox-vector-tile';

type FieldType = 'String' | 'Number' | 'Boolean';
export interface TileField {
  name: string;
  /** SQL over the layer's table aliased `t`. */
  sql: string;
  type: FieldType;
  description: string;
}

/** The fields a tile's point features carry, per layer (before enriched fields are dropped). */
const DECLARED: Record<GisLayer, TileField[]> = {
  leads: [
    {
      name: 'application_number',
      sql: 't.application_number',
      type: 'String',
      description: "The planning authority's reference.",
    },
    { name: 'planning_authority', sql: 't.planning_authority', type: 'String', description: 'Planning authority.' },
    { name: 'status', sql: 'CAST(t.status AS VARCHAR)', type: 'String', description: 'Lead status.' },
    {
      name: 'lead_readiness',
      sql: 'CAST(t.lead_readiness AS VARCHAR)',
      type: 'String',
      description: 'Readiness stage.',
    },
    { name: 'scale', sql: 'CAST(t.scale AS VARCHAR)', type: 'String', description: 'Scale band.' },
    { name: 'use_class', sql: 't.use_class', type: 'String', description: 'Use class.' },
    {
      name: 'works_kind',
      sql: 't.works_kind',
      type: 'String',
      description: 'Kind of works (new_works, retention, …).',
    },
    {
      name: 'verticals',
      sql: `array_to_string(t.verticals, ',')`,
      type: 'String',
      description: 'Trade verticals, comma-separated.',
    },
    {
      name: 'received_date',
      sql: 'CAST(t.received_date AS VARCHAR)',
      type: 'String',
      description: 'Date the application was received (YYYY-MM-DD).',
    },
    { name: 'est_value', sql: 'CAST(t.est_value AS DOUBLE)', type: 'Number', description: 'Estimated value, EUR.' },
  ],
  infrastructure: [
    { name: 'name', sql: 't.name', type: 'String', description: 'Project name.' },
    {
      name: 'vertical',
      sql: 'CAST(t.vertical AS VARCHAR)',
      type: 'String',
      description: 'Vertical (data centre, wind, solar, …).',
    },
    { name: 'technology', sql: 'CAST(t.technology AS VARCHAR)', type: 'String', description: 'Technology.' },
    { name: 'status', sql: 'CAST(t.status AS VARCHAR)', type: 'String', description: 'Project status.' },
    { name: 'capacity_mw', sql: 'CAST(t.capacity_mw AS DOUBLE)', type: 'Number', description: 'Capacity, MW.' },
    { name: 'planning_authority', sql: 't.planning_authority', type: 'String', description: 'Planning authority.' },
    {
      name: 'first_seen',
      sql: 'CAST(t.first_seen AS VARCHAR)',
      type: 'String',
      description: 'First seen in a release (YYYY-MM-DD).',
    },
  ],
};

/** The fields every feature of a cluster level carries besides a point's own fields. */
export const CLUSTER_FIELDS: TileField[] = [
  {
    name: 'cluster',
    sql: '',
    type: 'Boolean',
    description: 'True for a cluster of points (zooms 0–12), false for one record.',
  },
  { name: 'point_count', sql: '', type: 'Number', description: 'Records in the feature (1 for a record).' },
];

export const MASK_KIND: Record<GisLayer, MaskKind> = { leads: 'lead', infrastructure: 'infrastructure-project' };

/** The layer's tile fields: the declaration less any enriched field, so every scope gets the same tile. */
export function tileFields(layer: GisLayer): TileField[] {
  const enriched = new Set(enrichedFields(MASK_KIND[layer]));
  return DECLARED[layer].filter((f) => !enriched.has(f.name));
}

/** Pure builder: the rows of a layer's tile source (the feeds' features: rows with finite coordinates, rounded to 6 decimals). */
export function tileSourceQuery(table: string, layer: GisLayer): { sql: string; params: unknown[] } {
  const cols = tileFields(layer).map((f) => `${f.sql} AS "${f.name}"`);
  return {
    sql: `SELECT CAST(t.id AS BIGINT) AS id, round(CAST(t.lon AS DOUBLE), 6) AS lon, round(CAST(t.lat AS DOUBLE), 6) AS lat, ${cols.join(', ')}
          FROM ${table} AS t
          WHERE t.lat IS NOT NULL AND t.lon IS NOT NULL AND isfinite(t.lat) AND isfinite(t.lon)
          ORDER BY t.id`,
    params: [],
  };
}

type Tags = Record<string, string | number | boolean>;
export interface TileSourceRow {
  id: number | bigint;
  lon: number;
  lat: number;
  [field: string]: unknown;
}

/** One zoom's features: clusters (n > 1) or single points (`single` ≥ 0), indexed in Web Mercator [0, 1]. */
interface Level {
  mx: Float64Array;
  my: Float64Array;
  n: Uint32Array;
  single: Int32Array;
  kd: KDBush;
}

export interface TileSource {
  layer: GisLayer;
  ids: Float64Array;
  lon: Float64Array;
  lat: Float64Array;
  tags: Tags[];
  /** `levels[z]` for z ≤ CLUSTER_MAX_ZOOM; `levels[CLUSTER_MAX_ZOOM + 1]` holds every point. */
  levels: Level[];
  /** [west, south, east, north] of the points, null when there are none. */
  bounds: [number, number, number, number] | null;
}

const mercX = (lon: number): number => (lon + 180) / 360;
const mercY = (lat: number): number => {
  const s = Math.sin((lat * Math.PI) / 180);
  const y = 0.5 - (0.25 * Math.log((1 + s) / (1 - s))) / Math.PI;
  return y < 0 ? 0 : y > 1 ? 1 : y;
};
const lonOf = (mx: number): number => mx * 360 - 180;
const latOf = (my: number): number => (Math.atan(Math.sinh(Math.PI * (1 - 2 * my))) * 180) / Math.PI;

function levelOf(mx: Float64Array, my: Float64Array, n: Uint32Array, single: Int32Array): Level {
  const kd = new KDBush(Math.max(mx.length, 1));
  for (let i = 0; i < mx.length; i++) kd.add(mx[i]!, my[i]!);
  if (mx.length === 0) kd.add(-1, -1); // kdbush needs an item; nothing is ever inside [-1, -1]'s tiles
  kd.finish();
  return { mx, my, n, single, kd };
}

/** Group the features of a level into cells of `2^-bits` (mercator units): sums and counts per cell. */
function cluster(
  mx: Float64Array,
  my: Float64Array,
  n: Uint32Array,
  single: Int32Array,
  cellsPerSide: number,
): Omit<Level, 'kd'> {
  const cells = new Map<number, number>();
  const sx: number[] = [];
  const sy: number[] = [];
  const cn: number[] = [];
  const cs: number[] = [];
  for (let i = 0; i < mx.length; i++) {
    const cx = Math.min(cellsPerSide - 1, Math.floor(mx[i]! * cellsPerSide));
    const cy = Math.min(cellsPerSide - 1, Math.floor(my[i]! * cellsPerSide));
    const key = cx * cellsPerSide + cy;
    let c = cells.get(key);
    if (c === undefined) {
      cells.set(key, (c = cn.length));
      (sx.push(0), sy.push(0), cn.push(0), cs.push(single[i]!));
    } else cs[c] = -1;
    sx[c] += mx[i]! * n[i]!;
    sy[c] += my[i]! * n[i]!;
    cn[c] += n[i]!;
  }
  return {
    mx: Float64Array.from(sx, (v, c) => v / cn[c]!),
    my: Float64Array.from(sy, (v, c) => v / cn[c]!),
    n: Uint32Array.from(cn),
    single: Int32Array.from(cs, (s, c) => (cn[c] === 1 ? s : -1)),
  };
}

/** Build a layer's tile source from its rows (any order). Pure: no I/O. */
export function buildTileSource(layer: GisLayer, rows: readonly TileSourceRow[]): TileSource {
  const fields = tileFields(layer);
  const count = rows.length;
  const ids = new Float64Array(count);
  const lon = new Float64Array(count);
  const lat = new Float64Array(count);
  const tags: Tags[] = new Array(count);
  const pmx = new Float64Array(count);
  const pmy = new Float64Array(count);
  let bounds: TileSource['bounds'] = null;
  rows.forEach((r, i) => {
    ids[i] = Number(r.id);
    lon[i] = r.lon;
    lat[i] = r.lat;
    pmx[i] = mercX(r.lon);
    pmy[i] = mercY(r.lat);
    const t: Tags = { cluster: false, point_count: 1 };
    for (const f of fields) {
      const v = r[f.name];
      if (v !== null && v !== undefined && v !== '')
        t[f.name] = typeof v === 'bigint' ? Number(v) : (v as string | number | boolean);
    }
    tags[i] = t;
    bounds = bounds
      ? [Math.min(bounds[0], r.lon), Math.min(bounds[1], r.lat), Math.max(bounds[2], r.lon), Math.max(bounds[3], r.lat)]
      : [r.lon, r.lat, r.lon, r.lat];
  });
  const points = {
    mx: pmx,
    my: pmy,
    n: new Uint32Array(count).fill(1),
    single: Int32Array.from({ length: count }, (_v, i) => i),
  };
  const levels: Level[] = new Array(CLUSTER_MAX_ZOOM + 2);
  levels[CLUSTER_MAX_ZOOM + 1] = levelOf(points.mx, points.my, points.n, points.single);
  let finer: Omit<Level, 'kd'> = points;
  for (let z = CLUSTER_MAX_ZOOM; z >= 0; z--) {
    const c = cluster(finer.mx, finer.my, finer.n, finer.single, 2 ** z * (256 / CLUSTER_CELL_PX));
    levels[z] = levelOf(c.mx, c.my, c.n, c.single);
    finer = c;
  }
  return { layer, ids, lon, lat, tags, levels, bounds };
}

/** True when z/x/y names a tile this API serves. */
export function validTile(z: number, x: number, y: number): boolean {
  return (
    Number.isInteger(z) &&
    z >= 0 &&
    z <= TILE_MAX_ZOOM &&
    Number.isInteger(x) &&
    Number.isInteger(y) &&
    x >= 0 &&
    y >= 0 &&
    x < 2 ** z &&
    y < 2 ** z
  );
}

/** The GeoJSON features of a tile (its area plus the buffer), and how many are records (not clusters). */
export function tileFeatures(
  source: TileSource,
  z: number,
  x: number,
  y: number,
): { features: Feature<Point, Tags>[]; records: number } {
  const level = source.levels[Math.min(z, CLUSTER_MAX_ZOOM + 1)]!;
  const size = 1 / 2 ** z;
  const b = (size * TILE_BUFFER) / TILE_EXTENT;
  const hits = level.kd.range(x * size - b, y * size - b, (x + 1) * size + b, (y + 1) * size + b).sort((p, q) => p - q);
  const features: Feature<Point, Tags>[] = [];
  let records = 0;
  for (const i of hits) {
    if (i >= level.mx.length) continue; // the placeholder of an empty level
    const s = level.single[i]!;
    if (s >= 0) {
      records++;
      features.push({
        type: 'Feature',
        id: source.ids[s]!,
        geometry: { type: 'Point', coordinates: [source.lon[s]!, source.lat[s]!] },
        properties: source.tags[s]!,
      });
    } else {
      features.push({
        type: 'Feature',
        geometry: { type: 'Point', coordinates: [lonOf(level.mx[i]!), latOf(level.my[i]!)] },
        properties: { cluster: true, point_count: level.n[i]! },
      });
    }
  }
  return { features, records };
}

/** Encode a tile as MVT (layer name = the GIS layer), or null when nothing is in it. */
export function renderTile(
  source: TileSource,
  z: number,
  x: number,
  y: number,
): { mvt: Buffer; records: number; features: number } | null {
  const { features, records } = tileFeatures(source, z, x, y);
  if (features.length === 0) return null;
  const index = geojsonvt(
    { type: 'FeatureCollection', features },
    { maxZoom: z, indexMaxZoom: 0, extent: TILE_EXTENT, buffer: TILE_BUFFER, tolerance: 0 },
  );
  const tile = index.getTile(z, x, y);
  if (!tile || tile.features.length === 0) return null;
  return {
    mvt: Buffer.from(fromGeojsonVt({ [source.layer]: tile }, { version: 2, extent: TILE_EXTENT })),
    records,
    features: tile.features.length,
  };
}
