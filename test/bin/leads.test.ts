/**
 * bin/leads.js, the operators' CLI shim, as the real binary: `leads refresh` runs with its process
 * settings — the JavaScript heap REFRESH_HEAP_MB allows (default half the machine's memory), V8's
 * heap growth factor and two malloc arenas — and refuses a heap that is not a number of MB.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT, tempDir } from '../helpers/tmp.ts';

const BIN = join(REPO_ROOT, 'bin/leads.js');
// every Node process of the command prints its heap limit (MB) on stderr
const sayHeap = join(tempDir('leads-bin-'), 'say-heap.mjs');
writeFileSync(
  sayHeap,
  `import v8 from 'node:v8';\nprocess.stderr.write('heap-limit-mb=' + Math.round(v8.getHeapStatistics().heap_size_limit / 1048576) + ' arenas=' + process.env.MALLOC_ARENA_MAX + ' flags=' + process.execArgv.join(' ') + '\\n');\n`,
);
const SAY_HEAP = `--import=${sayHeap}`;

function leads(args: string[], env: Record<string, string>): { status: number | null; stderr: string } {
  const r = spawnSync(process.execPath, [BIN, ...args], { env: { ...process.env, ...env }, encoding: 'utf8' });
  return { status: r.status, stderr: r.stderr };
}

const heapLimits = (stderr: string): number[] => [...stderr.matchAll(/heap-limit-mb=(\d+)/g)].map((m) => Number(m[1]));

test('refresh runs with the heap REFRESH_HEAP_MB gives, above V8 default', () => {
  const r = leads(['refresh', '--no-such-option'], { REFRESH_HEAP_MB: '6000', NODE_OPTIONS: SAY_HEAP });
  assert.ok(
    heapLimits(r.stderr).some((mb) => mb >= 6000),
    r.stderr,
  );
  assert.match(r.stderr, /Unknown option '--no-such-option'/, 'the command itself ran');
});

test('refresh runs with the heap growth factor and two malloc arenas; a given MALLOC_ARENA_MAX is kept', () => {
  const r = leads(['refresh', '--no-such-option'], { NODE_OPTIONS: SAY_HEAP });
  const last =
    r.stderr
      .split('\n')
      .filter((l) => l.startsWith('heap-limit-mb='))
      .at(-1) ?? '';
  assert.match(last, /arenas=2 /, r.stderr);
  assert.match(last, /--heap-growing-percent=50/, r.stderr);
  const given = leads(['refresh', '--no-such-option'], { NODE_OPTIONS: SAY_HEAP, MALLOC_ARENA_MAX: '4' });
  assert.match(
    given.stderr
      .split('\n')
      .filter((l) => l.startsWith('heap-limit-mb='))
      .at(-1) ?? '',
    /arenas=4 /,
  );
});

test('other commands keep the default heap', () => {
  const r = leads(['generate', '--no-such-option'], { REFRESH_HEAP_MB: '6000', NODE_OPTIONS: SAY_HEAP });
  const limits = heapLimits(r.stderr);
  assert.ok(limits.length > 0 && limits.every((mb) => mb < 6000), r.stderr);
});

test('a REFRESH_HEAP_MB that is not a whole number of MB (at least 512) stops the refresh with a message', () => {
  for (const bad of ['abc', '100', '1.5']) {
    const r = leads(['refresh'], { REFRESH_HEAP_MB: bad });
    assert.is(r.status, 2, bad);
    assert.match(r.stderr, `REFRESH_HEAP_MB must be a whole number of MB, at least 512, got ${bad}`);
  }
});

test.run();
