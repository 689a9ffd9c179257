/**
 * One worker of the test runner (test/runner/main.ts): a long-lived `node` process (Node strips the types)
 * that runs the test files it is sent, one at a time, each through uvu's own `exec` (so a file's
 * output is exactly what `uvu` prints for it). Files run one after another in this process, as
 * they did in the single uvu process before, so a file's module-level caches (the tiny release,
 * the weekly releases) serve the next file too.
 *
 * Protocol: the runner sends `{ file }` over IPC; the worker prints the file's output on stdout
 * (stderr is folded into stdout so the order holds) and then one line
 * `<END_MARK> {"file":…,"error":…}`. The runner reads totals from uvu's own summary.
 */
import { relative } from 'node:path';
import { pathToFileURL } from 'node:url';

export const END_MARK = '\u0000testloop-end';

declare global {
  var UVU_DEFER: number | undefined;
  var UVU_QUEUE: unknown[][];
  var UVU_INDEX: number | undefined;
}

// uvu's CLI mode: `test.run()` queues the suite and `exec` runs the queue (uvu/run does the same)
globalThis.UVU_DEFER = 1;
globalThis.UVU_QUEUE = [];
process.env['FORCE_COLOR'] ??= '1';
const uvu = await import('uvu');

// every write of this process goes to stdout, in order (child processes with inherited stdio write to their own pipes)
const stdoutWrite = process.stdout.write.bind(process.stdout);
process.stderr.write = ((chunk: unknown, ...rest: unknown[]) =>
  (stdoutWrite as (c: unknown, ...r: unknown[]) => boolean)(chunk, ...rest)) as typeof process.stderr.write;

// an error nobody awaited belongs to the file that is running; uvu cannot see it, so it is reported here
let stray: string[] = [];
process.on('unhandledRejection', (e) => {
  const msg = `unhandled rejection: ${(e as Error)?.stack ?? String(e)}`;
  stray.push(msg);
  console.error(msg);
});

async function runFile(file: string): Promise<string | null> {
  globalThis.UVU_QUEUE = [[relative(process.cwd(), file)]];
  globalThis.UVU_INDEX = 0;
  stray = [];
  try {
    await import(pathToFileURL(file).href);
    await uvu.exec();
  } catch (e) {
    const msg = (e as Error)?.stack ?? String(e);
    console.error(msg);
    return msg.split('\n')[0]!;
  }
  return stray.length ? stray[0]!.split('\n')[0]! : null;
}

let queue: Promise<void> = Promise.resolve();
process.on('message', (m: { file: string }) => {
  queue = queue.then(async () => {
    const error = await runFile(m.file);
    process.exitCode = 0; // uvu sets 1 on a failure; the runner counts from the output
    stdoutWrite(`\n${END_MARK} ${JSON.stringify({ file: m.file, error })}\n`);
  });
});
process.on('disconnect', () => process.exit(0));
process.send?.({ ready: true });
