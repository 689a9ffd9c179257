/**
 * Where each planning authority's land is, as cells of a fixed grid (0.005° of latitude by 0.0075°
 * of longitude, about 560 × 500 m): `authority-land.json` (beside this file) lists, per authority,
 * the cells that lie wholly inside its administrative boundary, with no coast and no border
 * crossing them. A point in one of its cells is on the authority's land; the coast and borders are
 * kept at least a fraction of a cell away.
 *
 * Shared by both sides (common/ imports neither): the pipeline's generator draws coordinates from
 * these cells (pipeline/reference/land.ts re-exports this module), so no generated application
 * lies in the sea or in the next county; the account area draws the same cells as the land layer
 * of its map (`landGeoJson`), so the map's land is data the product holds, not a third party's.
 *
 * The file is derived offline from a county-boundary GeoJSON by pipeline/reference/land-build.ts
 * (how, there); it holds cells, not the source's outlines. Dublin's four councils, Cork City and
 * Galway City have cells of their own (from the pre-2019 city boundaries, so a Cork City point is
 * inside both the old and the new city).
 */
import { readFileSync } from 'node:fs';

/** Where the cells are stored. */
export const LAND_FILE = new URL('./authority-land.json', import.meta.url);

/** The grid of `authority-land.json`: a cell is (row, col) with south-west corner (lat0 + row·dLat, lon0 + col·dLon). */
export const LAND_GRID = { lat0: 51.38, lon0: -10.7, dLat: 0.005, dLon: 0.0075, rows: 820, cols: 1980 } as const;

/** Every authority's land: the owner of each grid cell and each authority's cells. */
export interface Land {
  /** Per cell id (row · cols + col): 1 + the index in `names` of the authority whose land it is, 0 for none. */
  readonly owner: Uint8Array;
  readonly names: readonly string[];
  /** Each authority's cell ids, ascending. */
  readonly cells: ReadonlyMap<string, Uint32Array>;
}

/** The file as stored: per authority, rows of `[row, firstCol, count, firstCol, count, …]` runs. */
interface LandFile {
  grid: typeof LAND_GRID;
  authorities: Record<string, number[][]>;
}

let file: LandFile | null = null;
let loaded: Land | null = null;

function landFile(): LandFile {
  if (file) return file;
  const f = JSON.parse(readFileSync(LAND_FILE, 'utf8')) as LandFile;
  const g = f.grid;
  if (
    g.lat0 !== LAND_GRID.lat0 ||
    g.lon0 !== LAND_GRID.lon0 ||
    g.dLat !== LAND_GRID.dLat ||
    g.dLon !== LAND_GRID.dLon ||
    g.cols !== LAND_GRID.cols
  ) {
    throw new Error('authority-land.json was built on another grid: rebuild it with land-build.ts');
  }
  return (file = f);
}

/** Every authority's land cells (read once from authority-land.json). */
export function authorityLand(): Land {
  if (loaded) return loaded;
  const f = landFile();
  const owner = new Uint8Array(LAND_GRID.rows * LAND_GRID.cols);
  const names = Object.keys(f.authorities);
  const cells = new Map<string, Uint32Array>();
  names.forEach((name, i) => {
    const ids: number[] = [];
    for (const [row, ...runs] of f.authorities[name]!) {
      for (let k = 0; k < runs.length; k += 2)
        for (let c = runs[k]!; c < runs[k]! + runs[k + 1]!; c++) ids.push(row! * LAND_GRID.cols + c);
    }
    for (const id of ids) owner[id] = i + 1;
    cells.set(name, Uint32Array.from(ids));
  });
  loaded = { owner, names, cells };
  return loaded;
}

/** The 1-based land index of an authority (as in `Land.owner`). */
export function landIndex(authority: string): number {
  const i = authorityLand().names.indexOf(authority);
  if (i < 0) throw new Error(`no land cells for authority ${authority}`);
  return i + 1;
}

/** The grid cell id of a point, or -1 outside the grid. */
export function cellOf(lat: number, lon: number): number {
  const row = Math.floor((lat - LAND_GRID.lat0) / LAND_GRID.dLat);
  const col = Math.floor((lon - LAND_GRID.lon0) / LAND_GRID.dLon);
  if (row < 0 || row >= LAND_GRID.rows || col < 0 || col >= LAND_GRID.cols) return -1;
  return row * LAND_GRID.cols + col;
}

/** South-west corner of a cell. */
export function cellCorner(id: number): { lat: number; lon: number } {
  return {
    lat: LAND_GRID.lat0 + Math.floor(id / LAND_GRID.cols) * LAND_GRID.dLat,
    lon: LAND_GRID.lon0 + (id % LAND_GRID.cols) * LAND_GRID.dLon,
  };
}

/** True when (lat, lon) is in one of the authority's land cells. */
export function onAuthorityLand(authority: string, lat: number, lon: number): boolean {
  const cell = cellOf(lat, lon);
  return cell >= 0 && authorityLand().owner[cell] === landIndex(authority);
}

/** The authority whose land holds (lat, lon), or null for a point at sea, on a border or outside the grid. */
export function landAuthorityAt(lat: number, lon: number): string | null {
  const cell = cellOf(lat, lon);
  const i = cell >= 0 ? authorityLand().owner[cell]! : 0;
  return i > 0 ? authorityLand().names[i - 1]! : null;
}

/** A GeoJSON Feature of one authority's land (MultiPolygon of grid rectangles). */
export interface LandFeature {
  type: 'Feature';
  id: number;
  properties: { authority: string; shade: number };
  geometry: { type: 'MultiPolygon'; coordinates: number[][][][] };
}

const round6 = (v: number): number => Math.round(v * 1e6) / 1e6;

/**
 * Every authority's land as GeoJSON (RFC 7946, `[lon, lat]`): one Feature per authority whose
 * MultiPolygon is its cells, merged into rectangles — each row's runs, a run joined with the same
 * run of the rows above it. The rectangles cover exactly the cells, so a point is inside a
 * feature's polygons exactly when it is in one of its cells. `shade` (0–5) differs between most
 * neighbours, for a map to colour by.
 */
export function landGeoJson(): { type: 'FeatureCollection'; features: LandFeature[] } {
  const f = landFile();
  const features = Object.entries(f.authorities).map(([authority, rows], i): LandFeature => {
    // open rectangles: key "firstCol:count" → first row; closed when the next row lacks the run
    const open = new Map<string, { row0: number; col: number; n: number; last: number }>();
    const rects: [number, number, number, number][] = []; // row0, row1 (exclusive), col0, col1 (exclusive)
    const close = (r: { row0: number; col: number; n: number; last: number }): void =>
      void rects.push([r.row0, r.last + 1, r.col, r.col + r.n]);
    for (const [row, ...runs] of [...rows].sort((a, b) => a[0]! - b[0]!)) {
      for (let k = 0; k < runs.length; k += 2) {
        const key = `${runs[k]}:${runs[k + 1]}`;
        const o = open.get(key);
        if (o && o.last === row! - 1) o.last = row!;
        else {
          if (o) close(o);
          open.set(key, { row0: row!, col: runs[k]!, n: runs[k + 1]!, last: row! });
        }
      }
    }
    for (const o of open.values()) close(o);
    const g = LAND_GRID;
    return {
      type: 'Feature',
      id: i + 1,
      properties: { authority, shade: i % 6 },
      geometry: {
        type: 'MultiPolygon',
        coordinates: rects.map(([r0, r1, c0, c1]) => {
          const s = round6(g.lat0 + r0 * g.dLat);
          const n = round6(g.lat0 + r1 * g.dLat);
          const w = round6(g.lon0 + c0 * g.dLon);
          const e = round6(g.lon0 + c1 * g.dLon);
          return [
            [
              [w, s],
              [e, s],
              [e, n],
              [w, n],
              [w, s],
            ],
          ];
        }),
      },
    };
  });
  return { type: 'FeatureCollection', features };
}
