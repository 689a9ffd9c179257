/**
 * The bench's load generator: autocannon in a process of its own, a fresh one per measurement.
 *
 * Why a process of its own: autocannon parses each response in JavaScript (http-parser-js) and
 * keeps each body as a string, so at a few thousand 40 KB pages a second it allocates well over
 * 100 MB/s. Run inside the long-lived bench process, its garbage collection took from ~6% to ~43%
 * of its CPU from one run to the next, depending on what the process had done before. On two
 * cores, that CPU is taken from the server being measured (up to ~0.6 core against ~0.3). A fresh
 * process per measurement gives every side and every scenario the same client: same heap, same
 * JIT state, nothing carried over.
 *
 * `runLoad(spec, onMeasuring)` spawns `node bench/load.ts` (with this process's loader flags: tsx
 * under `make bench`), writes the spec on its stdin and reads one JSON line back (`LoadResult`).
 * The child warms up first (`warmup`; then the counters start again and `onMeasuring` is called),
 * then drives `requests` round-robin over all connections (each request is the next one in the
 * list, whichever connection sends it), for `seconds` or `amount` requests.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { loaderArgs } from '../api/startup/loader-args.ts';

/** One request of a load: path (and query) on the origin, with an optional body. */
export interface LoadRequest {
  method: 'GET' | 'POST';
  path: string;
  body?: string;
}

export interface LoadSpec {
  /** The server's origin, e.g. http://127.0.0.1:3000. */
  url: string;
  connections: number;
  /** How long to drive the load (s), or… */
  seconds?: number;
  /** …how many requests to send. */
  amount?: number;
  /** Sent with every request (a POST's content-type too). */
  headers: Record<string, string>;
  /** Driven round-robin; at least one. */
  requests: LoadRequest[];
  /**
   * Requests sent before measuring, with 4 connections: the list's last `warmup` (so that a long
   * list's measured part starts on requests not asked yet), round-robin; 0 or absent = none.
   */
  warmup?: number;
  /** Seconds a request may take before it counts as a timeout (default 10). */
  timeout?: number;
}

/** The warm-up the bench's measurements use: enough for the client's and the server's code to be compiled. */
export const LOAD_WARMUP = 200;

export interface LoadResult {
  p50: number;
  p90: number;
  p99: number;
  max: number;
  /** Requests completed in the measured part, and their rate. */
  total: number;
  rps: number;
  non2xx: number;
  /** Connection errors and timeouts. */
  errors: number;
  /** CPU the load generator used over the measured part (ms): what it took from the machine. */
  clientCpuMs: number;
}

type AutocannonRequest = NonNullable<Parameters<typeof autocannon>[0]['requests']>[number];

/** Drive `spec` in the current process (the child's side of `runLoad`). */
async function drive(spec: LoadSpec): Promise<LoadResult> {
  let list = spec.requests;
  let i = 0;
  // autocannon ends a run at its first sample after the duration (or the amount), and samples
  // every second: a load shorter than a second (a test's) is sampled at its own length, so it
  // lasts what it asks for instead of a whole second of requests
  const short = spec.seconds !== undefined && spec.amount === undefined && spec.seconds < 1;
  const sampling = short ? { sampleInt: Math.max(10, Math.round(spec.seconds! * 1000)) } : {};
  const request = {
    method: list[0]!.method,
    setupRequest: (req: AutocannonRequest) => {
      const r = list[i++ % list.length]!;
      // fresh headers: autocannon writes a body's Content-Length into the headers object it is given
      return { ...req, method: r.method, path: r.path, headers: { ...spec.headers }, body: r.body };
    },
  };
  if (spec.warmup) {
    list = spec.requests.slice(-spec.warmup);
    await autocannon({
      url: spec.url,
      connections: 4,
      amount: spec.warmup,
      headers: spec.headers,
      requests: [request],
      ...sampling,
    });
    list = spec.requests;
    i = 0;
  }
  process.stdout.write(MEASURING + '\n');
  const cpu0 = process.cpuUsage();
  const r = await autocannon({
    url: spec.url,
    connections: spec.connections,
    ...(spec.amount !== undefined ? { amount: spec.amount } : { duration: spec.seconds ?? 10 }),
    timeout: spec.timeout ?? 10,
    headers: spec.headers,
    requests: [request],
    ...sampling,
  });
  const cpu = process.cpuUsage(cpu0);
  return {
    p50: r.latency.p50,
    p90: r.latency.p90,
    p99: r.latency.p99,
    max: r.latency.max,
    total: r.requests.total,
    rps: r.requests.total / r.duration,
    non2xx: r.non2xx,
    errors: r.errors + r.timeouts,
    clientCpuMs: (cpu.user + cpu.system) / 1000,
  };
}

/** Busy and total CPU time of the whole machine so far (Linux /proc/stat, ticks; guest time is already in user). */
function machineTicks(): { busy: number; total: number } {
  const f = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.trim().split(/\s+/).slice(1, 9).map(Number);
  const total = f.reduce((a, b) => a + b, 0);
  return { busy: total - f[3]! - f[4]!, total }; // idle and iowait are not busy
}

/** The machine counts as quiet when under this share of its CPU is busy over one window. */
export const QUIET = { busyShare: 0.1, windowMs: 250, maxMs: 10_000 } as const;

/**
 * Wait until the machine is quiet (under `QUIET.busyShare` of its CPU busy over a
 * `QUIET.windowMs` window), at most `QUIET.maxMs` (`quiet` overrides them: a test's shorter
 * bound); returns the ms waited. A measurement leaves
 * work behind when autocannon stops: PostgreSQL finishes the queries of the requests that were in
 * flight, ~0.5 s of both cores after the county polygons. Without the wait, the next side would
 * share the CPUs with that work during its first second, and its p99 would count it.
 */
export async function settle(quiet: { busyShare?: number; windowMs?: number; maxMs?: number } = {}): Promise<number> {
  const { busyShare, windowMs, maxMs } = { ...QUIET, ...quiet };
  const t0 = performance.now();
  let prev = machineTicks();
  while (performance.now() - t0 < maxMs) {
    await new Promise((r) => setTimeout(r, windowMs));
    const now = machineTicks();
    const busy = (now.busy - prev.busy) / Math.max(1, now.total - prev.total);
    prev = now;
    if (busy < busyShare) break;
  }
  return performance.now() - t0;
}

const HERE = fileURLToPath(import.meta.url);

/** The child's line on stdout when the warm-up is over and the measured part starts. */
const MEASURING = 'measuring';

/**
 * Run one load in a fresh child process (see the module comment); `onMeasuring` is called when
 * the warm-up is over (to take the server's CPU counters then). Rejects with the child's stderr
 * when it fails.
 */
export function runLoad(spec: LoadSpec, onMeasuring: () => void = () => {}): Promise<LoadResult> {
  if (spec.requests.length === 0) return Promise.reject(new Error('runLoad: no requests'));
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...loaderArgs(), HERE], { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      const before = out;
      out += d;
      if (!before.includes(MEASURING) && out.includes(MEASURING + '\n')) onMeasuring();
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err = (err + d).slice(-4000)));
    child.once('error', reject);
    child.once('close', (code) => {
      const line = out.trim().split('\n').pop() ?? '';
      if (code === 0 && line.startsWith('{')) resolve(JSON.parse(line) as LoadResult);
      else reject(new Error(`the load generator exited with ${code}: ${err.trim() || out.trim()}`));
    });
    child.stdin.end(JSON.stringify(spec));
  });
}

// the child: read the spec from stdin, drive it, print the result
if (process.argv[1] === HERE) {
  let text = '';
  process.stdin.setEncoding('utf8');
  for await (const c of process.stdin) text += c;
  process.stdout.write(JSON.stringify(await drive(JSON.parse(text) as LoadSpec)) + '\n');
}
