/**
 * The PostGIS peer of the geo benchmarks (issue 17): PostgreSQL 15 with PostGIS 3 and GiST
 * indexes, as the planning-data APIs customers compare us with run on. Reusable by any geo
 * section (tiles here; nearby / polygon search can use the same table):
 *
 * - `ensurePostgis(pgUrl)`: installs Debian's `postgresql-15-postgis-3` when missing (apt-get,
 *   needs root) and runs `CREATE EXTENSION IF NOT EXISTS postgis` in the bench database;
 * - `loadGeoLeads({ pgUrl, releaseDir, tmpDir })`: the release's leads with coordinates in
 *   `bench_geo.leads` — id, the tile fields, `geom` (Point, 4326) and `geom_3857` (Web Mercator),
 *   a GiST index on each — reloaded only when the release changes;
 * - `postgisTileQuery()`: one tile with `ST_AsMVT`, clustered on the same 32-pixel grid as the
 *   API at zooms 0–12, every lead a point beyond;
 * - as a script, a minimal HTTP tile server over that query (the baseline the API is measured
 *   against): `node --import tsx bench/postgis.ts --port 0 [--pg URL] [--pool 8]` prints {"port":N}.
 */
import { execFile } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs, promisify } from 'node:util';
import pg from 'pg';
import { openDb, sqlString } from '../pipeline/lib/duckdb.ts';
import { CLUSTER_CELL_PX, CLUSTER_MAX_ZOOM, TILE_BUFFER, TILE_EXTENT, tileFields } from '../api/gis/tiles.ts';
import { loadedRelease, PG_URL_DEFAULT, releaseIdOf } from './baseline-pg.ts';

const run = promisify(execFile);
export const GEO_SCHEMA = 'bench_geo';

/** Install PostGIS if missing and enable it in the database of `pgUrl`. */
export async function ensurePostgis(pgUrl: string, log: (l: string) => void = () => {}): Promise<void> {
  const installed = await run('dpkg-query', ['-W', '-f=${Status}', 'postgresql-15-postgis-3']).then((r) => r.stdout.includes('install ok installed'), () => false);
  if (!installed) {
    log('installing postgresql-15-postgis-3 (apt-get)…');
    await run('apt-get', ['install', '-y', 'postgresql-15-postgis-3'], { env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' }, maxBuffer: 1 << 26 });
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
export async function loadGeoLeads(opts: { pgUrl: string; releaseDir: string; tmpDir: string }): Promise<{ rows: number; ms: number; reused: boolean }> {
  const t0 = performance.now();
  const releaseId = releaseIdOf(opts.releaseDir);
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
    await client.query(`CREATE TABLE ${GEO_SCHEMA}.leads (id bigint PRIMARY KEY, lon double precision, lat double precision, ${cols.join(', ')})`);
    await run('psql', [opts.pgUrl, '-v', 'ON_ERROR_STOP=1', '-c', `\\copy ${GEO_SCHEMA}.leads (id, lon, lat, ${fields.map((f) => f.name).join(', ')}) FROM ${JSON.stringify(csv).replace(/"/g, "'")} WITH (FORMAT csv)`]);
    await client.query(`ALTER TABLE ${GEO_SCHEMA}.leads ADD COLUMN geom geometry(Point, 4326), ADD COLUMN geom_3857 geometry(Point, 3857)`);
    await client.query(`UPDATE ${GEO_SCHEMA}.leads SET geom = ST_SetSRID(ST_MakePoint(lon, lat), 4326), geom_3857 = ST_Transform(ST_SetSRID(ST_MakePoint(lon, lat), 4326), 3857)`);
    await client.query(`CREATE INDEX ON ${GEO_SCHEMA}.leads USING gist (geom)`);
    await client.query(`CREATE INDEX ON ${GEO_SCHEMA}.leads USING gist (geom_3857)`);
    await client.query(`VACUUM ANALYZE ${GEO_SCHEMA}.leads`);
    const [{ n }] = (await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${GEO_SCHEMA}.leads`)).rows as [{ n: number }];
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

/** The baseline tile server: GET /tiles/leads/{z}/{x}/{y}.mvt → ST_AsMVT (204 when empty). */
async function serve(): Promise<void> {
  const { values } = parseArgs({ options: { port: { type: 'string', default: '0' }, pg: { type: 'string', default: PG_URL_DEFAULT }, pool: { type: 'string', default: '8' } } });
  const pool = new pg.Pool({ connectionString: values.pg, max: Number(values.pool) });
  const sql = postgisTileQuery();
  const server = createServer((req, res) => {
    const m = /^\/tiles\/leads\/(\d+)\/(\d+)\/(\d+)\.mvt$/.exec(req.url ?? '');
    if (!m) return void res.writeHead(404).end();
    pool.query<{ mvt: Buffer }>({ text: sql, values: [Number(m[1]), Number(m[2]), Number(m[3])] }).then(
      (r) => {
        const mvt = r.rows[0]?.mvt;
        if (!mvt || mvt.length === 0) return void res.writeHead(204).end();
        res.writeHead(200, { 'Content-Type': 'application/vnd.mapbox-vector-tile', 'Content-Length': mvt.length }).end(mvt);
      },
      (e: Error) => void res.writeHead(500).end(e.message),
    );
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
