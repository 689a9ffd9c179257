/**
 * `make bench` section `ceiling` (issue 34, item 3): how much of what Koa itself can serve on this
 * box the API's list page reaches, with the access model on, measured in one run.
 *
 *   varied   — 200 different list queries (bench/api.ts `generateFilterQueries`, the release's own
 *              values) against the API (bench/access-server.ts: auth, rate limit, row budget and
 *              usage ledger on; a custom-scope key, whose limits the load stays under), and the
 *              same 200 paths against a bare Koa process answering each with the bytes the API
 *              gave for it (bench/ceiling-server.ts): the API's req/s over the ceiling's (target ≥ 0.3×);
 *   repeated — 22 of those queries over and over against the API, over the 200 varied (target
 *              ≥ 0.95×: a hot working set no slower than a cold one, within the run's noise);
 *   memory   — the API's peak RSS on the default release (target ≤ 500 MB);
 *   parts    — where a varied request's time goes: one more load of the 200 against a second API
 *              process timed part by part (bench/request-parts.ts: each middleware, the engine's
 *              two steps, the response's write and its listeners), in µs per request, beside
 *              that run's server CPU per request (information; the instrumented run is slower).
 *
 * Each server is its own process and each load its own (bench/load.ts), started once the box is
 * quiet; the rounds alternate (API, ceiling, API, ceiling) and the means are compared. Server CPU
 * per request is printed for both.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateKey } from '../api/access/keys.ts';
import { openStateStore } from '../api/state/open.ts';
import {
  generateFilterQueries,
  loadServer,
  releaseValues,
  startChild,
  stopChild,
  vmHwmMb,
  type BenchRow,
  type Measured,
} from './api.ts';
import { LOAD_WARMUP } from './load.ts';

export const CEILING_TARGETS = { vsBareKoa: 0.3, repeatedVsVaried: 0.95, peakRssMb: 500 } as const;

/** Varied queries, and how many of them the repeated scenario cycles through. */
const VARIED = 200;
const REPEATED = 22;

export interface CeilingBenchOptions {
  root: string;
  benchData: string;
  seconds: number;
  connections: number;
  /** Rounds of the three loads (default 2). */
  rounds?: number;
  /** Wait for a quiet machine before each load (default true; a test of the section, whose figures mean nothing, passes false). */
  settle?: boolean;
  /** Time the parts of a request in one more, instrumented, API process (default true). */
  parts?: boolean;
  /**
   * How many varied queries (default 200; more than the 22 the repeated scenario cycles through)
   * and warm-up requests before each load (default LOAD_WARMUP): a test of the section, whose
   * figures mean nothing, passes fewer.
   */
  varied?: number;
  warmup?: number;
  /** Node arguments for the API processes, after this process's loader flags (a test's preload). */
  serverNodeArgs?: readonly string[];
  log?: (line: string) => void;
}

export async function ceilingBench(opts: CeilingBenchOptions): Promise<BenchRow[]> {
  const log = opts.log ?? ((l: string) => void process.stderr.write(l + '\n'));
  const releaseDir = join(opts.benchData, 'current');
  if (!existsSync(join(releaseDir, 'manifest.json')))
    throw new Error(`no release at ${releaseDir}: run 'make bench ARGS="--only refresh"' first`);
  const tmp = join(opts.root, '.tmp', 'bench-ceiling');
  mkdirSync(tmp, { recursive: true });

  const { values } = await releaseValues(join(releaseDir, 'leads.parquet'), 10);
  const varied = opts.varied ?? VARIED;
  if (varied <= REPEATED) throw new Error(`ceilingBench: varied (${varied}) must be more than ${REPEATED}`);
  const warmup = opts.warmup ?? LOAD_WARMUP;
  const paths = generateFilterQueries(varied, 34, values).map((q) => `/v1/leads?${q}`);

  // custom-scope keys in a fresh state file, limits on: a fresh key per API load, so that none
  // reaches its 120,000 requests an hour (one 8 s load at ~4,000 req/s is a quarter of that)
  const rounds = opts.rounds ?? 2;
  const db = `file:${join(tmp, 'state.sqlite')}`;
  for (const suffix of ['', '-wal', '-shm']) rmSync(join(tmp, 'state.sqlite') + suffix, { force: true });
  const store = openStateStore(db);
  const keys: string[] = [];
  try {
    const account = await store.createAccount('bench', 'premium');
    for (let i = 0; i < 2 + 2 * rounds; i++) {
      const k = generateKey('custom');
      await store.insertKey({
        id: k.id,
        account_id: account.id,
        scope: 'custom',
        name: `bench ${i}`,
        display_prefix: k.displayPrefix,
        hash: k.hash,
      });
      keys.push(k.raw);
    }
  } finally {
    await store.close();
  }
  const headers = (i: number): Record<string, string> => ({ authorization: `Bearer ${keys[i]}` });

  const api = await startChild(
    opts.root,
    [...(opts.serverNodeArgs ?? []), 'bench/access-server.ts', '--data', opts.benchData, '--db', db],
    {},
    /listening on (\S+)\/v1/,
  );
  let bare: Awaited<ReturnType<typeof startChild>> | undefined;
  try {
    const apiOrigin = api.match[1]!;
    // the API's answer to each path, for the ceiling to send back
    const payloads: Record<string, { type: string; body: string }> = {};
    let bytes = 0;
    for (const p of paths) {
      const res = await fetch(apiOrigin + p, { headers: { ...headers(0), 'accept-encoding': 'identity' } });
      const body = Buffer.from(await res.arrayBuffer());
      if (res.status !== 200) throw new Error(`${p} → ${res.status}: ${body.toString().slice(0, 300)}`);
      payloads[p] = { type: res.headers.get('content-type') ?? 'application/json', body: body.toString('base64') };
      bytes += body.length;
    }
    const file = join(tmp, 'payloads.json');
    writeFileSync(file, JSON.stringify(payloads));
    log(
      `ceiling: ${paths.length} list pages recorded from the API (${Math.round(bytes / paths.length / 1000)} KB each on average)`,
    );
    bare = await startChild(opts.root, ['bench/ceiling-server.ts', file], {}, /listening on (\S+)\/v1/);
    const bareOrigin = bare.match[1]!;

    let used = 0;
    const drive = (pid: number, origin: string, list: string[]): Promise<Measured> =>
      loadServer(
        pid,
        {
          url: origin,
          connections: opts.connections,
          seconds: opts.seconds,
          warmup,
          headers: headers(origin === apiOrigin ? ++used : 0),
          requests: list.map((path) => ({ method: 'GET' as const, path })),
        },
        { settle: opts.settle !== false },
      );
    const runs: Record<'api' | 'bare' | 'repeated', Measured[]> = { api: [], bare: [], repeated: [] };
    for (let round = 0; round < rounds; round++) {
      runs.api.push(await drive(api.child.pid!, apiOrigin, paths));
      runs.bare.push(await drive(bare.child.pid!, bareOrigin, paths));
      runs.repeated.push(await drive(api.child.pid!, apiOrigin, paths.slice(0, REPEATED)));
      log(
        `round ${round + 1}: API ${runs.api.at(-1)!.rps.toFixed(0)} req/s, bare Koa ${runs.bare.at(-1)!.rps.toFixed(0)} req/s, repeated ${runs.repeated.at(-1)!.rps.toFixed(0)} req/s`,
      );
    }
    for (const [name, rs] of Object.entries(runs))
      for (const r of rs)
        if (r.non2xx > 0 || r.errors > 0) throw new Error(`${name}: ${r.non2xx} non-2xx answers, ${r.errors} errors`);
    const mean = (rs: Measured[], k: 'rps' | 'cpuMsPerReq'): number => rs.reduce((n, r) => n + r[k], 0) / rs.length;
    const apiRps = mean(runs.api, 'rps');
    const bareRps = mean(runs.bare, 'rps');
    const repeatedRps = mean(runs.repeated, 'rps');
    const peak = vmHwmMb(api.child.pid!);
    const parts = opts.parts === false ? [] : await partsRows(opts, db, headers(keys.length - 1), paths, tmp, warmup);
    return [
      {
        metric: `list page req/s, access on (vs bare Koa, same ${varied} payloads)`,
        value: apiRps,
        unit: 'req/s',
        baseline: bareRps,
        target: `≥ ${CEILING_TARGETS.vsBareKoa}× baseline (${(apiRps / bareRps).toFixed(2)}×)`,
        ok: apiRps >= CEILING_TARGETS.vsBareKoa * bareRps,
      },
      {
        metric: 'server CPU per request (vs bare Koa)',
        value: mean(runs.api, 'cpuMsPerReq'),
        unit: 'ms',
        baseline: mean(runs.bare, 'cpuMsPerReq'),
      },
      {
        metric: `repeated ${REPEATED} list queries req/s (vs ${varied} varied)`,
        value: repeatedRps,
        unit: 'req/s',
        baseline: apiRps,
        target: `≥ ${CEILING_TARGETS.repeatedVsVaried}× baseline (${(repeatedRps / apiRps).toFixed(2)}×)`,
        ok: repeatedRps >= CEILING_TARGETS.repeatedVsVaried * apiRps,
      },
      { metric: 'repeated: server CPU per request', value: mean(runs.repeated, 'cpuMsPerReq'), unit: 'ms' },
      {
        metric: 'API peak RSS (default release, after the loads)',
        value: peak,
        unit: 'MB',
        target: `≤ ${CEILING_TARGETS.peakRssMb} MB`,
        ok: peak <= CEILING_TARGETS.peakRssMb,
      },
      ...parts,
    ];
  } finally {
    if (bare) await stopChild(bare.child);
    await stopChild(api.child);
  }
}

/**
 * One load of the varied paths against an API process timed part by part (bench/request-parts.ts):
 * a row per part in µs per request, largest first — the /v1 router's without the engine's steps,
 * which are rows of their own — then what no part holds (HTTP parsing, Koa's context, the event
 * loop, garbage collection, the kernel's receive) against the run's server CPU per request.
 */
async function partsRows(
  opts: CeilingBenchOptions,
  db: string,
  headers: Record<string, string>,
  paths: string[],
  tmp: string,
  warmup: number,
): Promise<BenchRow[]> {
  const file = join(tmp, 'parts.json');
  rmSync(file, { force: true });
  const timed = await startChild(
    opts.root,
    [
      ...(opts.serverNodeArgs ?? []),
      '--import', // after this process's loader flags (startChild): tsx under `make bench`, none in the test workers
      './bench/request-parts.ts',
      'bench/access-server.ts',
      '--data',
      opts.benchData,
      '--db',
      db,
    ],
    { REQUEST_PARTS_FILE: file },
    /listening on (\S+)\/v1/,
  );
  let run: Measured;
  try {
    run = await loadServer(
      timed.child.pid!,
      {
        url: timed.match[1]!,
        connections: opts.connections,
        seconds: opts.seconds,
        warmup,
        headers,
        requests: paths.map((path) => ({ method: 'GET' as const, path })),
      },
      { settle: opts.settle !== false },
    );
  } finally {
    await stopChild(timed.child);
  }
  const parts = JSON.parse(readFileSync(file, 'utf8')) as Record<string, { calls: number; us: number }>;
  const perRequest = new Map(Object.entries(parts).map(([k, p]) => [k, p.us / p.calls]));
  const engine = [...perRequest].filter(([k]) => k.startsWith('engine:')).reduce((n, [, v]) => n + v, 0);
  const router = 'middleware: v1 router';
  if (perRequest.has(router)) {
    perRequest.set(
      'middleware: v1 router and the route (parse, cursor, links, send)',
      perRequest.get(router)! - engine,
    );
    perRequest.delete(router);
  }
  const sum = [...perRequest.values()].reduce((n, v) => n + v, 0);
  const cpuUs = run.cpuMsPerReq * 1000;
  return [
    ...[...perRequest]
      .sort(([, a], [, b]) => b - a)
      .map(([part, us]): BenchRow => ({ metric: `parts: ${part}`, value: us, unit: 'µs/req' })),
    {
      metric: 'parts: in no part (HTTP parsing, Koa context, event loop, GC, kernel)',
      value: cpuUs - sum,
      unit: 'µs/req',
    },
    {
      metric: `parts: server CPU per request of the timed run (${run.rps.toFixed(0)} req/s)`,
      value: cpuUs,
      unit: 'µs/req',
    },
  ];
}
