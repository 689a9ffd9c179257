/**
 * A full garbage collection on demand, for the refresh's stage boundaries. The refresh frees
 * hundreds of megabytes of rows between stages; without a full collection V8 keeps those
 * pages and the next DuckDB stage stacks its own memory on top, which set the peak RSS.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as (() => void) | undefined;

/** Run a full, synchronous garbage collection (a no-op if the runtime refuses). */
export function collectGarbage(): void {
  gc?.();
}
