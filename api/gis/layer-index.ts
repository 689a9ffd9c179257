/**
 * The pre-rendered GeoJSON layers of a release (`geojson/*.ndjson`, one RFC 7946 Feature per
 * line, ordered by id; written by the pipeline, see docs/releases.md) indexed for paging: per
 * line its feature id, byte offset and length, and its point's coordinates (parsed from the
 * line's fixed prefix `{"type":"Feature","id":…,"geometry":{"type":"Point","coordinates":[lon,lat]}`).
 *
 * A layer stored in several files (the national leads layer is the union of the per-authority
 * files, see pipeline/release/geojson.ts) is indexed by merging its parts' indexes by id
 * (`mergeLayerIndexes`); each position then also records its file.
 *
 * With the index a page of features is a few positioned reads of prepared bytes — no query and
 * no JSON rendering. The whole-layer case (and a bbox over it, and one authority's file) is
 * answered from the index alone; other filters select ids with DuckDB and take the lines from
 * here. An index costs 28 bytes a feature (≈ 6 MB for 200,000 leads) and is built once per
 * release and layer, on first use, by one sequential read of the file.
 */
import { open } from 'node:fs/promises';

export interface LayerIndex {
  /** The NDJSON files the lines are in. */
  files: string[];
  /** Per position: its file, an index into `files`. */
  fileOf: Uint16Array;
  /** Bytes of the files, added up. */
  size: number;
  /** Feature ids, ascending. */
  ids: Float64Array;
  offsets: Float64Array;
  lengths: Uint32Array;
  lon: Float64Array;
  lat: Float64Array;
}

const PREFIX =
  /^\{"type":"Feature","id":(\d+),"geometry":\{"type":"Point","coordinates":\[(-?[0-9.eE+-]+),(-?[0-9.eE+-]+)\]\}/;
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
          if (n > 0 && ids[n]! <= ids[n - 1]!)
            throw new Error(`${file}: feature ids are not ascending at id ${ids[n]}`);
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
    return {
      files: [file],
      fileOf: new Uint16Array(n),
      size,
      ids: ids.slice(0, n),
      offsets: offsets.slice(0, n),
      lengths: lengths.slice(0, n),
      lon: lon.slice(0, n),
      lat: lat.slice(0, n),
    };
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
 * One index over several layer files whose ids are disjoint (the national leads layer over the
 * authority files): positions ordered by id, each remembering its file. Throws when an id is in
 * two parts.
 */
export function mergeLayerIndexes(parts: readonly LayerIndex[]): LayerIndex {
  const files = parts.flatMap((p) => p.files);
  if (files.length > 65_535) throw new Error('too many layer files to merge');
  const n = parts.reduce((a, p) => a + p.ids.length, 0);
  const out: LayerIndex = {
    files,
    fileOf: new Uint16Array(n),
    size: parts.reduce((a, p) => a + p.size, 0),
    ids: new Float64Array(n),
    offsets: new Float64Array(n),
    lengths: new Uint32Array(n),
    lon: new Float64Array(n),
    lat: new Float64Array(n),
  };
  // k-way merge: the parts are each in id order
  const at = parts.map(() => 0);
  const fileBase = parts.map((_p, k) => parts.slice(0, k).reduce((a, q) => a + q.files.length, 0));
  for (let o = 0; o < n; o++) {
    let best = -1;
    for (let k = 0; k < parts.length; k++) {
      if (at[k]! < parts[k]!.ids.length && (best < 0 || parts[k]!.ids[at[k]!]! < parts[best]!.ids[at[best]!]!))
        best = k;
    }
    const part = parts[best]!;
    const p = at[best]!++;
    out.ids[o] = part.ids[p]!;
    if (o > 0 && out.ids[o] === out.ids[o - 1]) throw new Error(`feature ${out.ids[o]} is in two layer files`);
    out.fileOf[o] = fileBase[best]! + part.fileOf[p]!;
    out.offsets[o] = part.offsets[p]!;
    out.lengths[o] = part.lengths[p]!;
    out.lon[o] = part.lon[p]!;
    out.lat[o] = part.lat[p]!;
  }
  return out;
}

/**
 * Read the lines at `positions` (ascending) and hand each to `take(k, buf, start, end)` with
 * `k` its rank in `positions`. Lines are grouped by file and read with one positioned read per
 * run of lines that follow each other in the file (a page of the national layer is one run per
 * authority file).
 */
async function readLines(
  index: LayerIndex,
  positions: readonly number[],
  take: (k: number, buf: Buffer, start: number, end: number) => void,
): Promise<void> {
  const byFile = new Map<number, number[]>(); // file → ranks, in position (= offset) order
  positions.forEach((p, k) => {
    const f = index.fileOf[p]!;
    let list = byFile.get(f);
    if (!list) byFile.set(f, (list = []));
    list.push(k);
  });
  for (const [f, ranks] of byFile) {
    const file = index.files[f]!;
    const fh = await open(file, 'r');
    try {
      let i = 0;
      while (i < ranks.length) {
        let j = i;
        const end = (k: number): number =>
          index.offsets[positions[ranks[k]!]!]! + index.lengths[positions[ranks[k]!]!]!;
        while (j + 1 < ranks.length && index.offsets[positions[ranks[j + 1]!]!] === end(j) + 1) j++;
        const from = index.offsets[positions[ranks[i]!]!]!;
        const to = end(j);
        const buf = Buffer.allocUnsafe(to - from);
        const { bytesRead } = await fh.read(buf, 0, buf.length, from);
        if (bytesRead !== buf.length) throw new Error(`${file}: short read (the release file changed?)`);
        for (let k = i; k <= j; k++) {
          const p = positions[ranks[k]!]!;
          const o = index.offsets[p]! - from;
          take(ranks[k]!, buf, o, o + index.lengths[p]!);
        }
        i = j + 1;
      }
    } finally {
      await fh.close();
    }
  }
}

/** The feature lines at `positions` (ascending). */
export async function readFeatures(index: LayerIndex, positions: readonly number[]): Promise<string[]> {
  const out = new Array<string>(positions.length);
  await readLines(index, positions, (k, buf, start, end) => (out[k] = buf.toString('utf8', start, end)));
  return out;
}

/**
 * The feature lines at `positions` (ascending) as one buffer, separated by `,` — ready to splice
 * into a FeatureCollection without decoding a byte.
 */
export async function readFeaturesJoined(index: LayerIndex, positions: readonly number[]): Promise<Buffer> {
  if (positions.length === 0) return Buffer.alloc(0);
  const at = new Float64Array(positions.length); // where each line goes in the answer
  let total = 0;
  positions.forEach((p, k) => {
    at[k] = total;
    total += index.lengths[p]! + 1;
  });
  const out = Buffer.allocUnsafe(total - 1);
  await readLines(index, positions, (k, buf, start, end) => {
    buf.copy(out, at[k]!, start, end);
    if (k < positions.length - 1) out[at[k]! + end - start] = 44; // ','
  });
  return out;
}

/** A bounding box [minLon, minLat, maxLon, maxLat]; minLon > maxLon crosses the antimeridian. */
export type BBox = [number, number, number, number];

/** True when (lon, lat) is inside `b` (edges included). */
export function inBBox(b: BBox, lon: number, lat: number): boolean {
  if (lat < b[1] || lat > b[3]) return false;
  return b[0] <= b[2] ? lon >= b[0] && lon <= b[2] : lon >= b[0] || lon <= b[2];
}
