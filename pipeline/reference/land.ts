/**
 * Where each planning authority's land is, as cells of a fixed grid (0.005° of latitude by 0.0075°
 * of longitude, about 560 × 500 m): `authority-land.json` lists, per authority, the cells that
 * lie wholly inside its administrative boundary, with no coast and no border crossing them. A
 * point in one of its cells is on the authority's land; the coast and borders are kept at least
 * a fraction of a cell away. The generator draws coordinates from these cells, so no generated
 * application lies in the sea or in the next county.
 *
 * The file is derived offline from a county-boundary GeoJSON by `land-build.ts` (how, there); it
 * holds cells, not the source's outlines. Dublin's four councils, Cork City and Galway City have
 * cells of their own (from the pre-2019 city boundaries, so a Cork City point is inside both the
 * old and the new city).
 */
import { readFileSync } from 'node:fs';

/** The grid of `authority-land.json`: a cell is (row, col) with south-west corner (lat0 + row·dLat, lon0 + col·dLon). */
export const LAND_GRID = { lat0: 51.38, lon0: -10.7, dLat: 0.005, dLon: 0.0075, rows: 820, cols: 1980 } as const;

/**
 * The authority a polygon of the pre-2014 county boundaries belongs to (today's 31 authorities:
 * Limerick and Waterford city and county merged, North and South Tipperary merged).
 */
export function authorityOfBoundary(name: string): string {
  if (name === 'Limerick City' || name === 'Limerick County') return 'Limerick';
  if (name === 'Waterford City' || name === 'Waterford County') return 'Waterford';
  if (name === 'North Tipperary' || name === 'South Tipperary') return 'Tipperary';
  if (name === 'Cork County' || name === 'Galway County' || name === 'Cork City' || name === 'Galway City') return name;
  return name.replace(/ County$/, '');
}

/** Every authority's land: the owner of each grid cell and each authority's cells. */
export interface Land {
  /** Per cell id (row · cols + col): 1 + the index in `names` of the authority whose land it is, 0 for none. */
  readonly owner: Uint8Array;
  readonly names: readonly string[];
  /** Each authority's cell ids, ascending. */
  readonly cells: ReadonlyMap<string, Uint32Array>;
}

let loaded: Land | null = null;

/** Every authority's land cells (read once from authority-land.json). */
export function authorityLand(): Land {
  if (loaded) return loaded;
  const file = JSON.parse(readFileSync(new URL('./authority-land.json', import.meta.url), 'utf8')) as {
    grid: typeof LAND_GRID;
    authorities: Record<string, number[][]>;
  };
  const g = file.grid;
  if (
    g.lat0 !== LAND_GRID.lat0 ||
    g.lon0 !== LAND_GRID.lon0 ||
    g.dLat !== LAND_GRID.dLat ||
    g.dLon !== LAND_GRID.dLon ||
    g.cols !== LAND_GRID.cols
  ) {
    throw new Error('authority-land.json was built on another grid: rebuild it with land-build.ts');
  }
  const owner = new Uint8Array(LAND_GRID.rows * LAND_GRID.cols);
  const names = Object.keys(file.authorities);
  const cells = new Map<string, Uint32Array>();
  names.forEach((name, i) => {
    const ids: number[] = [];
    for (const [row, ...runs] of file.authorities[name]!) {
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
