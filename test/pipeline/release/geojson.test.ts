import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDb, type Db } from '../../../pipeline/lib/duckdb.ts';
import { writeGeoJson, type GeoJsonIndex } from '../../../pipeline/release/geojson.ts';

const LEAD_COLUMNS = [
  'id',
  'lead_key',
  'planning_authority',
  'lat',
  'lon',
  'description',
  'received_date',
  'verticals',
  'est_value',
  'has_contact',
  'public_url',
];
const INFRA_COLUMNS = [
  'id',
  'name',
  'vertical',
  'applicant',
  'connection_voltage_kv',
  'capacity_mw',
  'lat',
  'lon',
  'public_url',
];

let db: Db;
let dir: string;
let index: GeoJsonIndex;

test.before(async () => {
  db = await openDb({ threads: 1 });
  dir = await mkdtemp(join(tmpdir(), 'geojson-'));
  // Rows deliberately out of id order; id 3 and infra 2 have no coordinates.
  await db.run(`COPY (SELECT * FROM (VALUES
      (7, 'cork-city/23-1', 'Cork City', 51.8979123456, -8.4706987654, 'Roof extension', DATE '2024-03-01', ['roofing'], 120000, true, NULL),
      (2, 'dun-laoghaire-rathdown/D24A', 'Dún Laoghaire-Rathdown', 53.2941, -6.1338, 'Apartments', DATE '2024-01-15', ['residential', 'landscaping'], 9000000, false, 'https://planning.example.ie/D24A'),
      (3, 'carlow/24-9', 'Carlow', NULL, NULL, 'No coordinates', DATE '2024-02-01', [], 50000, false, NULL),
      (5, 'cork-city/23-2', 'Cork City', 51.9, -8.5, 'Solar panels', DATE '2024-04-01', ['solar'], 30000, false, NULL)
    ) t(${LEAD_COLUMNS.join(', ')})) TO '${join(dir, 'leads.parquet')}' (FORMAT PARQUET)`);
  await db.run(`COPY (SELECT * FROM (VALUES
      (1, 'Kilcash Wind Farm', 'wind', 'Kilcash Energy DAC', 110, 48.5, 52.38, -7.6, NULL),
      (2, 'No Coords Solar', 'solar', NULL, NULL, 20.0, NULL, NULL, NULL),
      (4, 'Lusk Battery', 'battery_storage', NULL, NULL, 60.0, 53.52, -6.17, 'https://abp.example.ie/314')
    ) t(${INFRA_COLUMNS.join(', ')})) TO '${join(dir, 'infrastructure.parquet')}' (FORMAT PARQUET)`);
  // A stale authority file from an earlier run must not survive.
  await mkdir(join(dir, 'geojson', 'leads'), { recursive: true });
  await writeFile(join(dir, 'geojson', 'leads', 'stale.ndjson'), '{}\n');
  index = await writeGeoJson(db, dir);
});

test.after(async () => {
  db.close();
  await rm(dir, { recursive: true, force: true });
});

type Feature = {
  type: string;
  id: number;
  geometry: { type: string; coordinates: number[] };
  properties: Record<string, unknown>;
};

/** Structural RFC 7946 check of one NDJSON line; returns the parsed Feature. */
function assertFeature(line: string): Feature {
  const f = JSON.parse(line) as Feature;
  assert.equal(Object.keys(f), ['type', 'id', 'geometry', 'properties'], 'member order');
  assert.is(f.type, 'Feature');
  assert.ok(Number.isInteger(f.id), `integer id: ${line}`);
  assert.ok(/"id":\d+,/.test(line), 'id written as a JSON number');
  assert.equal(Object.keys(f.geometry), ['type', 'coordinates']);
  assert.is(f.geometry.type, 'Point');
  assert.is(f.geometry.coordinates.length, 2);
  const [lon, lat] = f.geometry.coordinates as [number, number];
  assert.ok(typeof lon === 'number' && Number.isFinite(lon) && lon >= -180 && lon <= 180, `lon ${lon}`);
  assert.ok(typeof lat === 'number' && Number.isFinite(lat) && lat >= -90 && lat <= 90, `lat ${lat}`);
  for (const c of [lon, lat]) assert.ok(Math.abs(c * 1e6 - Math.round(c * 1e6)) < 1e-6, `6 decimals: ${c}`);
  assert.ok(f.properties !== null && typeof f.properties === 'object' && !Array.isArray(f.properties));
  assert.not.ok('crs' in f, 'RFC 7946 has no crs member');
  return f;
}

async function readLines(rel: string): Promise<string[]> {
  const text = await readFile(join(dir, rel), 'utf8');
  return text.split('\n').filter((l) => l.length > 0);
}

/** Every lead line, from the authority files (the leads are stored once, per authority). */
async function allLeadLines(): Promise<string[]> {
  const files = (await readdir(join(dir, 'geojson', 'leads'))).sort();
  const lines = (await Promise.all(files.map((f) => readLines(`geojson/leads/${f}`)))).flat();
  return lines.sort((a, b) => assertFeature(a).id - assertFeature(b).id);
}

test('leads layer: valid features, ordered by id, rows without coordinates skipped', async () => {
  const features = (await allLeadLines()).map(assertFeature);
  assert.equal(
    features.map((f) => f.id),
    [2, 5, 7],
  );
  const cork = features.find((f) => f.id === 7)!;
  assert.equal(cork.geometry.coordinates, [-8.470699, 51.897912], 'lon first, rounded to 6 decimals');
  assert.equal(Object.keys(cork.properties), [...LEAD_COLUMNS, 'link'], 'every column, in order, then link');
  assert.equal(cork.properties['verticals'], ['roofing']);
  assert.is(cork.properties['received_date'], '2024-03-01');
  assert.is(cork.properties['has_contact'], true);
  assert.is(cork.properties['est_value'], 120000);
  assert.is(cork.properties['link'], null, 'no public page: null, never a URL of the API');
  const dlr = features.find((f) => f.id === 2)!;
  assert.is(dlr.properties['link'], 'https://planning.example.ie/D24A', 'public_url preferred');
  assert.is(dlr.properties['planning_authority'], 'Dún Laoghaire-Rathdown');
});

test('one file per authority, each in id order; the leads are stored once', async () => {
  assert.equal((await readdir(join(dir, 'geojson', 'leads'))).sort(), [
    'cork-city.ndjson',
    'dun-laoghaire-rathdown.ndjson',
  ]);
  assert.not.ok(existsSync(join(dir, 'geojson', 'leads.ndjson')), 'no national copy');
  const all = await allLeadLines();
  const cork = await readLines('geojson/leads/cork-city.ndjson');
  assert.equal(
    cork,
    all.filter((l) => l.includes('"planning_authority":"Cork City"')),
  );
  assert.equal(
    cork.map((l) => assertFeature(l).id),
    [5, 7],
  );
});

test('infrastructure layer carries applicant and connection voltage', async () => {
  const features = (await readLines('geojson/infrastructure.ndjson')).map(assertFeature);
  assert.equal(
    features.map((f) => f.id),
    [1, 4],
  );
  assert.equal(Object.keys(features[0]!.properties), [...INFRA_COLUMNS, 'link']);
  assert.is(features[0]!.properties['applicant'], 'Kilcash Energy DAC');
  assert.is(features[0]!.properties['connection_voltage_kv'], 110);
  assert.is(features[0]!.properties['link'], null, 'no public page: null');
  assert.is(features[1]!.properties['connection_voltage_kv'], null);
  assert.is(features[1]!.properties['link'], 'https://abp.example.ie/314');
});

test('index describes every layer and is written as index.json', async () => {
  const onDisk = JSON.parse(await readFile(join(dir, 'geojson', 'index.json'), 'utf8')) as GeoJsonIndex;
  assert.equal(onDisk, index);
  assert.equal(index.skipped_without_coordinates, { leads: 1, infrastructure: 1 });
  const byName = new Map(index.layers.map((l) => [l.name, l]));
  assert.equal([...byName.keys()], ['leads', 'leads/cork-city', 'leads/dun-laoghaire-rathdown', 'infrastructure']);
  assert.equal(byName.get('leads')!.bbox, [-8.5, 51.897912, -6.1338, 53.2941]);
  assert.equal(
    byName.get('leads')!.parts,
    ['leads/cork-city', 'leads/dun-laoghaire-rathdown'],
    'the national layer is its authority layers',
  );
  assert.is(byName.get('leads')!.features, 3);
  assert.is(
    byName.get('leads')!.bytes,
    byName.get('leads/cork-city')!.bytes + byName.get('leads/dun-laoghaire-rathdown')!.bytes,
  );
  assert.not.ok('file' in byName.get('leads')!);
  assert.equal(byName.get('leads/cork-city')!, {
    name: 'leads/cork-city',
    file: 'geojson/leads/cork-city.ndjson',
    features: 2,
    bytes: (await stat(join(dir, 'geojson', 'leads', 'cork-city.ndjson'))).size,
    bbox: [-8.5, 51.897912, -8.470699, 51.9],
    authority: 'Cork City',
  });
  assert.is(byName.get('infrastructure')!.features, 2);
  assert.not.ok('authority' in byName.get('leads')!);
  for (const layer of index.layers)
    if (layer.file) assert.is(layer.bytes, (await stat(join(dir, ...layer.file.split('/')))).size, layer.name);
  assert.not.ok(existsSync(join(dir, 'geojson', 'leads', 'stale.ndjson')), 'stale authority file removed');
});

test('a release with no coordinates writes empty layers with a null bbox', async () => {
  const empty = await mkdtemp(join(tmpdir(), 'geojson-empty-'));
  try {
    await db.run(
      `COPY (SELECT 1 AS id, 'Carlow' AS planning_authority, CAST(NULL AS DOUBLE) AS lat, CAST(NULL AS DOUBLE) AS lon, CAST(NULL AS VARCHAR) AS public_url) TO '${join(empty, 'leads.parquet')}' (FORMAT PARQUET)`,
    );
    await db.run(
      `COPY (SELECT 1 AS id, CAST(NULL AS DOUBLE) AS lat, CAST(NULL AS DOUBLE) AS lon, CAST(NULL AS VARCHAR) AS public_url) TO '${join(empty, 'infrastructure.parquet')}' (FORMAT PARQUET)`,
    );
    const idx = await writeGeoJson(db, empty);
    assert.equal(
      idx.layers.map((l) => [l.name, l.features, l.bbox]),
      [
        ['leads', 0, null],
        ['infrastructure', 0, null],
      ],
    );
    assert.equal(idx.skipped_without_coordinates, { leads: 1, infrastructure: 1 });
    assert.equal(idx.layers[0]!.parts, []);
    assert.equal(await readdir(join(empty, 'geojson', 'leads')), []);
  } finally {
    await rm(empty, { recursive: true, force: true });
  }
});

test.run();
