/**
 * End-to-end refresh on generated data: publish, idempotence, week-2 change tracking, quality
 * gates, and a refresh killed mid-way. Real files, real DuckDB, real Parquet.
 */
import { test } from 'uvu';
import { rejects } from 'node:assert/strict';
import * as assert from 'uvu/assert';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, renameSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { loadPipelineConfig, type PipelineConfig } from '../../pipeline/config.ts';
import { runPipeline, parquetRowCounts } from '../../pipeline/run.ts';
import { STAGES } from '../../pipeline/stages/index.ts';
import { generateRaw, SCALES } from '../../pipeline/synth/generate.ts';
import { currentRelease } from '../../pipeline/release/publish.ts';
import { openDb } from '../../pipeline/lib/duckdb.ts';
import { AUTHORITIES } from '../../pipeline/reference/authorities.ts';
import { loadValidators } from '../../pipeline/validate.ts';
import { REPO_ROOT, tempDir } from '../helpers/tmp.ts';
import { leads as runLeads } from '../helpers/cli.ts';
import { scaledRelease } from '../helpers/scaled-release.ts';

const data = tempDir('leads-run-');
const raw = join(data, 'raw');
let clock = new Date('2026-11-09T06:00:00Z');
// no full garbage collection per stage on tiny data (pipeline/stages/context.ts); the CLI runs keep it
const deps = { now: () => clock, log: () => {}, collectGarbage: () => {} };
const config = (over: Partial<PipelineConfig> = {}): PipelineConfig =>
  loadPipelineConfig({}, { dataDir: data, rawDir: raw, progress: false, ...over });

type Manifest = {
  release_id: string;
  counts: {
    tables: Record<string, number>;
    records_total: number;
    authorities: Record<string, { leads: number }>;
    sources: Record<string, { lines: number; rows: number; rejects: number }>;
  };
  changes: { leads: Record<string, number>; infrastructure: Record<string, number> };
  files: Record<string, { sha256: string; bytes: number }>;
  stages: Record<string, { ms: number; rows: number }>;
};
const manifestOf = (): Manifest => JSON.parse(readFileSync(join(currentRelease(data)!.dir, 'manifest.json'), 'utf8'));

async function registry(): Promise<Map<string, { id: number; first_seen: string }>> {
  const db = await openDb();
  try {
    const rows = await db.all<{ key: string; id: number; first_seen: string }>(
      `SELECT key, id, first_seen FROM read_parquet('${join(currentRelease(data)!.dir, 'registry.parquet')}') WHERE kind = 'leads'`,
    );
    return new Map(rows.map((r) => [r.key, { id: r.id, first_seen: r.first_seen }]));
  } finally {
    db.close();
  }
}

/** Deps that record the progress lines, the stages started and after which stage each collection ran. */
function watch() {
  const lines: string[] = [];
  const started: string[] = [];
  const collected: string[] = []; // the stage that had just run at each collection
  return {
    lines,
    started,
    collected,
    deps: {
      now: () => clock,
      log: (l: string) => lines.push(l),
      onStage: (s: string) => void started.push(s),
      collectGarbage: () => void collected.push(started.at(-1)!),
    },
  };
}
const progressOf = (lines: string[]) => lines.map((l) => /^\[ ?(\d+)\/(\d+)\] (\S+) /.exec(l)?.slice(1));

test('week 1: publishes a complete, valid release', async () => {
  // week 1's raw files of seed 7 as the generator wrote them for the cached tiny release
  // (test/helpers/scaled-release.ts keeps them beside it), not generated a second time
  const tiny = await scaledRelease('tiny', 7);
  cpSync(join(dirname(dirname(tiny.truthFile)), 'raw'), raw, { recursive: true });
  const s = await runPipeline(config(), deps);
  assert.is(s.status, 'published', s.message);
  const m = manifestOf();
  for (const t of [
    'leads',
    'infrastructure',
    'companies',
    'filings',
    'sales',
    'suppliers',
    'lead_neighbours',
    'registry',
  ]) {
    assert.ok(m.counts.tables[t]! > 0, `table ${t} has rows`);
  }
  assert.is(
    m.counts.records_total,
    m.counts.tables['leads']! + m.counts.tables['infrastructure']! + m.counts.tables['companies']!,
  );
  for (const a of AUTHORITIES) assert.ok(m.counts.authorities[a.name]!.leads > 0, `authority ${a.name} has leads`);
  assert.equal(Object.keys(m.counts.sources).sort(), [
    'commencements',
    'companies',
    'filings',
    'infrastructure',
    'materials',
    'planning',
    'ppr',
    'rents',
  ]);
  for (const [src, c] of Object.entries(m.counts.sources))
    assert.is(c.rows + c.rejects, c.lines, `${src}: rows + rejects = lines`);
  assert.is(m.changes.leads['new'], m.counts.tables['leads']);
  // files on disk match the manifest's checksums and Parquet row counts match the table counts
  const dir = currentRelease(data)!.dir;
  for (const [rel, f] of Object.entries(m.files)) {
    assert.is(
      createHash('sha256')
        .update(readFileSync(join(dir, rel)))
        .digest('hex'),
      f.sha256,
      `checksum of ${rel}`,
    );
  }
  // the summary reports the release's size on disk: its files and manifest.json
  const onDisk = Object.keys(m.files).reduce(
    (n, rel) => n + statSync(join(dir, rel)).size,
    statSync(join(dir, 'manifest.json')).size,
  );
  assert.is(s.releaseBytes, onDisk);
  const db = await openDb();
  try {
    const counts = await parquetRowCounts(db, dir);
    assert.is(counts['leads.parquet'], m.counts.tables['leads']);
    assert.is(counts['sales.parquet'], m.counts.tables['sales']);
    // leads are stored newest first (the API's default order)
    const [o] = await db.all<{ bad: number }>(
      `SELECT count(*)::BIGINT AS bad FROM (SELECT received_date, lag(received_date) OVER () AS prev FROM read_parquet('${join(dir, 'leads.parquet')}')) WHERE prev < received_date`,
    );
    assert.is(o!.bad, 0, 'leads sorted by received_date desc');
    // every published lead row is valid against schemas/ (read back from Parquet, not from memory)
    const v = loadValidators();
    const leads = await db.all(`SELECT * FROM read_parquet('${join(dir, 'leads.parquet')}') LIMIT 300`);
    for (const l of leads) assert.equal(v.validate('lead', l), [], JSON.stringify(l));
  } finally {
    db.close();
  }
});

test('privacy: no release file holds an applicant, owner or builder personal name from the raw files', () => {
  const planning = readFileSync(join(raw, 'planning', 'planning-applications.csv'), 'utf8').split(/\r?\n/);
  const header = planning[0]!.replace(/^\ufeff/, '').split(',');
  const fi = header.indexOf('ApplicantForename');
  const si = header.indexOf('ApplicantSurname');
  const names = new Set<string>();
  for (const line of planning.slice(1, 400)) {
    const f = line.split(',');
    if (f[fi] && f[si] && f[fi]!.trim().length > 2) names.add(`${f[fi]!.trim()} ${f[si]!.trim()}`);
  }
  assert.ok(names.size > 20, 'fixture has individual applicants');
  const dir = currentRelease(data)!.dir;
  const text = ['rejects.jsonl', 'geojson/leads.ndjson']
    .filter((f) => existsSync(join(dir, f)))
    .map((f) => readFileSync(join(dir, f), 'utf8'))
    .join('\n');
  for (const n of names) assert.not.ok(text.includes(n), `personal name ${n} leaked`);
});

test('same input again: nothing to publish; --force rebuilds with 0 new, 0 updated and the same ids; progress and onStage follow the stage table', async () => {
  const names = STAGES.map((s) => s.name);
  assert.is(new Set(names).size, names.length, 'stage names are unique');
  const before = await registry();
  const id1 = currentRelease(data)!.id;
  clock = new Date('2026-11-09T07:00:00Z');
  mkdirSync(join(data, 'releases', '.build-20261109T065000Z')); // a refresh killed mid-build left it (issue 31)
  const again = watch();
  const unchanged = await runPipeline(config({ progress: true }), again.deps);
  assert.is(unchanged.status, 'unchanged');
  assert.not.ok(
    existsSync(join(data, 'releases', '.build-20261109T065000Z')),
    'an unchanged refresh removes a killed build too',
  );
  assert.is(unchanged.releaseBytes, null, 'nothing built, no size');
  assert.is(currentRelease(data)!.id, id1);
  // unchanged input stops after the fingerprint
  assert.equal(again.started, ['fingerprint']);
  assert.equal(again.collected, ['fingerprint']);
  assert.equal(
    progressOf(again.lines).filter(Boolean),
    [['1', String(names.length), 'fingerprint']],
    'one progress line (besides the note of the build removed)',
  );
  const forced = watch();
  const s = await runPipeline(config({ force: true, progress: true }), forced.deps);
  assert.is(s.status, 'published', s.message);
  assert.is.not(currentRelease(data)!.id, id1);
  assert.equal(s.changes!.leads, { new: 0, updated: 0, removed: 0, unchanged: before.size });
  assert.equal([...(await registry()).entries()].sort(), [...before.entries()].sort());
  // every stage once, in table order, a progress line and a collection after each
  assert.equal(forced.started, names);
  assert.equal(forced.collected, names, 'deps.collectGarbage runs after every stage');
  assert.equal(
    progressOf(forced.lines),
    names.map((n, i) => [String(i + 1), String(names.length), n]),
  );
  assert.equal(Object.keys(s.stages), names, 'the summary times every stage of the table, in order');
  assert.equal(
    Object.keys(manifestOf().stages),
    names.slice(0, names.indexOf('manifest')),
    'the manifest times the stages before it',
  );
});

test('week 2: new and updated leads reported, existing ids and first_seen unchanged', async () => {
  const before = await registry();
  await generateRaw({ outDir: raw, scale: SCALES.tiny, seed: 7, week: 2 });
  clock = new Date('2026-11-16T06:00:00Z');
  const s = await runPipeline(config(), deps);
  assert.is(s.status, 'published', s.message);
  assert.ok(s.changes!.leads.new > 0, 'new leads');
  assert.ok(s.changes!.leads.updated > 0, 'updated leads');
  const after = await registry();
  for (const [key, r] of before) {
    const now = after.get(key);
    assert.ok(now, `lead ${key} still in the registry`);
    assert.is(now!.id, r.id, `id of ${key}`);
    assert.is(now!.first_seen, r.first_seen, `first_seen of ${key}`);
  }
  const m = manifestOf();
  assert.is(m.changes.leads['new'], s.changes!.leads.new);
  const db = await openDb();
  try {
    const rows = await db.all<{ change: string; n: number }>(
      `SELECT change, count(*)::BIGINT AS n FROM read_parquet('${join(currentRelease(data)!.dir, 'changes.parquet')}') WHERE "table" = 'leads' GROUP BY 1 ORDER BY 1`,
    );
    const byChange = Object.fromEntries(rows.map((r) => [r.change, r.n]));
    assert.is(byChange['new'], s.changes!.leads.new);
    assert.is(byChange['updated'], s.changes!.leads.updated);
    const [fresh] = await db.all<{ n: number }>(
      `SELECT count(*)::BIGINT AS n FROM read_parquet('${join(currentRelease(data)!.dir, 'leads.parquet')}') WHERE first_seen = DATE '${s.asOf}'`,
    );
    assert.is(fresh!.n, s.changes!.leads.new, 'new leads carry first_seen = as-of date');
  } finally {
    db.close();
  }
});

test('a quality gate failure blocks the publish and names the source and numbers; the CLI exits 1', async () => {
  const id = currentRelease(data)!.id;
  const pprFiles = readdirSync(join(raw, 'ppr')).sort();
  const aside = tempDir('leads-run-ppr-'); // put back at the end, for the tests after this one
  for (const f of pprFiles.slice(0, Math.ceil(pprFiles.length * 0.6))) renameSync(join(raw, 'ppr', f), join(aside, f));
  clock = new Date('2026-11-16T08:00:00Z');
  // `leads refresh` (in process, test/helpers/cli.ts) runs runPipeline and maps its 'blocked' summary
  const r = await runCli(['refresh', '--quiet'], { DATA_DIR: data, RAW_DIR: raw });
  assert.is(r.code, 1);
  assert.match(
    r.stderr,
    /source 'ppr' shrank \d+\.\d% against the last release \([\d,]+ rows now, [\d,]+ before; limit 20\.0%\)/,
  );
  assert.is(currentRelease(data)!.id, id, 'current release unchanged');
  for (const f of readdirSync(aside)) renameSync(join(aside, f), join(raw, 'ppr', f));
});

test('a refresh killed mid-way leaves the previous release current and readable; the next one recovers', async () => {
  const before = currentRelease(data)!;
  const m = manifestOf();
  const child = spawn(process.execPath, [join(REPO_ROOT, 'bin/leads.js'), 'refresh', '--force'], {
    env: { ...process.env, DATA_DIR: data, RAW_DIR: raw },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  await new Promise<void>((resolve) => {
    child.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      if (/read:ppr/.test(err) && !child.killed) {
        child.kill('SIGKILL');
        resolve();
      }
    });
    child.on('exit', () => resolve());
  });
  await new Promise((r) => (child.exitCode !== null || child.signalCode ? r(null) : child.once('exit', r)));
  assert.is(child.signalCode, 'SIGKILL', `refresh was killed mid-way (stderr: ${err.slice(-300)})`);
  assert.is(currentRelease(data)!.id, before.id, 'current unchanged');
  for (const [rel, f] of Object.entries(m.files)) {
    assert.is(
      createHash('sha256')
        .update(readFileSync(join(before.dir, rel)))
        .digest('hex'),
      f.sha256,
      `${rel} intact`,
    );
  }
  const db = await openDb();
  try {
    const [r] = await db.all<{ n: number }>(
      `SELECT count(*)::BIGINT AS n FROM read_parquet('${join(data, 'current', 'leads.parquet')}')`,
    );
    assert.is(r!.n, m.counts.tables['leads']);
  } finally {
    db.close();
  }
  assert.ok(existsSync(join(data, '.refresh.lock')), 'the killed refresh left its lock behind');
  clock = new Date('2026-11-16T09:00:00Z');
  const s = await runPipeline(config({ force: true }), deps);
  assert.is(s.status, 'published', 'next refresh takes over the stale lock');
  assert.equal(
    readdirSync(join(data, 'releases')).filter((f) => f.startsWith('.build-')),
    [],
    'stale build folder removed',
  );
});

test('a refresh that fails while the sales are read beside it stops the reader and leaves no build folder', async () => {
  const before = currentRelease(data)!.id;
  const failing = {
    ...deps,
    onStage: (stage: string) => {
      if (stage === 'read:companies') throw new Error('company register unreadable');
    },
  };
  await rejects(() => runPipeline(config({ force: true }), failing), /company register unreadable/);
  assert.equal(
    readdirSync(join(data, 'releases')).filter((f) => f.startsWith('.build-')),
    [],
    'no build folder',
  );
  assert.is(currentRelease(data)!.id, before, 'current unchanged');
});

function runCli(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return runLeads(args, { ...process.env, ...env });
}

test.run();
