/**
 * A real GIS client: GDAL's `ogrinfo` (Debian `gdal-bin`, installed by .ci/run) reads the leads
 * layer from the API as GeoJSON (the feed) and through its OGC API Features driver (`OAPIF:`),
 * with the key as a Bearer header and with an `access_token`, and finds every feature; reads the
 * leads in EPSG:2157 through the same driver (coordinates = proj4's ITM of the WGS 84 ones within
 * 1 m); and reads a vector tile with its MVT driver, field types from the layer's TileJSON.
 * Without `ogrinfo` on the PATH its tests are reported as skipped, with the reason.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFile, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { openApiDb, sqlString } from '../../../api/duckdb/db.ts';
import { startTestApi, type TestApi } from '../../helpers/api.ts';
import { testIf } from '../../helpers/skip.ts';
import { wgs84ToItm } from '../../../pipeline/lib/itm.ts';
import { EPSG_2157 } from '../../../api/gis/crs.ts';

const HAVE_GDAL = spawnSync('ogrinfo', ['--version'], { encoding: 'utf8' }).status === 0;
const withGdal = testIf(test, HAVE_GDAL ? null : 'ogrinfo (Debian gdal-bin) is not installed');

/** Run ogrinfo without blocking the event loop (the API answers in this process). */
function ogrinfo(args: string[], env: Record<string, string> = {}): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(
      'ogrinfo',
      args,
      { env: { ...process.env, GDAL_HTTP_TIMEOUT: '60', ...env }, encoding: 'utf8', maxBuffer: 1 << 28 },
      (e, stdout, stderr) =>
        resolve({ code: e ? (typeof e.code === 'number' ? e.code : 1) : 0, out: `${stdout}\n${stderr}` }),
    );
  });
}

let api: TestApi;
let expected = 0;
test.before(async () => {
  if (!HAVE_GDAL) return;
  api = await startTestApi();
  const db = await openApiDb({ connections: 1, threads: 1, memoryLimit: '128MB' });
  const [r] = await db.all<{ n: number }>(
    `SELECT count(*) AS n FROM read_parquet(${sqlString(join(api.dataDir, 'current', 'leads.parquet'))}) WHERE lat IS NOT NULL`,
  );
  expected = r!.n;
  db.close();
});
test.after(async () => {
  await api?.close();
});

withGdal('GDAL reads the leads GeoJSON feed with the Bearer key', async () => {
  const { code, out } = await ogrinfo(['-ro', '-so', '-al', `${api.baseUrl}/v1/feeds/leads.geojson?page_size=10000`], {
    GDAL_HTTP_HEADERS: `Authorization: Bearer ${api.keys.ent_feed}`,
  });
  assert.is(code, 0, out);
  assert.match(out, /Geometry: Point/);
  assert.match(out, new RegExp(`Feature Count: ${expected}\\b`));
  assert.match(out, /lead_key: String/);
});

withGdal(
  'GDAL reads the leads collection through its OGC API Features driver, with the header and with an access_token',
  async () => {
    const header = await ogrinfo(['-ro', '-so', `OAPIF:${api.baseUrl}/v1/ogc`, 'leads'], {
      GDAL_HTTP_HEADERS: `Authorization: Bearer ${api.keys.ent_feed}`,
    });
    assert.is(header.code, 0, header.out);
    assert.match(header.out, /Geometry: Point/);
    assert.match(header.out, /received_date: Date/);
    const token = (await api.request('/v1/feeds/token', { key: api.keys.ent_feed })).body.access_token as string;
    // every feature, paged by the driver through the next links (which carry the token)
    const all = await ogrinfo([
      '-ro',
      '-al',
      '-oo',
      'PAGE_SIZE=300',
      `OAPIF:${api.baseUrl}/v1/ogc?access_token=${token}`,
      'leads',
    ]);
    assert.is(all.code, 0, all.out.slice(0, 2000));
    assert.is((all.out.match(/^OGRFeature\(leads\):\d+$/gm) ?? []).length, expected);
    const none = await ogrinfo(['-ro', '-so', `OAPIF:${api.baseUrl}/v1/ogc`, 'leads']);
    assert.is.not(none.code, 0, 'without a key the driver is refused');
    for (const line of api.logs) assert.not.ok(line.includes(token));
  },
);

withGdal(
  "GDAL reads the leads in EPSG:2157 through its OGC API Features driver; coordinates are proj4's ITM of the WGS 84 ones within 1 m",
  async () => {
    const wgs = new Map<number, [number, number]>();
    for (const f of (await api.request('/v1/feeds/leads.geojson?page_size=10000', { key: api.keys.ent_feed })).body
      .features as { id: number; geometry: { coordinates: [number, number] } }[]) {
      wgs.set(f.id, f.geometry.coordinates);
    }
    // GDAL ≥ 3.7 negotiates the CRS itself (-oo CRS=EPSG:2157, OGC API Features Part 2); Debian's
    // GDAL 3.6 has no CRS option, so there the crs rides in the connection URL, which the driver
    // adds to every request (the metadata resources accept it).
    const version = /GDAL (\d+)\.(\d+)/.exec((await ogrinfo(['--version'])).out)!;
    const part2 = Number(version[1]) > 3 || Number(version[2]) >= 7;
    const args = part2
      ? ['-ro', '-al', '-oo', 'CRS=EPSG:2157', '-oo', 'PAGE_SIZE=500', `OAPIF:${api.baseUrl}/v1/ogc`, 'leads']
      : ['-ro', '-al', '-oo', 'PAGE_SIZE=500', `OAPIF:${api.baseUrl}/v1/ogc?crs=${EPSG_2157}`, 'leads'];
    const { code, out } = await ogrinfo(args, { GDAL_HTTP_HEADERS: `Authorization: Bearer ${api.keys.ent_feed}` });
    assert.is(code, 0, out.slice(0, 2000));
    const read = [...out.matchAll(/^OGRFeature\(leads\):(\d+)\n(?:.*\n)*?\s+POINT \(([-\d.e+]+) ([-\d.e+]+)\)/gm)];
    assert.is(read.length, expected, 'every feature, paged through the next links');
    for (const m of read) {
      const [lon, lat] = wgs.get(Number(m[1]))!;
      const ref = wgs84ToItm(lon, lat);
      const d = Math.hypot(Number(m[2]) - ref.easting, Number(m[3]) - ref.northing);
      assert.ok(d < 1, `feature ${m[1]}: ${m[2]} ${m[3]} is ${d.toFixed(2)} m from ${ref.easting} ${ref.northing}`);
    }
  },
);

withGdal('GDAL reads a vector tile with its MVT driver, its fields typed by the TileJSON', async () => {
  const f0 = (await api.request('/v1/feeds/leads.geojson?page_size=1', { key: api.keys.ent_feed })).body.features[0]
    .geometry.coordinates as [number, number];
  const z = 12;
  const x = Math.floor(((f0[0] + 180) / 360) * 2 ** z);
  const s = Math.sin((f0[1] * Math.PI) / 180);
  const y = Math.floor((0.5 - Math.log((1 + s) / (1 - s)) / (4 * Math.PI)) * 2 ** z);
  // HEAD answers are budget quotes across the API (api/access/enforce.ts), so /vsicurl/ must not size files by HEAD
  const env = {
    GDAL_HTTP_HEADERS: `Authorization: Bearer ${api.keys.ent_feed}`,
    CPL_VSIL_CURL_USE_HEAD: 'NO',
    GDAL_DISABLE_READDIR_ON_OPEN: 'EMPTY_DIR',
  };
  const { code, out } = await ogrinfo(
    [
      '-ro',
      '-al',
      '-oo',
      `METADATA_FILE=/vsicurl/${api.baseUrl}/v1/tiles/leads.json`,
      `MVT:/vsicurl/${api.baseUrl}/v1/tiles/leads/${z}/${x}/${y}.mvt`,
    ],
    env,
  );
  assert.is(code, 0, out.slice(0, 2000));
  assert.match(out, /Geometry: Point/);
  assert.match(out, /point_count: Integer|point_count: Real/);
  assert.match(out, /est_value: (Integer|Real)/);
  assert.match(out, /planning_authority: String/);
  assert.match(out, /EPSG",3857|Pseudo-Mercator/);
  const features = (out.match(/^OGRFeature\(leads\):\d+$/gm) ?? []).length;
  assert.ok(features >= 1, out.slice(0, 2000));
});

test.run();
