/**
 * The PostGIS peer of the geo benches answers the API's questions on a real release: its nearby
 * totals equal a haversine count (R = 6,371,008.8 m, the API's rule) and its polygon totals equal
 * turf's point-in-polygon over every lead; pages are in the API's default order with the lead
 * columns. Real PostgreSQL + PostGIS, in a database of its own (dropped at the end).
 *
 * Server: `TEST_DATABASE_URL`, default `postgres://<PGUSER or OS user>@127.0.0.1:5432/test`
 * (trust auth). Skipped, with the reason, when Debian's postgresql-15-postgis-3 is not installed
 * (the bench installs it; tests never do).
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { booleanPointInPolygon } from '@turf/boolean-point-in-polygon';
import { countyOutline, leadPoints, NEARBY_RADII_M, type LeadPoint } from '../../bench/geo-search.ts';
import {
  ensurePostgis,
  GEO_PAGE_SIZE,
  loadGeoLeads,
  postgisNearbyQuery,
  postgisPolygonQuery,
} from '../../bench/postgis.ts';
import { loadBaseline, BASELINE_SCHEMA } from '../../bench/baseline-pg.ts';
import { prng } from '../../bench/api.ts';
import { tinyRelease } from '../helpers/api.ts';
import { testIf } from '../helpers/skip.ts';
import { tempDir } from '../helpers/tmp.ts';

const BASE_URL =
  process.env['TEST_DATABASE_URL'] ??
  `postgres://${encodeURIComponent(process.env['PGUSER'] ?? userInfo().username)}@127.0.0.1:5432/test`;
const DB = `geobench_test_${randomBytes(4).toString('hex')}`;
const dbUrl = (name: string): string => BASE_URL.replace(/\/[^/?]*(\?|$)/, `/${name}$1`);

const havePostgis = ((): boolean => {
  try {
    return execFileSync('dpkg-query', ['-W', '-f=${Status}', 'postgresql-15-postgis-3'], { encoding: 'utf8' }).includes(
      'install ok installed',
    );
  } catch {
    return false;
  }
})();
const withPostgis = testIf(
  test,
  havePostgis ? null : 'postgresql-15-postgis-3 is not installed (make bench installs it)',
);

const R = 6_371_008.8;
const haversine = (a: { lat: number; lon: number }, b: { lat: number; lon: number }): number => {
  const rad = Math.PI / 180;
  const dLat = (b.lat - a.lat) * rad;
  const dLon = (b.lon - a.lon) * rad;
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(a.lat * rad) * Math.cos(b.lat * rad) * Math.sin(dLon / 2) ** 2;
  return 2 * R * Math.asin(Math.sqrt(h));
};

withPostgis(
  'nearby and polygon totals equal the reference; pages in the default order with the lead columns',
  async () => {
    const release = await tinyRelease();
    const admin = new pg.Client({ connectionString: BASE_URL });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${DB}`);
    const url = dbUrl(DB);
    const client = new pg.Client({ connectionString: url });
    try {
      await ensurePostgis(url);
      const tmpDir = tempDir('geobench-');
      await loadGeoLeads({ pgUrl: url, releaseDir: release.dir, tmpDir });
      await loadBaseline({ pgUrl: url, releaseDir: release.dir, tmpDir });
      await client.connect();
      const columns = (
        await client.query<{ column_name: string }>(
          `SELECT column_name FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'leads' AND column_name <> 'search' ORDER BY ordinal_position`,
          [BASELINE_SCHEMA],
        )
      ).rows.map((r) => r.column_name);
      const points: LeadPoint[] = await leadPoints(join(release.dir, 'leads.parquet'));
      assert.ok(points.length > 200, `${points.length} leads with coordinates`);

      const rand = prng(5);
      let nonEmpty = 0;
      for (let i = 0; i < 12; i++) {
        const c = points[Math.floor(rand() * points.length)]!;
        for (const r of NEARBY_RADII_M) {
          const rows = (await client.query(postgisNearbyQuery(columns), [c.lat, c.lon, r])).rows as {
            _total: number;
            id: number;
            received_date: string;
            distance_m: number;
          }[];
          const want = points.filter((p) => haversine(c, p) <= r).length;
          assert.is(rows[0]?._total ?? 0, want, `near ${c.lat},${c.lon} radius ${r}`);
          assert.is(rows.length, Math.min(want, GEO_PAGE_SIZE));
          if (want > 1) nonEmpty++;
          for (const [k, row] of rows.entries()) {
            assert.ok(row.distance_m <= r);
            const prev = rows[k - 1];
            if (prev)
              assert.ok(
                prev.received_date > row.received_date ||
                  (prev.received_date === row.received_date && prev.id > row.id),
                'received_date desc, id desc',
              );
          }
          if (rows[0]) assert.equal(Object.keys(rows[0]), ['_total', 'distance_m', ...columns]);
        }
      }
      assert.ok(nonEmpty > 5, 'the centres found neighbours');

      const counties = [...new Set(points.map((p) => p.county))].sort().slice(0, 4);
      for (const county of counties) {
        const outline = countyOutline(points.filter((p) => p.county === county))!;
        const rows = (await client.query(postgisPolygonQuery(columns), [JSON.stringify(outline)])).rows as {
          _total: number;
        }[];
        const want = points.filter((p) => booleanPointInPolygon([p.lon, p.lat], outline)).length;
        assert.ok(want >= points.filter((p) => p.county === county).length);
        assert.is(rows[0]?._total ?? 0, want, county);
      }
    } finally {
      await client.end().catch(() => {});
      await admin.query(`DROP DATABASE IF EXISTS ${DB} WITH (FORCE)`);
      await admin.end();
    }
  },
);

test.run();
