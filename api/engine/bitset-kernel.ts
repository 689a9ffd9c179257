/**
 * The bitset passes that read every word of a set — AND-and-count, count, OR, a set's rows moved
 * to their ranks in a sort — in WebAssembly (api/engine/bitset-kernel.wat, compiled to
 * bitset-kernel.wasm by `make schemas`): two words at a time with one `i64.popcnt`, ~6× the scalar
 * JavaScript loop's speed on the 126 KB sets of 5× the default data (docs/performance.md, "The
 * bitset passes in WebAssembly").
 *
 * WebAssembly reads only its own memory, so the sets go there: an array made for the kernel
 * (`forKernel`: the lead index's value and flag sets, the search index's term sets, the scratch
 * pool `LeadIndexParts.scratch`, the value and last-changed sorts' `rankOf`) is carried by a pack
 * into a kernel memory (`kernelBuffer`, api/engine/pack.ts' `readPack`), every other array into a
 * plain ArrayBuffer — JavaScript reads typed arrays over a WebAssembly memory more slowly (the `q`
 * path ~12% slower with the whole pack there, docs/performance.md). A pass whose sets all live in one kernel memory runs its
 * kernel (`kernelOf`); sets anywhere else — an index built in the process, a scratch set past the
 * pool — take the JavaScript loops of api/engine/bitset.ts, which give the same answers
 * (test/api/engine/bitset-kernel.test.ts).
 */
import { readFileSync } from 'node:fs';

/** The kernel's functions; offsets in bytes, `n` in 32-bit words. */
export interface BitsetKernel {
  count(a: number, n: number): number;
  and1(into: number, a: number, n: number): number;
  and2(into: number, a: number, b: number, n: number): number;
  and3(into: number, a: number, b: number, d: number, n: number): number;
  or1(into: number, a: number, n: number): void;
  ranks(ranks: number, matched: number, rankOf: number, n: number): void;
}

/** What this file uses of the WebAssembly JavaScript API (the project's Node types do not declare it). */
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: unknown };
  Memory: new (size: { initial: number; maximum: number }) => { buffer: ArrayBuffer };
}
const Wasm = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;

const MODULE = new Wasm.Module(readFileSync(new URL('./bitset-kernel.wasm', import.meta.url)));

const PAGE = 65_536;
/** One page under 4 GiB: a set's end (offset + bytes) then fits the kernel's 32-bit addresses. */
const MAX_PAGES = 65_535;

/** The kernel of each memory `kernelBuffer` made, by its buffer. */
const KERNELS = new WeakMap<ArrayBufferLike, BitsetKernel>();

/**
 * An ArrayBuffer of at least `bytes` (zeroed) inside a WebAssembly memory with the kernel over
 * it; past ~4 GiB a plain ArrayBuffer (its sets take the JavaScript loops).
 */
export function kernelBuffer(bytes: number): ArrayBuffer {
  const pages = Math.max(1, Math.ceil(bytes / PAGE));
  if (pages > MAX_PAGES) return new ArrayBuffer(bytes);
  const memory = new Wasm.Memory({ initial: pages, maximum: pages });
  const kernel = new Wasm.Instance(MODULE, { env: { memory } }).exports as unknown as BitsetKernel;
  KERNELS.set(memory.buffer, kernel);
  return memory.buffer;
}

/** The arrays made for the kernel (a pack carries them into a kernel memory). */
const FOR_KERNEL = new WeakSet<ArrayBufferView>();

/** `a`, marked for the kernel's memory when a pack carries it. */
export function forKernel<A extends Uint32Array | Int32Array>(a: A): A {
  FOR_KERNEL.add(a);
  return a;
}

/** Whether a pack carries `a` into a kernel memory. */
export function isForKernel(a: ArrayBufferView): boolean {
  return FOR_KERNEL.has(a);
}

/** The kernel over `buffer`, when `kernelBuffer` made it. */
export function kernelOf(buffer: ArrayBufferLike): BitsetKernel | undefined {
  return KERNELS.get(buffer);
}
