/**
 * `leads fetch` then `leads refresh`, end to end on a local publisher serving files the
 * project's generator wrote (scale tiny): planning as an ArcGIS layer (paged), the others as
 * files and PxStat tables. The release is built from the fetched files and its manifest carries
 * the freshness; the ArcGIS form reads to the same planning rows as the generator's CSV. Also the
 * CLI wiring (`leads fetch` run in process, test/helpers/cli.ts: exit codes, the log).
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { loadPipelineConfig } from '../../../pipeline/config.ts';
import { readFetchLog } from '../../../pipeline/fetch/log.ts';
import { runFetch } from '../../../pipeline/fetch/run.ts';
import { parseDate } from '../../../pipeline/lib/dates.ts';
import { parseCsv } from '../../../pipeline/lib/csv.ts';
import { runPipeline } from '../../../pipeline/run.ts';
import { readPlanning } from '../../../pipeline/sources/planning.ts';
import { generateRaw, SCALES } from '../../../pipeline/synth/generate.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { fakeDeps, PublisherServer, type ArcgisLayer } from './publisher-server.ts';
import { leads as runLeads } from '../../helpers/cli.ts';

const LAYER = '/arcgis/rest/services/IrishPlanningApplications/FeatureServer/0';
let server: PublisherServer;
let generated: string;
let env: Record<string, string>;

/** The generator's planning CSV as an ArcGIS layer: numbers for OBJECTID, epoch ms for valid dates (as the service gives them). */
function planningLayer(csvFile: string): ArcgisLayer {
  const [header, ...records] = parseCsv(readFileSync(csvFile, 'utf8').replace(/^\uFEFF/, ''));
  const names = header!.fields;
  const features = records
    .filter((r) => !r.malformed && r.fields.length === names.length)
    .map((r) => {
      const attributes: Record<string, unknown> = {};
      names.forEach((n, i) => {
        const v = r.fields[i]!;
        const iso = /Date$|^ETL_DATE$/.test(n) && v ? parseDate(v) : null;
        attributes[n] =
          n === 'OBJECTID' ? Number(v) : typeof iso === 'string' ? Date.parse(iso + 'T00:00:00Z') : v === '' ? null : v;
      });
      return { attributes };
    });
  return { features, maxRecordCount: 400, spatialReference: { wkid: 2157, latestWkid: 2157 } };
}

test.before(async () => {
  generated = tempDir('leads-fetch-e2e-gen-');
  await generateRaw({ outDir: generated, scale: SCALES.tiny, seed: 5, week: 1 });
  server = await new PublisherServer().start();
  server.layers.set(LAYER, planningLayer(join(generated, 'planning', 'planning-applications.csv')));
  const serveDir = (source: string, at: string): void => {
    for (const f of readdirSync(join(generated, source)))
      server.files.set(`${at}/${f}`, { body: readFileSync(join(generated, source, f)) });
  };
  serveDir('commencements', '/bcms');
  serveDir('ppr', '/ppr');
  serveDir('companies', '/cro');
  serveDir('infrastructure', '/abp');
  server.files.set('/pxstat/RIQ02/CSV/1.0/en', { body: readFileSync(join(generated, 'rents', 'RIQ02.csv')) });
  server.files.set('/pxstat/WPM28/CSV/1.0/en', { body: readFileSync(join(generated, 'materials', 'WPM28.csv')) });
  env = {
    FETCH_URL_PLANNING: server.base + LAYER,
    FETCH_URL_COMMENCEMENTS: `${server.base}/bcms/bcms-commencement-notices.csv`,
    FETCH_URL_PPR: `${server.base}/ppr/PPR-{year}.csv`,
    FETCH_URL_COMPANIES: `${server.base}/cro/cro-companies.csv`,
    FETCH_URL_COMPANY_FILINGS: `${server.base}/cro/cro-filings.csv`,
    FETCH_URL_RENTS: `${server.base}/pxstat/{table}/CSV/1.0/en`,
    FETCH_URL_MATERIALS: `${server.base}/pxstat/{table}/CSV/1.0/en`,
    FETCH_URL_CONSENTING_CASES: `${server.base}/abp/abp-cases.csv`,
  };
});
test.after(async () => {
  await server.close();
});

test('fetch from the local publisher, then refresh: a published release built from the fetched files, with sources_freshness in its manifest', async () => {
  const root = tempDir('leads-fetch-e2e-');
  const raw = join(root, 'raw');
  const f = fakeDeps(new Date('2026-11-09T05:00:00Z'));
  const s = await runFetch({ rawDir: raw, sources: [], full: false, env }, f.deps);
  assert.equal(
    s.counts,
    { fetched: 2026 - 2010 + 1 + 7, not_modified: 0, failed: 0, skipped: 0 },
    JSON.stringify(s.downloads.filter((d) => d.error)),
  );
  const pages = server.to(`${LAYER}/query`).length;
  assert.ok(pages >= 3, `planning came in ${pages} pages`);

  // the ArcGIS form reads to the same planning rows as the generator's CSV (one adapter, two forms)
  const fromCsv = await readPlanning([join(generated, 'planning', 'planning-applications.csv')]);
  const fromJson = await readPlanning([join(raw, 'planning', 'planning-applications.json')]);
  assert.is(fromJson.rows.length, fromCsv.rows.length);
  assert.equal(
    fromJson.rows.map((r) => r.application_number).sort(),
    fromCsv.rows.map((r) => r.application_number).sort(),
  );
  assert.equal(readFileSync(join(raw, 'ppr', 'PPR-2019.csv')), readFileSync(join(generated, 'ppr', 'PPR-2019.csv')));

  const config = loadPipelineConfig({}, { dataDir: root, rawDir: raw, progress: false });
  const r = await runPipeline(config, {
    now: () => new Date('2026-11-09T06:00:00Z'),
    log: () => {},
    collectGarbage: () => {}, // none per stage on tiny data (pipeline/stages/context.ts)
  });
  assert.is(r.status, 'published', r.message);
  assert.ok(r.counts.leads! > 100);
  assert.equal(
    { lines: r.sources.planning!.lines, rows: r.sources.planning!.rows },
    { lines: fromJson.lines, rows: fromJson.rows.length },
    'the release read the fetched planning document',
  );
  const manifest = JSON.parse(readFileSync(join(root, 'releases', r.releaseId!, 'manifest.json'), 'utf8'));
  const fresh = manifest.sources_freshness;
  assert.is(fresh.origin, 'fetched');
  assert.equal(
    fresh.downloads.map((d: any) => `${d.source}/${d.file}`),
    Object.keys(readFetchLog(raw)!.downloads).sort(),
  );
  const planning = fresh.downloads.find((d: any) => d.source === 'planning');
  assert.is(planning.url, server.base + LAYER);
  assert.is(planning.records, readFetchLog(raw)!.downloads['planning/planning-applications.json']!.records);
  assert.match(planning.sha256, /^[0-9a-f]{64}$/);
  assert.ok(
    fresh.downloads.every(
      (d: any) => d.status === 'fetched' && d.fetched_at === '2026-11-09T05:00:00.000Z' && d.bytes > 0,
    ),
  );
  assert.not.ok(JSON.stringify(fresh).includes(root), 'no local path in the manifest');
});

/** Run the CLI in process (its downloads are asynchronous: the local server keeps answering). */
async function leads(
  args: string[],
  extraEnv: Record<string, string>,
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const r = await runLeads(args, { ...process.env, ...extraEnv });
  return { status: r.code, stdout: r.stdout, stderr: r.stderr };
}

test('leads fetch (CLI): --source, --json, exit 0; a failing source exits 1 and names the source and URL; an unknown source is a usage error', async () => {
  const raw = tempDir('leads-fetch-cli-');
  const ok = await leads(['fetch', '--raw', raw, '--source', 'rents,materials', '--json'], env);
  assert.is(ok.status, 0, ok.stderr);
  const summary = JSON.parse(ok.stdout);
  assert.equal(summary.counts, { fetched: 2, not_modified: 0, failed: 0, skipped: 0 });
  assert.match(ok.stderr, /fetch: 2 fetched, 0 not modified, 0 failed, 0 skipped/);
  assert.equal(readFileSync(join(raw, 'rents', 'RIQ02.csv')), readFileSync(join(generated, 'rents', 'RIQ02.csv')));
  const again = await leads(['fetch', '--raw', raw, '--source', 'rents'], env);
  assert.is(again.status, 0);
  assert.match(again.stderr, /0 fetched, 1 not modified/);

  const broken = await leads(['fetch', '--raw', raw, '--source', 'companies'], {
    ...env,
    FETCH_URL_COMPANIES: `${server.base}/cro/missing.csv`,
  });
  assert.ok(
    readFetchLog(raw)!.downloads['companies/cro-filings.csv']!.status === 'fetched',
    'the other companies file was still fetched',
  );
  assert.is(broken.status, 1);
  assert.match(broken.stderr, `companies: HTTP 404 Not Found from ${server.base}/cro/missing.csv`);

  const usage = await leads(['fetch', '--raw', raw, '--source', 'weather'], env);
  assert.is(usage.status, 2);
  assert.match(usage.stderr, /unknown source 'weather'/);
});

test.run();
