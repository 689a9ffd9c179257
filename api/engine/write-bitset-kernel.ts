/**
 * Compiles api/engine/bitset-kernel.wat to bitset-kernel.wasm (checked in, read by
 * api/engine/bitset-kernel.ts), with WABT's JavaScript build (a development dependency: the
 * server reads the .wasm, it never compiles). Run by `make schemas`; the test of the kernel fails
 * when the checked-in .wasm is not what the .wat compiles to.
 *
 * @example node --import tsx api/engine/write-bitset-kernel.ts
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import wabtInit from 'wabt';

export const WAT_FILE = fileURLToPath(new URL('./bitset-kernel.wat', import.meta.url));
export const WASM_FILE = fileURLToPath(new URL('./bitset-kernel.wasm', import.meta.url));

/** The module's bytes as the .wat compiles them (no names section: the bytes depend on the code only). */
export async function compileKernel(): Promise<Uint8Array> {
  const wabt = await wabtInit();
  const mod = wabt.parseWat('bitset-kernel.wat', readFileSync(WAT_FILE, 'utf8'));
  try {
    mod.validate();
    return mod.toBinary({ log: false, write_debug_names: false }).buffer;
  } finally {
    mod.destroy();
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const bytes = await compileKernel();
  writeFileSync(WASM_FILE, bytes);
  process.stdout.write(`${WASM_FILE}: ${bytes.length} bytes\n`);
}
