/**
 * A polygon's exact point test and its index (the geometry of nearby and area search is three
 * files, api/gis/geometry.ts says which): the side of an edge a point lies on, decided exactly
 * (`orientation`), the even–odd crossing-number rule over a polygon's rings (`ringsHold`,
 * `inPolygonExact`), and the cell grid and latitude bands built once per geometry object
 * (`PolygonIndex`) that answer a point (`inPolygon`, `indexHolds`) and a rectangle
 * (`polygonRegion`, a `Region`) as the rule over every edge would.
 */
import type { AreaGeometry } from './geometry.ts';

/** How a rectangle lies against areas: no point of it in them, every point in them, or some. */
export type Region = 0 | 1 | 2;
export const OUTSIDE: Region = 0;
export const INSIDE: Region = 1;
export const PARTLY: Region = 2;

/**
 * Whether a point is in a polygon: even–odd over each polygon's rings (holes honoured), a point on
 * any ring inside; a MultiPolygon when any polygon holds it. Answered from the polygon's index
 * (`polygonIndex`, built once per geometry object): a cell wholly in or out answers at once, and
 * in a cell an edge passes near, the crossing-number rule runs over the edges of the point's
 * latitude band only — the same answer as `inPolygonExact`, which runs it over every edge.
 */
export function inPolygon(g: AreaGeometry, lat: number, lon: number): boolean {
  const ix = polygonIndexOf(g);
  return ix === null ? inPolygonExact(g, lat, lon) : indexHolds(ix, Float64Array.of(lon, lat), 0);
}

/** The exact test over every edge (the rule above, no index). */
export function inPolygonExact(g: AreaGeometry, lat: number, lon: number): boolean {
  if (g.type === 'Polygon') return ringsHold(g.coordinates, lon, lat);
  return g.coordinates.some((rings) => ringsHold(rings, lon, lat));
}

const OUT_CELL = 0;
const IN_CELL = 1;
const EDGE_CELL = 2;
/** How far (degrees, ~1 cm) around an edge's bounding box cells count as the edge's: far beyond the rounding of a cell index. */
const EDGE_MARGIN = 1e-7;

/**
 * A polygon's envelope cut into size × size cells, and its edges sorted into the grid's rows:
 *  - cells: a cell that an edge's bounding box (grown by `EDGE_MARGIN`) touches is an edge cell;
 *    every other cell holds no point of any ring, so it is wholly inside or wholly outside, and
 *    one test per run of such cells along a row (the status changes only across edge cells)
 *    decides it;
 *  - bands: the envelope cut into `BANDS_PER_ROW` times as many latitude bands as rows; band
 *    b's edges are those whose latitude span meets the band (`bandOf` of their lower and upper
 *    ends, the function a point's band is found with — monotone, so an edge whose span holds a
 *    point's latitude is always in that point's band). The crossing-number rule only ever counts
 *    an edge whose span holds the point's latitude, so the band's edges decide exactly what all
 *    edges would: a county-sized outline of 200 positions leaves a handful per band.
 *  - an edge cell's own edges, and its centre's status: a point of the cell is joined to the
 *    centre by a segment inside the cell, which meets none but the cell's edges — so when every
 *    one it meets it crosses cleanly (not at an end, not along it, neither point on it), the
 *    point's parity is the centre's flipped once per crossing (`edgeCellHolds`; one side test per
 *    edge the segment misses, the centre's side of each kept). A cell whose centre is on an edge,
 *    or whose edges are of more than one polygon of a MultiPolygon, and any touching, leave the
 *    point to its band.
 * Edges are kept in the order of the polygons (4 numbers each: ax, ay, bx, by) with the
 * polygon each belongs to, so a MultiPolygon's parity is counted polygon by polygon.
 */
interface PolygonIndex {
  /**
   * The envelope (degrees), at `W`, `S`, `E`, `N`, and the inverses of the cells' width and height
   * and of the bands' height, at `ICW`, `ICH`, `IBH`, in a `Float64Array` rather than in fields
   * (why: docs/performance.md "Geometry").
   */
  grid: Float64Array;
  size: number;
  /**
   * The cells' centres: column i's longitude at `centres[i]`, row j's latitude at
   * `centres[size + j]` (the west edge plus i + ½ cell widths, the south edge plus j + ½ cell
   * heights), the one place they are computed: a point of an edge cell reads its cell's centre here.
   */
  centres: Float64Array;
  cells: Uint8Array;
  /** Latitude bands: how many (the inverse of their height is `grid[IBH]`). */
  bands: number;
  /** Band b's edges are `edges[4k …]` for k in [bandStart[b], bandStart[b + 1]). */
  bandStart: Int32Array;
  edges: Float64Array;
  /** The polygon (of a MultiPolygon; 0 for a Polygon) of each band edge. */
  edgePolygon: Int32Array;
  /**
   * Summed-area tables over the cells: `notIn[j·(size+1) + i]` counts the cells that are not
   * wholly inside among rows < j and columns < i (`notOut` those not wholly outside), so whether a
   * rectangle of cells is all in (or all out) is four reads (`polygonRegion`).
   */
  notIn: Uint16Array;
  notOut: Uint16Array;
  /**
   * Cell c's edges are `cellEdges[k]` for k in [cellStart[c], cellStart[c + 1]) (an index into
   * `allEdges`, 4 numbers each), and `centreSide[k]` is the side of that edge its centre lies on
   * (`orientation`); `centre[c]` holds `CENTRE_USABLE`, `CENTRE_IN` and `CENTRE_OTHERS_IN`.
   * Empty when the edge cells would hold more than `CELL_EDGES_PER_CELL_MAX` edges per cell of
   * the grid in all, or more than 65,535 (`cellStart` is 16-bit), and then every edge cell's points
   * go to their band.
   */
  cellStart: Uint16Array;
  cellEdges: Int32Array;
  centreSide: Int8Array;
  centre: Uint8Array;
  allEdges: Float64Array;
}
/** An edge cell's centre: its parity may be used (not on an edge; the cell's edges are of one polygon). */
const CENTRE_USABLE = 4;
/** The polygon of the cell's edges holds the centre. */
const CENTRE_IN = 1;
/** Another polygon of a MultiPolygon holds the centre (and so the whole cell: none of its edges is here). */
const CENTRE_OTHERS_IN = 2;
/** Where `PolygonIndex.grid` holds each number. */
export const W = 0;
export const S = 1;
export const E = 2;
export const N = 3;
/** Where `PolygonIndex.grid` holds the inverses of the cells' width and height and of the bands' height: a cell is found by a multiplication by them. */
const ICW = 4;
const ICH = 5;
const IBH = 6;
/** (cell, edge) pairs kept at most, per cell of the grid (a bound on the index's memory for spiky outlines). */
const CELL_EDGES_PER_CELL_MAX = 8;
const indexes = new WeakMap<AreaGeometry, PolygonIndex | null>();

/** The index of a geometry object, built on its first use (null: a degenerate envelope, the exact test alone). */
export function polygonIndexOf(g: AreaGeometry): PolygonIndex | null {
  let ix = indexes.get(g);
  if (ix === undefined) indexes.set(g, (ix = polygonIndex(g)));
  return ix;
}

/** Latitude bands per row of cells. */
export const BANDS_PER_ROW = 4;

/**
 * Rows (and columns) of a polygon's grid for its number of positions: 16 cells per √position
 * (240 for a 200-position county outline; the index is remembered with its text,
 * `parsePolygonText`), at least 16; a finer grid leaves fewer candidates in edge cells, a coarser
 * one builds faster (docs/performance.md "Geometry"). At most 255, so the summed-area tables'
 * counts (at most 255² cells) fit 16 bits.
 */
export const gridSize = (vertices: number): number => Math.min(255, Math.max(16, 16 * Math.ceil(Math.sqrt(vertices))));

/**
 * The column / row of a cell a longitude / latitude falls in, clamped to the grid: the one formula
 * the index is built with and points and rectangles are looked up with (monotone in the
 * coordinate, which `polygonRegion` relies on).
 */
const colOf = (grid: Float64Array, size: number, x: number): number => cellOf((x - grid[W]!) * grid[ICW]!, size);
const rowOf = (grid: Float64Array, size: number, y: number): number => cellOf((y - grid[S]!) * grid[ICH]!, size);
/** A position in cells (from the envelope's west or south edge) as a cell index, clamped: below 0 (and NaN) is 0, beyond the last cell the last. */
const cellOf = (at: number, size: number): number => (at >= size - 1 ? size - 1 : at > 0 ? at | 0 : 0);

/** The band of a latitude: clamped to the envelope, monotone in `y`. */
const bandOf = (grid: Float64Array, bands: number, y: number): number => cellOf((y - grid[S]!) * grid[IBH]!, bands);

/** A geometry's polygons, each its rings of [longitude, latitude] positions. */
type Polygons = readonly (readonly (readonly number[])[])[][];

/**
 * Build a polygon's index (see `PolygonIndex`): its envelope's grid, its edges sorted into
 * latitude bands and into the cells they pass near, each cell wholly in, wholly out or an edge
 * cell, and the counts of the cells not in / not out for `polygonRegion`. Null for a degenerate
 * envelope (the exact test alone answers).
 */
function polygonIndex(g: AreaGeometry): PolygonIndex | null {
  const polygons: Polygons = g.type === 'Polygon' ? [g.coordinates] : g.coordinates;
  const { w, s, e, n, vertices } = envelopeOf(polygons);
  const size = gridSize(vertices);
  const cw = (e - w) / size;
  const ch = (n - s) / size;
  if (!(cw > 0 && ch > 0)) return null; // a degenerate envelope: the exact test alone
  const bands = size * BANDS_PER_ROW;
  const bh = (n - s) / bands;
  const grid = Float64Array.of(w, s, e, n, 1 / cw, 1 / ch, 1 / bh);
  const { all, allPolygon } = edgesOf(polygons);
  const { bandStart, edges, edgePolygon } = bandEdges(grid, bands, all, allPolygon);
  const cells = new Uint8Array(size * size);
  const { cellStart, cellEdges, keepCells } = cellEdgesOf(grid, size, ch, all, allPolygon.length, cells);
  const ix: PolygonIndex = {
    grid,
    size,
    centres: cellCentres(w, s, cw, ch, size),
    cells,
    bands,
    bandStart,
    edges,
    edgePolygon,
    notIn: new Uint16Array((size + 1) ** 2),
    notOut: new Uint16Array((size + 1) ** 2),
    cellStart,
    cellEdges,
    centreSide: new Int8Array(cellEdges.length),
    centre: new Uint8Array(keepCells ? size * size : 0),
    allEdges: Float64Array.from(all),
  };
  if (keepCells)
    for (let c = 0; c < size * size; c++) if (cells[c] === EDGE_CELL) ix.centre[c] = centreOf(ix, c, allPolygon);
  markRuns(ix);
  countNotInNotOut(ix);
  return ix;
}

/** The envelope of the polygons (west, south, east, north) and their number of vertices. */
function envelopeOf(polygons: Polygons): { w: number; s: number; e: number; n: number; vertices: number } {
  let w = Infinity;
  let s = Infinity;
  let e = -Infinity;
  let n = -Infinity;
  let vertices = 0;
  for (const rings of polygons) {
    for (const ring of rings) {
      vertices += ring.length;
      for (const [x, y] of ring) {
        if (x! < w) w = x!;
        if (x! > e) e = x!;
        if (y! < s) s = y!;
        if (y! > n) n = y!;
      }
    }
  }
  return { w, s, e, n, vertices };
}

/** Every edge of every ring, in polygon order (`all`: x0, y0, x1, y1 per edge), and each edge's polygon. */
function edgesOf(polygons: Polygons): { all: number[]; allPolygon: number[] } {
  const all: number[] = [];
  const allPolygon: number[] = [];
  polygons.forEach((rings, p) => {
    for (const ring of rings) {
      for (let k = 0; k + 1 < ring.length; k++) {
        all.push(ring[k]![0]!, ring[k]![1]!, ring[k + 1]![0]!, ring[k + 1]![1]!);
        allPolygon.push(p);
      }
    }
  });
  return { all, allPolygon };
}

/** The edges sorted into the latitude bands they span (counting first), with each one's polygon. */
function bandEdges(
  grid: Float64Array,
  bands: number,
  all: readonly number[],
  allPolygon: readonly number[],
): Pick<PolygonIndex, 'bandStart' | 'edges' | 'edgePolygon'> {
  const bandStart = new Int32Array(bands + 1);
  const spans = (k: number): [number, number] => [
    bandOf(grid, bands, Math.min(all[4 * k + 1]!, all[4 * k + 3]!)),
    bandOf(grid, bands, Math.max(all[4 * k + 1]!, all[4 * k + 3]!)),
  ];
  for (let k = 0; k < allPolygon.length; k++) {
    const [j0, j1] = spans(k);
    for (let j = j0; j <= j1; j++) bandStart[j + 1]!++;
  }
  for (let j = 0; j < bands; j++) bandStart[j + 1]! += bandStart[j]!;
  const fill = bandStart.slice(0, bands);
  const edges = new Float64Array(4 * bandStart[bands]!);
  const edgePolygon = new Int32Array(bandStart[bands]!);
  for (let k = 0; k < allPolygon.length; k++) {
    const [j0, j1] = spans(k);
    for (let j = j0; j <= j1; j++) {
      const at = fill[j]!++;
      for (let c = 0; c < 4; c++) edges[4 * at + c] = all[4 * k + c]!;
      edgePolygon[at] = allPolygon[k]!;
    }
  }
  return { bandStart, edges, edgePolygon };
}

/**
 * Edge `k`'s cells, row by row: the span of longitudes it covers within the row's latitudes
 * (both grown by EDGE_MARGIN), so a diagonal edge marks the cells along it, not its bounding box.
 */
function visitEdgeCells(
  grid: Float64Array,
  size: number,
  ch: number,
  all: readonly number[],
  k: number,
  visit: (cell: number) => void,
): void {
  const s = grid[S]!;
  const ax = all[4 * k]!;
  const ay = all[4 * k + 1]!;
  const bx = all[4 * k + 2]!;
  const by = all[4 * k + 3]!;
  const lo = Math.min(ay, by);
  const hi = Math.max(ay, by);
  const xAt = (y: number): number => (ay === by ? ax : ax + ((y - ay) * (bx - ax)) / (by - ay));
  const j1 = rowOf(grid, size, hi + EDGE_MARGIN);
  for (let j = rowOf(grid, size, lo - EDGE_MARGIN); j <= j1; j++) {
    const y0 = Math.max(lo, s + j * ch - EDGE_MARGIN);
    const y1 = Math.min(hi, s + (j + 1) * ch + EDGE_MARGIN);
    const [x0, x1] =
      ay === by ? [Math.min(ax, bx), Math.max(ax, bx)] : [Math.min(xAt(y0), xAt(y1)), Math.max(xAt(y0), xAt(y1))];
    const i1 = colOf(grid, size, x1 + EDGE_MARGIN);
    for (let i = colOf(grid, size, x0 - EDGE_MARGIN); i <= i1; i++) visit(j * size + i);
  }
}

/**
 * Each cell's edges: the cells an edge passes near are marked `EDGE_CELL` in `cells` and counted
 * first, then filled in edge order — kept only when there are few enough pairs of cell and edge.
 */
function cellEdgesOf(
  grid: Float64Array,
  size: number,
  ch: number,
  all: readonly number[],
  edgeCount: number,
  cells: Uint8Array,
): { cellStart: Uint16Array; cellEdges: Int32Array; keepCells: boolean } {
  const cellStart = new Uint16Array(size * size + 1);
  let pairs = 0;
  for (let k = 0; k < edgeCount; k++) {
    visitEdgeCells(grid, size, ch, all, k, (c) => {
      cells[c] = EDGE_CELL;
      if (cellStart[c + 1]! < 0xffff) cellStart[c + 1]!++; // (beyond that, pairs alone decides: no cells kept)
      pairs++;
    });
  }
  const keepCells = pairs <= Math.min(CELL_EDGES_PER_CELL_MAX * size * size, 0xffff);
  for (let c = 0; c < size * size; c++) cellStart[c + 1] = keepCells ? cellStart[c + 1]! + cellStart[c]! : 0;
  const cellEdges = new Int32Array(keepCells ? pairs : 0);
  if (keepCells) {
    const at = cellStart.slice(0, size * size);
    for (let k = 0; k < edgeCount; k++) visitEdgeCells(grid, size, ch, all, k, (c) => void (cellEdges[at[c]!++] = k));
  }
  return { cellStart, cellEdges, keepCells };
}

/** The longitudes of the grid's columns' centres, then the latitudes of its rows'. */
function cellCentres(w: number, s: number, cw: number, ch: number, size: number): Float64Array {
  const centres = new Float64Array(2 * size);
  for (let i = 0; i < size; i++) {
    centres[i] = w + (i + 0.5) * cw;
    centres[size + i] = s + (i + 0.5) * ch;
  }
  return centres;
}

/** Mark each run of cells between edge cells in or out, by the band test of its first cell's centre. */
function markRuns(ix: PolygonIndex): void {
  const { size, cells } = ix;
  for (let j = 0; j < size; j++) {
    let status = -1; // unknown at the start of a run
    for (let i = 0; i < size; i++) {
      const at = j * size + i;
      if (cells[at] === EDGE_CELL) {
        status = -1;
        continue;
      }
      if (status < 0) {
        CENTRE[0] = ix.centres[i]!;
        CENTRE[1] = ix.centres[size + j]!;
        status = bandHolds(ix, CENTRE, 0) ? IN_CELL : OUT_CELL;
      }
      cells[at] = status;
    }
  }
}

/** The 2-D prefix counts of the cells not wholly in (`notIn`) and not wholly out (`notOut`). */
function countNotInNotOut(ix: PolygonIndex): void {
  const { size, cells } = ix;
  const stride = size + 1;
  for (let j = 0; j < size; j++) {
    for (let i = 0; i < size; i++) {
      const cell = cells[j * size + i]!;
      const at = (j + 1) * stride + i + 1;
      ix.notIn[at] =
        (cell !== IN_CELL ? 1 : 0) + ix.notIn[at - 1]! + ix.notIn[at - stride]! - ix.notIn[at - stride - 1]!;
      ix.notOut[at] =
        (cell !== OUT_CELL ? 1 : 0) + ix.notOut[at - 1]! + ix.notOut[at - stride]! - ix.notOut[at - stride - 1]!;
    }
  }
}

/**
 * How the rectangle [x0, x1] × [y0, y1] (`r[at …]`, as `areaRegion` takes it) lies against the polygon, as `indexHolds` would answer
 * each of its points: the points of the rectangle inside the envelope fall in the cells
 * colOf(max(x0, w))…colOf(min(x1, e)) × rowOf(max(y0, s))…rowOf(min(y1, n)) (the index of a point's cell
 * is monotone in its coordinates), so `INSIDE` when the rectangle is within the envelope and all
 * those cells are wholly in, `OUTSIDE` when it misses the envelope or all those cells are wholly out.
 */
export function polygonRegion(ix: PolygonIndex, r: Float64Array, at: number): Region {
  const x0 = r[at]!;
  const y0 = r[at + 1]!;
  const x1 = r[at + 2]!;
  const y1 = r[at + 3]!;
  const { grid, size } = ix;
  const w = grid[W]!;
  const s = grid[S]!;
  const e = grid[E]!;
  const n = grid[N]!;
  if (x1 < w || x0 > e || y1 < s || y0 > n) return OUTSIDE;
  const i0 = colOf(grid, size, Math.max(x0, w));
  const i1 = colOf(grid, size, Math.min(x1, e)) + 1;
  const j0 = rowOf(grid, size, Math.max(y0, s));
  const j1 = rowOf(grid, size, Math.min(y1, n)) + 1;
  const stride = size + 1;
  const a = j1 * stride + i1;
  const b = j0 * stride + i1;
  const c = j1 * stride + i0;
  const d = j0 * stride + i0;
  if (ix.notOut[a]! - ix.notOut[b]! - ix.notOut[c]! + ix.notOut[d]! === 0) return OUTSIDE;
  if (x0 >= w && x1 <= e && y0 >= s && y1 <= n && ix.notIn[a]! - ix.notIn[b]! - ix.notIn[c]! + ix.notIn[d]! === 0)
    return INSIDE;
  return PARTLY;
}

/** `inPolygon` through the index, for point `i` of `xy` (`PointTest`): the envelope, the point's cell, and in an edge cell its edges (or its band's). */
export function indexHolds(ix: PolygonIndex, xy: Float64Array, i: number): boolean {
  const lon = xy[2 * i]!;
  const lat = xy[2 * i + 1]!;
  const { grid, size } = ix;
  if (!(lon >= grid[W]! && lon <= grid[E]! && lat >= grid[S]! && lat <= grid[N]!)) return false; // outside the envelope of every ring (NaN too)
  const row = rowOf(grid, size, lat);
  const col = colOf(grid, size, lon);
  const cell = ix.cells[row * size + col]!;
  return cell === EDGE_CELL ? edgeCellHolds(ix, row, col, xy, i) : cell === IN_CELL;
}

/** Two slots for a cell's centre while the index is built (one at a time: nothing between the write and the reads yields). */
const CENTRE = new Float64Array(2);

/**
 * The centre flags of edge cell `at` (its edges' sides of the centre are written to `centreSide`):
 * usable when its edges are all of one polygon and the centre is on none; that polygon's parity at
 * the centre, and whether another polygon holds it — the crossing-number rule over the centre's
 * band, polygon by polygon.
 */
function centreOf(ix: PolygonIndex, at: number, edgePolygonOf: readonly number[]): number {
  const from = ix.cellStart[at]!;
  const to = ix.cellStart[at + 1]!;
  const polygon = edgePolygonOf[ix.cellEdges[from]!]!;
  const x = ix.centres[at % ix.size]!;
  const y = ix.centres[ix.size + Math.floor(at / ix.size)]!;
  for (let k = from; k < to; k++) {
    const e = 4 * ix.cellEdges[k]!;
    if (edgePolygonOf[ix.cellEdges[k]!] !== polygon) return 0;
    const side = orientation(ix.allEdges[e]!, ix.allEdges[e + 1]!, ix.allEdges[e + 2]!, ix.allEdges[e + 3]!, x, y);
    if (side === 0) return 0;
    ix.centreSide[k] = side;
  }
  const b = bandOf(ix.grid, ix.bands, y);
  const parity = new Map<number, boolean>();
  for (let k = ix.bandStart[b]!, end = ix.bandStart[b + 1]!; k < end; k++) {
    const r = edgeVersusPoint(ix.edges[4 * k]!, ix.edges[4 * k + 1]!, ix.edges[4 * k + 2]!, ix.edges[4 * k + 3]!, x, y);
    if (r === ON_EDGE) return 0; // the centre on an edge: no parity
    const p = ix.edgePolygon[k]!;
    if (r === CROSSES) parity.set(p, !parity.get(p));
  }
  let flags = CENTRE_USABLE | (parity.get(polygon) ? CENTRE_IN : 0);
  for (const [p, inside] of parity) if (p !== polygon && inside) flags |= CENTRE_OTHERS_IN;
  return flags;
}

/**
 * A point of edge cell `at` (point `i` of `xy`, `PointTest`): the centre's parity flipped by each of the cell's edges the
 * segment from the centre to the point crosses, when it meets each cleanly (`CROSSES` or
 * `MISSES`); on any touching, its band decides (`bandHolds`).
 */
function edgeCellHolds(ix: PolygonIndex, row: number, col: number, xy: Float64Array, i: number): boolean {
  const at = row * ix.size + col;
  const x = xy[2 * i]!;
  const y = xy[2 * i + 1]!;
  const flags = ix.centre.length > 0 ? ix.centre[at]! : 0;
  if ((flags & CENTRE_USABLE) === 0) return bandHolds(ix, xy, i);
  const cx = ix.centres[col]!;
  const cy = ix.centres[ix.size + row]!;
  const { allEdges, cellEdges, centreSide } = ix;
  let inside = (flags & CENTRE_IN) !== 0;
  for (let k = ix.cellStart[at]!, end = ix.cellStart[at + 1]!; k < end; k++) {
    const e = 4 * cellEdges[k]!;
    const ax = allEdges[e]!;
    const ay = allEdges[e + 1]!;
    const bx = allEdges[e + 2]!;
    const by = allEdges[e + 3]!;
    const side = orientation(ax, ay, bx, by, x, y);
    if (side === centreSide[k]) continue; // the point on the centre's side of the edge's line: not crossed
    if (side === 0) return bandHolds(ix, xy, i); // on the line
    // the segment crosses the edge's line: within the edge when a and b lie strictly on either side of it
    const sa = orientation(cx, cy, x, y, ax, ay);
    const sb = orientation(cx, cy, x, y, bx, by);
    if (sa === 0 || sb === 0) return bandHolds(ix, xy, i); // through an end
    if (sa !== sb) inside = !inside;
  }
  return inside || (flags & CENTRE_OTHERS_IN) !== 0;
}

/** The crossing-number rule (`ringsHold`) over the edges of the band of point `i` of `xy` (`PointTest`), polygon by polygon. */
function bandHolds(ix: PolygonIndex, xy: Float64Array, i: number): boolean {
  const x = xy[2 * i]!;
  const y = xy[2 * i + 1]!;
  const b = bandOf(ix.grid, ix.bands, y);
  const { edges, edgePolygon } = ix;
  let polygon = -1;
  let inside = false;
  for (let k = ix.bandStart[b]!, end = ix.bandStart[b + 1]!; k < end; k++) {
    if (edgePolygon[k] !== polygon) {
      if (inside) return true; // the previous polygon holds it
      polygon = edgePolygon[k]!;
    }
    const r = edgeVersusPoint(edges[4 * k]!, edges[4 * k + 1]!, edges[4 * k + 2]!, edges[4 * k + 3]!, x, y);
    if (r === ON_EDGE) return true;
    if (r === CROSSES) inside = !inside;
  }
  return inside;
}

const MISSES = 0;
const CROSSES = 1;
const ON_EDGE = 2;

/**
 * One edge a→b against the point (x, y), the crossing-number rule's one step: `CROSSES` when a
 * ray from the point towards +x crosses the edge — one end strictly above the point's latitude
 * and the other not (the half-open rule counts a vertex on the ray once), and the point on the
 * edge's inner side (`orientation`; no intersection is computed) —, `ON_EDGE` when the point is
 * on the edge (within its bounding box and `orientation` exactly 0), else `MISSES`. Only an edge
 * whose latitude span holds y can answer anything but `MISSES`.
 */
function edgeVersusPoint(ax: number, ay: number, bx: number, by: number, x: number, y: number): number {
  if (ay > y === by > y) {
    // not straddling: only a point on the edge matters (a horizontal edge at y, or an end on it)
    return (ay === y || by === y) &&
      x >= Math.min(ax, bx) &&
      x <= Math.max(ax, bx) &&
      orientation(ax, ay, bx, by, x, y) === 0
      ? ON_EDGE
      : MISSES;
  }
  const o = orientation(ax, ay, bx, by, x, y);
  if (o === 0) return ON_EDGE; // its latitude span holds y, so the line's point is on the segment
  return (by > ay ? o > 0 : o < 0) ? CROSSES : MISSES;
}

/** Even–odd crossing number of the point (x, y) over every edge of `rings` (closed: last position = first); on an edge is inside. */
function ringsHold(rings: readonly (readonly number[])[][], x: number, y: number): boolean {
  let inside = false;
  for (const ring of rings) {
    for (let i = 0; i + 1 < ring.length; i++) {
      const r = edgeVersusPoint(ring[i]![0]!, ring[i]![1]!, ring[i + 1]![0]!, ring[i + 1]![1]!, x, y);
      if (r === ON_EDGE) return true;
      if (r === CROSSES) inside = !inside;
    }
  }
  return inside;
}

/** Shewchuk's error bound of the floating-point orientation (1997, `ccwerrboundA`): (3 + 16ε)ε with ε = 2⁻⁵³. */
const ORIENTATION_BOUND = (3 + 16 * 2 ** -53) * 2 ** -53;

/**
 * The side of the line a→b the point p lies on, exactly: 1 when left (a, b, p counter-clockwise),
 * −1 when right, 0 when on the line — the sign of (ax − px)(by − py) − (ay − py)(bx − px) over the
 * exact values of the doubles given. Computed in floating point when its error bound allows (all
 * but near-collinear points), else exactly with integers (`exactOrientation`).
 */
export function orientation(ax: number, ay: number, bx: number, by: number, px: number, py: number): -1 | 0 | 1 {
  const l = (ax - px) * (by - py);
  const r = (ay - py) * (bx - px);
  const det = l - r;
  const bound = ORIENTATION_BOUND * (Math.abs(l) + Math.abs(r));
  if (det > bound) return 1;
  if (-det > bound) return -1;
  return exactOrientation(ax, ay, bx, by, px, py);
}

/** A finite double as an exact integer mantissa and binary exponent: x = m · 2^e. */
function exactParts(x: number): [bigint, number] {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x);
  const bits = view.getBigUint64(0);
  const biased = Number((bits >> 52n) & 0x7ffn);
  let m = bits & 0xfffffffffffffn;
  if (biased !== 0) m |= 0x10000000000000n;
  return [bits >> 63n ? -m : m, (biased === 0 ? 1 : biased) - 1075];
}

/** `orientation` in exact integer arithmetic: every double scaled to the smallest exponent among them. */
function exactOrientation(ax: number, ay: number, bx: number, by: number, px: number, py: number): -1 | 0 | 1 {
  const parts = [ax, ay, bx, by, px, py].map(exactParts);
  const e0 = Math.min(...parts.map(([, e]) => e));
  const [AX, AY, BX, BY, PX, PY] = parts.map(([m, e]) => m << BigInt(e - e0)) as [
    bigint,
    bigint,
    bigint,
    bigint,
    bigint,
    bigint,
  ];
  const det = (AX - PX) * (BY - PY) - (AY - PY) * (BX - PX);
  return det > 0n ? 1 : det < 0n ? -1 : 0;
}
