/**
 * docs/clients.md's guides against a real server: the tagged code blocks run as written (`sh gdal`
 * with GDAL's ogrinfo/ogr2ogr, `sql duckdb` on the project's DuckDB, `python pandas` where pandas
 * is installed), and what the QGIS, MapLibre and Excel guides rely on is checked over HTTP.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFile, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { openApiDb } from '../../api/duckdb/db.ts';
import { EPSG_2157 } from '../../api/gis/crs.ts';
import { LeadsClient } from '../../clients/typescript/src/index.ts';
import { startTestApi, type TestApi } from '../helpers/api.ts';
import { testIf } from '../helpers/skip.ts';
import { tempDir } from '../helpers/tmp.ts';

const DOC = readFileSync(join(import.meta.dirname, '..', '..', 'docs', 'clients.md'), 'utf8');
const HOST = 'https://leads.example.ie';

/** The code block of docs/clients.md fenced as ```<lang> <tag>. */
function block(tag: string): string {
  const m = new RegExp('```\\w+ ' + tag + '\\n([\\s\\S]*?)```').exec(DOC);
  if (!m) throw new Error(`docs/clients.md has no block tagged ${tag}`);
  return m[1]!;
}

const HAVE_GDAL = spawnSync('ogr2ogr', ['--version']).status === 0;
const HAVE_PANDAS = spawnSync('python3', ['-c', 'import pandas, pyarrow']).status === 0;

let api: TestApi;
let dir: string;
let total = 0;

test.before(async () => {
  api = await startTestApi();
  dir = tempDir('guides-');
  const sdk = new LeadsClient({ apiKey: api.keys.ent_feed, baseUrl: `${api.baseUrl}/v1` });
  for (const f of ['csv', 'jsonl', 'parquet'] as const) await sdk.exportToFile(f, join(dir, `applications.${f}`));
  total = (await api.request('/v1/leads?page_size=1')).body.total;
});
test.after(async () => {
  await api?.close();
});

/** Run a shell block in `dir` with the key in LEADS_API_KEY and the server for the docs' host. */
function sh(code: string, env: Record<string, string> = {}): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(
      'bash',
      ['-euo', 'pipefail', '-c', code.replaceAll(HOST, api.baseUrl)],
      { cwd: dir, env: { ...process.env, ...env }, maxBuffer: 1 << 26 },
      (e, stdout, stderr) =>
        resolve({ code: e ? (typeof e.code === 'number' ? e.code : 1) : 0, out: `${stdout}\n${stderr}` }),
    );
  });
}

testIf(test, HAVE_GDAL ? null : 'ogr2ogr (Debian gdal-bin) is not installed')(
  'GDAL guide: ogrinfo with PAGE_SIZE and the header finds every feature; ogr2ogr of the extent writes a GeoPackage',
  async () => {
    const items = async (q: string) =>
      (await api.request(`/v1/ogc/collections/leads/items?limit=1${q}`, { key: api.keys.ent_feed })).body
        .numberMatched as number;
    const all = await items('');
    const cork = await items('&bbox=-8.9,51.6,-8.0,52.2');
    assert.ok(cork > 0 && cork < all, `the extent holds some leads (${cork} of ${all})`);
    const started = Date.now();
    const r = await sh(block('gdal'), { LEADS_API_KEY: api.keys.ent_feed });
    assert.is(r.code, 0, r.out.slice(0, 3000));
    assert.match(r.out, new RegExp(`Feature Count: ${all}\\b`));
    const gpkg = await sh('ogrinfo -ro -so leads-cork.gpkg leads');
    assert.match(gpkg.out, new RegExp(`Feature Count: ${cork}\\b`), gpkg.out);
    console.log(`  GDAL guide block: ${Date.now() - started} ms for ${all} + ${cork} features`);
  },
);

test('DuckDB guide: every statement runs on the exports as written; CSV dates are read as DATE', async () => {
  const db = await openApiDb({ connections: 1, threads: 1, memoryLimit: '256MB' });
  try {
    const statements = block('duckdb')
      .trim()
      .split(/;\s*\n?/)
      .filter(Boolean)
      .map((s) => s.replace(/'(applications\.\w+)'/g, (_, f: string) => `'${join(dir, f)}'`));
    assert.is(statements.length, 3);
    const [byCounty, byReadiness, solar] = [
      await db.all(statements[0]!),
      await db.all(statements[1]!),
      await db.all(statements[2]!),
    ];
    assert.is(
      byCounty.reduce((s, r) => s + Number(r['leads']), 0),
      total,
    );
    assert.is(
      byReadiness.reduce((s, r) => s + Number(r['leads']), 0),
      total,
    );
    assert.ok(solar.length > 0 && solar.every((r) => JSON.stringify(r['verticals']).includes('solar')));
    const types = await db.all(
      `DESCRIBE SELECT received_date, est_value FROM read_csv('${join(dir, 'applications.csv')}')`,
    );
    assert.is(types[0]!['column_type'], 'DATE');
    assert.match(String(types[1]!['column_type']), /^(BIGINT|DOUBLE|INTEGER)$/, 'values as numbers');
  } finally {
    db.close();
  }
});

testIf(test, HAVE_PANDAS ? null : 'pandas with pyarrow is not installed for python3 (no Python package index here)')(
  'pandas guide: the block reads the three exports',
  async () => {
    const r = await sh(`python3 - <<'EOF'\n${block('pandas')}EOF`);
    assert.is(r.code, 0, r.out);
    assert.match(r.out, new RegExp(`^${total} ${total} ${total} datetime64`, 'm'));
  },
);

test('QGIS guide: the view-extent request (bbox) with an access_token returns only the extent; EPSG:2157 is offered and answered', async () => {
  const token = (await api.request('/v1/feeds/token?ttl=604800', { key: api.keys.ent_feed })).body
    .access_token as string;
  const get = (q: string) => fetch(`${api.baseUrl}/v1/ogc/collections/leads/items?access_token=${token}&${q}`);
  const whole = (await (await get('limit=1')).json()) as { numberMatched: number };
  const view = (await (await get('limit=1000&bbox=-8.9,51.6,-8.0,52.2')).json()) as {
    numberMatched: number;
    features: unknown[];
  };
  assert.ok(view.numberMatched < whole.numberMatched && view.features.length === view.numberMatched);
  const collection = (await (await fetch(`${api.baseUrl}/v1/ogc/collections/leads?access_token=${token}`)).json()) as {
    crs: string[];
  };
  assert.ok(collection.crs.includes(EPSG_2157));
  const itm = await get(`limit=1&crs=${encodeURIComponent(EPSG_2157)}`);
  assert.is(itm.headers.get('content-crs'), `<${EPSG_2157}>`);
});

test('MapLibre guide: the TileJSON fetched with a token writes it into the tiles template; a tile from it needs no header', async () => {
  const token = (await api.request('/v1/feeds/token?ttl=86400', { key: api.keys.ent_feed })).body
    .access_token as string;
  const tilejson = (await (await fetch(`${api.baseUrl}/v1/tiles/leads.json?access_token=${token}`)).json()) as {
    tiles: string[];
  };
  assert.match(tilejson.tiles[0]!, new RegExp(`access_token=${token}`));
  const url = tilejson.tiles[0]!.replace(/^https?:\/\/[^/]+/, api.baseUrl)
    .replace('{z}', '6')
    .replace('{x}', '30')
    .replace('{y}', '20');
  const tile = await fetch(url);
  assert.is(tile.status, 200, url);
  assert.is(tile.headers.get('content-type'), 'application/vnd.mapbox-vector-tile');
});

test('Excel guide: the CSV is UTF-8 without a BOM, comma-delimited, CRLF, accents intact', () => {
  const bytes = readFileSync(join(dir, 'applications.csv'));
  assert.not.equal([...bytes.subarray(0, 3)], [0xef, 0xbb, 0xbf]);
  const text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  assert.match(text.split('\r\n')[0]!, /^"?id"?,"?lead_key"?,/);
  assert.is(text.split('\r\n').length - 1, total + 1);
  assert.ok(/[áéíóúÁÉÍÓÚ]/.test(text), 'Irish accents (Dún Laoghaire, Fásach …) survive as UTF-8');
});

test.run();
