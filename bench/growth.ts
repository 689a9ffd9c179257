/**
 * `make bench` section `growth` (issue 34, item 5): what happens when the data grows, measured
 * side by side in one run. The default scale (1×, `data/bench-default`) and `scale`× as much
 * (`data/bench-<scale>x`) are each generated (once), refreshed, served and loaded the same way:
 *
 *   refresh      — `leads refresh --force` in a child process: wall time and peak RSS (its own
 *                  JSON summary); target at N×: ≤ 1.1·N × the 1× time, peak ≤ 2,048 MB;
 *   server start — spawn to listening, which is the release's index build and load (bench/api.ts
 *                  `startApi`); target ≤ N × the 1× start;
 *   list mix     — the same 3,000 list queries (filters and `q`, made from the 1× release's values)
 *                  for `seconds` at 16 connections (bench/load.ts); target ≥ 0.8× the 1× req/s;
 *                  p99 and server CPU per request for reference; the server's RSS after the load.
 *
 * Order: both refreshes, then both servers started one after the other (the two starts minutes
 * apart no more), then the list mix against 1× and N× in turn, `ROUNDS` times, both servers up
 * and one loaded at a time; the means are compared. Loading 1× before the N× refresh and N× after
 * it put five minutes of this box's drift between the two figures (1× 2,430 then 2,777 req/s in
 * two runs an hour apart, N× 2,070 and 2,106). At scale 5 the refresh needs ~5 min and several
 * GB of memory; `--scale 2` is a quicker look.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { generateRaw } from '../pipeline/synth/generate.ts';
import {
  cli,
  listMixQueries,
  loadServer,
  releaseValues,
  startApi,
  stopChild,
  vmHwmMb,
  type BenchRow,
  type Measured,
  type Started,
} from './api.ts';
import { LOAD_WARMUP } from './load.ts';

export const GROWTH_TARGETS = { refreshPerScale: 1.1, peakRssMb: 2048, startPerScale: 1, listVsOne: 0.8 } as const;

export interface GrowthBenchOptions {
  root: string;
  /** How many times the default data (e.g. 5). */
  scale: number;
  seconds: number;
  connections: number;
  log?: (line: string) => void;
}

/** Alternating list loads of the two servers, each `seconds` long: the means are compared. */
const ROUNDS = 2;

interface Refreshed {
  refreshS: number;
  peakRssMb: number;
  leads: number;
}

interface Served {
  startS: number;
  /** The list mix's means over the rounds (req/s, CPU per request, p99). */
  load: Pick<Measured, 'rps' | 'cpuMsPerReq' | 'p99'>;
  serverRssMb: number;
}

/** Generate (once) and refresh the data at `scale` in `dataDir`. */
async function refreshAt(
  opts: GrowthBenchOptions,
  scale: number,
  dataDir: string,
  log: (l: string) => void,
): Promise<Refreshed> {
  const raw = join(dataDir, 'raw');
  if (!existsSync(join(raw, 'planning'))) {
    const t = performance.now();
    await generateRaw({ outDir: raw, scale, seed: 1, week: 1 });
    log(`growth: generated ${scale}× in ${((performance.now() - t) / 1000).toFixed(1)} s`);
  }
  const summary = JSON.parse(
    await cli(opts.root, ['refresh', '--force', '--json', '--quiet'], { DATA_DIR: dataDir, RAW_DIR: raw }),
  ) as { wallMs: number; peakRssMb: number; counts: Record<string, number> };
  log(`growth: ${scale}× refreshed in ${(summary.wallMs / 1000).toFixed(1)} s, peak ${summary.peakRssMb} MB`);
  return { refreshS: summary.wallMs / 1000, peakRssMb: summary.peakRssMb, leads: summary.counts['leads'] ?? 0 };
}

/** Start both servers one after the other, load them in turn `ROUNDS` times, stop them. */
async function serveBoth(
  opts: GrowthBenchOptions,
  sides: { scale: number; dataDir: string }[],
  paths: string[],
  log: (l: string) => void,
): Promise<Served[]> {
  const started: { api: Started; startS: number }[] = [];
  try {
    for (const { scale, dataDir } of sides) {
      const t0 = performance.now();
      const api = await startApi(opts.root, `${scale}×`, 'state-growth.sqlite', { benchData: dataDir }, log);
      started.push({ api, startS: (performance.now() - t0) / 1000 });
    }
    const loads: Measured[][] = sides.map(() => []);
    for (let round = 0; round < ROUNDS; round++) {
      for (const [i, { api }] of started.entries()) {
        const load = await loadServer(api.target.pid, {
          url: api.target.origin,
          connections: opts.connections,
          seconds: opts.seconds,
          warmup: LOAD_WARMUP,
          headers: { authorization: `Bearer ${api.target.key}` },
          requests: paths.map((path) => ({ method: 'GET' as const, path })),
        });
        const name = `${sides[i]!.scale}×`;
        if (load.non2xx > 0 || load.errors > 0)
          throw new Error(`${name}: ${load.non2xx} non-2xx, ${load.errors} errors`);
        log(
          `growth: ${name} list mix round ${round + 1}: ${load.rps.toFixed(0)} req/s, ${load.cpuMsPerReq.toFixed(3)} ms CPU/req, p99 ${load.p99} ms`,
        );
        loads[i]!.push(load);
      }
    }
    const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;
    return started.map(({ api, startS }, i) => ({
      startS,
      load: {
        rps: mean(loads[i]!.map((l) => l.rps)),
        cpuMsPerReq: mean(loads[i]!.map((l) => l.cpuMsPerReq)),
        p99: mean(loads[i]!.map((l) => l.p99)),
      },
      serverRssMb: vmHwmMb(api.target.pid),
    }));
  } finally {
    for (const { api } of started) await stopChild(api.child);
  }
}

export async function growthBench(opts: GrowthBenchOptions): Promise<BenchRow[]> {
  const log = opts.log ?? ((l: string) => void process.stderr.write(l + '\n'));
  const n = opts.scale;
  if (!(n > 1)) throw new Error(`--scale must be above 1 for the growth section (got ${n})`);
  const oneDir = join(opts.root, 'data', 'bench-default');
  const nDir = join(opts.root, 'data', `bench-${n}x`);
  const oneRefresh = await refreshAt(opts, 1, oneDir, log);
  const bigRefresh = await refreshAt(opts, n, nDir, log);
  // the same queries at both scales, made from the 1× release's own values
  const { values } = await releaseValues(join(oneDir, 'current', 'leads.parquet'), 10);
  const paths = listMixQueries(values).map((q) => `/v1/leads?${q}`);
  const [oneServed, bigServed] = await serveBoth(
    opts,
    [
      { scale: 1, dataDir: oneDir },
      { scale: n, dataDir: nDir },
    ],
    paths,
    log,
  );
  const one = { ...oneRefresh, ...oneServed! };
  const big = { ...bigRefresh, ...bigServed! };
  const ratio = (a: number, b: number): string => `${(a / b).toFixed(2)}×`;
  return [
    { metric: `leads published at ${n}× (vs 1×)`, value: big.leads, unit: 'rows', baseline: one.leads },
    {
      metric: `refresh wall time at ${n}× (vs 1×)`,
      value: big.refreshS,
      unit: 's',
      baseline: one.refreshS,
      target: `≤ ${(GROWTH_TARGETS.refreshPerScale * n).toFixed(1)}× baseline (${ratio(big.refreshS, one.refreshS)})`,
      ok: big.refreshS <= GROWTH_TARGETS.refreshPerScale * n * one.refreshS,
    },
    {
      metric: `refresh peak RSS at ${n}× (vs 1×)`,
      value: big.peakRssMb,
      unit: 'MB',
      baseline: one.peakRssMb,
      target: `≤ ${GROWTH_TARGETS.peakRssMb} MB`,
      ok: big.peakRssMb <= GROWTH_TARGETS.peakRssMb,
    },
    {
      metric: `server start (index build) at ${n}× (vs 1×)`,
      value: big.startS,
      unit: 's',
      baseline: one.startS,
      target: `≤ ${GROWTH_TARGETS.startPerScale * n}× baseline (${ratio(big.startS, one.startS)})`,
      ok: big.startS <= GROWTH_TARGETS.startPerScale * n * one.startS,
    },
    {
      metric: `list mix req/s at ${n}× (vs 1×; mean of ${ROUNDS} alternating rounds)`,
      value: big.load.rps,
      unit: 'req/s',
      baseline: one.load.rps,
      target: `≥ ${GROWTH_TARGETS.listVsOne}× baseline (${ratio(big.load.rps, one.load.rps)})`,
      ok: big.load.rps >= GROWTH_TARGETS.listVsOne * one.load.rps,
    },
    { metric: `list mix p99 at ${n}× (vs 1×)`, value: big.load.p99, unit: 'ms', baseline: one.load.p99 },
    {
      metric: `list mix server CPU per request at ${n}× (vs 1×)`,
      value: big.load.cpuMsPerReq,
      unit: 'ms',
      baseline: one.load.cpuMsPerReq,
    },
    { metric: `server peak RSS at ${n}× (vs 1×)`, value: big.serverRssMb, unit: 'MB', baseline: one.serverRssMb },
  ];
}
