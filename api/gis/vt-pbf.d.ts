// The part of vt-pbf's API that api/gis/tiles.ts uses (the package ships no types).
declare module 'vt-pbf' {
  import type { Tile } from 'geojson-vt';
  /** Encode geojson-vt tiles, one per layer name, as one Mapbox Vector Tile. */
  export function fromGeojsonVt(
    layers: Record<string, Tile>,
    options?: { version?: number; extent?: number },
  ): Uint8Array;
}
