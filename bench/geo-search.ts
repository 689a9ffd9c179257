/**
 * `make bench` section `geo-search` (issue 17.1): nearby and area search — the API
 * (`GET /v1/leads?near=lat,lon&radius_m=M`, `POST /v1/leads/search` {"polygon": …}; an ent_api
 * key, access limits off) against PostGIS over the same leads with GiST indexes (bench/postgis.ts:
 * `ST_DWithin` on geography for nearby, `ST_Intersects` on the 4326 geometry for areas, each page
 * the API's default order — received_date desc, id desc — 25 rows with the total count and the
 * lead columns, behind a minimal HTTP server), 16 connections, --seconds per scenario.
 *
 * Scenarios:
 *   nearby 1 km, nearby 10 km — centres drawn from the release's own lead coordinates (seeded,
 *                               the same list for both sides), so busy areas are asked most;
 *   polygon (county)          — a ~200-vertex outline around each of a few mid-sized counties'
 *                               leads (`countyOutline`, computed at set-up from the release),
 *                               sent to the API as `POST /v1/leads/search` (too long for a URL)
 *                               and to PostGIS as the same GeoJSON.
 * Before measuring, a correctness check: for a few centres per radius and every polygon the
 * API's `total` must equal PostGIS's (and the page ids are compared too); a mismatch is logged
 * loudly and marks every API row ✗ — a bench of wrong answers is worthless. While the API has no
 * geo search (`near` answered 400) the section says so and reports the PostGIS side only.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { openDb, sqlString } from '../pipeline/lib/duckdb.ts';
import {
  API_AS_DEPLOYED,
  loadServer,
  prng,
  startApi,
  startChild,
  stopChild,
  type ApiBenchOptions,
  type BenchRow,
  type Measured,
} from './api.ts';
import { loadBaseline, PG_URL_DEFAULT } from './baseline-pg.ts';
import { LOAD_WARMUP } from './load.ts';
import { ensurePostgis, loadGeoLeads } from './postgis.ts';

/** Issue 17's targets on the 2-core machine, at 16 connections. */
export const GEO_SEARCH_TARGETS = { p99Ms: 20, timesBaseline: 3 } as const;
export const NEARBY_RADII_M = [1_000, 10_000] as const;
/** Vertices of each county outline, and how many counties (ranked around the median lead count). */
export const OUTLINE_VERTICES = 200;
export const POLYGON_COUNTIES = 6;
/** Centres per radius in the workload, and how many of them the correctness check asks. */
const CENTRES = 2_000;
const CHECKED_CENTRES = 5;

/** The api section's options (one release, seconds per scenario, connections, PostgreSQL), without `against`. */
type Options = Omit<ApiBenchOptions, 'against'>;

/** A lead's position (the release's coordinates). */
export type LeadPoint = {
  id: number;
  lat: number;
  lon: number;
  county: string;
};

/** A GeoJSON Polygon, [lon, lat] positions, the ring closed. */
export interface GeoJsonPolygon {
  type: 'Polygon';
  coordinates: [number, number][][];
}

/** One request of a scenario, relative to the leads resource of each side. */
interface GeoRequest {
  method: 'GET' | 'POST';
  /** Appended to the leads path (`/v1/leads` or `/leads`): `?near=…` for GET, `/search` for POST. */
  suffix: string;
  body?: string;
}

interface Scenario {
  name: string;
  requests: GeoRequest[];
  /** The requests whose answers are compared before measuring. */
  checked: GeoRequest[];
}

interface Side {
  name: 'api' | 'api, 1 process' | 'postgis';
  origin: string;
  leads: string;
  headers: Record<string, string>;
  pid: number;
}

/**
 * A county-sized outline holding every one of `points`: `vertices` rays from their mean position
 * at equal angles (longitude scaled by cos(latitude), so the angles are even on the ground); the
 * vertex on each ray lies beyond the farthest point of the two sectors beside it, by 1/cos(half
 * a sector) so the edge between two vertices passes outside both sectors' points, and at least at
 * 5% of the farthest distance overall (an empty sector makes an inward notch, not a vertex at the
 * centre). Vertices ordered by angle around a point inside make a simple (star-shaped) polygon, so
 * the outline never self-intersects; it follows the leads' spread (concave where they thin out),
 * as a drawn territory would. Positions rounded to 6 decimals, with a margin above the rounding.
 * Null when there are no points.
 */
export function countyOutline(
  points: readonly { lat: number; lon: number }[],
  vertices = OUTLINE_VERTICES,
): GeoJsonPolygon | null {
  if (points.length === 0) return null;
  const lat0 = points.reduce((s, p) => s + p.lat, 0) / points.length;
  const lon0 = points.reduce((s, p) => s + p.lon, 0) / points.length;
  const k = Math.cos((lat0 * Math.PI) / 180);
  const sector = (2 * Math.PI) / vertices;
  // farthest distance per sector; sector s spans the angles between ray s and ray s + 1
  const far = new Float64Array(vertices);
  for (const p of points) {
    const x = (p.lon - lon0) * k;
    const y = p.lat - lat0;
    const s = Math.min(vertices - 1, Math.floor((Math.atan2(y, x) + Math.PI) / sector));
    far[s] = Math.max(far[s]!, Math.hypot(x, y));
  }
  const floor = 0.05 * Math.max(...far, 0.01);
  const coords = Array.from({ length: vertices }, (_, i): [number, number] => {
    const r = Math.max(far[i]!, far[(i + vertices - 1) % vertices]!, floor) / Math.cos(sector / 2) + 1e-5;
    const a = -Math.PI + i * sector;
    return [+(lon0 + (r * Math.cos(a)) / k).toFixed(6), +(lat0 + r * Math.sin(a)).toFixed(6)];
  });
  return { type: 'Polygon', coordinates: [[...coords, coords[0]!]] };
}

/** The release's leads with finite coordinates, by id (the same list on every run of a release). */
export async function leadPoints(leadsParquet: string): Promise<LeadPoint[]> {
  const db = await openDb({ threads: 2 });
  try {
    return await db.all<LeadPoint>(
      `SELECT CAST(id AS DOUBLE) AS id, CAST(lat AS DOUBLE) AS lat, CAST(lon AS DOUBLE) AS lon, county
       FROM read_parquet(${sqlString(leadsParquet)})
       WHERE lat IS NOT NULL AND lon IS NOT NULL AND isfinite(lat) AND isfinite(lon) ORDER BY id`,
    );
  } finally {
    db.close();
  }
}

/** The scenarios: seeded centres per radius, and the outlines of the counties ranked around the median. */
export function geoWorkload(
  points: readonly LeadPoint[],
  seed = 17,
): { scenarios: Scenario[]; counties: { county: string; leads: number; vertices: number }[] } {
  const rand = prng(seed);
  const centres = Array.from({ length: CENTRES }, () => points[Math.floor(rand() * points.length)]!);
  const scenarios: Scenario[] = NEARBY_RADII_M.map((r) => {
    const requests = centres.map((c): GeoRequest => ({
      method: 'GET',
      suffix: `?near=${c.lat},${c.lon}&radius_m=${r}`,
    }));
    return { name: `nearby ${r / 1000} km`, requests, checked: requests.slice(0, CHECKED_CENTRES) };
  });
  const byCounty = new Map<string, LeadPoint[]>();
  for (const p of points) {
    const list = byCounty.get(p.county);
    if (list) list.push(p);
    else byCounty.set(p.county, [p]);
  }
  const ranked = [...byCounty.entries()].sort((a, b) => b[1].length - a[1].length || a[0].localeCompare(b[0]));
  const from = Math.max(0, Math.floor(ranked.length / 2) - Math.floor(POLYGON_COUNTIES / 2));
  const counties: { county: string; leads: number; vertices: number }[] = [];
  const polygons: GeoRequest[] = [];
  for (const [county, pts] of ranked.slice(from)) {
    if (polygons.length === POLYGON_COUNTIES) break;
    const outline = countyOutline(pts);
    if (!outline) continue;
    counties.push({ county, leads: pts.length, vertices: outline.coordinates[0]!.length - 1 });
    polygons.push({ method: 'POST', suffix: '/search', body: JSON.stringify({ polygon: outline }) });
  }
  scenarios.push({ name: 'polygon (county)', requests: polygons, checked: polygons });
  return { scenarios, counties };
}

async function ask(side: Side, r: GeoRequest): Promise<{ status: number; body: any }> {
  const res = await fetch(side.origin + side.leads + r.suffix, {
    method: r.method,
    headers: { ...side.headers, ...(r.body ? { 'content-type': 'application/json' } : {}) },
    ...(r.body ? { body: r.body } : {}),
  });
  const text = await res.text();
  let body: any = text;
  try {
    body = JSON.parse(text);
  } catch {
    /* not JSON: kept as text for the message */
  }
  return { status: res.status, body };
}

/** The total of a list answer (`total`, or in `_meta` should the page move it there). */
const totalOf = (body: any): number | undefined => body?.total ?? body?._meta?.total;
const idsOf = (body: any): string => ((body?.results ?? []) as { id: number }[]).map((x) => x.id).join(',');

/** The correctness check of one scenario: totals (and page ids) of the API against PostGIS. */
async function check(
  s: Scenario,
  api: Side,
  peer: Side,
  log: (l: string) => void,
): Promise<{ same: number; of: number; samePages: number }> {
  let same = 0;
  let samePages = 0;
  for (const r of s.checked) {
    const [a, p] = await Promise.all([ask(api, r), ask(peer, r)]);
    if (p.status !== 200)
      throw new Error(
        `PostGIS answered ${p.status} to ${r.method} ${r.suffix.slice(0, 80)}: ${JSON.stringify(p.body).slice(0, 300)}`,
      );
    if (a.status !== 200)
      throw new Error(
        `the API answered ${a.status} to ${r.method} ${r.suffix.slice(0, 80)}: ${JSON.stringify(a.body).slice(0, 300)}`,
      );
    const [ta, tp] = [totalOf(a.body), totalOf(p.body)];
    if (ta === tp) same++;
    else
      log(`!!! MISMATCH ${s.name}: the API counts ${ta} leads, PostGIS ${tp} (${r.method} ${r.suffix.slice(0, 80)})`);
    if (idsOf(a.body) === idsOf(p.body)) samePages++;
    else
      log(
        `warning ${s.name}: page 1 differs (API ${idsOf(a.body).slice(0, 60)}… PostGIS ${idsOf(p.body).slice(0, 60)}…)`,
      );
  }
  return { same, of: s.checked.length, samePages };
}

/** Drive the scenario's requests round-robin with `connections` for `seconds` (`loadServer`, after its warm-up). */
function measure(side: Side, s: Scenario, opts: Options): Promise<Measured> {
  const post = s.requests[0]?.method === 'POST';
  const headers = { ...side.headers, ...(post ? { 'content-type': 'application/json' } : {}) };
  const requests = s.requests.map((r) => ({
    method: r.method,
    path: side.leads + r.suffix,
    ...(r.body ? { body: r.body } : {}),
  }));
  return loadServer(side.pid, {
    url: side.origin,
    connections: opts.connections,
    seconds: opts.seconds,
    warmup: LOAD_WARMUP,
    headers,
    requests,
  });
}

/** Run the geo-search section; returns the table rows. */
export async function geoSearchBench(opts: Options): Promise<BenchRow[]> {
  const log = opts.log ?? ((l: string) => void process.stderr.write(l + '\n'));
  const pgUrl = opts.pgUrl ?? PG_URL_DEFAULT;
  const releaseDir = join(opts.benchData, 'current');
  if (!existsSync(join(releaseDir, 'manifest.json')))
    throw new Error(`no release at ${releaseDir}: run the refresh section first`);
  await ensurePostgis(pgUrl, log);
  const tmpDir = join(opts.root, '.tmp');
  const geo = await loadGeoLeads({ pgUrl, releaseDir, tmpDir });
  log(
    `PostGIS: ${geo.rows.toLocaleString('en-IE')} leads in bench_geo.leads (${geo.reused ? 'already loaded' : `loaded in ${(geo.ms / 1000).toFixed(1)} s`})`,
  );
  const base = await loadBaseline({ pgUrl, releaseDir, tmpDir });
  log(
    `PostgreSQL: ${base.rows.toLocaleString('en-IE')} leads in bench_baseline.leads, the page's columns (${base.reused ? 'already loaded' : `loaded in ${(base.ms / 1000).toFixed(1)} s`})`,
  );

  const { scenarios, counties } = geoWorkload(await leadPoints(join(releaseDir, 'leads.parquet')));
  log(`polygons: ${counties.map((c) => `${c.county} (${c.leads} leads, ${c.vertices} vertices)`).join(', ')}`);

  const peerChild = await startChild(
    opts.root,
    ['bench/postgis.ts', '--port', '0', '--pg', pgUrl, '--pool', '8'],
    {},
    /^\{"port":(\d+)\}$/m,
  );
  // the API as deployed on this machine (a worker per core), and as one process for comparison
  const api = await startApi(opts.root, 'api', 'geo-search-state.sqlite', opts, log, API_AS_DEPLOYED).catch(
    async (e: Error) => {
      await stopChild(peerChild.child);
      throw e;
    },
  );
  const single = await startApi(opts.root, 'api, 1 process', 'geo-search-state-1.sqlite', opts, log).catch(
    async (e: Error) => {
      await stopChild(api.child);
      await stopChild(peerChild.child);
      throw e;
    },
  );
  const peer: Side = {
    name: 'postgis',
    origin: `http://127.0.0.1:${peerChild.match[1]}`,
    leads: '/leads',
    headers: {},
    pid: peerChild.child.pid!,
  };
  const apiSide: Side = {
    name: 'api',
    origin: api.target.origin,
    leads: api.target.leads,
    headers: { authorization: `Bearer ${api.target.key}` },
    pid: api.child.pid!,
  };
  const singleSide: Side = {
    name: 'api, 1 process',
    origin: single.target.origin,
    leads: single.target.leads,
    headers: { authorization: `Bearer ${single.target.key}` },
    pid: single.child.pid!,
  };
  const rows: BenchRow[] = [
    {
      metric: 'polygon vertices (mean)',
      value: counties.reduce((s, c) => s + c.vertices, 0) / Math.max(1, counties.length),
      unit: '',
      target: counties.map((c) => c.county).join(', '),
    },
  ];
  try {
    // does the API have geo search yet? Before issue 17.1 lands, `near` is an unknown parameter
    // (400 unknown_parameter) and POST /v1/leads/search does not exist (404 / 405); any other
    // refusal (e.g. a 400 naming the polygon) is an error of the bench or the API, not a gap
    const supported = new Map<string, string | null>();
    for (const s of scenarios) {
      const r = s.requests[0]!;
      const probe = await ask(apiSide, r);
      const what = `${r.method} ${apiSide.leads}${r.method === 'POST' ? '/search' : '?near=…'}`;
      if (probe.status === 200) supported.set(s.name, null);
      else if (
        (probe.status === 400 && probe.body?.code === 'unknown_parameter') ||
        probe.status === 404 ||
        probe.status === 405
      ) {
        supported.set(s.name, `API has no geo search yet (${probe.status} to ${what})`);
        log(`${s.name}: ${supported.get(s.name)}: ${JSON.stringify(probe.body).slice(0, 300)}`);
      } else
        throw new Error(
          `the API answered ${probe.status} to ${what} (${s.name}): ${JSON.stringify(probe.body).slice(0, 500)}`,
        );
    }
    let wrong = false;
    for (const s of scenarios) {
      if (supported.get(s.name)) continue;
      const c = await check(s, apiSide, peer, log);
      log(`${s.name}: ${c.same} of ${c.of} totals equal PostGIS's, ${c.samePages} of ${c.of} first pages`);
      if (c.same < c.of) wrong = true;
      rows.push({
        metric: `${s.name} totals equal PostGIS`,
        value: c.same,
        unit: 'of',
        baseline: c.of,
        target: 'all',
        ok: c.same === c.of,
      });
    }
    if (wrong)
      log(
        '!!! the API and PostGIS count different leads for the same area: the numbers below measure wrong answers (rows marked ✗)',
      );
    for (const s of scenarios) {
      const p = await measure(peer, s, opts);
      log(
        `postgis ${s.name}: ${p.rps.toFixed(0)} req/s, p50 ${p.p50} ms, p99 ${p.p99} ms, non-2xx ${p.non2xx}, errors ${p.errors}`,
      );
      const missing = supported.get(s.name);
      if (missing) {
        rows.push(
          { metric: `${s.name} p50 (PostGIS only)`, value: p.p50, unit: 'ms', baseline: p.p50, target: missing },
          { metric: `${s.name} p99 (PostGIS only)`, value: p.p99, unit: 'ms', baseline: p.p99, target: missing },
          {
            metric: `${s.name} throughput (PostGIS only)`,
            value: p.rps,
            unit: 'req/s',
            baseline: p.rps,
            target: missing,
          },
        );
        continue;
      }
      const a = await measure(apiSide, s, opts);
      log(
        `api ${s.name}: ${a.rps.toFixed(0)} req/s, p50 ${a.p50} ms, p99 ${a.p99} ms, non-2xx ${a.non2xx}, errors ${a.errors}`,
      );
      const one = await measure(singleSide, s, opts);
      log(
        `api, 1 process ${s.name}: ${one.rps.toFixed(0)} req/s, p50 ${one.p50} ms, p99 ${one.p99} ms, non-2xx ${one.non2xx}, errors ${one.errors}`,
      );
      const clean = !wrong && a.non2xx === 0 && a.errors === 0;
      const ratio = p.rps > 0 ? a.rps / p.rps : 0;
      rows.push(
        { metric: `${s.name} p50`, value: a.p50, unit: 'ms', baseline: p.p50 },
        {
          metric: `${s.name} p99`,
          value: a.p99,
          unit: 'ms',
          baseline: p.p99,
          target: `≤ ${GEO_SEARCH_TARGETS.p99Ms} ms`,
          ok: clean && a.p99 <= GEO_SEARCH_TARGETS.p99Ms,
        },
        { metric: `${s.name} throughput`, value: a.rps, unit: 'req/s', baseline: p.rps },
        {
          metric: `${s.name} API / PostGIS`,
          value: ratio,
          unit: '×',
          baseline: 1,
          target: `≥ ${GEO_SEARCH_TARGETS.timesBaseline}× PostGIS`,
          ok: clean && ratio >= GEO_SEARCH_TARGETS.timesBaseline,
        },
        {
          metric: `${s.name} CPU per request`,
          value: a.cpuMsPerReq,
          unit: 'ms',
          baseline: p.cpuMsPerReq,
          target: 'server processes only (PostgreSQL not counted)',
        },
        {
          metric: `${s.name} p99, API as 1 process`,
          value: one.p99,
          unit: 'ms',
          baseline: p.p99,
          target: 'for comparison',
        },
        {
          metric: `${s.name} throughput, API as 1 process`,
          value: one.rps,
          unit: 'req/s',
          baseline: p.rps,
          target: `${(p.rps > 0 ? one.rps / p.rps : 0).toFixed(2)}× PostGIS`,
        },
      );
    }
  } finally {
    await stopChild(api.child);
    await stopChild(single.child);
    await stopChild(peerChild.child);
  }
  return rows;
}
