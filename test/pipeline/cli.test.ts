/**
 * The data team's CLI end to end, as child processes: `leads generate` → `leads refresh --raw DIR
 * --json` into another DATA_DIR, the `--generate-if-empty` path, exit codes for bad usage, and
 * `leads ingest` on a generated file.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT, tempDir } from '../helpers/tmp.ts';
import type { RefreshSummary } from '../../pipeline/run.ts';
import { STAGES } from '../../pipeline/stages/index.ts';

const leads = (args: string[], env: Record<string, string> = {}) =>
  spawnSync(process.execPath, [join(REPO_ROOT, 'bin/leads.js'), ...args], { env: { ...process.env, ...env }, encoding: 'utf8' });

test('generate into one folder, refresh --raw from it into another DATA_DIR', () => {
  const raw = tempDir('leads-cli-raw-');
  const data = tempDir('leads-cli-data-');
  const g = leads(['generate', '--scale', 'tiny', '--seed', '3', '--out', raw, '--json']);
  assert.is(g.status, 0, g.stderr);
  assert.equal(readdirSync(raw).sort(), ['commencements', 'companies', 'fetch-log.json', 'infrastructure', 'materials', 'planning', 'ppr', 'rents']);
  assert.is(JSON.parse(readFileSync(join(raw, 'fetch-log.json'), 'utf8')).origin, 'generated', 'generate says the files are generated');
  const r = leads(['refresh', '--raw', raw, '--json', '--quiet'], { DATA_DIR: data });
  assert.is(r.status, 0, r.stderr);
  const summary = JSON.parse(r.stdout) as RefreshSummary;
  assert.is(summary.status, 'published');
  // what a scheduler alerts on (docs/operations.md): every stage's time and rows, the row counts, the gates
  assert.equal(Object.keys(summary.stages), STAGES.map((s) => s.name), 'a timing per stage, in order');
  for (const [name, t] of Object.entries(summary.stages)) {
    assert.ok(Number.isFinite(t.ms) && t.ms >= 0 && Number.isInteger(t.rows) && t.rows >= 0 && Number.isFinite(t.rows_per_s), `stage ${name}: ${JSON.stringify(t)}`);
  }
  assert.ok(summary.counts['leads']! > 0 && Object.values(summary.counts).every((n) => Number.isInteger(n)), JSON.stringify(summary.counts));
  assert.ok(summary.wallMs > 0 && summary.gates.passed === true, JSON.stringify(summary.gates));
  assert.ok(existsSync(join(data, 'releases', summary.releaseId!, 'manifest.json')));
  assert.not.ok(existsSync(join(data, 'raw')), '--raw read from the given folder, nothing generated under DATA_DIR');
  const again = leads(['refresh', '--raw', raw, '--json', '--quiet'], { DATA_DIR: data });
  assert.is(JSON.parse(again.stdout).status, 'unchanged');
});

test('ingest prints the dry-run report for a generated file', () => {
  const raw = tempDir('leads-cli-ingest-');
  assert.is(leads(['generate', '--scale', 'tiny', '--out', raw]).status, 0);
  const ppr = readdirSync(join(raw, 'ppr')).map((f) => join(raw, 'ppr', f));
  const r = leads(['ingest', 'ppr', ...ppr, '--json']);
  assert.is(r.status, 0, r.stderr);
  const report = JSON.parse(r.stdout) as { source: string; rows: number; rejects: number; lines: number };
  assert.is(report.source, 'ppr');
  assert.is(report.rows + report.rejects, report.lines);
  assert.ok(report.rows > 1000);
});

const usage: [string[], RegExp][] = [
  [['frobnicate'], /unknown command 'frobnicate'/],
  [['ingest', 'nosuchsource', 'x.csv'], /ingest needs a source/],
  [['ingest', 'ppr', '/no/such/file.csv'], /no such file/],
  [['generate', '--week', '0'], /--week must be an integer ≥ 1/],
  [['generate', '--scale', 'huge'], /--scale must be tiny, small, default, stress or a positive number/],
];
for (const [args, message] of usage) {
  test(`usage error exits 2: leads ${args.join(' ')}`, () => {
    const r = leads(args);
    assert.is(r.status, 2);
    assert.match(r.stderr, message);
  });
}

test.run();
