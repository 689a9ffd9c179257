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
import { envelopes, haversineM, matchesArea, type AreaFilters, type NearArea } from '../gis/geometry.ts';
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
  private readonly posOf: Int32Array;
  private readonly tree: KDBush | null;

  constructor(private readonly p: GeoIndexParts) {
    this.lat = p.lat;
    this.lon = p.lon;
    this.posOf = p.posOf;
    // KDBush.from needs its own ArrayBuffer starting at the tree (a pack gives a view into a shared one)
    this.tree = p.posOf.length > 0 ? KDBush.from(p.tree.slice().buffer) : null;
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

  /** The positions in every given area (a bitset over `size` rows). */
  match(area: AreaFilters, size: number): Bitset {
    const out = emptySet(size);
    const boxes = envelopes(area);
    if (!this.tree || !boxes) return out;
    for (const [w, s, e, n] of boxes) {
      for (const item of this.tree.range(w, s, e, n)) {
        const pos = this.posOf[item]!;
        if (matchesArea(area, this.lat[pos]!, this.lon[pos]!)) setBit(out, pos);
      }
    }
    return out;
  }

  /** The haversine distance in metres from `near` to the lead at `pos`. */
  distance(near: Pick<NearArea, 'lat' | 'lon'>, pos: number): number {
    return haversineM(near.lat, near.lon, this.lat[pos]!, this.lon[pos]!);
  }
}
