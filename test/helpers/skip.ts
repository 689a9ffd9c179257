/**
 * Tests that cannot run here are reported as skips, never as passes. uvu has no conditional
 * skip: `testIf` registers the test when `reason` is null, and otherwise prints the reason and
 * registers a uvu skip (counted under "Skipped", and in `make test`'s last line).
 *
 * @example
 *   const withGdal = testIf(test, HAVE_GDAL ? null : 'ogrinfo (Debian gdal-bin) is not installed');
 *   withGdal('GDAL reads the feed', async () => { … });
 */
import type { Callback, Test } from 'uvu';

export function testIf<T>(test: Test<T>, reason: string | null): (name: string, fn: Callback<T>) => void {
  if (reason === null) return (name, fn) => test(name, fn);
  return (name) => {
    console.log(`  SKIP ${name}: ${reason}`);
    test.skip(name);
  };
}

/** Register one skipped test for a whole file that cannot run here, with its reason printed. */
export function skipFile<T>(test: Test<T>, file: string, reason: string): void {
  console.log(`  SKIP ${file}: ${reason}`);
  test.skip(file);
}
