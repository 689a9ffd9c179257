/**
 * The leads stored once (issue 17.6): feed pages served from the per-authority files (the
 * national index merged from them) are the pages the old layout served from one national file.
 * The old layout is rebuilt beside the tiny release — `geojson/leads.ndjson` holding the same
 * lines in id order and an index naming it — and both are asked the same requests: the whole
 * layer paged to the end, a bbox, an authority, and a filter answered through DuckDB.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openApiDb, sqlString, type ApiDb } from '../../../api/duckdb/db.ts';
import { featurePage, releaseLayersCache } from '../../../api/gis/features.ts';
import type { GisRequest } from '../../../api/query/feeds-query.ts';
import type { Release } from '../../../api/releases/release.ts';
import { tinyRelease } from '../../helpers/api.ts';
import { tempDir } from '../../helpers/tmp.ts';

let db: ApiDb;
let now: Release;
let before: Release;

const fakeRelease = (id: string, dir: string): Release =>
  ({
    id,
    dir,
    path: (rel: string) => join(dir, rel),
    tables: { leads: `read_parquet(${sqlString(join(dir, 'leads.parquet'))})` },
  }) as unknown as Release;

test.before(async () => {
  const rel = await tinyRelease();
  db = await openApiDb({ connections: 1, threads: 1, memoryLimit: '256MB' });
  now = fakeRelease('now', rel.dir);
  // the old layout: every lead line once more in geojson/leads.ndjson, ordered by id
  const old = tempDir('leads-old-layout-');
  mkdirSync(join(old, 'geojson'));
  symlinkSync(join(rel.dir, 'leads.parquet'), join(old, 'leads.parquet'));
  symlinkSync(join(rel.dir, 'geojson', 'leads'), join(old, 'geojson', 'leads'));
  const lines = readdirSync(join(rel.dir, 'geojson', 'leads'))
    .flatMap((f) =>
      readFileSync(join(rel.dir, 'geojson', 'leads', f), 'utf8')
        .split('\n')
        .filter(Boolean),
    )
    .sort((a, b) => Number(/"id":(\d+)/.exec(a)![1]) - Number(/"id":(\d+)/.exec(b)![1]));
  writeFileSync(join(old, 'geojson', 'leads.ndjson'), lines.join('\n') + '\n');
  const index = JSON.parse(readFileSync(join(rel.dir, 'geojson', 'index.json'), 'utf8')) as {
    layers: Record<string, unknown>[];
  };
  assert.ok(
    index.layers.some((l) => l['name'] === 'leads' && Array.isArray(l['parts']) && !('file' in l)),
    'the release stores the national layer as parts',
  );
  for (const l of index.layers) if (l['name'] === 'leads') (delete l['parts'], (l['file'] = 'geojson/leads.ndjson'));
  writeFileSync(join(old, 'geojson', 'index.json'), JSON.stringify(index));
  before = fakeRelease('before', old);
});
test.after(() => db?.close());

const req = (filters: GisRequest['filters'], limit: number, afterId: number | null = null): GisRequest => ({
  layer: 'leads',
  filters,
  limit,
  afterId,
  hash: 'h',
});

/** Every page of a request, followed to the end. */
async function pages(release: Release, filters: GisRequest['filters'], limit: number): Promise<string[]> {
  const layers = releaseLayersCache()(release);
  const out: string[] = [];
  let after: number | null = null;
  do {
    const p = await featurePage(db, release, layers, req(filters, limit, after), 'ent_feed');
    out.push(`${p.numberMatched}/${p.numberReturned}/${p.nextAfterId}:${p.features.toString()}`);
    after = p.nextAfterId;
  } while (after !== null && out.length < 1000);
  return out;
}

test('the same pages, byte for byte, as the single national file answered', async () => {
  const cases: [string, GisRequest['filters'], number][] = [
    ['whole layer', {}, 97],
    ['whole layer, one page', {}, 10_000],
    ['bbox', { bbox: [-6.6, 53.2, -6.0, 53.5] }, 50],
    ['authority', { authority: ['Cork County'] }, 40],
    ['through DuckDB', { since: '2000-01-01', bbox: [-9, 51.5, -6, 54] }, 333],
  ];
  for (const [name, filters, limit] of cases) {
    const a = await pages(before, filters, limit);
    const b = await pages(now, filters, limit);
    assert.ok(a.length >= 1 && a[0]!.length > 20, `${name}: some features`);
    assert.equal(b, a, name);
  }
  const whole = (await pages(now, {}, 10_000))[0]!;
  assert.match(whole, /^\d+\/\d+\/null:/);
  const [matched, returned] = whole.split(':')[0]!.split('/').map(Number);
  assert.is(returned, matched, 'every feature on one page');
});

test.run();
