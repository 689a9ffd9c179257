/**
 * The sources file: the project's own parses, every download's variable is documented, the
 * overrides, per-year files and PxStat tables resolve, and bad declarations are refused with the
 * field named.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  loadSourcesFile,
  parseSourcesFile,
  resolveTargets,
  SourcesFileError,
} from '../../../pipeline/fetch/sources.ts';
import { SOURCE_NAMES } from '../../../pipeline/sources/formats.ts';
import { REPO_ROOT } from '../../helpers/tmp.ts';

const NOW = new Date('2026-11-09T05:00:00Z');
const RAW = JSON.parse(readFileSync(join(REPO_ROOT, 'pipeline/fetch/sources.json'), 'utf8'));

test('pipeline/fetch/sources.json parses; every source the issue names has a download; its variables are in docs/fetch.md', () => {
  const f = loadSourcesFile();
  assert.equal(
    [...new Set(f.downloads.map((d) => d.source))].sort(),
    ['commencements', 'companies', 'infrastructure', 'planning', 'ppr', 'rents', 'materials'].sort(),
  );
  for (const d of f.downloads) assert.ok((SOURCE_NAMES as readonly string[]).includes(d.source));
  const doc = readFileSync(join(REPO_ROOT, 'docs/fetch.md'), 'utf8');
  for (const d of f.downloads) assert.ok(doc.includes(`\`${d.urlEnv}\``), `${d.urlEnv} missing from docs/fetch.md`);
  assert.match(f.userAgent, /irish-construction-leads/);
  const planning = f.downloads.find((d) => d.source === 'planning')!;
  assert.is(planning.protocol, 'arcgis-featureserver');
  assert.is(planning.arcgis!.orderBy, 'OBJECTID');
});

test('resolveTargets: defaults, environment overrides, PxStat tables and one file per year up to this year', () => {
  const f = loadSourcesFile();
  const t = resolveTargets(f, { FETCH_URL_PPR: 'http://127.0.0.1:9/ppr/PPR-{year}.csv', FETCH_URL_RENTS: ' ' }, NOW);
  const ppr = t.filter((x) => x.source === 'ppr');
  assert.is(ppr.length, 2026 - 2010 + 1);
  assert.equal(ppr.at(-1), {
    id: 'ppr/PPR-2026.csv',
    source: 'ppr',
    file: 'PPR-2026.csv',
    protocol: 'http-file',
    url: 'http://127.0.0.1:9/ppr/PPR-2026.csv',
    urlEnv: 'FETCH_URL_PPR',
  });
  const rents = t.find((x) => x.source === 'rents')!;
  assert.is(
    rents.url,
    'https://ws.cso.ie/public/api.restful/PxStat.Data.Cube_API.ReadDataset/RIQ02/CSV/1.0/en',
    'a blank override keeps the default',
  );
  assert.is(t.find((x) => x.source === 'companies')!.url, null);
  const only = resolveTargets(f, { FETCH_URL_PLANNING: 'http://127.0.0.1:9/layer/0' }, NOW, ['planning']);
  assert.equal(
    only.map((x) => [x.id, x.url]),
    [['planning/planning-applications.json', 'http://127.0.0.1:9/layer/0']],
  );
  assert.throws(() => resolveTargets(f, {}, NOW, ['nosuch']), /unknown source 'nosuch'/);
});

const bad: [string, (d: any) => void, RegExp][] = [
  ['unknown source', (d) => (d.downloads[0].source = 'weather'), /downloads\[0\]\.source must be one of/],
  ['unknown protocol', (d) => (d.downloads[1].protocol = 'ftp'), /downloads\[1\]\.protocol must be one of/],
  ['a path as file name', (d) => (d.downloads[1].file = '../x.csv'), /plain \.csv or \.json file name/],
  [
    'a variable not named FETCH_URL_*',
    (d) => (d.downloads[1].url_env = 'HOME'),
    /url_env must look like FETCH_URL_NAME/,
  ],
  [
    'pxstat without a table',
    (d) => delete d.downloads.find((x: any) => x.protocol === 'pxstat').table,
    /a pxstat download needs a table/,
  ],
  ['years_from without {year}', (d) => (d.downloads[1].years_from = 2020), /years_from needs \{year\}/],
  [
    'an incremental where without {since}',
    (d) => (d.downloads[0].arcgis.incremental.where = '1=1'),
    /must contain \{since\}/,
  ],
  ['no key fields', (d) => (d.downloads[0].arcgis.key_fields = []), /key_fields must list at least one field/],
  ['zero attempts', (d) => (d.client.attempts = 0), /client\.attempts must be a whole number between 1 and 20/],
  ['a download declared twice', (d) => d.downloads.push({ ...d.downloads[1] }), /is declared twice/],
];
for (const [name, edit, message] of bad) {
  test(`parseSourcesFile refuses ${name}`, () => {
    const d = structuredClone(RAW);
    edit(d);
    assert.throws(
      () => parseSourcesFile(d),
      (e: unknown) => e instanceof SourcesFileError && message.test((e as Error).message),
    );
  });
}

test.run();
