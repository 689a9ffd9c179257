/**
 * The geometry part of the lead index: a k-d tree (kdbush) over the leads' longitude / latitude,
 * built once per release with the other indexes (in the build child; its one buffer travels in
 * the pack), so `near`, `bbox` and `polygon` are answered without a scan: a walk of the tree over
 * the area's envelope, where the geometry module (api/gis/geometry.ts, the one place that
 * decides) says of each node's rectangle whether the area holds all, none or some of it
 * (`areaRegion`) and of the points of each "some" leaf which are in (`areaRangeTest`, the exact
 * test over a run of points) — a bitset of row positions that the lead index ANDs with the other
 * filters. Distances for `distance_m` and `sort=distance` come from the same module.
 */
import KDBush from 'kdbush';
import type { AreaFilters, NearArea } from '../gis/geometry.ts';
import { INSIDE, OUTSIDE } from '../gis/polygon-index.ts';
import { areaRangeTest, areaRegion, envelopes, haversineM } from '../gis/point-tests.ts';
import { setBit, type Bitset } from './bitset.ts';

/** What a `GeoIndex` is made of (moved between processes by api/engine/pack.ts). */
export interface GeoIndexParts {
  /** Per row position: latitude and longitude (NaN when the lead has none). */
  lat: Float64Array;
  lon: Float64Array;
  /** The k-d tree's item → row position (only leads with coordinates are in the tree). */
  posOf: Int32Array;
  /** The kdbush buffer (`KDBush.from`). */
  tree: Uint8Array;
}

export class GeoIndex {
  private readonly lat: Float64Array;
  private readonly lon: Float64Array;
  private readonly tree: KDBush | null;
  /** The row position of each of the tree's points, in the tree's order (its `ids` mapped through `posOf`). */
  private readonly treePos: Int32Array;
  /** The traversal stack of `match`: per pending node its index range and axis, and the rectangle its points lie in. */
  private readonly stack: Int32Array;
  private readonly rects: Float64Array;
  /** The hits of one leaf's `RangeTest` (a leaf holds at most nodeSize + 1 points). */
  private readonly hits: Int32Array;

  private readonly p: GeoIndexParts;
  constructor(p: GeoIndexParts) {
    this.p = p;
    this.lat = p.lat;
    this.lon = p.lon;
    // KDBush.from needs its own ArrayBuffer starting at the tree (a pack gives a view into a shared one)
    this.tree = p.posOf.length > 0 ? KDBush.from(p.tree.slice().buffer) : null;
    this.treePos = this.tree ? Int32Array.from(this.tree.ids, (item) => p.posOf[item]!) : new Int32Array(0);
    // a depth-first walk keeps at most one pending sibling per level: 3 numbers each, with room to spare
    const depth = 2 * (Math.ceil(Math.log2(p.posOf.length + 1)) + 2);
    this.stack = new Int32Array(3 * depth);
    this.rects = new Float64Array(4 * depth);
    this.hits = new Int32Array((this.tree?.nodeSize ?? 0) + 1);
  }

  /** The tree over the positions' coordinates (NaN = no coordinates). */
  static build(lat: Float64Array, lon: Float64Array): GeoIndexParts {
    const with_: number[] = [];
    for (let pos = 0; pos < lat.length; pos++)
      if (Number.isFinite(lat[pos]!) && Number.isFinite(lon[pos]!)) with_.push(pos);
    const posOf = Int32Array.from(with_);
    if (posOf.length === 0) return { lat, lon, posOf, tree: new Uint8Array(0) };
    const kd = new KDBush(posOf.length, 64, Float64Array);
    for (const pos of posOf) kd.add(lon[pos]!, lat[pos]!);
    kd.finish();
    return { lat, lon, posOf, tree: new Uint8Array(kd.data as ArrayBuffer) };
  }

  parts(): GeoIndexParts {
    return this.p;
  }

  /**
   * The positions in every given area, set in `out` (zeroed, a bit per row): kdbush's range search over
   * each envelope (the traversal of its `range`, kept here so that each candidate's coordinates
   * are read from the tree's own array, in the tree's order, and its position from `treePos`),
   * with the rectangle each node's points lie in carried down the walk: a node whose rectangle
   * the areas hold wholly (`areaRegion` says `INSIDE`) has all its points set without a test, one
   * they miss wholly is skipped, and only the points of nodes the areas' edges cross are tested,
   * a leaf's in one call (`areaRangeTest`; a split point alone). No candidate is tested against
   * the envelope first: the test is exact, and every point it holds is within the envelopes. Both
   * decide alike, so the set is the one testing every candidate would give
   * (test/api/gis/geo-search.test.ts checks it against a reference on 200 areas).
   */
  match(area: AreaFilters, out: Bitset): Bitset {
    const boxes = envelopes(area);
    const tree = this.tree;
    if (!tree || !boxes) return out;
    const inArea = areaRangeTest(area);
    const region = areaRegion(area);
    const hits = this.hits;
    const nodeSize = tree.nodeSize;
    const coords = tree.coords as Float64Array; // built with Float64Array (`build`): longitude, latitude per item, the layout `PointTest` reads
    const treePos = this.treePos;
    const nodes = this.stack;
    const rects = this.rects;
    for (const [minX, minY, maxX, maxY] of boxes) {
      nodes[0] = 0;
      nodes[1] = tree.numItems - 1;
      nodes[2] = 0;
      rects[0] = -Infinity;
      rects[1] = -Infinity;
      rects[2] = Infinity;
      rects[3] = Infinity;
      let sp = 1;
      while (sp > 0) {
        sp--;
        const left = nodes[3 * sp]!;
        const right = nodes[3 * sp + 1]!;
        const axis = nodes[3 * sp + 2]!;
        const r = region(rects, 4 * sp);
        if (r === OUTSIDE) continue;
        const x0 = rects[4 * sp]!;
        const y0 = rects[4 * sp + 1]!;
        const x1 = rects[4 * sp + 2]!;
        const y1 = rects[4 * sp + 3]!;
        if (r === INSIDE) {
          for (let i = left; i <= right; i++) setBit(out, treePos[i]!);
          continue;
        }
        if (right - left <= nodeSize) {
          for (let h = inArea(coords, left, right, hits) - 1; h >= 0; h--) setBit(out, treePos[hits[h]!]!);
          continue;
        }
        const m = (left + right) >> 1;
        const x = coords[2 * m]!;
        const y = coords[2 * m + 1]!;
        if (inArea(coords, m, m, hits) === 1) setBit(out, treePos[m]!);
        // the points before m lie at or below its coordinate on the axis, those after it at or above
        if (axis === 0 ? minX <= x : minY <= y) {
          nodes[3 * sp] = left;
          nodes[3 * sp + 1] = m - 1;
          nodes[3 * sp + 2] = 1 - axis;
          rects[4 * sp] = x0;
          rects[4 * sp + 1] = y0;
          rects[4 * sp + 2] = axis === 0 ? x : x1;
          rects[4 * sp + 3] = axis === 0 ? y1 : y;
          sp++;
        }
        if (axis === 0 ? maxX >= x : maxY >= y) {
          nodes[3 * sp] = m + 1;
          nodes[3 * sp + 1] = right;
          nodes[3 * sp + 2] = 1 - axis;
          rects[4 * sp] = axis === 0 ? x : x0;
          rects[4 * sp + 1] = axis === 0 ? y0 : y;
          rects[4 * sp + 2] = x1;
          rects[4 * sp + 3] = y1;
          sp++;
        }
      }
    }
    return out;
  }

  /** The haversine distance in metres from `near` to the lead at `pos`. */
  distance(near: Pick<NearArea, 'lat' | 'lon'>, pos: number): number {
    return haversineM(near.lat, near.lon, this.lat[pos]!, this.lon[pos]!);
  }
}
