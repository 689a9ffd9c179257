/**
 * The memory settings of a serving process, which Node and glibc read only when a process starts:
 * `node api/server.ts` replaces itself once (`process.execve`: the same pid, so systemd, a signal
 * or the bench's RSS reading still reach the server) with them added, unless they are given.
 *
 * - `--max-semi-space-size=16` (MB): V8's young generation. Node 26's default lets it grow to
 *   ~56 MB under load; a request's garbage dies young, so a smaller one costs no throughput
 *   measurably and keeps ~35 MB off the peak (docs/performance.md, issue 34).
 * - `MALLOC_ARENA_MAX=2`: glibc gives each thread that allocates (libuv's pool, DuckDB's threads)
 *   an arena of its own, up to 8 per core, and keeps their freed pages; two arenas keep ~30 MB
 *   less resident at default scale.
 *
 * The cluster's workers inherit both (node:cluster forks with the primary's flags and
 * environment), and so does the index-building child (the environment).
 */

export const YOUNG_GENERATION_FLAG = '--max-semi-space-size=16';
export const MALLOC_ARENAS = '2';

/** Whether this process was started with a young generation size (on its command line or NODE_OPTIONS). */
function youngGenerationGiven(): boolean {
  const given = [...process.execArgv, ...(process.env['NODE_OPTIONS'] ?? '').split(/\s+/)];
  return given.some((a) => a.startsWith('--max-semi-space-size'));
}

/**
 * Replaces this process with itself plus the serving settings when one is missing; returns when
 * nothing is missing (or Node cannot replace a process: then it serves with the defaults).
 */
export function withServingSettings(): void {
  const youngGiven = youngGenerationGiven();
  const arenasGiven = process.env['MALLOC_ARENA_MAX'] !== undefined;
  // (Node 22.15+; not in the @types/node the project builds against)
  const execve = (process as { execve?: (file: string, args: string[], env: NodeJS.ProcessEnv) => never }).execve;
  if ((youngGiven && arenasGiven) || typeof execve !== 'function') return;
  const flags = youngGiven ? process.execArgv : [...process.execArgv, YOUNG_GENERATION_FLAG];
  const env = arenasGiven ? process.env : { ...process.env, MALLOC_ARENA_MAX: MALLOC_ARENAS };
  execve.call(process, process.execPath, [process.execPath, ...flags, ...process.argv.slice(1)], env);
}
