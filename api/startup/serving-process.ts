/**
 * The memory settings of a serving process, which Node and glibc read only when a process starts:
 * `node api/server.ts` replaces itself once (`process.execve`: the same pid, so systemd, a signal
 * or the bench's RSS reading still reach the server) with them added, unless they are given.
 *
 * - `--max-semi-space-size=16` (MB): V8's young generation. Node 26's default lets it grow to
 *   ~56 MB under load; a request's garbage dies young, so a smaller one costs no throughput
 *   measurably and keeps ~35 MB off the peak (docs/performance.md, issue 34).
 * - `--heap-growing-percent=50`: V8 lets the old generation grow to 1.5× what the last full
 *   collection kept, not up to ~4× (its default for a heap that may reach gigabytes). Under load a
 *   small share of each request's objects is promoted and dies there; at the default factor they
 *   piled up to ~140 MB of old space before the first full collection, now ~70 MB, for a few
 *   20 ms incremental collections a minute (docs/performance.md, "Old space at 1.5× its live size").
 *   A growth factor, not a cap (`--max-old-space-size`): a heap that needs more still gets it.
 * - `MALLOC_ARENA_MAX=2`: glibc gives each thread that allocates (libuv's pool, DuckDB's threads)
 *   an arena of its own, up to 8 per core, and keeps their freed pages; two arenas keep ~30 MB
 *   less resident at default scale.
 *
 * The cluster's workers inherit them (node:cluster forks with the primary's flags and
 * environment), and so does the index-building child (the environment).
 */

/** V8's flags for a serving process: each is added unless the process was started with the same flag (any value). */
export const SERVING_V8_FLAGS = ['--max-semi-space-size=16', '--heap-growing-percent=50'] as const;
export const MALLOC_ARENAS = '2';

/**
 * The serving flags a process started with `execArgv` and `nodeOptions` (NODE_OPTIONS, which
 * admits a few V8 flags such as `--max-semi-space-size`) was not given, by name (`_` or `-`).
 */
export function missingFlags(execArgv: readonly string[], nodeOptions = ''): string[] {
  const nameOf = (flag: string): string => flag.split('=')[0]!.replaceAll('_', '-');
  const given = new Set([...execArgv, ...nodeOptions.split(/\s+/)].map(nameOf));
  return SERVING_V8_FLAGS.filter((f) => !given.has(nameOf(f)));
}

/**
 * Replaces this process with itself plus the serving settings when one is missing; returns when
 * nothing is missing (or Node cannot replace a process: then it serves with the defaults).
 */
export function withServingSettings(): void {
  const missing = missingFlags(process.execArgv, process.env['NODE_OPTIONS']);
  const arenasGiven = process.env['MALLOC_ARENA_MAX'] !== undefined;
  // (Node 22.15+; not in the @types/node the project builds against)
  const execve = (process as { execve?: (file: string, args: string[], env: NodeJS.ProcessEnv) => never }).execve;
  if ((missing.length === 0 && arenasGiven) || typeof execve !== 'function') return;
  const flags = [...process.execArgv, ...missing];
  const env = arenasGiven ? process.env : { ...process.env, MALLOC_ARENA_MAX: MALLOC_ARENAS };
  execve.call(process, process.execPath, [process.execPath, ...flags, ...process.argv.slice(1)], env);
}
