/**
 * `make bench` section `compression`: what compressing answers saves in bytes and costs in server
 * CPU (api/middleware/compression.ts), per request, for
 *   - a page of 100 leads (`GET /v1/leads?page_size=100`), and
 *   - a GeoJSON page of 1,000 features (`GET /v1/feeds/leads.geojson?page_size=1000`),
 * each asked for with `Accept-Encoding: identity` (the baseline, same server, same run), `gzip`
 * and `br`.
 *
 * The API runs in a child process (bench/access-server.ts, access model off: the same work for
 * every request) on the access section's small release (SCALES.small, built once under
 * data/bench-access-small). One keep-alive connection sends `requests` requests per case, one at
 * a time, after a warm-up. Server CPU per request is the child's user + system time
 * (/proc/<pid>/stat, every thread: node:zlib compresses on libuv's pool) over the requests;
 * bytes per request are those on the wire (the encoded body). The cases alternate round by round
 * (identity, gzip, br, identity, …), so a burst of someone else's work on a shared machine does not
 * land on one case only; each case keeps its best round.
 *
 *   node --import tsx bench/run.ts --only compression
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import type { BenchRow } from './api.ts';
import { serve, smallRelease, stop } from './access.ts';

export interface CompressionBenchOptions {
  root: string;
  /** Requests per case and round (default 100). */
  requests?: number;
  /** Rounds (default 3; each case keeps its best). */
  rounds?: number;
  /** Warm-up requests per case before its rounds (caches, JIT; default 5; a test, whose figures mean nothing, asks 1). */
  warmup?: number;
  /** Node arguments for the API process, after this process's loader flags (a test's preload). */
  serverNodeArgs?: readonly string[];
  /** The data folder to serve (default: the access section's small release, built when missing). */
  dataDir?: string;
  log?: (line: string) => void;
}

const PAGES = [
  { name: '100-lead page', path: '/v1/leads?page_size=100' },
  { name: '1,000-feature GeoJSON page', path: '/v1/feeds/leads.geojson?page_size=1000' },
] as const;

const ENCODINGS = ['identity', 'gzip', 'br'] as const;

/** Clock ticks per second of /proc/<pid>/stat times. */
function clockTicks(): number {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
}

/** CPU seconds (user + system, every thread) the process has used. */
function cpuSeconds(pid: number, ticks: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // after the command name, which may hold spaces
  return (Number(fields[11]) + Number(fields[12])) / ticks; // utime, stime (fields 14 and 15 of the line)
}

/** One GET on `agent`; the bytes on the wire and the Content-Encoding. */
function get(
  agent: http.Agent,
  url: string,
  encoding: string,
): Promise<{ bytes: number; encoding: string | undefined; status: number }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent, headers: { 'Accept-Encoding': encoding } }, (res) => {
        let bytes = 0;
        res.on('data', (d: Buffer) => void (bytes += d.length));
        res.on('end', () => resolve({ bytes, encoding: res.headers['content-encoding'], status: res.statusCode ?? 0 }));
      })
      .on('error', reject);
  });
}

export async function compressionBench(opts: CompressionBenchOptions): Promise<BenchRow[]> {
  const log = opts.log ?? ((l: string) => void process.stderr.write(l + '\n'));
  const requests = opts.requests ?? 100;
  const rounds = opts.rounds ?? 3;
  const warmup = opts.warmup ?? 5;
  const data = opts.dataDir ?? (await smallRelease(opts.root, log));
  const stateFile = join(data, 'state-compression-bench.sqlite');
  for (const s of ['', '-wal', '-shm']) rmSync(stateFile + s, { force: true });
  const ticks = clockTicks();
  const server = await serve(
    opts.root,
    ['--data', data, '--db', `file:${stateFile}`, '--without-access'],
    opts.serverNodeArgs,
  );
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const best = new Map<string, { bytes: number; cpuMs: number; wallMs: number }>();
  try {
    const pid = server.child.pid!;
    for (const page of PAGES) {
      const url = server.origin + page.path;
      for (const enc of ENCODINGS) {
        for (let i = 0; i < warmup; i++) {
          const r = await get(agent, url, enc); // warm-up: caches, JIT
          if (r.status !== 200) throw new Error(`${page.path} answered ${r.status}`);
          if ((r.encoding ?? 'identity') !== enc)
            throw new Error(`${page.path} with Accept-Encoding: ${enc} came back as ${r.encoding ?? 'identity'}`);
        }
      }
      for (let round = 0; round < rounds; round++) {
        for (const enc of ENCODINGS) {
          let bytes = 0;
          const cpu0 = cpuSeconds(pid, ticks);
          const t0 = performance.now();
          for (let i = 0; i < requests; i++) bytes += (await get(agent, url, enc)).bytes;
          const wallMs = (performance.now() - t0) / requests;
          const cpuMs = ((cpuSeconds(pid, ticks) - cpu0) * 1000) / requests;
          const key = `${page.name} ${enc}`;
          const prev = best.get(key);
          if (!prev || cpuMs < prev.cpuMs) best.set(key, { bytes: bytes / requests, cpuMs, wallMs });
        }
      }
    }
  } finally {
    agent.destroy();
    await stop(server.child);
    for (const s of ['', '-wal', '-shm']) rmSync(stateFile + s, { force: true });
  }
  const rows: BenchRow[] = [];
  for (const page of PAGES) {
    const base = best.get(`${page.name} identity`)!;
    for (const enc of ENCODINGS) {
      const m = best.get(`${page.name} ${enc}`)!;
      log(
        `compression ${page.name.padEnd(27)} ${enc.padEnd(8)} ${Math.round(m.bytes).toString().padStart(9)} B/request  ` +
          `server CPU ${m.cpuMs.toFixed(2).padStart(6)} ms/request  latency ${m.wallMs.toFixed(2)} ms (one connection)`,
      );
      rows.push({
        metric: `compression: ${page.name}, ${enc}, bytes`,
        value: Math.round(m.bytes),
        unit: 'B/request',
        ...(enc === 'identity' ? {} : { baseline: Math.round(base.bytes) }),
      });
      rows.push({
        metric: `compression: ${page.name}, ${enc}, server CPU`,
        value: Math.round(m.cpuMs * 100) / 100,
        unit: 'ms/request',
        ...(enc === 'identity' ? {} : { baseline: Math.round(base.cpuMs * 100) / 100 }),
      });
      rows.push({
        metric: `compression: ${page.name}, ${enc}, latency`,
        value: Math.round(m.wallMs * 100) / 100,
        unit: 'ms (one connection)',
        ...(enc === 'identity' ? {} : { baseline: Math.round(base.wallMs * 100) / 100 }),
      });
    }
  }
  return rows;
}
