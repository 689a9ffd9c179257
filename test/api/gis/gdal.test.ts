/**
 * A real GIS client: GDAL's `ogrinfo` (Debian `gdal-bin`, installed by .ci/run) reads the leads
 * layer from the API as GeoJSON (the feed) and through its OGC API Features driver (`OAPIF:`),
 * with the key as a Bearer header and with an `access_token`, and finds every feature.
 * Without `ogrinfo` on the PATH its tests are reported as skipped, with the reason.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFile, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { openApiDb, sqlString } from '../../../api/db.ts';
import { startTestApi, type TestApi } from '../../helpers/api.ts';
import { testIf } from '../../helpers/skip.ts';

const HAVE_GDAL = spawnSync('ogrinfo', ['--version'], { encoding: 'utf8' }).status === 0;
const withGdal = testIf(test, HAVE_GDAL ? null : 'ogrinfo (Debian gdal-bin) is not installed');

/** Run ogrinfo without blocking the event loop (the API answers in this process). */
function ogrinfo(args: string[], env: Record<string, string> = {}): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile('ogrinfo', args, { env: { ...process.env, GDAL_HTTP_TIMEOUT: '60', ...env }, encoding: 'utf8', maxBuffer: 1 << 28 }, (e, stdout, stderr) =>
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
  const [r] = await db.all<{ n: number }>(`SELECT count(*) AS n FROM read_parquet(${sqlString(join(api.dataDir, 'current', 'leads.parquet'))}) WHERE lat IS NOT NULL`);
  expected = r!.n;
  db.close();
});
test.after(async () => {
  await api?.close();
});

withGdal('GDAL reads the leads GeoJSON feed with the Bearer key', async () => {
  const { code, out } = await ogrinfo(['-ro', '-so', '-al', `${api.baseUrl}/v1/feeds/leads.geojson?page_size=10000`], { GDAL_HTTP_HEADERS: `Authorization: Bearer ${api.keys.ent_feed}` });
  assert.is(code, 0, out);
  assert.match(out, /Geometry: Point/);
  assert.match(out, new RegExp(`Feature Count: ${expected}\\b`));
  assert.match(out, /lead_key: String/);
});

withGdal('GDAL reads the leads collection through its OGC API Features driver, with the header and with an access_token', async () => {
  const header = await ogrinfo(['-ro', '-so', `OAPIF:${api.baseUrl}/v1/ogc`, 'leads'], { GDAL_HTTP_HEADERS: `Authorization: Bearer ${api.keys.ent_feed}` });
  assert.is(header.code, 0, header.out);
  assert.match(header.out, /Geometry: Point/);
  assert.match(header.out, /received_date: Date/);
  const token = (await api.request('/v1/feeds/token', { key: api.keys.ent_feed })).body.access_token as string;
  // every feature, paged by the driver through the next links (which carry the token)
  const all = await ogrinfo(['-ro', '-al', '-oo', 'PAGE_SIZE=300', `OAPIF:${api.baseUrl}/v1/ogc?access_token=${token}`, 'leads']);
  assert.is(all.code, 0, all.out.slice(0, 2000));
  assert.is((all.out.match(/^OGRFeature\(leads\):\d+$/gm) ?? []).length, expected);
  const none = await ogrinfo(['-ro', '-so', `OAPIF:${api.baseUrl}/v1/ogc`, 'leads']);
  assert.is.not(none.code, 0, 'without a key the driver is refused');
  for (const line of api.logs) assert.not.ok(line.includes(token));
});

test.run();
