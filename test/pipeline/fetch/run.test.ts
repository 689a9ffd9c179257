/**
 * `runFetch` against a local publisher speaking each protocol: files land in `<raw>/<source>/`,
 * one failing source keeps its previous file and does not stop the others, the fetch log records
 * each outcome (URL, times, validators, size, SHA-256, error naming source and URL), a second run
 * is conditional (304) and incremental (ArcGIS window merged into the stored copy), and the log
 * publishes no credentials or local paths.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { rejects } from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readFetchLog, writeFetchLog, generatedLog } from '../../../pipeline/fetch/log.ts';
import { runFetch } from '../../../pipeline/fetch/run.ts';
import { parseSourcesFile, SourcesFileError, type SourcesFile } from '../../../pipeline/fetch/sources.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { fakeDeps, PublisherServer } from './publisher-server.ts';

let server: PublisherServer;
test.before(async () => {
  server = await new PublisherServer().start();
});
test.after(async () => {
  await server.close();
});

const LAYER = '/arcgis/rest/services/Planning/FeatureServer/0';
const feature = (id: number, etl: number) => ({
  attributes: {
    OBJECTID: id,
    PlanningAuthority: 'Galway County Council',
    ApplicationNumber: `25/${id}`,
    ReceivedDate: Date.UTC(2026, 0, id),
    ETL_DATE: etl,
  },
  geometry: { x: 530_000 + id, y: 725_000 + id },
});
const OCT = Date.UTC(2026, 9, 1);
const NOV = Date.UTC(2026, 10, 12);

/** A sources file pointing at the local server (the real one points at the publishers). */
function sourcesFile(): SourcesFile {
  return parseSourcesFile({
    user_agent: 'irish-construction-leads-fetch/test',
    client: { attempts: 3, base_delay_ms: 1000, max_delay_ms: 4000, max_retry_after_ms: 60_000, timeout_ms: 30_000 },
    downloads: [
      {
        source: 'planning',
        file: 'planning-applications.json',
        protocol: 'arcgis-featureserver',
        publisher: 'test',
        url: null,
        url_env: 'FETCH_URL_PLANNING',
        arcgis: {
          order_by: 'OBJECTID',
          page_size: 2,
          out_sr: 2157,
          key_fields: ['PlanningAuthority', 'ApplicationNumber'],
          incremental: { where: "ETL_DATE >= TIMESTAMP '{since}'", overlap_days: 7 },
        },
      },
      {
        source: 'commencements',
        file: 'bcms.csv',
        protocol: 'http-file',
        publisher: 'test',
        url: `${server.base}/bcms.csv`,
        url_env: 'FETCH_URL_COMMENCEMENTS',
      },
      {
        source: 'ppr',
        file: 'PPR-{year}.csv',
        protocol: 'http-file',
        publisher: 'test',
        url: `${server.base}/ppr/PPR-{year}.csv?token=s3cret`,
        url_env: 'FETCH_URL_PPR',
        years_from: 2025,
      },
      {
        source: 'rents',
        file: 'RIQ02.csv',
        protocol: 'pxstat',
        publisher: 'test',
        url: `${server.base}/pxstat/{table}/CSV/1.0/en`,
        url_env: 'FETCH_URL_RENTS',
        table: 'RIQ02',
      },
      {
        source: 'companies',
        file: 'cro-companies.csv',
        protocol: 'http-file',
        publisher: 'test',
        url: null,
        url_env: 'FETCH_URL_COMPANIES',
      },
    ],
  });
}

const sha = (b: Buffer | string): string => createHash('sha256').update(b).digest('hex');
const BCMS = Buffer.from('CN_Number,CN_County\nCN1,Galway\n');
const PPR = (y: number) => Buffer.from(`Date of Sale (dd/mm/yyyy),Address\n01/02/${y},1 Main St\n`);
const RENTS = Buffer.from('"STATISTIC","VALUE"\n"RIQ02C01","1200"\n');

function serve(): void {
  server.layers.set(LAYER, { features: [feature(1, OCT), feature(2, OCT), feature(3, OCT)], maxRecordCount: 2 });
  server.files.set('/bcms.csv', { body: BCMS, lastModified: 'Sun, 08 Nov 2026 00:00:00 GMT' });
  server.files.set('/ppr/PPR-2025.csv', { body: PPR(2025) });
  server.files.set('/ppr/PPR-2026.csv', { body: PPR(2026) });
  server.files.set('/pxstat/RIQ02/CSV/1.0/en', {
    body: RENTS,
    etag: false,
    lastModified: 'Mon, 02 Nov 2026 09:00:00 GMT',
  });
}

test('first fetch: every protocol lands in <raw>/<source>/; a failing source keeps its previous file and does not stop the others', async () => {
  serve();
  const raw = tempDir('leads-fetch-run-');
  mkdirSync(join(raw, 'commencements'));
  writeFileSync(join(raw, 'commencements', 'bcms.csv'), 'previous copy');
  server.script('/bcms.csv', { status: 500 }, { status: 503 }, { status: 500 });
  const f = fakeDeps(new Date('2026-11-09T05:00:00Z'));
  const s = await runFetch(
    {
      rawDir: raw,
      sources: [],
      full: false,
      env: { FETCH_URL_PLANNING: server.base + LAYER },
      sourcesFile: sourcesFile(),
    },
    f.deps,
  );

  assert.equal(s.counts, { fetched: 4, not_modified: 0, failed: 1, skipped: 1 });
  assert.equal(
    s.downloads.map((d) => `${d.source}/${d.file}:${d.status}`),
    [
      'planning/planning-applications.json:fetched',
      'commencements/bcms.csv:failed',
      'ppr/PPR-2025.csv:fetched',
      'ppr/PPR-2026.csv:fetched',
      'rents/RIQ02.csv:fetched',
      'companies/cro-companies.csv:skipped',
    ],
  );
  // the failure: previous file kept, error names the source and the URL, after the retries
  assert.is(readFileSync(join(raw, 'commencements', 'bcms.csv'), 'utf8'), 'previous copy');
  const failed = s.downloads[1]!;
  assert.is(
    failed.error,
    `commencements: gave up on ${server.base}/bcms.csv after 3 attempts: HTTP 500 Internal Server Error`,
  );
  assert.is(failed.fetched_at, null);
  assert.is(f.sleeps.length, 2);
  // files and their log entries
  const planning = JSON.parse(readFileSync(join(raw, 'planning', 'planning-applications.json'), 'utf8'));
  assert.equal(
    planning.features.map((x: any) => x.attributes.OBJECTID),
    [1, 2, 3],
  );
  assert.equal(planning.spatialReference, { wkid: 2157, latestWkid: 2157 });
  assert.equal(readFileSync(join(raw, 'ppr', 'PPR-2026.csv')), PPR(2026));
  assert.equal(readFileSync(join(raw, 'rents', 'RIQ02.csv')), RENTS);
  const log = readFetchLog(raw)!;
  assert.is(log.origin, 'fetched');
  const rents = log.downloads['rents/RIQ02.csv']!;
  assert.equal(
    { ...rents },
    {
      source: 'rents',
      file: 'RIQ02.csv',
      protocol: 'pxstat',
      url: `${server.base}/pxstat/RIQ02/CSV/1.0/en`,
      status: 'fetched',
      checked_at: rents.checked_at,
      fetched_at: rents.checked_at,
      etag: null,
      last_modified: 'Mon, 02 Nov 2026 09:00:00 GMT',
      bytes: RENTS.length,
      sha256: sha(RENTS),
      error: null,
    },
  );
  const p = log.downloads['planning/planning-applications.json']!;
  assert.is(p.records, 3);
  assert.equal(p.window, { where: '1=1', incremental: false, until: p.checked_at });
  assert.is(p.sha256, sha(readFileSync(join(raw, 'planning', 'planning-applications.json'))));
  assert.is(log.downloads['companies/cro-companies.csv']!.error, 'no URL configured (set FETCH_URL_COMPANIES)');
  // no secrets and no local path in the log
  const text = readFileSync(join(raw, 'fetch-log.json'), 'utf8');
  assert.not.ok(text.includes('s3cret'), 'token redacted');
  assert.ok(text.includes('token=redacted'));
  assert.not.ok(text.includes(raw), 'no local path');
  // the polite client
  for (const r of server.requests) assert.is(r.headers['user-agent'], 'irish-construction-leads-fetch/test');

  // second run: conditional requests, the ArcGIS window, the failed source recovered
  server.layers.get(LAYER)!.features.push(feature(4, NOV));
  server.layers.get(LAYER)!.features[1] = {
    ...feature(2, NOV),
    attributes: { ...feature(2, NOV).attributes, ReceivedDate: 0 },
  };
  const before = server.requests.length;
  const f2 = fakeDeps(new Date('2026-11-16T05:00:00Z'));
  const s2 = await runFetch(
    {
      rawDir: raw,
      sources: [],
      full: false,
      env: { FETCH_URL_PLANNING: server.base + LAYER },
      sourcesFile: sourcesFile(),
    },
    f2.deps,
  );
  assert.equal(
    s2.downloads.map((d) => d.status),
    ['fetched', 'fetched', 'not_modified', 'not_modified', 'not_modified', 'skipped'],
  );
  const again = server.requests.slice(before);
  const pprReq = again.find((r) => r.path === '/ppr/PPR-2025.csv')!;
  assert.ok(pprReq.headers['if-none-match'], 'conditional on the ETag');
  assert.is(
    again.find((r) => r.path === '/pxstat/RIQ02/CSV/1.0/en')!.headers['if-modified-since'],
    'Mon, 02 Nov 2026 09:00:00 GMT',
  );
  const log2 = readFetchLog(raw)!;
  assert.is(log2.downloads['rents/RIQ02.csv']!.fetched_at, rents.fetched_at, 'a 304 keeps when the copy was fetched');
  assert.is(log2.downloads['rents/RIQ02.csv']!.checked_at, '2026-11-16T05:00:00.000Z');
  assert.is(log2.downloads['rents/RIQ02.csv']!.sha256, sha(RENTS));
  assert.equal(readFileSync(join(raw, 'commencements', 'bcms.csv')), BCMS);
  // the window started a week (the overlap) before the previous fetch; only changed records were asked
  const queries = again.filter((r) => r.path === `${LAYER}/query`);
  assert.equal([...new Set(queries.map((q) => q.query.get('where')))], ["ETL_DATE >= TIMESTAMP '2026-11-02 05:00:00'"]);
  const merged = JSON.parse(readFileSync(join(raw, 'planning', 'planning-applications.json'), 'utf8'));
  assert.equal(
    merged.features.map((x: any) => [x.attributes.OBJECTID, x.attributes.ReceivedDate === 0]),
    [
      [1, false],
      [2, true],
      [3, false],
      [4, false],
    ],
  );
  assert.equal(log2.downloads['planning/planning-applications.json']!.window, {
    where: "ETL_DATE >= TIMESTAMP '2026-11-02 05:00:00'",
    incremental: true,
    until: '2026-11-16T05:00:00.000Z',
  });
  assert.is(log2.downloads['planning/planning-applications.json']!.records, 4);

  // --full asks for everything again
  const f3 = fakeDeps(new Date('2026-11-17T05:00:00Z'));
  const s3 = await runFetch(
    {
      rawDir: raw,
      sources: ['planning'],
      full: true,
      env: { FETCH_URL_PLANNING: server.base + LAYER },
      sourcesFile: sourcesFile(),
    },
    f3.deps,
  );
  assert.equal(
    s3.downloads.map((d) => d.window?.where),
    ['1=1'],
  );
});

test('a failed ArcGIS fetch keeps the stored document and its log fields; the error names the source and URL', async () => {
  serve();
  const raw = tempDir('leads-fetch-run-');
  const opts = {
    rawDir: raw,
    sources: ['planning'],
    full: false,
    env: { FETCH_URL_PLANNING: server.base + LAYER },
    sourcesFile: sourcesFile(),
  };
  await runFetch(opts, fakeDeps().deps);
  const first = readFetchLog(raw)!.downloads['planning/planning-applications.json']!;
  const stored = readFileSync(join(raw, 'planning', 'planning-applications.json'));
  server.script(`${LAYER}/query`, { body: 'oops' }, { body: 'oops' }, { body: 'oops' });
  const s = await runFetch(opts, fakeDeps(new Date('2026-11-16T05:00:00Z')).deps);
  const e = s.downloads[0]!;
  assert.is(e.status, 'failed');
  assert.match(e.error!, `planning: gave up on ${server.base}${LAYER}/query?f=json`);
  assert.equal(readFileSync(join(raw, 'planning', 'planning-applications.json')), stored);
  assert.equal(
    { fetched_at: e.fetched_at, sha256: e.sha256, records: e.records, window: e.window },
    { fetched_at: first.fetched_at, sha256: first.sha256, records: 3, window: first.window },
  );
});

test('--source narrows the fetch; an unknown source is refused; fetching into a generated folder makes the origin mixed', async () => {
  serve();
  const raw = tempDir('leads-fetch-run-');
  await writeFetchLog(raw, generatedLog(new Date('2026-11-09T04:00:00Z'), { seed: 1, scale: 0.005, week: 1 }));
  const s = await runFetch(
    { rawDir: raw, sources: ['rents'], full: false, env: {}, sourcesFile: sourcesFile() },
    fakeDeps().deps,
  );
  assert.equal(
    s.downloads.map((d) => d.source),
    ['rents'],
  );
  const log = readFetchLog(raw)!;
  assert.is(log.origin, 'mixed');
  assert.equal(log.generator, { seed: 1, scale: 0.005, week: 1 });
  await rejects(
    () =>
      runFetch({ rawDir: raw, sources: ['nosuch'], full: false, env: {}, sourcesFile: sourcesFile() }, fakeDeps().deps),
    SourcesFileError,
  );
});

test.run();
