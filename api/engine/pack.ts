/**
 * A tree of typed arrays, Maps and plain JSON values moved between processes as one byte stream:
 * the release's in-memory indexes are built in a child process (api/engine/release-indexes.ts)
 * and arrive in the server as views into one ArrayBuffer — no copy per array, no build garbage.
 *
 * Stream: a 4-byte little-endian header length, the header (UTF-8 JSON), then every array's bytes,
 * each at a multiple of 8 from the start of the array section. The header is
 * `{ version, bytes, tree }`, where `tree` is the value with each typed array replaced by
 * `{ "$a": [type, offset, length] }` (`[type, offset, length, 1]` for an array made for the bitset
 * kernel, `forKernel`) and each Map by `{ "$m": [[key, value], …] }`. The reader puts the kernel's
 * arrays in a WebAssembly memory with the kernel over it, the others in one plain ArrayBuffer
 * (api/engine/bitset-kernel.ts).
 */
import type { Readable, Writable } from 'node:stream';
import { isForKernel, kernelBuffer } from './bitset-kernel.ts';

export type TypedArray =
  Int8Array | Uint8Array | Int16Array | Uint16Array | Int32Array | Uint32Array | Float32Array | Float64Array;
export type Packable =
  null | boolean | number | string | TypedArray | Packable[] | Map<string, Packable> | { [key: string]: Packable };

const VERSION = 1;

const TYPES = {
  Int8Array,
  Uint8Array,
  Int16Array,
  Uint16Array,
  Int32Array,
  Uint32Array,
  Float32Array,
  Float64Array,
  /** A Node Buffer travels as bytes and arrives as a Buffer. */
  Buffer: Uint8Array,
} as const;
type TypeName = keyof typeof TYPES;

function typeName(a: ArrayBufferView): TypeName {
  if (Buffer.isBuffer(a)) return 'Buffer';
  const name = a.constructor.name as TypeName;
  if (!(name in TYPES)) throw new TypeError(`cannot pack a ${a.constructor.name}`);
  return name;
}

const align8 = (n: number): number => (n + 7) & ~7;

/** The header and the arrays, in stream order. */
function encode(tree: Packable): { header: Buffer; arrays: TypedArray[]; bytes: number } {
  const arrays: TypedArray[] = [];
  let bytes = 0;
  const walk = (v: Packable, path: string): unknown => {
    if (v === null || typeof v === 'boolean' || typeof v === 'string') return v;
    if (typeof v === 'number') {
      if (!Number.isFinite(v)) throw new TypeError(`cannot pack the number ${v} at ${path} (only inside typed arrays)`);
      return v;
    }
    if (ArrayBuffer.isView(v)) {
      const offset = bytes;
      arrays.push(v);
      bytes = align8(bytes + v.byteLength);
      return { $a: isForKernel(v) ? [typeName(v), offset, v.length, 1] : [typeName(v), offset, v.length] };
    }
    if (Array.isArray(v)) return v.map((x, i) => walk(x, `${path}[${i}]`));
    if (v instanceof Map) return { $m: [...v].map(([k, x]) => [k, walk(x, `${path}.${k}`)]) };
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) {
      if (k === '$a' || k === '$m') throw new TypeError(`cannot pack an object with the key ${k} at ${path}`);
      if (x !== undefined) out[k] = walk(x, `${path}.${k}`);
    }
    return out;
  };
  const walked = walk(tree, ''); // before `bytes` is read: the walk counts them
  const header = Buffer.from(JSON.stringify({ version: VERSION, bytes, tree: walked }));
  return { header, arrays, bytes };
}

/** Write `tree` to `out` (honouring backpressure); resolves when everything is written. */
export async function writePack(out: Writable, tree: Packable): Promise<void> {
  const { header, arrays } = encode(tree);
  const write = (chunk: Uint8Array): Promise<void> =>
    new Promise((resolve, reject) => {
      const ok = out.write(chunk, (e) => (e ? reject(e) : undefined));
      if (ok) resolve();
      else out.once('drain', resolve);
    });
  const length = Buffer.alloc(4);
  length.writeUInt32LE(header.length);
  await write(length);
  await write(header);
  let at = 0;
  const zeros = new Uint8Array(8);
  for (const a of arrays) {
    // in slices, so one huge array never sits whole in the stream's buffer
    const bytes = new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
    for (let i = 0; i < bytes.length; i += 1 << 20)
      await write(bytes.subarray(i, Math.min(bytes.length, i + (1 << 20))));
    at += a.byteLength;
    if (align8(at) !== at) {
      await write(zeros.subarray(0, align8(at) - at));
      at = align8(at);
    }
  }
  await new Promise<void>((resolve, reject) => out.end((e?: Error | null) => (e ? reject(e) : resolve())));
}

/** Where an array of the stream lands: its stream offset and bytes, the buffer and offset it is copied to. */
interface Placed {
  offset: number;
  bytes: number;
  into: Uint8Array<ArrayBuffer>;
  at: number;
}

/**
 * Read a pack from `input`: the arrays made for the bitset kernel (`forKernel`, marked in the
 * header) are views into one buffer in a WebAssembly memory with the kernel over it
 * (api/engine/bitset-kernel.ts), every other array a view into one plain ArrayBuffer. Rejects on
 * a short or malformed stream.
 */
export async function readPack(input: Readable): Promise<Packable> {
  let head: Buffer = Buffer.alloc(0);
  let headerLength = -1;
  let header: { version: number; bytes: number; tree: unknown } | null = null;
  /** Every array in stream order, and the next one a byte may belong to. */
  let placed: Placed[] = [];
  let next = 0;
  let filled = 0;
  for await (const c of input) {
    let chunk = c as Buffer;
    if (!header) {
      head = Buffer.concat([head, chunk]);
      if (headerLength < 0 && head.length >= 4) headerLength = head.readUInt32LE(0);
      if (headerLength < 0 || head.length < 4 + headerLength) continue;
      header = JSON.parse(head.toString('utf8', 4, 4 + headerLength)) as {
        version: number;
        bytes: number;
        tree: unknown;
      };
      if (header.version !== VERSION) throw new Error(`pack version ${header.version}, expected ${VERSION}`);
      placed = place(header.tree);
      chunk = head.subarray(4 + headerLength);
      head = Buffer.alloc(0);
    }
    if (filled + chunk.length > header.bytes) throw new Error('pack: more bytes than its header announces');
    // copy the chunk's bytes to their arrays (the padding between arrays is skipped)
    for (let i = 0; i < chunk.length;) {
      const at = filled + i;
      while (next < placed.length && placed[next]!.offset + placed[next]!.bytes <= at) next++;
      if (next === placed.length) break;
      const p = placed[next]!;
      if (at < p.offset) {
        i = Math.min(chunk.length, p.offset - filled);
        continue;
      }
      const n = Math.min(p.bytes - (at - p.offset), chunk.length - i);
      p.into.set(chunk.subarray(i, i + n), p.at + (at - p.offset));
      i += n;
    }
    filled += chunk.length;
  }
  if (!header) throw new Error('pack: the stream ended before its header');
  if (filled !== header.bytes) throw new Error(`pack: ${filled} of ${header.bytes} bytes arrived`);
  let k = 0;
  const walk = (v: unknown): Packable => {
    if (v === null || typeof v !== 'object') return v as Packable;
    if (Array.isArray(v)) return v.map(walk);
    const o = v as Record<string, unknown>;
    if (Array.isArray(o['$a'])) {
      const [type, , length] = o['$a'] as [TypeName, number, number];
      const { into, at } = placed[k++]!;
      if (type === 'Buffer') return Buffer.from(into.buffer, at, length);
      return new TYPES[type](into.buffer, at, length);
    }
    if (Array.isArray(o['$m'])) return new Map((o['$m'] as [string, unknown][]).map(([k, x]) => [k, walk(x)]));
    const out: Record<string, Packable> = {};
    for (const [k, x] of Object.entries(o)) out[k] = walk(x);
    return out;
  };
  return walk(header.tree);
}

/**
 * The arrays of a pack's header tree, in the order `encode` wrote them (which is the walk's
 * order and the stream's), each given its place: the kernel's arrays packed into one kernel
 * buffer, the others into one plain ArrayBuffer, each at a multiple of 8.
 */
function place(tree: unknown): Placed[] {
  const found: { type: TypeName; offset: number; length: number; kernel: boolean }[] = [];
  const walk = (v: unknown): void => {
    if (v === null || typeof v !== 'object') return;
    if (Array.isArray(v)) return v.forEach(walk);
    const o = v as Record<string, unknown>;
    if (Array.isArray(o['$a'])) {
      const [type, offset, length, kernel] = o['$a'] as [TypeName, number, number, 1 | undefined];
      found.push({ type, offset, length, kernel: kernel === 1 });
    } else if (Array.isArray(o['$m'])) for (const [, x] of o['$m'] as [string, unknown][]) walk(x);
    else for (const x of Object.values(o)) walk(x);
  };
  walk(tree);
  const size = { kernel: 0, plain: 0 };
  const at = found.map((a) => {
    const bytes = a.length * TYPES[a.type].BYTES_PER_ELEMENT;
    const side = a.kernel ? 'kernel' : 'plain';
    const here = size[side];
    size[side] = align8(here + bytes);
    return { bytes, here };
  });
  const kernel = size.kernel > 0 ? new Uint8Array(kernelBuffer(size.kernel), 0, size.kernel) : new Uint8Array(0);
  const plain = new Uint8Array(new ArrayBuffer(size.plain));
  return found.map((a, i) => ({
    offset: a.offset,
    bytes: at[i]!.bytes,
    into: a.kernel ? kernel : plain,
    at: at[i]!.here,
  }));
}
