/**
 * The bitset passes that read every word of a set — AND-and-count, count, OR — in WebAssembly
 * (api/engine/bitset-kernel.wat, compiled to bitset-kernel.wasm by `make schemas`): two words at a
 * time with one `i64.popcnt`, ~6× the scalar JavaScript loop's speed on the 126 KB sets of 5× the
 * default data (docs/performance.md, "The bitset passes in WebAssembly").
 *
 * WebAssembly reads only its own memory, so the engine's packs are read into one
 * (`kernelBuffer`, the allocator of api/engine/pack.ts' `readPack`): the indexes' sets and the
 * lead index's scratch sets (`LeadIndexParts.scratch`) are views into it, and a pass whose sets
 * all live there runs the kernel of that memory (`kernelOf`). Sets anywhere else — an index built
 * in the process, a scratch set past the pool — take the JavaScript loops of api/engine/bitset.ts,
 * which give the same answers (test/api/engine/bitset-kernel.test.ts).
 */
import { readFileSync } from 'node:fs';

/** The kernel's functions; offsets in bytes, `n` in 32-bit words. */
export interface BitsetKernel {
  count(a: number, n: number): number;
  and1(into: number, a: number, n: number): number;
  and2(into: number, a: number, b: number, n: number): number;
  and3(into: number, a: number, b: number, d: number, n: number): number;
  or1(into: number, a: number, n: number): void;
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

/** The kernel over `buffer`, when `kernelBuffer` made it. */
export function kernelOf(buffer: ArrayBufferLike): BitsetKernel | undefined {
  return KERNELS.get(buffer);
}
