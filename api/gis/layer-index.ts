/**
 * The pre-rendered GeoJSON layers of a release (`geojson/*.ndjson`, one RFC 7946 Feature per
 * line, ordered by id; written by the pipeline, see docs/releases.md) indexed for paging: per
 * line its feature id, byte offset and length, and its point's coordinates (parsed from the
 * line's fixed prefix `{"type":"Feature","id":…,"geometry":{"type":"Point","coordinates":[lon,lat]}`).
 *
 * With the index a page of features is a few positioned reads of prepared bytes — no query and
 * no JSON rendering. The whole-layer case (and a bbox over it, and one authority's file) is
 * answered from the index alone; other filters select ids with DuckDB and take the lines from
 * here. An index costs 28 bytes a feature (≈ 6 MB for 200,000 leads) and is built once per
 * release and layer, on first use, by one sequential read of the file.
 */
import { open } from 'node:fs/promises';

export interface LayerIndex {
  /** The NDJSON file. */
  file: string;
  size: number;
  /** Feature ids, ascending. */
  ids: Float64Array;
  offsets: Float64Array;
  lengths: Uint32Array;
  lon: Float64Array;
  lat: Float64Array;
}

const PREFIX = /^\{"type":"Feature","id":(\d+),"geometry":\{"type":"Point","coordinates":\[(-?[0-9.eE+-]+),(-?[0-9.eE+-]+)\]\}/;
const READ_BYTES = 4 * 1024 * 1024;

/** Scan an NDJSON feature file and index its lines. Throws when a line is not a pre-rendered Point feature or ids are not ascending. */
export async function buildLayerIndex(file: string): Promise<LayerIndex> {
  const fh = await open(file, 'r');
  try {
    const { size } = await fh.stat();
    let cap = 1024;
    let ids = new Float64Array(cap);
    let offsets = new Float64Array(cap);
    let lengths = new Uint32Array(cap);
    let lon = new Float64Array(cap);
    let lat = new Float64Array(cap);
    let n = 0;
    const grow = (): void => {
      cap *= 2;
      const g = <T extends Float64Array | Uint32Array>(a: T): T => {
        const b = new (a.constructor as new (n: number) => T)(cap);
        b.set(a);
        return b;
      };
      ids = g(ids);
      offsets = g(offsets);
      lengths = g(lengths);
      lon = g(lon);
      lat = g(lat);
    };
    const buf = Buffer.allocUnsafe(READ_BYTES);
    let pos = 0; // file offset of buf[0]
    let carry = 0; // bytes of an unfinished line kept at the start of buf
    for (;;) {
      const { bytesRead } = await fh.read(buf, carry, READ_BYTES - carry, pos + carry);
      const end = carry + bytesRead;
      let start = 0;
      for (let nl = buf.indexOf(10, start); nl !== -1 && nl < end; nl = buf.indexOf(10, start)) {
        if (nl > start) {
          const m = PREFIX.exec(buf.toString('latin1', start, Math.min(nl, start + 200)));
          if (!m) throw new Error(`${file}: line at byte ${pos + start} is not a pre-rendered Point feature`);
          if (n === cap) grow();
          ids[n] = Number(m[1]);
          if (n > 0 && ids[n]! <= ids[n - 1]!) throw new Error(`${file}: feature ids are not ascending at id ${ids[n]}`);
          offsets[n] = pos + start;
          lengths[n] = nl - start;
          lon[n] = Number(m[2]);
          lat[n] = Number(m[3]);
          n++;
        }
        start = nl + 1;
      }
      if (bytesRead === 0) {
        if (end > start) throw new Error(`${file}: the last line has no newline`);
        break;
      }
      if (start === 0 && end === READ_BYTES) throw new Error(`${file}: a line is longer than ${READ_BYTES} bytes`);
      buf.copy(buf, 0, start, end);
      pos += start;
      carry = end - start;
    }
    return { file, size, ids: ids.slice(0, n), offsets: offsets.slice(0, n), lengths: lengths.slice(0, n), lon: lon.slice(0, n), lat: lat.slice(0, n) };
  } finally {
    await fh.close();
  }
}

/** Position of the first feature with id > `afterId` (binary search). */
export function positionAfter(index: LayerIndex, afterId: number): number {
  let lo = 0;
  let hi = index.ids.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (index.ids[mid]! <= afterId) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Position of the feature with this id, or -1. */
export function positionOf(index: LayerIndex, id: number): number {
  const p = positionAfter(index, id - 1);
  return p < index.ids.length && index.ids[p] === id ? p : -1;
}

/**
 * The feature lines at `positions` (ascending), read with one positioned read per run of
 * adjacent lines.
 */
export async function readFeatures(index: LayerIndex, positions: readonly number[]): Promise<string[]> {
  if (positions.length === 0) return [];
  const fh = await open(index.file, 'r');
  try {
    const out: string[] = [];
    let i = 0;
    while (i < positions.length) {
      let j = i;
      while (j + 1 < positions.length && positions[j + 1] === positions[j]! + 1) j++;
      const from = index.offsets[positions[i]!]!;
      const to = index.offsets[positions[j]!]! + index.lengths[positions[j]!]!;
      const buf = Buffer.allocUnsafe(to - from);
      const { bytesRead } = await fh.read(buf, 0, buf.length, from);
      if (bytesRead !== buf.length) throw new Error(`${index.file}: short read (the release file changed?)`);
      for (let k = i; k <= j; k++) {
        const o = index.offsets[positions[k]!]! - from;
        out.push(buf.toString('utf8', o, o + index.lengths[positions[k]!]!));
      }
      i = j + 1;
    }
    return out;
  } finally {
    await fh.close();
  }
}

/**
 * The feature lines at `positions` (ascending) as one buffer, separated by `,` — ready to splice
 * into a FeatureCollection without decoding a byte. Adjacent lines are one read whose newlines
 * become commas.
 */
export async function readFeaturesJoined(index: LayerIndex, positions: readonly number[]): Promise<Buffer> {
  if (positions.length === 0) return Buffer.alloc(0);
  const fh = await open(index.file, 'r');
  try {
    const parts: Buffer[] = [];
    let i = 0;
    while (i < positions.length) {
      let j = i;
      while (j + 1 < positions.length && positions[j + 1] === positions[j]! + 1) j++;
      const from = index.offsets[positions[i]!]!;
      const to = index.offsets[positions[j]!]! + index.lengths[positions[j]!]!;
      const buf = Buffer.allocUnsafe(to - from + 1);
      const { bytesRead } = await fh.read(buf, 0, to - from, from);
      if (bytesRead !== to - from) throw new Error(`${index.file}: short read (the release file changed?)`);
      for (let k = i + 1; k <= j; k++) buf[index.offsets[positions[k]!]! - from - 1] = 44; // '\n' → ','
      buf[to - from] = 44;
      parts.push(buf);
      i = j + 1;
    }
    const all = Buffer.concat(parts);
    return all.subarray(0, all.length - 1); // no trailing comma
  } finally {
    await fh.close();
  }
}

/** A bounding box [minLon, minLat, maxLon, maxLat]; minLon > maxLon crosses the antimeridian. */
export type BBox = [number, number, number, number];

/** True when (lon, lat) is inside `b` (edges included). */
export function inBBox(b: BBox, lon: number, lat: number): boolean {
  if (lat < b[1] || lat > b[3]) return false;
  return b[0] <= b[2] ? lon >= b[0] && lon <= b[2] : lon >= b[0] || lon <= b[2];
}
