/**
 * `make bench`: speed and memory of the product at the default scale, each measured side by
 * side with a baseline taken in the same run. Prints a table and writes
 * bench/results/<section>-<timestamp>.json plus bench/results/latest.json.
 *
 *   node --import tsx bench/run.ts [--only refresh|api|access|webhooks|exports|events|geo-tiles|geo-search|compression|ceiling|growth|engine] [--scale default|small|…] [--seconds 10] [--against REF]
 *
 * `--against REF` (a git commit or branch) also runs the api section's scenarios on the API as it
 * was at REF — extracted with `git archive` into .tmp/against-<sha>/, sharing node_modules — on the
 * same release and workload, and adds a `… vs REF` row per scenario: a refactoring keeps list mix,
 * `q` and detail throughput within 10% of the code before it, measured side by side in one run
 * (five back-to-back pairs per scenario, the median of their ratios: bench/api.ts `againstRows`).
 * In the refresh section it also builds the same raw files with REF's code and compares the two
 * releases table by table (bench/release-diff.ts): a faster refresh publishes the same release.
 *
 * Sections:
 *   refresh — full refresh of the default dataset in a child process (wall time, peak RSS,
 *             rows/s per stage) against the floor: DuckDB alone reading the same raw CSVs; the
 *             analytics stage against DuckDB just reading the published sales.
 *   api     — the HTTP API on that release under load (bench/api.ts) against a plain Koa + pg
 *             baseline over PostgreSQL (bench/baseline-pg.ts); --seconds per scenario.
 *   access  — per-request overhead of auth + rate limits + budgets + usage ledger against the
 *             same endpoint with them off, and ledger throughput at 16 connections on SQLite
 *             and PostgreSQL (bench/access.ts), on a small release of its own; --seconds per run.
 *   webhooks — dispatch of a small release's ~10,000 new leads to 100 webhooks on a local
 *             receiver (bench/webhooks.ts): plan and send time, deliveries/s. Needs no 200k dataset.
 *   exports — full JSON Lines / CSV exports over HTTP against DuckDB's own COPY, GeoJSON pages,
 *             /v1/leads p99 during four exports (bench/exports.ts).
 *   events  — a full week's walk of the event feed against the JSON Lines export of the same
 *             release (rows/s each), on two weekly releases of its own (bench/events.ts).
 *   geo-tiles — vector tiles at zooms 6, 10, 14 against PostGIS ST_AsMVT on the same leads with
 *             GiST indexes (bench/geo-tiles.ts, set-up in bench/postgis.ts: installs
 *             postgresql-15-postgis-3 when missing); --seconds per zoom.
 *   geo-search — nearby search at 1 km and 10 km (`near`, `radius_m`) and area search with a
 *             ~200-vertex county outline (`POST /v1/leads/search`) against PostGIS ST_DWithin on
 *             geography / ST_Intersects with GiST indexes on the same leads, each page 25 rows in
 *             the API's default order with the total (bench/geo-search.ts; the PostGIS peer in
 *             bench/postgis.ts); totals compared first; --seconds per scenario. Until the API has
 *             geo search it says so and reports the PostGIS side only.
 *   ceiling — the list page with the access model on against a bare Koa process sending the same
 *             recorded bytes (≥ 0.3×), repeated against varied queries, the API's peak RSS
 *             (bench/ceiling.ts).
 *   growth  — only with `--only growth [--scale N]` (N× the default data, default 5): refresh
 *             time and peak RSS, server start and list mix at N× against 1× in the same run
 *             (bench/growth.ts).
 *   engine  — only with `--only engine [--against REF] [--scale 5x]`: the leads engine alone in this
 *             process on the growth section's queries, µs a query by kind; with `--against`, REF's
 *             engine beside it on the same indexes, the two taking turns (bench/engine.ts).
 *   compression — bytes and server CPU per request of a 100-lead page and a 1,000-feature GeoJSON
 *             page asked for with Accept-Encoding identity (the baseline), gzip and br, on the
 *             access section's small release (bench/compression.ts).
 */
import { execFileSync, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { openDb, sqlString } from '../pipeline/lib/duckdb.ts';
import { generateRaw, SCALES } from '../pipeline/synth/generate.ts';
import { apiBench, type BenchRow as Row } from './api.ts';
import { webhooksBench } from './webhooks.ts';
import { accessBench } from './access.ts';
import { exportsBench } from './exports.ts';
import { eventsBench } from './events.ts';
import { geoTilesBench } from './geo-tiles.ts';
import { geoSearchBench } from './geo-search.ts';
import { compareReleases } from './release-diff.ts';
import { compressionBench } from './compression.ts';
import { ceilingBench } from './ceiling.ts';
import { growthBench } from './growth.ts';
import { engineBench } from './engine.ts';

const ROOT = new URL('..', import.meta.url).pathname;
const RESULTS = join(ROOT, 'bench', 'results');

const { values } = parseArgs({
  options: {
    only: { type: 'string' },
    scale: { type: 'string', default: 'default' },
    seconds: { type: 'string', default: '10' },
    against: { type: 'string' },
  },
});
const scale = SCALES[values.scale as keyof typeof SCALES] ?? Number(values.scale);
const benchData = join(ROOT, 'data', `bench-${values.scale}`);

const sections: Record<string, () => Promise<Row[]>> = {
  async refresh() {
    const raw = join(benchData, 'raw');
    if (!existsSync(join(raw, 'planning'))) {
      const t = performance.now();
      await generateRaw({ outDir: raw, scale, seed: 1, week: 1 });
      console.error(`generated the ${values.scale} raw dataset in ${((performance.now() - t) / 1000).toFixed(1)} s`);
    }
    // floor: DuckDB alone reading every raw CSV. DuckDB cannot decode Windows-1252, so the PPR
    // files are first re-encoded to UTF-8 copies (not timed): the floor is pure CSV reading.
    const utf8 = join(benchData, 'ppr-utf8');
    mkdirSync(utf8, { recursive: true });
    for (const f of readdirSync(join(raw, 'ppr'))) {
      const dec = new TextDecoder('windows-1252');
      writeFileSync(join(utf8, f), dec.decode(readFileSync(join(raw, 'ppr', f)), { stream: true }) + dec.decode());
    }
    const db = await openDb();
    const f0 = performance.now();
    let floorRows = 0;
    // one folder per source (the raw folder also holds files, e.g. the fetch log)
    for (const source of readdirSync(raw, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name)
      .sort()) {
      const dir = source === 'ppr' ? utf8 : join(raw, source);
      for (const f of readdirSync(dir).filter((x) => x.endsWith('.csv'))) {
        const [r] = await db.all<{ n: number }>(
          `SELECT count(*)::BIGINT AS n FROM (SELECT * FROM read_csv(${sqlString(join(dir, f))}, all_varchar = true, strict_mode = false, ignore_errors = true))`,
        );
        floorRows += r!.n;
      }
    }
    const floorMs = performance.now() - f0;
    db.close();
    // the real thing, in a child process so its peak RSS is its own
    const child = await runChild(['bin/leads.js', 'refresh', '--force', '--json', '--quiet'], {
      DATA_DIR: benchData,
      RAW_DIR: raw,
    });
    if (child.code !== 0) throw new Error(`refresh failed: ${child.stderr.slice(-2000)}`);
    const s = JSON.parse(child.stdout) as {
      wallMs: number;
      peakRssMb: number;
      releaseBytes: number | null;
      counts: Record<string, number>;
      stages: Record<string, { ms: number; rows: number; rows_per_s: number }>;
    };
    const rows: Row[] = [
      {
        metric: 'refresh wall time (vs DuckDB reading the raw files)',
        value: s.wallMs / 1000,
        unit: 's',
        baseline: floorMs / 1000,
        target: '≤ 10× baseline',
        ok: s.wallMs <= 10 * floorMs,
      },
      { metric: 'refresh peak RSS', value: s.peakRssMb, unit: 'MB', target: '≤ 2048 MB', ok: s.peakRssMb <= 2048 },
      // issue 17.6: the default release was 746–772 MB (MiB) with the leads GeoJSON stored twice; target ≥ 40% smaller
      {
        metric: 'release size on disk',
        value: (s.releaseBytes ?? 0) / 1048576,
        unit: 'MB',
        baseline: 746,
        target: '≤ 60% of 746 MB',
        ok: s.releaseBytes !== null && (s.releaseBytes / 1048576 <= 0.6 * 746 || scale < 1),
      },
      { metric: 'raw rows read (floor: DuckDB count)', value: floorRows, unit: 'rows' },
      {
        metric: 'leads published',
        value: s.counts['leads'] ?? 0,
        unit: 'rows',
        target: '≥ 200,000',
        ok: (s.counts['leads'] ?? 0) >= 200_000 || scale < 1,
      },
      { metric: 'sales published', value: s.counts['sales'] ?? 0, unit: 'rows' },
      { metric: 'records total', value: s.counts['records_total'] ?? 0, unit: 'rows' },
    ];
    // the analytics stage beside the floor of its work: DuckDB just reading the published sales
    const sdb = await openDb();
    const r0 = performance.now();
    await sdb.run(
      `CREATE TEMP TABLE sales_read AS SELECT * FROM read_parquet(${sqlString(join(benchData, 'current', 'sales.parquet'))})`,
    );
    const readMs = performance.now() - r0;
    sdb.close();
    const analyticsMs = s.stages['analytics']?.ms;
    if (analyticsMs !== undefined) {
      rows.push({
        metric: 'analytics stage (baseline: read sales)',
        value: analyticsMs / 1000,
        unit: 's',
        baseline: readMs / 1000,
        target: '≤ 10× baseline',
        ok: analyticsMs <= 10 * readMs,
      });
    }
    for (const [name, st] of Object.entries(s.stages)) {
      rows.push({
        metric: `stage ${name}`,
        value: st.ms / 1000,
        unit: 's',
        baseline: st.rows_per_s,
        target: 'baseline column = rows/s',
      });
    }
    if (values.against) rows.push(...(await sameReleaseAs(checkoutOf(values.against), raw)));
    return rows;
  },
  api: () =>
    apiBench({
      root: ROOT,
      benchData,
      seconds: Number(values.seconds),
      connections: 16,
      ...(values.against ? { against: checkoutOf(values.against) } : {}),
    }),
  webhooks: () => webhooksBench({ root: ROOT }),
  access: () => accessBench({ root: ROOT, seconds: Math.min(Number(values.seconds), 10), connections: 16 }),
  exports: () => exportsBench({ root: ROOT, benchData }),
  events: () => eventsBench({ root: ROOT, dataDir: join(ROOT, 'data', `bench-${values.scale}-weeks`), scale }),
  'geo-tiles': () => geoTilesBench({ root: ROOT, benchData, seconds: Number(values.seconds), connections: 16 }),
  compression: () => compressionBench({ root: ROOT }),
  ceiling: () => ceilingBench({ root: ROOT, benchData, seconds: Number(values.seconds), connections: 16 }),
  // `--scale N` here is the multiple of the default data (default 5); run only when asked for (`--only growth`)
  growth: () =>
    growthBench({
      root: ROOT,
      scale: values.scale === 'default' ? 5 : scale,
      seconds: Number(values.seconds),
      connections: 16,
    }),
  'geo-search': () => geoSearchBench({ root: ROOT, benchData, seconds: Number(values.seconds), connections: 16 }),
  // the engine alone, on `data/bench-<scale>` (e.g. --scale 5x, the growth section's 5× data)
  engine: () =>
    engineBench({
      root: ROOT,
      benchData,
      valuesData: join(ROOT, 'data', 'bench-default'),
      ...(values.against ? { against: checkoutOf(values.against) } : {}),
    }),
};

/**
 * `--against REF` in the refresh section: the same raw files built by REF's code (its own data
 * folder beside the bench's) on top of the same previous release — the one the bench's own refresh
 * built on, copied in as its `current` — and the two releases compared table by table
 * (bench/release-diff.ts): ids, changes and events depend on the previous release. Its wall time
 * and peak RSS are printed too, measured the same way.
 */
async function sameReleaseAs(against: { root: string; label: string }, raw: string): Promise<Row[]> {
  const dataDir = `${benchData}-against`;
  rmSync(dataDir, { recursive: true, force: true });
  mkdirSync(join(dataDir, 'releases'), { recursive: true });
  const built = JSON.parse(readFileSync(join(benchData, 'current', 'manifest.json'), 'utf8')) as {
    previous_release: string | null;
  };
  if (built.previous_release) {
    cpSync(join(benchData, 'releases', built.previous_release), join(dataDir, 'releases', built.previous_release), {
      recursive: true,
    });
    symlinkSync(join('releases', built.previous_release), join(dataDir, 'current'));
  }
  const child = await runChild([join(against.root, 'bin/leads.js'), 'refresh', '--force', '--json', '--quiet'], {
    DATA_DIR: dataDir,
    RAW_DIR: raw,
  });
  if (child.code !== 0) throw new Error(`refresh at ${against.label} failed: ${child.stderr.slice(-2000)}`);
  const s = JSON.parse(child.stdout) as { wallMs: number; peakRssMb: number };
  const d = await compareReleases(join(benchData, 'current'), join(dataDir, 'current'));
  for (const line of d.differing) console.error(`differs from ${against.label}: ${line}`);
  return [
    { metric: `refresh wall time at ${against.label}`, value: s.wallMs / 1000, unit: 's' },
    { metric: `refresh peak RSS at ${against.label}`, value: s.peakRssMb, unit: 'MB' },
    {
      metric: `release files equal to ${against.label}'s`,
      value: d.files - d.differing.length,
      unit: 'files',
      baseline: d.files,
      target: 'all (tables by rows, other files by bytes)',
      ok: d.differing.length === 0,
    },
  ];
}

/** The tree of a git commit, extracted once under .tmp/ and sharing this checkout's node_modules. */
function checkoutOf(ref: string): { root: string; label: string } {
  const sha = execFileSync('git', ['rev-parse', '--verify', `${ref}^{commit}`], { cwd: ROOT, encoding: 'utf8' }).trim();
  const root = join(ROOT, '.tmp', `against-${sha.slice(0, 12)}`);
  if (!existsSync(join(root, 'api', 'server.ts'))) {
    rmSync(root, { recursive: true, force: true });
    mkdirSync(root, { recursive: true });
    execFileSync('sh', ['-c', `git archive ${sha} | tar -x -C ${JSON.stringify(root)}`], { cwd: ROOT });
    symlinkSync(join(ROOT, 'node_modules'), join(root, 'node_modules'));
  }
  return { root, label: sha.startsWith(ref) ? sha.slice(0, 7) : `${ref} (${sha.slice(0, 7)})` };
}

function runChild(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const c = spawn(process.execPath, args, { cwd: ROOT, env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    c.stdout.on('data', (d) => (stdout += d));
    c.stderr.on('data', (d) => (stderr += d));
    c.on('exit', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

function printTable(section: string, rows: Row[]): void {
  console.log(`\n## ${section}\n`);
  console.log(`${'metric'.padEnd(40)} ${'value'.padStart(12)} ${'unit'.padEnd(6)} ${'baseline'.padStart(12)}  target`);
  for (const r of rows) {
    const fmt = (n: number | undefined): string =>
      n === undefined ? '' : n >= 1000 ? Math.round(n).toLocaleString('en-IE') : n.toFixed(2);
    const status = r.ok === undefined ? '' : r.ok ? ' ✓' : ' ✗';
    console.log(
      `${r.metric.padEnd(40)} ${fmt(r.value).padStart(12)} ${r.unit.padEnd(6)} ${fmt(r.baseline).padStart(12)}  ${r.target ?? ''}${status}`,
    );
  }
}

mkdirSync(RESULTS, { recursive: true });
const stamp = new Date()
  .toISOString()
  .replace(/[-:]/g, '')
  .replace(/\.\d+Z$/, 'Z');
const all: Record<string, Row[]> = {};
for (const [name, fn] of Object.entries(sections)) {
  // growth takes minutes and GBs, engine is a tool for engine changes: only when asked
  if (values.only ? values.only !== name : name === 'growth' || name === 'engine') continue;
  const rows = await fn();
  all[name] = rows;
  printTable(name, rows);
  writeFileSync(
    join(RESULTS, `${name}-${stamp}.json`),
    JSON.stringify({ section: name, scale: values.scale, at: stamp, rows }, null, 2),
  );
}
writeFileSync(
  join(RESULTS, 'latest.json'),
  JSON.stringify(
    { at: stamp, scale: values.scale, machine: { cpus: (await import('node:os')).cpus().length }, sections: all },
    null,
    2,
  ),
);
