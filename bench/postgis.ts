/**
 * The PostGIS peer of the geo benchmarks (issue 17): PostgreSQL 15 with PostGIS 3 and GiST
 * indexes, as the planning-data APIs customers compare us with run on. Reusable by any geo
 * section (tiles here; nearby / polygon search can use the same table):
 *
 * - `ensurePostgis(pgUrl)`: installs Debian's `postgresql-15-postgis-3` when missing (apt-get,
 *   needs root) and runs `CREATE EXTENSION IF NOT EXISTS postgis` in the bench database;
 * - `loadGeoLeads({ pgUrl, releaseDir, tmpDir })`: the release's leads with coordinates in
 *   `bench_geo.leads` — id, the tile fields (`received_date` among them), `geom` (Point, 4326), `geom_3857`
 *   (Web Mercator) and `geog` (geography, metres), a GiST index on each — reloaded only when the
 *   release (or this table's layout) changes;
 * - `postgisTileQuery()`: one tile with `ST_AsMVT`, clustered on the same 32-pixel grid as the
 *   API at zooms 0–12, every lead a point beyond;
 * - `postgisNearbyQuery(columns)` / `postgisPolygonQuery(columns)`: one page of a nearby or area
 *   search (bench/geo-search.ts) — the API's default order (received_date desc, id desc), 25 rows
 *   with the total count, the page's columns read from `bench_baseline.leads` (bench/baseline-pg.ts);
 * - as a script, a minimal HTTP server over those queries (the baseline the API is measured
 *   against): `node --import tsx bench/postgis.ts --port 0 [--pg URL] [--pool 8]` prints {"port":N}.
 *   `GET /tiles/leads/{z}/{x}/{y}.mvt`; `GET /leads?near=lat,lon&radius_m=M` and
 *   `GET /leads?polygon=<GeoJSON>` / `POST /leads/search` {"polygon": …} or {"near", "radius_m"}
 *   answer `{ total, page, page_size, next_cursor, results }` as the API's list does.
 */
import { execFile } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs, promisify } from 'node:util';
import pg from 'pg';
import { openDb, sqlString } from '../pipeline/lib/duckdb.ts';
import { CLUSTER_CELL_PX, CLUSTER_MAX_ZOOM, TILE_BUFFER, TILE_EXTENT, tileFields } from '../api/gis/tiles.ts';
import { BASELINE_SCHEMA, loadedRelease, PG_URL_DEFAULT, releaseIdOf } from './baseline-pg.ts';

const run = promisify(execFile);
export const GEO_SCHEMA = 'bench_geo';
/** Layout of `bench_geo.leads`, recorded with the release id: a table loaded by older bench code is reloaded. */
const GEO_LAYOUT = 'geog-1';
/** Page size of the geo search pages (the API's default `page_size`). */
export const GEO_PAGE_SIZE = 25;

/** Install PostGIS if missing and enable it in the database of `pgUrl`. */
export async function ensurePostgis(pgUrl: string, log: (l: string) => void = () => {}): Promise<void> {
  const installed = await run('dpkg-query', ['-W', '-f=${Status}', 'postgresql-15-postgis-3']).then(
    (r) => r.stdout.includes('install ok installed'),
    () => false,
  );
  if (!installed) {
    log('installing postgresql-15-postgis-3 (apt-get)…');
    await run('apt-get', ['install', '-y', 'postgresql-15-postgis-3'], {
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
      maxBuffer: 1 << 26,
    });
  }
  const client = new pg.Client({ connectionString: pgUrl });
  await client.connect();
  try {
    await client.query('CREATE EXTENSION IF NOT EXISTS postgis');
  } finally {
    await client.end();
  }
}

/** Load the release's leads with coordinates into `bench_geo.leads` (skipped when that release is loaded already). */
export async function loadGeoLeads(opts: {
  pgUrl: string;
  releaseDir: string;
  tmpDir: string;
}): Promise<{ rows: number; ms: number; reused: boolean }> {
  const t0 = performance.now();
  const releaseId = `${releaseIdOf(opts.releaseDir)} ${GEO_LAYOUT}`;
  const client = new pg.Client({ connectionString: opts.pgUrl });
  await client.connect();
  try {
    const have = await loadedRelease(client, GEO_SCHEMA);
    if (have?.release_id === releaseId) return { rows: have.rows, ms: performance.now() - t0, reused: true };
    const fields = tileFields('leads');
    mkdirSync(opts.tmpDir, { recursive: true });
    const csv = join(opts.tmpDir, 'geo-leads.csv');
    const db = await openDb({ threads: 2 });
    try {
      await db.run(
        `COPY (SELECT t.id, round(CAST(t.lon AS DOUBLE), 6) AS lon, round(CAST(t.lat AS DOUBLE), 6) AS lat, ${fields.map((f) => `${f.sql} AS "${f.name}"`).join(', ')}
               FROM read_parquet(${sqlString(join(opts.releaseDir, 'leads.parquet'))}) AS t
               WHERE t.lat IS NOT NULL AND t.lon IS NOT NULL AND isfinite(t.lat) AND isfinite(t.lon))
         TO ${sqlString(csv)} (FORMAT CSV, HEADER false)`,
      );
    } finally {
      db.close();
    }
    const cols = fields.map((f) => `${f.name} ${f.type === 'Number' ? 'double precision' : 'text'}`);
    await client.query(`DROP SCHEMA IF EXISTS ${GEO_SCHEMA} CASCADE`);
    await client.query(`CREATE SCHEMA ${GEO_SCHEMA}`);
    await client.query(
      `CREATE TABLE ${GEO_SCHEMA}.leads (id bigint PRIMARY KEY, lon double precision, lat double precision, ${cols.join(', ')})`,
    );
    await run('psql', [
      opts.pgUrl,
      '-v',
      'ON_ERROR_STOP=1',
      '-c',
      `\\copy ${GEO_SCHEMA}.leads (id, lon, lat, ${fields.map((f) => f.name).join(', ')}) FROM ${JSON.stringify(csv).replace(/"/g, "'")} WITH (FORMAT csv)`,
    ]);
    await client.query(
      `ALTER TABLE ${GEO_SCHEMA}.leads ADD COLUMN geom geometry(Point, 4326), ADD COLUMN geom_3857 geometry(Point, 3857), ADD COLUMN geog geography(Point, 4326)`,
    );
    await client.query(
      `UPDATE ${GEO_SCHEMA}.leads SET geom = ST_SetSRID(ST_MakePoint(lon, lat), 4326), geom_3857 = ST_Transform(ST_SetSRID(ST_MakePoint(lon, lat), 4326), 3857), geog = ST_SetSRID(ST_MakePoint(lon, lat), 4326)::geography`,
    );
    await client.query(`CREATE INDEX ON ${GEO_SCHEMA}.leads USING gist (geom)`);
    await client.query(`CREATE INDEX ON ${GEO_SCHEMA}.leads USING gist (geom_3857)`);
    await client.query(`CREATE INDEX ON ${GEO_SCHEMA}.leads USING gist (geog)`);
    await client.query(`VACUUM ANALYZE ${GEO_SCHEMA}.leads`);
    const [{ n }] = (await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${GEO_SCHEMA}.leads`)).rows as [
      { n: number },
    ];
    await client.query(`CREATE TABLE ${GEO_SCHEMA}.meta (release_id text, rows int)`);
    await client.query(`INSERT INTO ${GEO_SCHEMA}.meta VALUES ($1, $2)`, [releaseId, n]);
    return { rows: n, ms: performance.now() - t0, reused: false };
  } finally {
    await client.end();
  }
}

/**
 * One tile of the leads as MVT (bytea), $1 = z, $2 = x, $3 = y: the points of the tile and its
 * buffer through `ST_AsMVTGeom`; at zooms ≤ 12 grouped on a grid of 32-pixel cells first (the
 * cluster's centroid and `point_count`; a cell of one lead is the lead with its fields).
 */
export function postgisTileQuery(): string {
  const fields = tileFields('leads').map((f) => f.name);
  const bufferM = `(ST_XMax(ST_TileEnvelope($1, $2, $3)) - ST_XMin(ST_TileEnvelope($1, $2, $3))) * ${TILE_BUFFER / TILE_EXTENT}`;
  const cell = `(40075016.68557849 / (2 ^ $1 * ${256 / CLUSTER_CELL_PX}))`;
  return `
    WITH box AS (SELECT ST_TileEnvelope($1, $2, $3) AS env),
    pts AS (
      SELECT l.* FROM ${GEO_SCHEMA}.leads l, box WHERE l.geom_3857 && ST_Expand(box.env, ${bufferM})
    ),
    feats AS (
      SELECT id, geom_3857 AS g, false AS cluster, 1 AS point_count, ${fields.join(', ')} FROM pts WHERE $1 > ${CLUSTER_MAX_ZOOM}
      UNION ALL
      SELECT CASE WHEN count(*) = 1 THEN min(id) END, ST_Centroid(ST_Collect(geom_3857)), count(*) > 1, count(*)::int,
             ${fields.map((f) => `CASE WHEN count(*) = 1 THEN min(${f}) END`).join(', ')}
      FROM pts WHERE $1 <= ${CLUSTER_MAX_ZOOM}
      GROUP BY floor((ST_X(geom_3857) + 20037508.342789244) / ${cell}), floor((20037508.342789244 - ST_Y(geom_3857)) / ${cell})
    )
    SELECT ST_AsMVT(q, 'leads', ${TILE_EXTENT}, 'g', 'id') AS mvt FROM (
      SELECT ST_AsMVTGeom(g, box.env, ${TILE_EXTENT}, ${TILE_BUFFER}, true) AS g, id, cluster, point_count, ${fields.join(', ')} FROM feats, box
    ) q`;
}

/** The geo search page's order: the API's default (`newest`: received_date desc, id desc; `received_date` is ISO text here, so text order is date order). */
const GEO_ORDER = 'g.received_date DESC, g.id DESC';

/**
 * One page of the leads matching `where` (over `bench_geo.leads g`), in the API's default order,
 * with the total count (`count(*) OVER ()`, as the API's page reports `total`) and the page's
 * columns from `bench_baseline.leads`; `extra` adds computed columns (e.g. `distance_m`).
 */
function geoPageQuery(columns: readonly string[], where: string, extra = ''): string {
  return `
    SELECT t.total::int AS _total${extra}, ${columns.map((c) => `b.${c}`).join(', ')}
    FROM (SELECT g.id, g.received_date, g.geog, count(*) OVER () AS total FROM ${GEO_SCHEMA}.leads g WHERE ${where} ORDER BY ${GEO_ORDER} LIMIT ${GEO_PAGE_SIZE}) t
    JOIN ${BASELINE_SCHEMA}.leads b ON b.id = t.id
    ORDER BY t.received_date DESC, t.id DESC`;
}

/** The centre of a nearby query as geography: $1 = lat, $2 = lon (the API's `near=lat,lon` order). */
const CENTRE = 'ST_SetSRID(ST_MakePoint($2, $1), 4326)::geography';

/**
 * Nearby page, $1 = lat, $2 = lon, $3 = radius in metres: `ST_DWithin` on geography with
 * `use_spheroid = false` — the great-circle distance on PostGIS's sphere (R = 6,371,008.77 m, the
 * API's haversine uses 6,371,008.8 m: 0.05 mm apart at 10 km), ≤ radius (edge inclusive, as the
 * API), through the GiST index on `geog`; `distance_m` on each row as the API adds it.
 */
export function postgisNearbyQuery(columns: readonly string[]): string {
  return geoPageQuery(
    columns,
    `ST_DWithin(g.geog, ${CENTRE}, $3, false)`,
    `, round(ST_Distance(t.geog, ${CENTRE}, false)::numeric, 1)::float8 AS distance_m`,
  );
}

/**
 * Area page, $1 = a GeoJSON Polygon or MultiPolygon (lon/lat): `ST_Intersects` on the 4326
 * geometry (planar in degrees as the API's point-in-polygon; a point on the boundary is inside,
 * holes honoured) through the GiST index on `geom`.
 */
export function postgisPolygonQuery(columns: readonly string[]): string {
  return geoPageQuery(columns, `ST_Intersects(g.geom, ST_SetSRID(ST_GeomFromGeoJSON($1), 4326))`);
}

/** The parameters of a geo search (query string or JSON body): a nearby circle or an area. */
type GeoSearch = { near: [number, number]; radiusM: number } | { polygon: string };

/** Read `near` + `radius_m` or `polygon` from the request (GET query or POST JSON body); null when neither is usable. */
export function geoSearchOf(params: Record<string, unknown>): GeoSearch | null {
  const near = params['near'];
  if (typeof near === 'string') {
    const [lat, lon] = near.split(',').map(Number);
    const radiusM = Number(params['radius_m'] ?? 1000);
    if (!Number.isFinite(lat) || !Number.isFinite(lon) || !Number.isFinite(radiusM)) return null;
    return { near: [lat!, lon!], radiusM };
  }
  const polygon = params['polygon'];
  if (typeof polygon === 'string') return { polygon };
  if (polygon && typeof polygon === 'object') return { polygon: JSON.stringify(polygon) };
  return null;
}

/** The baseline server: tiles (`ST_AsMVT`, 204 when empty) and the geo search pages (JSON, as the API's list). */
async function serve(): Promise<void> {
  const { values } = parseArgs({
    options: {
      port: { type: 'string', default: '0' },
      pg: { type: 'string', default: PG_URL_DEFAULT },
      pool: { type: 'string', default: '8' },
    },
  });
  const pool = new pg.Pool({ connectionString: values.pg, max: Number(values.pool) });
  const sql = postgisTileQuery();
  // the page's columns: those of the baseline's leads table (loaded by bench/geo-search.ts; absent for the tile bench alone)
  const columns = (
    await pool.query<{ column_name: string }>(
      `SELECT column_name FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'leads' AND column_name <> 'search' ORDER BY ordinal_position`,
      [BASELINE_SCHEMA],
    )
  ).rows.map((r) => r.column_name);
  const nearbySql = columns.length ? postgisNearbyQuery(columns) : '';
  const polygonSql = columns.length ? postgisPolygonQuery(columns) : '';
  const fail = (res: ServerResponse, status: number, message: string): void =>
    void res.writeHead(status, { 'Content-Type': 'text/plain' }).end(message);
  const search = (res: ServerResponse, params: Record<string, unknown>): void => {
    const q = geoSearchOf(params);
    if (!q) return fail(res, 400, 'near (with radius_m) or polygon is required');
    if (!columns.length) return fail(res, 500, `no ${BASELINE_SCHEMA}.leads: load it first (loadBaseline)`);
    // unnamed statements, planned with the values (a generic plan of a prepared statement would parse the GeoJSON once per candidate row)
    const query =
      'near' in q
        ? { text: nearbySql, values: [q.near[0], q.near[1], q.radiusM] }
        : { text: polygonSql, values: [q.polygon] };
    pool.query<{ _total: number } & Record<string, unknown>>(query).then(
      (r) => {
        const results = r.rows.map(({ _total, ...row }) => row);
        const body = JSON.stringify({
          total: r.rows[0]?._total ?? 0,
          page: 1,
          page_size: GEO_PAGE_SIZE,
          next_cursor: null,
          results,
        });
        res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) }).end(body);
      },
      (e: Error) => fail(res, 500, e.message),
    );
  };
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://peer');
    const m = /^\/tiles\/leads\/(\d+)\/(\d+)\/(\d+)\.mvt$/.exec(url.pathname);
    if (m) {
      pool.query<{ mvt: Buffer }>({ text: sql, values: [Number(m[1]), Number(m[2]), Number(m[3])] }).then(
        (r) => {
          const mvt = r.rows[0]?.mvt;
          if (!mvt || mvt.length === 0) return void res.writeHead(204).end();
          res
            .writeHead(200, { 'Content-Type': 'application/vnd.mapbox-vector-tile', 'Content-Length': mvt.length })
            .end(mvt);
        },
        (e: Error) => fail(res, 500, e.message),
      );
      return;
    }
    if (req.method === 'GET' && url.pathname === '/leads') return search(res, Object.fromEntries(url.searchParams));
    if (req.method === 'POST' && url.pathname === '/leads/search') {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        let body: unknown;
        try {
          body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        } catch {
          return fail(res, 400, 'the body is not JSON');
        }
        search(res, body && typeof body === 'object' ? (body as Record<string, unknown>) : {});
      });
      return;
    }
    res.writeHead(404).end();
  });
  server.listen(Number(values.port), '127.0.0.1', () => {
    const a = server.address();
    console.log(JSON.stringify({ port: typeof a === 'object' && a ? a.port : 0 }));
  });
  const stop = (): void => void server.close(() => void pool.end().then(() => process.exit(0)));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await serve();
