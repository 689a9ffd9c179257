/**
 * The weekly refresh: raw source files in, a validated, versioned release out.
 *
 *   read sources → normalise & enrich → identity & change tracking → validate against schemas/
 *   → write Parquet, search index, GeoJSON → market analytics (pipeline/intel/)
 *   → manifest & quality gates → atomic publish → prune
 *
 * `runPipeline(config, deps)` does it all and returns a summary; nothing runs on import.
 * Everything is built in `releases/.build-<id>/` and only the final rename makes it current.
 */
import { createHash } from 'node:crypto';
import { createReadStream, existsSync, readFileSync } from 'node:fs';
import { readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { PipelineConfig } from './config.ts';
import { openDb, sqlString, type Db } from './lib/duckdb.ts';
import { collectGarbage } from './lib/memory.ts';
import { AUTHORITIES } from './reference/authorities.ts';
import { readPlanning } from './sources/planning.ts';
import { readCommencements } from './sources/commencements.ts';
import { readPpr } from './sources/ppr.ts';
import { readCompanies } from './sources/companies.ts';
import { readInfrastructure } from './sources/infrastructure.ts';
import { readRents } from './sources/rents.ts';
import { readMaterials } from './sources/materials.ts';
import { runAnalytics, type AnalyticsSummary } from './intel/analytics.ts';
import { openIntelSalesSink } from './intel/sales-input.ts';
import { buildCompanyIndex } from './normalise/company-match.ts';
import { buildLeads } from './normalise/leads.ts';
import { mergeInfrastructure } from './normalise/infrastructure.ts';
import { buildSuppliers } from './normalise/suppliers.ts';
import { nearestNeighbours } from './normalise/neighbours.ts';
import { trackChanges, type ChangeCounts, type RegistryEntry } from './release/registry.ts';
import { columnsFromSchema, openTableSink, readParquet, writeNdjson, writeTable, writeTableFromSink, type TableSpec } from './release/tables.ts';
import { checkGates, type GateResult, type SourceCounts } from './release/gates.ts';
import { checkPublishedNames } from './release/name-gate.ts';
import { acquireRefreshLock, createBuildDir, currentRelease, publishRelease, pruneReleases } from './release/publish.ts';
import { writeSearchIndex } from './release/search-index.ts';
import { writeGeoJson } from './release/geojson.ts';
import { loadValidators, validateAll, type RecordKind } from './validate.ts';
import { countReasons } from './sources/common.ts';
import type { AdapterResult, Reject, SaleRow } from './types.ts';

export const SCHEMA_VERSION = '1.0.0';

export interface PipelineDeps {
  /** Clock for build timestamps and release ids. */
  now: () => Date;
  /** Progress sink (stderr by default). */
  log: (line: string) => void;
  /** Test hook: called as each stage starts (a test may kill the process here). */
  onStage?: (stage: string) => void | Promise<void>;
}

export interface StageTiming {
  ms: number;
  rows: number;
  rows_per_s: number;
}

export interface RefreshSummary {
  status: 'published' | 'unchanged' | 'blocked';
  releaseId: string | null;
  previousReleaseId: string | null;
  asOf: string | null;
  changes: Record<'leads' | 'infrastructure', ChangeCounts> | null;
  counts: Record<string, number>;
  sources: Record<string, SourceCounts>;
  gates: GateResult & { forced: boolean };
  stages: Record<string, StageTiming>;
  peakRssMb: number;
  /** The stage during which the sampled peak was seen. */
  peakRssStage: string;
  wallMs: number;
  message: string;
}

interface Manifest {
  release_id: string;
  input_fingerprint: string;
  counts: { sources: Record<string, SourceCounts> };
}

const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));

/** Run one refresh. Throws only for operational errors (lock held, unreadable files). */
export async function runPipeline(config: PipelineConfig, deps: PipelineDeps): Promise<RefreshSummary> {
  const t0 = performance.now();
  const stages: Record<string, StageTiming> = {};
  let peakRss = process.memoryUsage().rss;
  let currentStage = 'start';
  let peakStage = currentStage;
  const rssTimer = setInterval(() => {
    const rss = process.memoryUsage().rss;
    if (rss > peakRss) {
      peakRss = rss;
      peakStage = currentStage;
    }
  }, 50);
  rssTimer.unref();
  const stageNames = ['fingerprint', 'read:ppr', 'write:sales', 'read:planning', 'read:commencements', 'read:companies',
    'read:infrastructure', 'read:rents', 'read:materials', 'normalise', 'track', 'validate', 'write:tables', 'search-index', 'geojson', 'analytics', 'manifest', 'publish'];
  const stage = async <T>(name: string, fn: () => Promise<T>, rowsOf: (r: T) => number): Promise<T> => {
    await deps.onStage?.(name);
    currentStage = name;
    const s = performance.now();
    const r = await fn();
    collectGarbage(); // hand freed rows back before the next stage stacks DuckDB memory on top
    const ms = performance.now() - s;
    const rows = rowsOf(r);
    stages[name] = { ms: Math.round(ms), rows, rows_per_s: ms > 0 ? Math.round((rows / ms) * 1000) : rows };
    peakRss = Math.max(peakRss, process.memoryUsage().rss);
    if (config.progress) {
      const i = stageNames.indexOf(name) + 1;
      deps.log(
        `[${String(i).padStart(2)}/${stageNames.length}] ${name.padEnd(20)} ${rows.toLocaleString('en-IE').padStart(10)} rows ` +
          `${(ms / 1000).toFixed(1).padStart(6)} s ${stages[name]!.rows_per_s.toLocaleString('en-IE').padStart(10)} rows/s ` +
          `${Math.round(process.memoryUsage().rss / 1048576).toLocaleString('en-IE').padStart(6)} MB RSS`,
      );
    }
    return r;
  };

  const release = await acquireRefreshLock(config.dataDir);
  let db: Db | null = null;
  let previousId: string | null = null;
  let buildDirToClean: string | null = null; // a build that is not published is removed
  try {
    const previous = currentRelease(config.dataDir);
    previousId = previous?.id ?? null;
    const prevManifest = previous
      ? (JSON.parse(await readFile(join(previous.dir, 'manifest.json'), 'utf8')) as Manifest)
      : null;
    const { files, fingerprint } = await stage('fingerprint', async () => {
      const f = await listRawFiles(config.rawDir);
      if (f.all.length === 0) throw new Error(`no raw files under ${config.rawDir} (run 'leads generate' or pass --raw DIR)`);
      return { files: f, fingerprint: await inputFingerprint(config.rawDir, f.all) };
    }, (r) => r.files.all.length);
    if (prevManifest && prevManifest.input_fingerprint === fingerprint && !config.force) {
      return finish('unchanged', {
        releaseId: previous!.id,
        message: `input unchanged since release ${previous!.id}: nothing to publish (use --force to rebuild)`,
      });
    }

    const now = deps.now();
    const releaseId = now.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
    const buildDir = await createBuildDir(config.dataDir, releaseId);
    buildDirToClean = buildDir;
    const open = (): Promise<Db> => openDb({ memoryLimit: config.duckdbMemoryLimit, tempDirectory: join(buildDir, '.duckdb-tmp') });
    db = await open();
    const validators = loadValidators();
    const sources: Record<string, SourceCounts> = {};
    const rejects: Reject[] = [];
    const account = <T>(name: string, r: AdapterResult<T>, rows = r.rows.length): void => {
      sources[name] = { lines: r.lines, rows, rejects: r.rejects.length, reasons: countReasons(r.rejects) };
      for (const x of r.rejects) rejects.push(x); // not push(...): a broken file can reject 800,000 rows
    };

    const invalid: Record<string, { invalid: number; samples: string[] }> = {};
    const checkValid = (kind: RecordKind, rows: Iterable<unknown>): number => {
      const r = validateAll(validators, kind, rows, 5);
      if (r.invalid > 0) invalid[kind] = { invalid: r.invalid, samples: r.samples };
      return r.checked;
    };
    // Sales stream from the PPR files straight into the staging file, validated on the way:
    // ~800,000 rows never sit in memory.
    const salesSpec = spec('sales', 'property-sale', 'county, eircode_routing_key, date_of_sale DESC, sale_id', 50_000);
    const salesSink = openTableSink(buildDir, 'sales');
    const intelSales = openIntelSalesSink(buildDir); // the analytics stage's private copy (Eircode hashes)
    let toSale: ((row: SaleRow) => Record<string, unknown>) | null = publishedSale();
    const salesCheck = { checked: 0, invalid: 0, samples: [] as string[] };
    const ppr = await stage('read:ppr', () => readPpr(files.by.ppr, (row) => {
      const sale = toSale!(row);
      const problems = validators.validate('property-sale', sale);
      salesCheck.checked++;
      if (problems.length) {
        salesCheck.invalid++;
        if (salesCheck.samples.length < 5) salesCheck.samples.push(`line ${row.line}: ${problems.join(', ')}`);
      }
      salesSink.write(sale);
      intelSales.write(row);
    }), (r) => r.lines);
    const salesCount = salesSink.close();
    intelSales.close();
    toSale = null; // its map of every sale key (~150 MB) would otherwise live to the end of the run
    account('ppr', ppr, salesCount);
    if (salesCheck.invalid) invalid['property-sale'] = salesCheck;
    await stage('write:sales', () => writeTableFromSink(db!, buildDir, salesSpec, salesSink), () => salesCount);
    // A fresh DuckDB instance for each heavy phase: closing the one that sorted 800,000 sales
    // hands its buffer pool back, which keeps the refresh's peak memory down.
    db.close();
    db = await open();
    const planning = await stage('read:planning', () => readPlanning(files.by.planning), (r) => r.lines);
    account('planning', planning);
    const commencements = await stage('read:commencements', () => readCommencements(files.by.commencements), (r) => r.lines);
    account('commencements', commencements);
    const companies = await stage('read:companies', () => readCompanies(files.by.companies), (r) => r.companies.lines + r.filings.lines);
    account('companies', companies.companies);
    account('filings', companies.filings);
    const infra = await stage('read:infrastructure', () => readInfrastructure(files.by.infrastructure), (r) => r.lines);
    account('infrastructure', infra);
    // rents and materials feed the analytics only; a raw folder without them builds no yields / costs
    const rents = await stage('read:rents', () => readRents(files.by.rents), (r) => r.lines);
    if (files.by.rents.length) account('rents', rents);
    const materials = await stage('read:materials', () => readMaterials(files.by.materials), (r) => r.lines);
    if (files.by.materials.length) account('materials', materials);

    const asOf = latestDate(planning.rows.map((r) => r.etl_date)) ?? now.toISOString().slice(0, 10);
    const normalised = await stage('normalise', async () => {
      const index = buildCompanyIndex(companies.companies.rows);
      const built = buildLeads(planning.rows, commencements.rows, index, asOf);
      const infraDrafts = mergeInfrastructure(infra.rows, index, asOf);
      return { ...built, infraDrafts, index };
    }, (r) => r.leads.length + r.infraDrafts.length);
    planning.rows.length = 0;
    commencements.rows.length = 0;

    const prevRegistry: RegistryEntry[] = previous && existsSync(join(previous.dir, 'registry.parquet'))
      ? await readParquet<RegistryEntry>(db, join(previous.dir, 'registry.parquet'))
      : [];
    const tracked = await stage('track', async () => {
      const byKey = <T extends { lead_key?: string; project_key?: string }>(a: T, b: T): number =>
        ((a.lead_key ?? a.project_key)! < (b.lead_key ?? b.project_key)! ? -1 : 1);
      const suppliers = buildSuppliers(companies.companies.rows, normalised.leads);
      const leads = trackChanges('leads', normalised.leads.sort(byKey), (d) => d.lead_key, prevRegistry, asOf);
      const infraT = trackChanges('infrastructure', [...normalised.infraDrafts].sort(byKey), (d) => d.project_key, prevRegistry, asOf);
      const neighbours = nearestNeighbours(leads.records.map((l) => ({ id: l.id, lat: l.lat, lon: l.lon })));
      return { leads: leads, infra: infraT, neighbours, suppliers };
    }, (r) => r.leads.records.length + r.infra.records.length);

    const publishedCompanies = companies.companies.rows.map(({ line: _l, name_key: _k, ...c }) => c);
    const publishedFilings = companies.filings.rows.map(({ line: _l, ...f }) => f);
    const changes = [...tracked.leads.changes, ...tracked.infra.changes];
    const registry = [...tracked.leads.entries, ...tracked.infra.entries];
    await stage('validate', async () => {
      return (
        checkValid('lead', tracked.leads.records) +
        checkValid('infrastructure-project', tracked.infra.records) +
        checkValid('company', publishedCompanies) +
        checkValid('filing', publishedFilings) +
        checkValid('supplier', tracked.suppliers) +
        checkValid('lead-neighbour', tracked.neighbours) +
        checkValid('change', changes) +
        checkValid('reject', rejects)
      );
    }, (n) => n);
    // The privacy gate: every published name has evidence that it is an organisation's. Not
    // overridable by --force; its messages name record ids, never a name.
    const names = checkPublishedNames({ leads: tracked.leads.records, infrastructure: tracked.infra.records }, normalised.index);
    if (!names.passed) {
      return finish('blocked', {
        releaseId: null,
        sources,
        gates: { passed: false, forced: false, messages: names.messages },
        message: `privacy gate failed — release refused (current release unchanged; --force does not override it):\n  ${names.messages.join('\n  ')}`,
      });
    }
    if (Object.keys(invalid).length > 0) {
      const detail = Object.entries(invalid).map(([k, v]) => `${k}: ${v.invalid} invalid (${v.samples.join('; ')})`).join('\n  ');
      throw new Error(`published rows failed schema validation — nothing was published:\n  ${detail}`);
    }

    const counts: Record<string, number> = { sales: salesCount };
    await stage('write:tables', async () => {
      counts['leads'] = await writeTable(db!, buildDir, { ...spec('leads', 'lead', 'received_date DESC, id DESC'), rowGroupRows: config.leadsRowGroupRows }, tracked.leads.records);
      counts['infrastructure'] = await writeTable(db!, buildDir, spec('infrastructure', 'infrastructure-project', 'id'), tracked.infra.records);
      counts['companies'] = await writeTable(db!, buildDir, spec('companies', 'company', 'company_number'), publishedCompanies);
      counts['filings'] = await writeTable(db!, buildDir, spec('filings', 'filing', 'company_number, filing_date DESC, document_number'), publishedFilings);
      counts['suppliers'] = await writeTable(db!, buildDir, spec('suppliers', 'supplier', 'county, vertical, projects_as_builder DESC, company_name'), tracked.suppliers);
      counts['lead_neighbours'] = await writeTable(db!, buildDir, spec('lead_neighbours', 'lead-neighbour', 'lead_id, rank'), tracked.neighbours);
      counts['changes'] = await writeTable(db!, buildDir, spec('changes', 'change', '"table", change, id'), changes);
      counts['registry'] = await writeTable(db!, buildDir, REGISTRY_SPEC, registry);
      writeNdjson(join(buildDir, 'rejects.jsonl'), rejects);
      return Object.values(counts).reduce((a, b) => a + b, 0) - salesCount;
    }, (n) => n);
    // Written: drop the big in-memory copies before the GeoJSON and search stages.
    for (const a of [tracked.neighbours, registry, changes, publishedCompanies, publishedFilings, tracked.suppliers, rejects]) a.length = 0;

    const authorities: Record<string, { leads: number; latest_received: string | null }> = {};
    for (const a of AUTHORITIES) authorities[a.name] = { leads: 0, latest_received: null };
    for (const l of tracked.leads.records) {
      const a = authorities[l.planning_authority] ?? (authorities[l.planning_authority] = { leads: 0, latest_received: null });
      a.leads++;
      if (!a.latest_received || l.received_date > a.latest_received) a.latest_received = l.received_date;
    }
    const searchDocs = tracked.leads.records.map((l) => ({ id: l.id, text: `${l.description} ${l.address ?? ''} ${l.planning_authority} ${l.application_number}` }));
    tracked.leads.records.length = 0; // written; the later stages read the Parquet files
    normalised.leads.length = 0; // the same objects (completed in place by trackChanges)
    const fresh = async (): Promise<Db> => {
      db!.close();
      return (db = await open());
    };
    const search = await stage('search-index', async () => writeSearchIndex(await fresh(), searchDocs, buildDir), (s) => s.docs);
    searchDocs.length = 0;
    const geo = await stage('geojson', async () => writeGeoJson(await fresh(), buildDir, { publicBaseUrl: config.publicBaseUrl }), (g) =>
      g.layers.reduce((a, l) => a + (l.name.includes('/') ? 0 : l.features), 0));

    const analytics = await stage('analytics', async () => runAnalytics(await fresh(), {
      salesPath: intelSales.path,
      leadsParquet: join(buildDir, 'leads.parquet'),
      rents: rents.rows,
      materials: materials.rows,
      asOf,
      buildDir,
      validators,
    }), (a: AnalyticsSummary) => Object.values(a.tables).reduce((x, y) => x + y, 0));
    Object.assign(counts, analytics.tables);
    rents.rows.length = 0;

    const leadChanges = tracked.leads.counts;
    const infraChanges = tracked.infra.counts;
    const gates = checkGates(sources, prevManifest?.counts.sources ?? null, {
      maxShrinkRatio: config.gateMaxShrinkRatio,
      maxRejectRatio: config.gateMaxRejectRatio,
    });
    const manifest = await stage('manifest', async () => {
      const m = {
        schema_version: SCHEMA_VERSION,
        release_id: releaseId,
        built_at: now.toISOString(),
        as_of: asOf,
        previous_release: previous?.id ?? null,
        counts: {
          tables: counts,
          records_total: counts['leads']! + counts['infrastructure']! + counts['companies']!,
          sources,
          authorities,
          linked_commencement_notices: normalised.linkedNotices,
          unlinked_commencement_notices: normalised.unlinkedNotices,
          published_names: names.counts,
        },
        changes: { leads: leadChanges, infrastructure: infraChanges },
        search_index: search,
        geojson: geo,
        analytics: analytics.pairs,
        files: await checksumFiles(buildDir),
        stages,
        gates: { passed: gates.passed, forced: !gates.passed && config.force, messages: gates.messages },
        input_fingerprint: fingerprint,
      };
      const problems = validators.validate('release-manifest', m);
      if (problems.length) throw new Error(`manifest failed schema validation: ${problems.join('; ')}`);
      await writeFile(join(buildDir, 'manifest.json'), JSON.stringify(m, null, 2) + '\n');
      return m;
    }, () => Object.keys(counts).length);

    const summaryBase = {
      asOf,
      changes: { leads: leadChanges, infrastructure: infraChanges },
      counts: { ...counts, records_total: manifest.counts.records_total },
      sources,
    };
    if (!gates.passed && !config.force) {
      return finish('blocked', {
        ...summaryBase,
        releaseId: null,
        gates: { ...gates, forced: false },
        message: `quality gates failed — release not published (current release unchanged; --force to publish anyway):\n  ${gates.messages.join('\n  ')}`,
      });
    }
    db.close();
    db = null;
    await stage('publish', async () => {
      await publishRelease(config.dataDir, buildDir, releaseId);
      return pruneReleases(config.dataDir, config.releaseRetentionWeeks, now);
    }, () => 1);
    return finish('published', {
      ...summaryBase,
      releaseId,
      gates: { ...gates, forced: !gates.passed },
      message: `published release ${releaseId}` + (gates.passed ? '' : ' (gates forced)'),
    });
  } finally {
    clearInterval(rssTimer);
    db?.close();
    if (buildDirToClean) await rm(buildDirToClean, { recursive: true, force: true });
    await release();
  }

  function finish(status: RefreshSummary['status'], p: Partial<RefreshSummary> & { message: string }): RefreshSummary {
    return {
      status,
      releaseId: p.releaseId ?? null,
      previousReleaseId: previousId,
      asOf: p.asOf ?? null,
      changes: p.changes ?? null,
      counts: p.counts ?? {},
      sources: p.sources ?? {},
      gates: p.gates ?? { passed: true, forced: false, messages: [] },
      stages,
      peakRssMb: Math.round(Math.max(peakRss, process.memoryUsage().rss, process.resourceUsage().maxRSS * 1024) / 1048576),
      peakRssStage: peakStage,
      wallMs: Math.round(performance.now() - t0),
      message: p.message,
    };
  }
}

const REGISTRY_SPEC: TableSpec = {
  name: 'registry',
  columns: [
    ['kind', 'VARCHAR'],
    ['key', 'VARCHAR'],
    ['id', 'BIGINT'],
    ['first_seen', 'DATE'],
    ['last_changed', 'DATE'],
    ['content_hash', 'VARCHAR'],
    ['removed_on', 'DATE'],
  ],
  orderBy: 'kind, id',
};

function spec(name: string, schema: string, orderBy: string, rowGroupRows = 100_000): TableSpec {
  return { name, columns: columnsFromSchema(schema), orderBy, rowGroupRows };
}

/**
 * Sales as published: exact decimal price, a stable id per sale (sha256 of home, date, price and
 * the occurrence number of that triple), no line numbers. Returns a stateful mapper.
 */
function publishedSale(): (row: SaleRow) => Record<string, unknown> {
  const seen = new Map<string, number>();
  return ({ line: _l, price_cents, eircode_hash: _e, ...s }) => {
    const base = `${s.home_key}|${s.date_of_sale}|${price_cents}`;
    const n = (seen.get(base) ?? 0) + 1;
    seen.set(base, n);
    const cents = String(price_cents).padStart(3, '0');
    return {
      sale_id: createHash('sha256').update(`${base}|${n}`).digest('hex').slice(0, 16),
      ...s,
      price_eur: Number(`${cents.slice(0, -2)}.${cents.slice(-2)}`),
    };
  };
}

function latestDate(dates: (string | null)[]): string | null {
  let max: string | null = null;
  for (const d of dates) if (d && (!max || d > max)) max = d;
  return max;
}

interface RawFiles {
  all: string[];
  by: Record<'planning' | 'commencements' | 'ppr' | 'companies' | 'infrastructure' | 'rents' | 'materials', string[]>;
}

/** Every raw file, by source folder, sorted for determinism. */
async function listRawFiles(rawDir: string): Promise<RawFiles> {
  const by: RawFiles['by'] = { planning: [], commencements: [], ppr: [], companies: [], infrastructure: [], rents: [], materials: [] };
  for (const source of Object.keys(by) as (keyof RawFiles['by'])[]) {
    const dir = join(rawDir, source);
    if (!existsSync(dir)) continue;
    by[source] = (await readdir(dir))
      .filter((f) => /\.(csv|json)$/i.test(f))
      .sort()
      .map((f) => join(dir, f));
  }
  return { all: Object.values(by).flat(), by };
}

/** sha256 over the raw files' names and bytes plus the pipeline's own code and schemas. */
async function inputFingerprint(rawDir: string, files: string[]): Promise<string> {
  const h = createHash('sha256');
  for (const f of files) {
    h.update(`${relative(rawDir, f)}\0${(await stat(f)).size}\0`);
    for await (const chunk of createReadStream(f)) h.update(chunk as Buffer);
  }
  for (const dir of ['pipeline', 'schemas', 'common']) {
    for (const f of await walk(join(REPO_ROOT, dir))) {
      h.update(relative(REPO_ROOT, f));
      h.update(readFileSync(f));
    }
  }
  return h.digest('hex');
}

async function walk(dir: string): Promise<string[]> {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  for (const e of (await readdir(dir, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...(await walk(p)));
    else if (/\.(ts|json)$/.test(e.name)) out.push(p);
  }
  return out;
}

/** sha256 and size of every file in the release (recursively), with Parquet row counts. */
async function checksumFiles(dir: string): Promise<Record<string, { bytes: number; sha256: string; rows: number | null }>> {
  const out: Record<string, { bytes: number; sha256: string; rows: number | null }> = {};
  for (const f of await walkAll(dir)) {
    const rel = relative(dir, f);
    if (rel === 'manifest.json' || rel.startsWith('.')) continue;
    const h = createHash('sha256');
    for await (const chunk of createReadStream(f)) h.update(chunk as Buffer);
    out[rel] = { bytes: (await stat(f)).size, sha256: h.digest('hex'), rows: null };
  }
  return out;
}

async function walkAll(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of (await readdir(dir, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...(await walkAll(p)));
    else out.push(p);
  }
  return out;
}

/** Count rows of every Parquet file of a release (used by `leads verify` and tests). */
export async function parquetRowCounts(db: Db, releaseDir: string): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const f of (await readdir(releaseDir)).filter((f) => f.endsWith('.parquet')).sort()) {
    const [r] = await db.all<{ n: number }>(`SELECT count(*)::BIGINT AS n FROM read_parquet(${sqlString(join(releaseDir, f))})`);
    out[f] = r!.n;
  }
  return out;
}

