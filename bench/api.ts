/**
 * `make bench` section `api`: the HTTP API on the default release under load, side by side with
 * a baseline measured in the same run (bench/baseline-pg.ts: the same list queries served by a
 * plain Koa + `pg` handler over PostgreSQL with B-tree indexes).
 *
 * Both servers run in child processes (their own event loop, their own RSS), one after the other
 * so they never compete for the two cores; the load generator (bench/load.ts: autocannon in a
 * fresh process per measurement, started once the machine is quiet) drives them with 16
 * connections. Every request of a scenario is a different query (generated from a fixed seed and
 * the release's own values), so no cache on either side can answer from memory:
 * the numbers are those of real query work. Scenarios (each `seconds` long, after a warm-up):
 *   list mix     — filters, `q` search and deep cursor pages, 2:1:1 (the list targets)
 *   filters      — 1–3 random filters, random sort, pages 1–5 mostly, up to 100
 *   q search     — one or two words from the release's descriptions, a third with a filter
 *   deep cursor  — keyset pages 2,500 to 7,500 rows deep on five filter sets, found by walking
 *                  `next_cursor` (page_size 100), served with page_size 20–31
 *   detail       — `GET /leads/{id}` of 5,000 random ids (the baseline serves the bare row only)
 *   repeated     — the same 22 list queries over and over (what a hot working set gives; the
 *                  baseline has no cache, so this row is for information)
 * Before loading, a fixed set of filter queries is asked of both servers: the totals and page
 * ids are compared (a mismatch means the baseline is not answering the same query, reported),
 * and any non-200 aborts the run.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { openDb, sqlString } from '../pipeline/lib/duckdb.ts';
import { STOPWORDS } from '../common/search-text.ts';
import { loadBaseline, PG_URL_DEFAULT } from './baseline-pg.ts';
import { LOAD_WARMUP, runLoad, settle, type LoadResult, type LoadSpec } from './load.ts';
import { loaderArgs } from '../api/startup/loader-args.ts';

/** One line of the bench table (same shape as bench/run.ts's rows). */
export interface BenchRow {
  metric: string;
  value: number;
  unit: string;
  baseline?: number;
  target?: string;
  ok?: boolean;
}

export interface ApiBenchOptions {
  /** Repository root (where bin/ and api/ are). */
  root: string;
  /** Folder holding `current` → the release to serve, e.g. data/bench-default. */
  benchData: string;
  /** Seconds per measured scenario. */
  seconds: number;
  connections: number;
  pgUrl?: string;
  log?: (line: string) => void;
  /** Also measure the API of another checkout (e.g. the commit before a refactoring) on the same release and workload. */
  against?: { root: string; label: string };
}

/**
 * Targets of issue 3 as ratios to the baseline measured in the same run (issue 34: this box's speed
 * varies 1.5× from day to day, so no absolute req/s or latency), and the memory bound. They live
 * here, never in unit tests.
 */
export const API_TARGETS = {
  listVsBaseline: 1.5,
  listP99VsBaseline: 0.5,
  searchP50VsBaseline: 0.5,
  detailVsBareRow: 0.5,
  rssMb: 500,
} as const;

/** Fixed filter queries (no q), checked against the baseline and replayed in `repeated`. */
export const FILTER_QUERIES = [
  '',
  'vertical=solar',
  'county=Dublin&readiness=granted',
  'authority=Cork%20County&scale=major',
  'vertical=heat_pumps,solar&min_value=500000',
  'use_class=residential_multi&min_units=10&sort=value_desc',
  'status=active&county=Galway,Mayo',
  'has_contact=true&demolition=1&page=3',
  'scale=large,major&sort=value_desc&page=2',
  'authority=dun%20laoghaire-rathdown&readiness=commencing',
  'readiness=under_construction&vertical=roofing&page=2',
  'county=cork&sort=oldest',
];

/** Fixed free-text queries (replayed in `repeated`). */
export const SEARCH_QUERIES = [
  'q=roof',
  'q=kitchen%20extension',
  'q=solar%20panels',
  'q=data%20centre',
  'q=apartments&county=Dublin',
  'q=demolition%20shed',
  'q=heat%20pump&status=active',
  'q=wastewater%20treatment',
  'q=shopfront',
  'q=dormer%20window&page=2',
];

/** Filter sets walked with next_cursor to find deep pages, and the depth range kept (rows). */
export const CURSOR_WALKS = [
  '',
  'county=Dublin',
  'vertical=roofing&status=active',
  'use_class=house',
  'scale=minor&has_contact=true',
];
export const CURSOR_DEPTH = { from: 2_500, to: 7_500 } as const;

/** Values of the enumerated filters in the release (to generate valid queries). */
export interface ReleaseValues {
  vertical: string[];
  authority: string[];
  county: string[];
  readiness: string[];
  status: string[];
  use_class: string[];
  scale: string[];
  /** Words (≥ 4 letters) seen in lead descriptions, for `q`. */
  words: string[];
}

/** Deterministic PRNG (mulberry32): the same seed gives the same queries on both servers. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function pick<T>(r: () => number, xs: readonly T[]): T {
  return xs[Math.floor(r() * xs.length)]!;
}

/** `n` list queries with 1–3 random filters, a random sort and mostly shallow pages. */
export function generateFilterQueries(n: number, seed: number, v: ReleaseValues): string[] {
  const r = prng(seed);
  const gens: (() => string)[] = [
    () => `vertical=${pick(r, v.vertical)}${r() < 0.3 ? `,${pick(r, v.vertical)}` : ''}`,
    () =>
      `county=${encodeURIComponent(pick(r, v.county))}${r() < 0.3 ? `,${encodeURIComponent(pick(r, v.county))}` : ''}`,
    () => `authority=${encodeURIComponent(r() < 0.3 ? pick(r, v.authority).toLowerCase() : pick(r, v.authority))}`,
    () => `readiness=${pick(r, v.readiness)}`,
    () => `status=${pick(r, v.status)}`,
    () => `use_class=${pick(r, v.use_class)}`,
    () => `scale=${pick(r, v.scale)}`,
    () => `min_value=${Math.floor(r() * 2_000) * 1_000}`,
    () => `min_units=${1 + Math.floor(r() * 40)}`,
    () => `has_contact=${pick(r, ['true', 'false', '1'])}`,
    () => `demolition=${pick(r, ['1', '0', 'true'])}`,
  ];
  const sorts = ['', '', '', '', '&sort=oldest', '&sort=value_desc', '&sort=value_asc'];
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const k = 1 + Math.floor(r() * 3);
    const chosen = new Set<number>();
    while (chosen.size < k) chosen.add(Math.floor(r() * gens.length));
    const page = r() < 0.8 ? 1 + Math.floor(r() * 5) : 6 + Math.floor(r() * 95);
    out.push([...chosen].map((g) => gens[g]!()).join('&') + pick(r, sorts) + (page > 1 ? `&page=${page}` : ''));
  }
  return out;
}

/** The growth and engine sections' list mix: 2,000 filter queries and 1,000 `q` queries, interleaved. */
export function listMixQueries(v: ReleaseValues): string[] {
  return interleave([generateFilterQueries(2_000, 1, v), generateSearchQueries(1_000, 2, v)]);
}

/** `n` free-text queries: one or two description words, a third of them with a filter. */
export function generateSearchQueries(n: number, seed: number, v: ReleaseValues): string[] {
  const r = prng(seed);
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const words = r() < 0.5 ? [pick(r, v.words)] : [pick(r, v.words), pick(r, v.words)];
    let q = `q=${encodeURIComponent(words.join(' '))}`;
    const f = r();
    if (f < 0.12) q += `&county=${encodeURIComponent(pick(r, v.county))}`;
    else if (f < 0.24) q += `&vertical=${pick(r, v.vertical)}`;
    else if (f < 0.33) q += `&status=${pick(r, v.status)}`;
    if (r() < 0.2) q += `&page=${2 + Math.floor(r() * 3)}`;
    out.push(q);
  }
  return out;
}

export interface Target {
  name: string;
  /** The server's process id (its CPU time is read from /proc around each scenario). */
  pid: number;
  /** Origin, e.g. http://127.0.0.1:4567. */
  origin: string;
  /** Path prefix of the leads resource: `/v1/leads` or `/leads`. */
  leads: string;
  key: string;
}

/** A measured load (bench/load.ts) with the server's CPU time (user + system, all threads, its process tree) per measured request: robust to other load on the box. */
export type Measured = LoadResult & { cpuMsPerReq: number };

/** Run the api section; returns the table rows. */
export async function apiBench(opts: ApiBenchOptions): Promise<BenchRow[]> {
  const log = opts.log ?? ((l: string) => void process.stderr.write(l + '\n'));
  const pgUrl = opts.pgUrl ?? PG_URL_DEFAULT;
  const releaseDir = join(opts.benchData, 'current');
  if (!existsSync(join(releaseDir, 'manifest.json'))) {
    throw new Error(
      `no release at ${releaseDir}: run 'make bench' (its refresh section builds it) or 'make bench ARGS="--only refresh"'`,
    );
  }
  const releaseId = readlinkSync(releaseDir).split('/').pop()!;
  log(`api bench on release ${releaseId} (${opts.connections} connections, ${opts.seconds} s per scenario)`);

  const loaded = await loadBaseline({ pgUrl, releaseDir, tmpDir: join(opts.root, '.tmp') });
  log(
    `baseline: ${loaded.rows.toLocaleString('en-IE')} leads in PostgreSQL (${loaded.reused ? 'already loaded' : `loaded in ${(loaded.ms / 1000).toFixed(1)} s`})`,
  );
  const { values, detailIds } = await releaseValues(join(releaseDir, 'leads.parquet'), 5_000);
  const workload: Workload = {
    filters: generateFilterQueries(40_000, 1, values),
    search: generateSearchQueries(12_000, 2, values),
    detailIds,
  };

  // --- baseline
  const baselineKey = randomBytes(32).toString('base64url');
  const base = await startChild(
    opts.root,
    [
      'bench/baseline-pg.ts',
      '--port',
      '0',
      '--pg',
      pgUrl,
      '--key-sha256',
      createHash('sha256').update(baselineKey).digest('hex'),
    ],
    {},
    /^\{"port":(\d+)\}$/m,
  );
  let baseRes: { measured: ScenarioResults; answers: string[] };
  let baseRss: number;
  const baseTarget: Target = {
    name: 'baseline',
    pid: base.child.pid!,
    origin: `http://127.0.0.1:${base.match[1]}`,
    leads: '/leads',
    key: baselineKey,
  };
  try {
    baseRes = await runScenarios(baseTarget, workload, opts, log);
    baseRss = vmHwmMb(base.child.pid!);
  } finally {
    await stopChild(base.child);
  }

  // --- the API
  const apiServer = join(opts.root, 'api', 'server.ts');
  if (!existsSync(apiServer) || !existsSync(join(opts.root, 'api', 'routes', 'leads.ts'))) {
    log('the API (api/server.ts, api/routes/leads.ts) is not built yet: baseline only');
    return baselineOnlyRows(baseRes.measured, baseRss);
  }
  const api = await startApi(opts.root, 'api', 'state.sqlite', opts, log);
  let apiRes: { measured: ScenarioResults; answers: string[] };
  let apiRss: number;
  try {
    apiRes = await runScenarios(api.target, workload, opts, log);
    apiRss = vmHwmMb(api.child.pid!);
  } finally {
    await stopChild(api.child);
  }
  const same = sameAnswers(apiRes.answers, baseRes.answers);
  if (same.same < same.of)
    log(
      `warning: ${same.of - same.same} of ${same.of} filter queries answered differently by the API and the baseline`,
    );
  const rows = resultRows(
    apiRes.measured,
    baseRes.measured,
    { peak: apiRss, idle: api.idleRss },
    baseRss,
    same,
    loaded,
  );
  if (opts.against) rows.push(...(await againstRows(opts.against, workload, opts, log)));
  return rows;
}

/**
 * This checkout against the API as it was at another commit, on the same release and workload:
 * both servers up at once (idle while the other is loaded). Each scenario is measured in
 * back-to-back pairs (now then before, then before then now, …) so that drift of this shared
 * machine falls on both sides of a pair; the ratio is the median of the pairs' ratios, the
 * throughputs shown the means of the rounds.
 */
async function againstRows(
  against: { root: string; label: string },
  workload: Workload,
  opts: ApiBenchOptions,
  log: (l: string) => void,
): Promise<BenchRow[]> {
  const now = await startApi(opts.root, 'now', 'state-now.sqlite', opts, log);
  let before: Started | undefined;
  try {
    before = await startApi(against.root, 'before', 'state-before.sqlite', opts, log);
    const sides = { now, before };
    const plans = {
      now: (await prepareScenarios(now.target, workload, opts, log)).plan,
      before: (await prepareScenarios(before.target, workload, opts, log)).plan,
    };
    const rows: BenchRow[] = [];
    for (const [i, [name]] of plans.now.entries()) {
      const pairs: { now: number; before: number }[] = [];
      for (let round = 0; round < AGAINST_ROUNDS; round++) {
        const order = round % 2 === 0 ? (['now', 'before'] as const) : (['before', 'now'] as const);
        const pair = { now: 0, before: 0 };
        for (const side of order)
          pair[side] = (await measureScenario(sides[side].target, name, plans[side][i]![1], opts, log)).rps;
        pairs.push(pair);
      }
      rows.push(againstRow(name, pairs, against.label));
    }
    return rows;
  } finally {
    await stopChild(now.child);
    if (before) await stopChild(before.child);
  }
}

export interface Started {
  child: ChildProcess;
  target: Target;
  idleRss: number;
}

/**
 * Starts the API of the checkout at `root` on the bench release: its own state file, one ent_api
 * key made with that checkout's own CLI, access limits off.
 */
export async function startApi(
  root: string,
  name: string,
  stateFile: string,
  opts: Pick<ApiBenchOptions, 'benchData'>,
  log: (l: string) => void,
  env: Record<string, string> = {},
): Promise<Started> {
  const state = join(opts.benchData, stateFile);
  const stateEnv = { DATA_DIR: opts.benchData, DATABASE_URL: `file:${state}` };
  for (const suffix of ['', '-wal', '-shm']) rmSync(state + suffix, { force: true });
  await cli(root, ['accounts', 'create', '--name', 'bench', '--plan', 'premium', '--json'], stateEnv);
  const created = JSON.parse(
    await cli(
      root,
      ['keys', 'create', '--account', 'bench', '--scope', 'ent_api', '--name', 'bench', '--json'],
      stateEnv,
    ),
  ) as { key: string };
  const t0 = performance.now();
  // ACCESS_LIMITS=off (bench only): the ent_api key would otherwise stop at 5,000 requests/hour and
  // 5,000 rows/day; auth and the usage ledger stay on. The `access` section measures the limits.
  const api = await startChild(
    root,
    ['api/server.ts'],
    { ...stateEnv, PORT: '0', HOST: '127.0.0.1', ACCESS_LIMITS: 'off', ...env },
    /listening on (\S+)\/v1/,
  );
  const idleRss = vmRssMb(api.child.pid!);
  log(
    `${name} server up in ${((performance.now() - t0) / 1000).toFixed(1)} s (pid ${api.child.pid}, RSS ${idleRss.toFixed(0)} MB)`,
  );
  return {
    child: api.child,
    idleRss,
    target: { name, pid: api.child.pid!, origin: api.match[1]!, leads: '/v1/leads', key: created.key },
  };
}

/**
 * How the geo sections (bench/geo-tiles.ts, bench/geo-search.ts) run the API: as deployed on the
 * bench machine, a worker per core (API_WORKERS=auto, docs/operations.md) — the peer's PostgreSQL
 * uses every core too. Each section also measures one process, for comparison.
 */
export const API_AS_DEPLOYED: Record<string, string> = { API_WORKERS: 'auto' };

/** Pairs per scenario of `--against` (each measures both servers back to back, the order alternating). */
const AGAINST_ROUNDS = 5;

/** Scenarios whose throughput a refactoring must keep within 10% of the code before it (issue 15). */
export const KEPT_WITHIN = { scenarios: ['list mix', 'q search', 'detail'] as const, ratio: 0.9 };

/** A scenario's row: this checkout (value) against the other commit (baseline), the median of the pairs' ratios. */
function againstRow(name: Scenario, pairs: { now: number; before: number }[], label: string): BenchRow {
  const kept = (KEPT_WITHIN.scenarios as readonly string[]).includes(name);
  const ratios = pairs.map((p) => p.now / p.before).sort((a, b) => a - b);
  const ratio = ratios[Math.floor(ratios.length / 2)]!;
  const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;
  const spread = `pairs ${ratios[0]!.toFixed(2)}–${ratios.at(-1)!.toFixed(2)}`;
  return {
    metric: `${name} throughput vs ${label}`,
    value: mean(pairs.map((p) => p.now)),
    unit: 'req/s',
    baseline: mean(pairs.map((p) => p.before)),
    target: kept
      ? `≥ ${KEPT_WITHIN.ratio}× ${label} (${ratio.toFixed(2)}×, ${spread})`
      : `information (${ratio.toFixed(2)}×, ${spread})`,
    ...(kept ? { ok: ratio >= KEPT_WITHIN.ratio } : {}),
  };
}

type Scenario = 'list mix' | 'filters' | 'q search' | 'deep cursor' | 'detail' | 'repeated';

/** The generated requests, the same for both servers. */
interface Workload {
  filters: string[];
  search: string[];
  detailIds: number[];
}
type ScenarioResults = Record<Scenario, Measured>;

async function runScenarios(
  t: Target,
  w: Workload,
  opts: ApiBenchOptions,
  log: (l: string) => void,
): Promise<{ measured: ScenarioResults; answers: string[] }> {
  const { plan, answers } = await prepareScenarios(t, w, opts, log);
  const out = {} as ScenarioResults;
  for (const [name, paths] of plan) out[name] = await measureScenario(t, name, paths, opts, log);
  return { measured: out, answers };
}

/**
 * Checks a server's answers to the fixed filter queries, walks its cursor chains, warms it up, and
 * returns each scenario's paths on that server.
 */
async function prepareScenarios(
  t: Target,
  w: Workload,
  opts: ApiBenchOptions,
  log: (l: string) => void,
): Promise<{ plan: [Scenario, string[]][]; answers: string[] }> {
  const answers: string[] = [];
  for (const q of FILTER_QUERIES) {
    const body = await expectOk(t, leadsPath(t, q));
    answers.push(`${body.total}:${(body.results as { id: number }[]).map((r) => r.id).join(',')}`);
  }
  const t0 = performance.now();
  const cursors = cursorPaths((await Promise.all(CURSOR_WALKS.map((f) => deepCursors(t, f)))).flat());
  log(
    `${t.name}: walked ${CURSOR_WALKS.length} cursor chains in ${((performance.now() - t0) / 1000).toFixed(1)} s → ${cursors.length / 12} deep cursors × 12 page sizes`,
  );
  const filters = w.filters.map((q) => leadsPath(t, q));
  const search = w.search.map((q) => leadsPath(t, q));
  const detail = w.detailIds.map((id) => `${t.leads}/${id}`);
  const repeated = [...FILTER_QUERIES, ...SEARCH_QUERIES].map((q) => leadsPath(t, q));
  const [fa, fb] = halves(filters);
  const mix = interleave([fa, fa.slice(1), search.slice(search.length / 2), cursors.slice(0).reverse()]);
  // (the mix takes the cursor pages from the other end, so the deep cursor phase meets them anew)
  for (const p of [
    ...SEARCH_QUERIES.map((q) => leadsPath(t, q)),
    ...fb.slice(0, 20),
    ...search.slice(0, 20),
    cursors[0]!,
    ...detail.slice(0, 5),
  ])
    await expectOk(t, p);
  // warm-up: page in the tables and JIT the code, on queries the measured phases do not repeat
  await load(
    t,
    interleave([fb.slice(-2000), search.slice(-500), detail.slice(-500)]),
    Math.min(3, opts.seconds),
    opts.connections,
  );
  const plan: [Scenario, string[]][] = [
    ['list mix', mix],
    ['filters', fb],
    ['q search', search.slice(0, search.length / 2)],
    ['deep cursor', cursors],
    ['detail', detail],
    ['repeated', repeated],
  ];
  return { plan, answers };
}

/** One scenario's load on one server, logged. */
async function measureScenario(
  t: Target,
  name: Scenario,
  paths: string[],
  opts: ApiBenchOptions,
  log: (l: string) => void,
): Promise<Measured> {
  const m = await load(t, paths, opts.seconds, opts.connections);
  log(
    `${t.name.padEnd(8)} ${name.padEnd(12)} ${m.rps.toFixed(0).padStart(6)} req/s  p50 ${m.p50} ms  p99 ${m.p99} ms  cpu ${m.cpuMsPerReq.toFixed(2)} ms/req  (${m.total} requests over ${paths.length} paths${m.non2xx + m.errors ? `, ${m.non2xx} non-2xx, ${m.errors} errors` : ''})`,
  );
  return m;
}

function halves<T>(xs: T[]): [T[], T[]] {
  const h = Math.floor(xs.length / 2);
  return [xs.slice(0, h), xs.slice(h)];
}

function leadsPath(t: Target, query: string): string {
  return query ? `${t.leads}?${query}` : t.leads;
}

/** Round-robin merge of several lists (so a mix alternates kinds of request). */
export function interleave<T>(lists: T[][]): T[] {
  const out: T[] = [];
  const n = Math.max(...lists.map((l) => l.length));
  for (let i = 0; i < n; i++) for (const l of lists) if (l.length) out.push(l[i % l.length]!);
  return out;
}

async function get(t: Target, path: string): Promise<{ status: number; body: any; text: string }> {
  const res = await fetch(t.origin + path, { headers: { authorization: `Bearer ${t.key}` } });
  const text = await res.text();
  let body: any = null;
  try {
    body = JSON.parse(text);
  } catch {
    /* not JSON: left null, the caller reports the text */
  }
  return { status: res.status, body, text };
}

async function expectOk(t: Target, path: string): Promise<any> {
  const r = await get(t, path);
  if (r.status !== 200) throw new Error(`${t.name} GET ${path} → ${r.status}: ${r.text.slice(0, 500)}`);
  return r.body;
}

/**
 * Walk `next_cursor` (page_size 100) from the first page of a filter set and return the cursors
 * of the pages from CURSOR_DEPTH.from to .to rows deep.
 */
async function deepCursors(t: Target, filters: string): Promise<string[]> {
  const sep = filters ? `${filters}&` : '';
  const out: string[] = [];
  let cursor: string | null = null;
  let served = 0;
  while (served < CURSOR_DEPTH.to) {
    const body = await expectOk(
      t,
      `${t.leads}?${sep}page_size=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
    );
    served += (body.results as unknown[]).length;
    cursor = body.next_cursor as string | null;
    if (!cursor) break;
    if (served >= CURSOR_DEPTH.from) out.push(`${t.leads}?${sep}cursor=${encodeURIComponent(cursor)}`);
  }
  return out;
}

/**
 * Each cursor page served with page_size 20 to 31 (page_size is not part of a cursor's filters,
 * so a cursor found with big pages serves small ones): all cursors at one size, then the next,
 * so many distinct queries pass before one repeats.
 */
export function cursorPaths(cursors: readonly string[], sizes = 12): string[] {
  const out: string[] = [];
  for (let s = 0; s < sizes; s++) for (const c of cursors) out.push(`${c}&page_size=${20 + s}`);
  return out;
}

/** Drive `paths` round-robin with `connections` for `seconds` (`loadServer`, warmed up on the list's last 200 paths). */
function load(t: Target, paths: string[], seconds: number, connections: number): Promise<Measured> {
  return loadServer(t.pid, {
    url: t.origin,
    connections,
    seconds,
    warmup: LOAD_WARMUP,
    headers: { authorization: `Bearer ${t.key}` },
    requests: paths.map((path) => ({ method: 'GET', path })),
  });
}

/**
 * The one way the bench measures a server: wait for a quiet machine (`settle`; `settle: false` only
 * where no figure is kept, e.g. a test of a section), run `spec` in a
 * fresh load generator (`runLoad`), and count the CPU of the server's process tree (`treeCpuMs`,
 * pid `pid`) over the measured part only, warm-up excluded.
 */
export async function loadServer(pid: number, spec: LoadSpec, opts: { settle?: boolean } = {}): Promise<Measured> {
  if (opts.settle !== false) await settle();
  let cpu0 = 0;
  const r = await runLoad(spec, () => (cpu0 = treeCpuMs(pid)));
  return { ...r, cpuMsPerReq: r.total > 0 ? (treeCpuMs(pid) - cpu0) / r.total : 0 };
}

/** How many filter queries got the same total and the same ids on page 1 from both servers. */
export function sameAnswers(a: readonly string[], b: readonly string[]): { same: number; of: number } {
  const of = Math.min(a.length, b.length);
  let same = 0;
  for (let i = 0; i < of; i++) if (a[i] === b[i]) same++;
  return { same, of };
}

function resultRows(
  api: ScenarioResults,
  base: ScenarioResults,
  rss: { peak: number; idle: number },
  baseRss: number,
  same: { same: number; of: number },
  loaded: { rows: number; ms: number; reused: boolean },
): BenchRow[] {
  const T = API_TARGETS;
  const rows: BenchRow[] = [];
  for (const name of Object.keys(api) as Scenario[]) {
    const a = api[name];
    const b = base[name];
    const rpsRow: BenchRow = { metric: `${name} throughput`, value: a.rps, unit: 'req/s', baseline: b.rps };
    const p50Row: BenchRow = { metric: `${name} p50`, value: a.p50, unit: 'ms', baseline: b.p50 };
    const p99Row: BenchRow = { metric: `${name} p99`, value: a.p99, unit: 'ms', baseline: b.p99 };
    if (name === 'list mix') {
      rpsRow.target = `≥ ${T.listVsBaseline}× baseline (${(a.rps / b.rps).toFixed(2)}×)`;
      rpsRow.ok = a.rps >= T.listVsBaseline * b.rps;
      p99Row.target = `≤ ${T.listP99VsBaseline}× baseline`;
      p99Row.ok = a.p99 <= T.listP99VsBaseline * b.p99;
    }
    if (name === 'q search') {
      p50Row.target = `≤ ${T.searchP50VsBaseline}× baseline`;
      p50Row.ok = a.p50 <= T.searchP50VsBaseline * b.p50;
    }
    if (name === 'repeated') {
      rpsRow.target = 'information: the same 22 list queries over and over';
    }
    if (name === 'detail') {
      rpsRow.target = `≥ ${T.detailVsBareRow}× baseline (a bare row; ${(a.rps / b.rps).toFixed(2)}×)`;
      rpsRow.ok = a.rps >= T.detailVsBareRow * b.rps;
    }
    const cpuRow: BenchRow = {
      metric: `${name} server CPU per request`,
      value: a.cpuMsPerReq,
      unit: 'ms',
      baseline: b.cpuMsPerReq,
    };
    if (name === 'list mix') cpuRow.target = 'information: the figure to compare between boxes';
    rows.push(rpsRow, p50Row, p99Row, cpuRow);
  }
  const bad = (r: ScenarioResults): number => Object.values(r).reduce((n, m) => n + m.non2xx + m.errors, 0);
  rows.push(
    {
      metric: 'server peak RSS (VmHWM)',
      value: rss.peak,
      unit: 'MB',
      baseline: baseRss,
      target: `≤ ${T.rssMb} MB (baseline: Koa process, PostgreSQL not counted)`,
      ok: rss.peak <= T.rssMb,
    },
    { metric: 'server RSS after start (release loaded)', value: rss.idle, unit: 'MB' },
    {
      metric: 'non-2xx or failed responses',
      value: bad(api),
      unit: 'req',
      baseline: bad(base),
      target: '0',
      ok: bad(api) === 0,
    },
    {
      metric: 'filter answers equal to baseline',
      value: same.same,
      unit: 'query',
      baseline: same.of,
      target: 'baseline column = queries compared',
    },
    {
      metric: 'baseline load (COPY + indexes)',
      value: loaded.reused ? 0 : loaded.ms / 1000,
      unit: 's',
      target: loaded.reused ? 'reused: already loaded' : '',
    },
  );
  return rows;
}

function baselineOnlyRows(base: ScenarioResults, baseRss: number): BenchRow[] {
  const rows: BenchRow[] = [];
  for (const [name, b] of Object.entries(base)) {
    rows.push(
      { metric: `baseline ${name} throughput`, value: b.rps, unit: 'req/s' },
      { metric: `baseline ${name} p50`, value: b.p50, unit: 'ms' },
      { metric: `baseline ${name} p99`, value: b.p99, unit: 'ms' },
    );
  }
  rows.push({ metric: 'baseline Koa process peak RSS', value: baseRss, unit: 'MB' });
  return rows;
}

/** The release's filter values, description words and a reproducible sample of lead ids. */
export async function releaseValues(
  leadsParquet: string,
  ids: number,
): Promise<{ values: ReleaseValues; detailIds: number[] }> {
  const db = await openDb({ threads: 2 });
  const src = `read_parquet(${sqlString(leadsParquet)})`;
  try {
    const distinct = async (expr: string): Promise<string[]> =>
      (
        await db.all<{ v: string }>(
          `SELECT DISTINCT v FROM (SELECT ${expr} AS v FROM ${src}) WHERE v IS NOT NULL ORDER BY v`,
        )
      ).map((r) => r.v);
    const words = (
      await db.all<{ w: string }>(
        `SELECT DISTINCT lower(w) AS w FROM (SELECT unnest(regexp_extract_all(description, '[A-Za-z]{4,}')) AS w
           FROM (SELECT description FROM ${src} USING SAMPLE reservoir(5000 ROWS) REPEATABLE (1))) ORDER BY w`,
      )
    ).map((r) => r.w);
    const values: ReleaseValues = {
      vertical: await distinct('unnest(verticals)'),
      authority: await distinct('planning_authority'),
      county: await distinct('county'),
      readiness: await distinct('lead_readiness'),
      status: await distinct('status'),
      use_class: await distinct('use_class'),
      scale: await distinct('scale'),
      words: words.filter((w) => !STOPWORDS.has(w)),
    };
    const sample = await db.all<{ id: number }>(
      `SELECT id FROM ${src} USING SAMPLE reservoir(${ids} ROWS) REPEATABLE (1)`,
    );
    return { values, detailIds: sample.map((r) => r.id) };
  } finally {
    db.close();
  }
}

/** Current resident set size of a process (VmRSS), in MB. */
export function vmRssMb(pid: number): number {
  const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!m) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(m[1]) / 1024;
}

/** CPU time a process has used (user + system, every thread), in ms (Linux /proc, 100 ticks/s). */
export function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/**
 * CPU time a process and every live process below it have used, in ms: the API with
 * API_WORKERS is a primary and its workers (a child's CPU reaches its parent's own figure only
 * once it has exited and been waited for, so a difference over a window needs the live tree).
 */
export function treeCpuMs(pid: number): number {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // gone meanwhile
    }
    const ppid = Number(stat.split(') ')[1]!.split(' ')[1]);
    const list = children.get(ppid);
    if (list) list.push(Number(entry));
    else children.set(ppid, [Number(entry)]);
  }
  let total = 0;
  const walk = (p: number): void => {
    try {
      total += cpuMs(p);
    } catch {
      return; // exited meanwhile
    }
    for (const c of children.get(p) ?? []) walk(c);
  };
  walk(pid);
  return total;
}

/** Peak resident set size of a process (VmHWM), in MB. */
export function vmHwmMb(pid: number): number {
  const m = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!m) throw new Error(`no VmHWM for pid ${pid}`);
  return Number(m[1]) / 1024;
}

/**
 * Start `node <args>` in `root` (with this process's loader flags, api/startup/loader-args.ts:
 * tsx under `make bench`) and resolve with the first match of `ready` on its stdout or stderr.
 */
export function startChild(
  root: string,
  args: string[],
  env: Record<string, string>,
  ready: RegExp,
  timeoutMs = 180_000,
): Promise<{ child: ChildProcess; match: RegExpExecArray }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...loaderArgs(), ...args], {
      cwd: root,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let done = false;
    const timer = setTimeout(
      () => finish(new Error(`${args.join(' ')} did not start within ${timeoutMs / 1000} s:\n${out.slice(-2000)}`)),
      timeoutMs,
    );
    const finish = (err: Error | null, match?: RegExpExecArray): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      if (err) {
        child.kill('SIGKILL');
        reject(err);
      } else resolve({ child, match: match! });
    };
    const onData = (d: Buffer): void => {
      if (done) return; // keep draining the pipes, but stop collecting once up
      out += d.toString();
      const m = ready.exec(out);
      if (m) finish(null, m);
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.on('exit', (code) => finish(new Error(`${args.join(' ')} exited with ${code}:\n${out.slice(-2000)}`)));
  });
}

export function stopChild(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    const kill = setTimeout(() => child.kill('SIGKILL'), 15_000);
    child.once('exit', () => {
      clearTimeout(kill);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

export function cli(root: string, args: string[], env: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    const c = spawn(process.execPath, ['bin/leads.js', ...args], { cwd: root, env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    c.stdout.on('data', (d) => (stdout += d));
    c.stderr.on('data', (d) => (stderr += d));
    c.on('exit', (code) =>
      code === 0
        ? resolve(stdout)
        : reject(new Error(`leads ${args.join(' ')} failed (${code}): ${stderr.slice(-1000)}`)),
    );
  });
}
