/**
 * `make bench` section `geo-tiles` (issue 17.4): vector tiles of the leads layer at zooms 6, 10
 * and 14 — the API (`GET /v1/tiles/leads/{z}/{x}/{y}.mvt`, an ent_feed key, access limits off)
 * against PostGIS `ST_AsMVT` over the same leads with GiST indexes, clustered on the same grid
 * (bench/postgis.ts), each behind a minimal HTTP server, 16 connections, --seconds per zoom.
 * Tiles are drawn where the leads are (one random lead → its tile), so busy areas are asked
 * most, as a map's users do. Also measured in process, without any cache: building the tile
 * source and rendering each distinct tile once (whether pre-rendering in the pipeline would pay).
 */
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { openDb, sqlString } from '../pipeline/lib/duckdb.ts';
import { generateKey } from '../api/access/keys.ts';
import { openStateStore } from '../api/state/open.ts';
import { buildTileSource, renderTile, tileSourceQuery, type TileSourceRow } from '../api/gis/tiles.ts';
import {
  API_AS_DEPLOYED,
  cli,
  loadServer,
  prng,
  startChild,
  stopChild,
  type ApiBenchOptions,
  type BenchRow,
  type Measured,
} from './api.ts';
import { PG_URL_DEFAULT } from './baseline-pg.ts';
import { LOAD_WARMUP } from './load.ts';
import { ensurePostgis, loadGeoLeads } from './postgis.ts';

export const TILE_ZOOMS = [6, 10, 14] as const;
export const TILE_TARGETS = { p99Ms: 30, timesBaseline: 3 } as const;

/** The api section's options (one release, seconds per scenario, connections, PostgreSQL), without `against`. */
type Options = Omit<ApiBenchOptions, 'against'>;

const tileOf = (lon: number, lat: number, z: number): [number, number] => {
  const s = Math.sin((lat * Math.PI) / 180);
  return [
    Math.floor(((lon + 180) / 360) * 2 ** z),
    Math.floor((0.5 - Math.log((1 + s) / (1 - s)) / (4 * Math.PI)) * 2 ** z),
  ];
};

const pct = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? 0;
};

export async function geoTilesBench(opts: Options): Promise<BenchRow[]> {
  const log = opts.log ?? ((l: string) => void process.stderr.write(l + '\n'));
  const pgUrl = opts.pgUrl ?? PG_URL_DEFAULT;
  const releaseDir = join(opts.benchData, 'current');
  if (!existsSync(join(releaseDir, 'manifest.json')))
    throw new Error(`no release at ${releaseDir}: run the refresh section first`);
  await ensurePostgis(pgUrl, log);
  const loaded = await loadGeoLeads({ pgUrl, releaseDir, tmpDir: join(opts.root, '.tmp') });
  log(
    `PostGIS: ${loaded.rows.toLocaleString('en-IE')} leads in bench_geo.leads (${loaded.reused ? 'already loaded' : `loaded in ${(loaded.ms / 1000).toFixed(1)} s`})`,
  );

  // the workload, and the cold costs (in process, no cache)
  const db = await openDb({ threads: 2 });
  let rows: TileSourceRow[];
  try {
    const q = tileSourceQuery(`read_parquet(${sqlString(join(releaseDir, 'leads.parquet'))})`, 'leads');
    const t0 = performance.now();
    rows = await db.all<TileSourceRow>(q.sql);
    log(`tile source rows read in ${((performance.now() - t0) / 1000).toFixed(2)} s`);
  } finally {
    db.close();
  }
  const b0 = performance.now();
  const source = buildTileSource('leads', rows);
  const buildMs = performance.now() - b0;
  const rand = prng(17);
  const paths: Record<number, string[]> = {};
  const coldMs: Record<number, number[]> = {};
  for (const z of TILE_ZOOMS) {
    paths[z] = Array.from({ length: 4000 }, () => {
      const r = rows[Math.floor(rand() * rows.length)]!;
      const [x, y] = tileOf(r.lon, r.lat, z);
      return `${z}/${x}/${y}`;
    });
    const distinct = [...new Set(paths[z])].slice(0, 400);
    coldMs[z] = distinct.map((t) => {
      const [zz, x, y] = t.split('/').map(Number) as [number, number, number];
      const s = performance.now();
      renderTile(source, zz, x, y);
      return performance.now() - s;
    });
    log(
      `z${z}: ${new Set(paths[z]).size} distinct tiles in the workload; cold render p50 ${pct(coldMs[z], 50).toFixed(2)} ms, p99 ${pct(coldMs[z], 99).toFixed(2)} ms`,
    );
  }

  // the two servers
  const stateFile = join(opts.benchData, 'geo-state.sqlite');
  for (const suffix of ['', '-wal', '-shm']) rmSync(stateFile + suffix, { force: true });
  const stateEnv = { DATA_DIR: opts.benchData, DATABASE_URL: `file:${stateFile}` };
  await cli(opts.root, ['accounts', 'create', '--name', 'geo-bench', '--plan', 'premium', '--json'], stateEnv);
  // an ent_feed key written straight into the state store (the CLI issues them only through a licence's claim link), as bench/exports.ts does
  const store = openStateStore(stateEnv.DATABASE_URL);
  const k = generateKey('ent_feed');
  try {
    const account = (await store.getAccountByName('geo-bench'))!;
    await store.insertKey({
      id: k.id,
      account_id: account.id,
      scope: 'ent_feed',
      name: 'geo-bench',
      display_prefix: k.displayPrefix,
      hash: k.hash,
    });
  } finally {
    await store.close();
  }
  const key = k.raw;
  const out: BenchRow[] = [
    { metric: 'tile source build (in process)', value: buildMs, unit: 'ms', target: 'once per release' },
  ];
  const results: Record<'api' | 'api1' | 'postgis', Record<number, Measured>> = { api: {}, api1: {}, postgis: {} };
  const measure = async (
    name: 'api' | 'api1' | 'postgis',
    origin: string,
    prefix: string,
    headers: Record<string, string>,
    pid: number,
  ): Promise<void> => {
    for (const z of TILE_ZOOMS) {
      const r = await loadServer(pid, {
        url: origin,
        connections: opts.connections,
        seconds: opts.seconds,
        warmup: LOAD_WARMUP, // connections, JIT, the API's first build of the tile source
        headers,
        requests: paths[z]!.map((t) => ({ method: 'GET', path: `${prefix}/${t}.mvt` })),
      });
      results[name][z] = r;
      log(`${name} z${z}: ${r.rps.toFixed(0)} req/s, p50 ${r.p50} ms, p99 ${r.p99} ms, non-2xx ${r.non2xx}`);
    }
  };
  const base = await startChild(
    opts.root,
    ['bench/postgis.ts', '--port', '0', '--pg', pgUrl, '--pool', '8'],
    {},
    /^\{"port":(\d+)\}$/m,
  );
  try {
    await measure('postgis', `http://127.0.0.1:${base.match[1]}`, '/tiles/leads', {}, base.child.pid!);
  } finally {
    await stopChild(base.child);
  }
  for (const [name, env] of [
    ['api', API_AS_DEPLOYED],
    ['api1', {}],
  ] as const) {
    const api = await startChild(
      opts.root,
      ['api/server.ts'],
      { ...stateEnv, PORT: '0', HOST: '127.0.0.1', ACCESS_LIMITS: 'off', ...env },
      /listening on (\S+)\/v1/,
    );
    try {
      await measure(name, api.match[1]!, '/v1/tiles/leads', { authorization: `Bearer ${key}` }, api.child.pid!);
    } finally {
      await stopChild(api.child);
    }
  }
  for (const z of TILE_ZOOMS) {
    const a = results.api[z]!;
    const one = results.api1[z]!;
    const p = results.postgis[z]!;
    out.push(
      {
        metric: `tiles z${z} cold render p99 (in process)`,
        value: pct(coldMs[z]!, 99),
        unit: 'ms',
        baseline: pct(coldMs[z]!, 50),
        target: 'baseline column = p50',
      },
      { metric: `tiles z${z} p50`, value: a.p50, unit: 'ms', baseline: p.p50 },
      {
        metric: `tiles z${z} p99`,
        value: a.p99,
        unit: 'ms',
        baseline: p.p99,
        target: `≤ ${TILE_TARGETS.p99Ms} ms`,
        ok: a.p99 <= TILE_TARGETS.p99Ms && a.non2xx === 0,
      },
      {
        metric: `tiles z${z} throughput`,
        value: a.rps,
        unit: 'req/s',
        baseline: p.rps,
        target: `≥ ${TILE_TARGETS.timesBaseline}× PostGIS`,
        ok: a.rps >= TILE_TARGETS.timesBaseline * p.rps,
      },
      {
        metric: `tiles z${z} CPU per request`,
        value: a.cpuMsPerReq,
        unit: 'ms',
        baseline: p.cpuMsPerReq,
        target: 'server processes only (PostgreSQL not counted)',
      },
      {
        metric: `tiles z${z} p99, API as 1 process`,
        value: one.p99,
        unit: 'ms',
        baseline: p.p99,
        target: 'for comparison',
      },
      {
        metric: `tiles z${z} throughput, API as 1 process`,
        value: one.rps,
        unit: 'req/s',
        baseline: p.rps,
        target: `${(p.rps > 0 ? one.rps / p.rps : 0).toFixed(2)}× PostGIS`,
      },
    );
  }
  return out;
}
