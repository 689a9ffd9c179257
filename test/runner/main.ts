/**
 * The test runner behind `make test`, `make test-quick` and `make test FILE=…`: it finds the test
 * files, runs them in `TEST_JOBS` worker processes at once (default 3; test/runner/worker.ts, each
 * a long-lived `node` (types stripped by Node) running uvu one file at a time), prints each file's output in
 * one piece when the file ends, and at the end the duration, the slowest files, why each failed
 * file failed (test/runner/failure-excerpt.ts: CI keeps only the tail) and the last line
 * `N passed, N failed, N skipped` (CI reads it). Exit 1 when anything failed.
 *
 * Which files: the arguments (files or folders; default `test/` without `test/deploy/`, which is
 * `make test-deploy`). `--quick` leaves out what needs a browser (`*.browser.test.ts`), PostgreSQL
 * (`*.pg.test.ts`) or nginx (`test/deploy/`). The rule is checked: a file that imports the browser
 * helper or `pg`, or names the PostgreSQL store helpers (`postgresBackend`, `TEST_PG_URL`,
 * `pgSchemaUrl`, `openPostgresStore`), without the matching suffix fails the run.
 *
 * Order: longest first, by each file's wall time in the last run (`.tmp/test-times.json`), so a
 * slow file does not start last; at most one browser file runs at a time (Chromium on two cores).
 * A file that runs longer than `TEST_TIMEOUT_S` (default 900) is killed with its worker and failed.
 * `--typecheck` also runs `tsc --noEmit` beside the tests (its errors count as one failure).
 *
 * @example node --import tsx test/runner/main.ts --quick
 * @example TEST_JOBS=1 node --import tsx test/runner/main.ts test/api/routes/leads.test.ts
 */
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { failureExcerpt } from './failure-excerpt.ts';

const ROOT = resolve(new URL('../..', import.meta.url).pathname);
const WORKER = join(ROOT, 'test/runner/worker.ts');
const END_MARK = '\u0000testloop-end';
const TIMES_FILE = join(ROOT, '.tmp/test-times.json');
const LOG_FILE = join(ROOT, '.tmp/test.log');
const CPU_FILE = join(ROOT, '.tmp/test-cpu.json');
const COMPILE_CACHE = join(ROOT, '.tmp/node-compile-cache');

const { values: opts, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    quick: { type: 'boolean', default: false },
    jobs: { type: 'string' },
    label: { type: 'string', default: 'make test' },
    typecheck: { type: 'boolean', default: false },
  },
});
const jobs = Math.max(1, Number(opts.jobs ?? process.env['TEST_JOBS'] ?? 3) || 3);
const timeoutMs = Number(process.env['TEST_TIMEOUT_S'] ?? 900) * 1000;

// — which files —

const isTest = (f: string): boolean => f.endsWith('.test.ts');
const kind = {
  browser: (f: string) => f.endsWith('.browser.test.ts'),
  pg: (f: string) => f.endsWith('.pg.test.ts'),
  deploy: (f: string) => relative(ROOT, f).startsWith('test/deploy/'),
};

function walk(dir: string, out: string[] = []): string[] {
  for (const e of readdirSync(dir).sort()) {
    const p = join(dir, e);
    if (statSync(p).isDirectory()) {
      if (e !== 'node_modules' && e !== 'fixtures') walk(p, out);
    } else if (isTest(p)) out.push(p);
  }
  return out;
}

function discover(args: string[]): string[] {
  if (args.length === 0) return walk(join(ROOT, 'test')).filter((f) => !kind.deploy(f));
  const files = args.flatMap((a) => {
    const p = resolve(a);
    if (!existsSync(p)) throw new Error(`no such test file or folder: ${a}`);
    return statSync(p).isDirectory() ? walk(p) : [p];
  });
  return [...new Set(files)];
}

/** What a file's imports say it needs, against its name (the rule of `--quick`). */
function namingProblems(file: string): string[] {
  const src = readFileSync(file, 'utf8');
  const problems: string[] = [];
  const needsBrowser = /from '[./]*helpers\/browser\.ts'|from 'playwright-core'/.test(src);
  const needsPg = /from 'pg'|\b(postgresBackend|TEST_PG_URL|pgSchemaUrl|openPostgresStore)\b/.test(src);
  if (needsBrowser && !kind.browser(file)) problems.push('drives a browser: name it *.browser.test.ts');
  if (needsPg && !kind.pg(file) && !kind.deploy(file)) problems.push('uses PostgreSQL: name it *.pg.test.ts');
  return problems;
}

let files = discover(positionals);
if (opts.quick) files = files.filter((f) => !kind.browser(f) && !kind.pg(f) && !kind.deploy(f));
if (files.length === 0) {
  console.error('no test files');
  process.exit(1);
}

// — order: longest first, by the last run's times —

const lastTimes: Record<string, number> = existsSync(TIMES_FILE)
  ? (JSON.parse(readFileSync(TIMES_FILE, 'utf8')) as Record<string, number>)
  : {};
const rel = (f: string): string => relative(ROOT, f);
const guess = (f: string): number => lastTimes[rel(f)] ?? (kind.browser(f) ? 60_000 : 20_000);
const pending = [...files].sort((a, b) => guess(b) - guess(a));

// — running —

interface Result {
  file: string;
  ms: number;
  /** CPU seconds of the worker and the children it reaped while the file ran (null off Linux). */
  cpu: number | null;
  passed: number;
  failed: number;
  skipped: number;
  output: string;
  /** Run in a worker (not a naming problem, a file never started, or the typecheck). */
  ran: boolean;
}

const live = files.length === 1;
const results: Result[] = [];
const log: string[] = [];
const started = Date.now();
const print = (s: string): void => {
  process.stdout.write(s);
  log.push(s);
};

for (const f of files)
  for (const p of namingProblems(f)) {
    print(`\n${rel(f)}: ${p} (test/runner/main.ts)\n`);
    results.push({ file: rel(f), ms: 0, cpu: null, passed: 0, failed: 1, skipped: 0, output: p, ran: false });
  }

const strip = (s: string): string => s.replace(/\x1b\[[0-9;]*m/g, '');
function counts(output: string): { total: number; passed: number; skipped: number } | null {
  const clean = strip(output);
  const last = (label: string): number | null => {
    const all = [...clean.matchAll(new RegExp(`^\\s*${label}:\\s+(\\d+)`, 'gm'))];
    return all.length ? Number(all[all.length - 1]![1]) : null;
  };
  const total = last('Total');
  const passed = last('Passed');
  if (total === null || passed === null) return null;
  return { total, passed, skipped: last('Skipped') ?? 0 };
}

/** CPU seconds `pid` and its reaped children have used (/proc/<pid>/stat utime+stime+cutime+cstime); null without /proc. */
function cpuSeconds(pid: number | undefined): number | null {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const rest = f.slice(f.lastIndexOf(')') + 2).split(' ');
    return [11, 12, 13, 14].reduce((n, i) => n + Number(rest[i]), 0) / 100; // USER_HZ = 100 on Linux
  } catch {
    return null;
  }
}

interface Worker {
  child: ChildProcess;
  file: string | null;
  since: number;
  cpuSince: number | null;
  out: string;
  timer: NodeJS.Timeout | null;
  ready: boolean;
}

const workers = new Set<Worker>();
let browserRunning = 0;

function finish(w: Worker, error: string | null): void {
  const file = w.file!;
  if (w.timer) clearTimeout(w.timer);
  const ms = Date.now() - w.since;
  const cpuNow = cpuSeconds(w.child.pid);
  const cpu = cpuNow !== null && w.cpuSince !== null ? cpuNow - w.cpuSince : null;
  const c = counts(w.out);
  let failed = c ? c.total - c.passed : 0;
  if (error !== null || c === null) failed = Math.max(failed, 1);
  let output = w.out;
  if (error !== null && !strip(output).includes(error)) output += `\n  ${error}\n`;
  const r: Result = {
    file: rel(file),
    ms,
    cpu,
    passed: c?.passed ?? 0,
    failed,
    skipped: c?.skipped ?? 0,
    output,
    ran: true,
  };
  results.push(r);
  if (kind.browser(file)) browserRunning--;
  w.file = null;
  w.out = '';
  if (!live) print(output.replace(/\n*$/, '\n'));
  print(`${failed ? '✘' : '✔'} ${r.file}  ${(ms / 1000).toFixed(1)} s\n`);
}

function next(): string | null {
  const i = pending.findIndex((f) => !kind.browser(f) || browserRunning === 0);
  if (i < 0) return null;
  return pending.splice(i, 1)[0]!;
}

function dispatch(w: Worker): void {
  const file = next();
  if (file === null) {
    if (pending.length === 0) stop(w);
    return; // a browser file waits for the running one; this worker is offered again when a file ends
  }
  if (kind.browser(file)) browserRunning++;
  w.file = file;
  w.since = Date.now();
  w.cpuSince = cpuSeconds(w.child.pid);
  w.out = '';
  w.timer = setTimeout(() => {
    w.out += `\n  timed out after ${timeoutMs / 1000} s (TEST_TIMEOUT_S): the worker was killed\n`;
    finish(w, 'timed out');
    kill(w);
  }, timeoutMs);
  w.child.send({ file });
}

function kill(w: Worker): void {
  workers.delete(w);
  try {
    process.kill(-w.child.pid!, 'SIGKILL'); // the worker's process group: its servers' children and browsers too
  } catch {
    w.child.kill('SIGKILL');
  }
  if (pending.length > 0) spawnWorker();
  else if (workers.size === 0) void done();
}

function stop(w: Worker): void {
  workers.delete(w);
  w.child.disconnect();
  if (workers.size === 0) void done();
}

function spawnWorker(): void {
  const child = fork(WORKER, [], {
    cwd: ROOT,
    // TEST_WORKER_ARGS: node flags for the workers, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof` to profile a run
    execArgv: (process.env['TEST_WORKER_ARGS'] ?? '').split(' ').filter(Boolean),
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    detached: true, // its own process group, killed as one on a timeout
    env: {
      ...process.env,
      FORCE_COLOR: process.env['FORCE_COLOR'] ?? '1',
      // V8's code cache and Node's stripped TypeScript on disk, for the workers and every `node`
      // they start (index builds, servers, CLIs): a process that loads the API's modules again
      // spends ~0.4 s of CPU instead of ~0.7 s. Node checks each entry against its source.
      NODE_COMPILE_CACHE: process.env['NODE_COMPILE_CACHE'] ?? COMPILE_CACHE,
    },
  });
  const w: Worker = { child, file: null, since: 0, cpuSince: null, out: '', timer: null, ready: false };
  workers.add(w);
  let buf = '';
  const take = (s: string): void => {
    if (w.file === null) {
      if (s.trim()) print(s); // between files: a straggler of the last one
      return;
    }
    w.out += s;
    if (live) print(s);
  };
  child.stdout!.setEncoding('utf8');
  child.stdout!.on('data', (d: string) => {
    buf += d;
    let i: number;
    while ((i = buf.indexOf(END_MARK)) >= 0) {
      const nl = buf.indexOf('\n', i);
      if (nl < 0) break;
      take(buf.slice(0, i));
      const { error } = JSON.parse(buf.slice(i + END_MARK.length, nl)) as { error: string | null };
      buf = buf.slice(nl + 1);
      if (w.file !== null) {
        finish(w, error);
        for (const other of workers) if (other.ready && other.file === null && other !== w) dispatch(other);
        dispatch(w);
      }
    }
    // keep a possible partial mark in the buffer
    const keep = buf.lastIndexOf('\u0000');
    take(keep >= 0 ? buf.slice(0, keep) : buf);
    buf = keep >= 0 ? buf.slice(keep) : '';
  });
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (d: string) => take(d));
  child.on('message', (m: { ready?: boolean }) => {
    if (m.ready) {
      w.ready = true;
      dispatch(w);
    }
  });
  child.on('exit', (code, signal) => {
    if (!workers.has(w)) return;
    workers.delete(w);
    if (!w.ready) {
      // it died loading (a node without type stripping, a syntax error in the runner): starting
      // another would die the same way, so the files left fail instead of the run spinning
      print(`\na test worker exited (${signal ?? code}) before it was ready (node ${process.version})\n`);
      for (const f of pending.splice(0))
        results.push({ file: rel(f), ms: 0, cpu: null, passed: 0, failed: 1, skipped: 0, output: '', ran: false });
      if (workers.size === 0) void done();
      return;
    }
    if (w.file !== null) {
      take(buf);
      w.out += `\n  the worker exited (${signal ?? code}) during this file\n`;
      finish(w, `worker exited (${signal ?? code})`);
    }
    if (pending.length > 0) spawnWorker();
    else if (workers.size === 0) void done();
  });
}

let ended = false;
let typechecking: Promise<void> = Promise.resolve();
async function done(): Promise<void> {
  if (ended) return;
  ended = true;
  await typechecking;
  const seconds = Math.round((Date.now() - started) / 1000);
  const sum = (k: 'passed' | 'failed' | 'skipped'): number => results.reduce((n, r) => n + r[k], 0);
  // every file a worker ran (one under a millisecond included)
  const timed = results.filter((r) => r.ran);
  // this run's times for the next run's order (files not run keep theirs)
  mkdirSync(join(ROOT, '.tmp'), { recursive: true });
  const times = { ...lastTimes };
  for (const r of timed) times[r.file] = r.ms;
  writeFileSync(TIMES_FILE, JSON.stringify(times, null, 1) + '\n');
  // every file's CPU of this run, most first (what to look at when the loop is slow)
  const cpuOf = Object.fromEntries([...timed].sort((a, b) => (b.cpu ?? 0) - (a.cpu ?? 0)).map((r) => [r.file, r.cpu]));
  writeFileSync(CPU_FILE, JSON.stringify(cpuOf, null, 1) + '\n');
  const failedFiles = results.filter((r) => r.failed > 0).map((r) => r.file);
  const cpuTotal = timed.reduce((n, r) => n + (r.cpu ?? 0), 0);
  print(
    `\n${opts.label}: ${seconds} s, ${timed.length} files in ${Math.min(jobs, files.length)} workers` +
      (cpuTotal > 0 ? `, ${Math.round(cpuTotal)} s of CPU in the files\n` : '\n'),
  );
  if (timed.length > 1) {
    const cpu = (r: Result): string => (r.cpu === null ? '' : `${r.cpu.toFixed(1).padStart(6)} s CPU`);
    print('slowest files (wall, CPU of the worker and its children):\n');
    for (const r of [...timed].sort((a, b) => b.ms - a.ms).slice(0, 10))
      print(`  ${(r.ms / 1000).toFixed(1).padStart(7)} s ${cpu(r)}  ${r.file}\n`);
    if (cpuTotal > 0) {
      print('most CPU:\n');
      for (const r of [...timed].sort((a, b) => (b.cpu ?? 0) - (a.cpu ?? 0)).slice(0, 10))
        print(`  ${cpu(r)} ${(r.ms / 1000).toFixed(1).padStart(7)} s  ${r.file}\n`);
    }
  }
  if (failedFiles.length) {
    // why, again at the end: CI keeps only the tail of a long run's output
    for (const r of results.filter((x) => x.failed > 0))
      print(`\nwhy ${r.file} failed:\n${failureExcerpt(strip(r.output)) || '(no output)'}\n`);
    print(`failed: ${failedFiles.join(', ')}\n`);
  }
  print(`${sum('passed')} passed, ${sum('failed')} failed, ${sum('skipped')} skipped\n`);
  writeFileSync(LOG_FILE, strip(log.join('')));
  process.exitCode = failedFiles.length ? 1 : 0;
}

for (const sig of ['SIGINT', 'SIGTERM'] as const)
  process.on(sig, () => {
    for (const w of workers) {
      try {
        process.kill(-w.child.pid!, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
    process.exit(130);
  });

/** `tsc --noEmit` beside the test files: it waits on nothing they do, and they mostly wait on children and sockets. */
function typecheck(): void {
  const since = Date.now();
  const tsc = spawn(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '--noEmit'], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  tsc.stdout!.on('data', (d: Buffer) => (out += d));
  tsc.stderr!.on('data', (d: Buffer) => (out += d));
  typechecking = new Promise((resolve) =>
    tsc.on('close', (code) => {
      const ms = Date.now() - since;
      results.push({
        file: 'tsc --noEmit',
        ms,
        cpu: null,
        passed: 0,
        failed: code === 0 ? 0 : 1,
        skipped: 0,
        output: out,
        ran: false,
      });
      print(`${out}${code === 0 ? '✔' : '✘'} tsc --noEmit  ${(ms / 1000).toFixed(1)} s\n`);
      resolve();
    }),
  );
}

if (opts.typecheck) typecheck();
for (let i = 0; i < Math.min(jobs, files.length); i++) spawnWorker();
