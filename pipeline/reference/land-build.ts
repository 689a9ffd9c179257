/**
 * Offline builder of `common/authority-land.json` (see common/land.ts): reads a county-boundary GeoJSON (the
 * pre-2014 administrative counties, property `name`, WGS84), maps its 34 polygons onto the 31
 * authorities, and keeps every cell of a fixed grid that lies wholly inside one authority's land.
 * A cell is dropped when any boundary segment (coast or authority border) comes near it: each
 * segment is cut into pieces no longer than a quarter cell and every cell a piece's bounding box
 * touches is marked, so no kept cell meets a boundary. An unmarked cell is then wholly inside
 * the polygon that holds its centre, or wholly at sea.
 *
 * Run by hand, not by the pipeline or the tests (the boundary file is not part of the project):
 *   node --import tsx pipeline/reference/land-build.ts ../shared/realdata/boundaries_cartodb_admin_counties/ireland_counties.geojson
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { LAND_FILE, LAND_GRID, authorityOfBoundary } from './land.ts';

type Ring = number[][];
interface Feature {
  properties: { name: string };
  geometry: { type: string; coordinates: unknown };
}

function polygonsOf(f: Feature): Ring[][] {
  return f.geometry.type === 'MultiPolygon' ? (f.geometry.coordinates as Ring[][]) : [f.geometry.coordinates as Ring[]];
}

/** Even-odd test over every ring of an authority (holes included). */
function inside(rings: Ring[], lon: number, lat: number): boolean {
  let c = false;
  for (const ring of rings) {
    for (let i = 0, j = ring.length - 1; i < ring.length; j = i++) {
      const [xi, yi] = ring[i]!;
      const [xj, yj] = ring[j]!;
      if (yi! > lat !== yj! > lat && lon < ((xj! - xi!) * (lat - yi!)) / (yj! - yi!) + xi!) c = !c;
    }
  }
  return c;
}

/** The land cells of every authority from a boundary GeoJSON, as written to authority-land.json. */
export function buildLand(geojson: { features: Feature[] }): Record<string, number[][]> {
  const { lat0, lon0, dLat, dLon, rows, cols } = LAND_GRID;
  const rings = new Map<string, Ring[]>();
  for (const f of geojson.features) {
    const a = authorityOfBoundary(f.properties.name);
    const list = rings.get(a) ?? [];
    for (const p of polygonsOf(f)) list.push(...p);
    rings.set(a, list);
  }
  const marked = new Uint8Array(rows * cols);
  const mark = (x0: number, y0: number, x1: number, y1: number): void => {
    const c0 = Math.max(0, Math.floor((Math.min(x0, x1) - lon0) / dLon));
    const c1 = Math.min(cols - 1, Math.floor((Math.max(x0, x1) - lon0) / dLon));
    const r0 = Math.max(0, Math.floor((Math.min(y0, y1) - lat0) / dLat));
    const r1 = Math.min(rows - 1, Math.floor((Math.max(y0, y1) - lat0) / dLat));
    for (let r = r0; r <= r1; r++) for (let c = c0; c <= c1; c++) marked[r * cols + c] = 1;
  };
  for (const list of rings.values()) {
    for (const ring of list) {
      for (let i = 1; i < ring.length; i++) {
        const [x0, y0] = ring[i - 1]!;
        const [x1, y1] = ring[i]!;
        const n = Math.max(1, Math.ceil(Math.max(Math.abs(x1! - x0!) / dLon, Math.abs(y1! - y0!) / dLat) * 4));
        for (let k = 0; k < n; k++) {
          mark(
            x0! + ((x1! - x0!) * k) / n,
            y0! + ((y1! - y0!) * k) / n,
            x0! + ((x1! - x0!) * (k + 1)) / n,
            y0! + ((y1! - y0!) * (k + 1)) / n,
          );
        }
      }
    }
  }
  const out: Record<string, number[][]> = {};
  for (const [a, list] of [...rings].sort(([x], [y]) => (x < y ? -1 : 1))) {
    const runs: number[][] = [];
    let [x0, y0, x1, y1] = [Infinity, Infinity, -Infinity, -Infinity];
    for (const ring of list)
      for (const [x, y] of ring)
        [x0, y0, x1, y1] = [Math.min(x0, x!), Math.min(y0, y!), Math.max(x1, x!), Math.max(y1, y!)];
    for (let r = 0; r < rows; r++) {
      const row: number[] = [];
      let start = -1;
      const lat = lat0 + (r + 0.5) * dLat;
      if (lat < y0 || lat > y1) continue;
      for (let c = 0; c <= cols; c++) {
        const lon = lon0 + (c + 0.5) * dLon;
        const keep = c < cols && lon >= x0 && lon <= x1 && !marked[r * cols + c] && inside(list, lon, lat);
        if (keep && start < 0) start = c;
        if (!keep && start >= 0) {
          row.push(start, c - start);
          start = -1;
        }
      }
      if (row.length) runs.push([r, ...row]);
    }
    out[a] = runs;
  }
  return out;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const src = process.argv[2];
  if (!src) throw new Error('usage: land-build.ts <counties.geojson>');
  const land = buildLand(JSON.parse(readFileSync(src, 'utf8')));
  const lines = Object.entries(land).map(([a, runs]) => `    ${JSON.stringify(a)}: ${JSON.stringify(runs)}`);
  const grid = LAND_GRID;
  writeFileSync(
    LAND_FILE,
    `{\n  "grid": ${JSON.stringify({ lat0: grid.lat0, lon0: grid.lon0, dLat: grid.dLat, dLon: grid.dLon, rows: grid.rows, cols: grid.cols })},\n  "authorities": {\n${lines.join(',\n')}\n  }\n}\n`,
  );
}
