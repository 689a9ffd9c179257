/**
 * The geometry part of the lead index: a k-d tree (kdbush) over the leads' longitude / latitude,
 * built once per release with the other indexes (in the build child; its one buffer travels in
 * the pack), so `near`, `bbox` and `polygon` are answered without a scan: the tree's range query
 * over the area's envelope gives the candidates, and the geometry module (api/gis/geometry.ts,
 * the one place that decides) keeps those really in — a bitset of row positions that the lead
 * index ANDs with the other filters. Distances for `distance_m` and `sort=distance` come from the
 * same module.
 */
import KDBush from 'kdbush';
import { areaTest, envelopes, haversineM, type AreaFilters, type NearArea } from '../gis/geometry.ts';
import { emptySet, setBit, type Bitset } from './bitset.ts';

/** What a `GeoIndex` is made of (moved between processes by api/index/pack.ts). */
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
  /** The traversal stack of `match` (kdbush's own is module-private). */
  private readonly stack: Int32Array;

  constructor(private readonly p: GeoIndexParts) {
    this.lat = p.lat;
    this.lon = p.lon;
    // KDBush.from needs its own ArrayBuffer starting at the tree (a pack gives a view into a shared one)
    this.tree = p.posOf.length > 0 ? KDBush.from(p.tree.slice().buffer) : null;
    this.treePos = this.tree ? Int32Array.from(this.tree.ids, (item) => p.posOf[item]!) : new Int32Array(0);
    // a depth-first walk keeps at most one pending sibling per level: 3 numbers each, with room to spare
    this.stack = new Int32Array(6 * (Math.ceil(Math.log2(p.posOf.length + 1)) + 2));
  }

  /** The tree over the positions' coordinates (NaN = no coordinates). */
  static build(lat: Float64Array, lon: Float64Array): GeoIndexParts {
    const with_: number[] = [];
    for (let pos = 0; pos < lat.length; pos++) if (Number.isFinite(lat[pos]!) && Number.isFinite(lon[pos]!)) with_.push(pos);
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
   * The positions in every given area (a bitset over `size` rows): kdbush's range search over
   * each envelope (the traversal of its `range`, kept here so that each candidate's coordinates
   * are read from the tree's own array, in the tree's order, and its position from `treePos`,
   * rather than from the release-ordered columns at random: ~3× faster for a county's 40,000
   * candidates), each candidate tested by the geometry module.
   */
  match(area: AreaFilters, size: number): Bitset {
    const out = emptySet(size);
    const boxes = envelopes(area);
    const tree = this.tree;
    if (!tree || !boxes) return out;
    const inArea = areaTest(area);
    const { coords, nodeSize } = tree;
    const treePos = this.treePos;
    const stack = this.stack;
    for (const [minX, minY, maxX, maxY] of boxes) {
      stack[0] = 0;
      stack[1] = tree.numItems - 1;
      stack[2] = 0;
      let sp = 3;
      while (sp > 0) {
        const axis = stack[--sp]!;
        const right = stack[--sp]!;
        const left = stack[--sp]!;
        if (right - left <= nodeSize) {
          for (let i = left; i <= right; i++) {
            const x = coords[2 * i]!;
            const y = coords[2 * i + 1]!;
            if (x >= minX && x <= maxX && y >= minY && y <= maxY && inArea(y, x)) setBit(out, treePos[i]!);
          }
          continue;
        }
        const m = (left + right) >> 1;
        const x = coords[2 * m]!;
        const y = coords[2 * m + 1]!;
        if (x >= minX && x <= maxX && y >= minY && y <= maxY && inArea(y, x)) setBit(out, treePos[m]!);
        if (axis === 0 ? minX <= x : minY <= y) {
          stack[sp++] = left;
          stack[sp++] = m - 1;
          stack[sp++] = 1 - axis;
        }
        if (axis === 0 ? maxX >= x : maxY >= y) {
          stack[sp++] = m + 1;
          stack[sp++] = right;
          stack[sp++] = 1 - axis;
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
