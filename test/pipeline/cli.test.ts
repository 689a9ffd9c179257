/**
 * The data team's CLI end to end, run in process (test/helpers/cli.ts; the real binary's smoke
 * test is in test/api/cli/main.test.ts): `leads generate` → `leads refresh --raw DIR --json` into
 * another DATA_DIR, exit codes for bad usage, `leads ingest` on a generated file, and `leads
 * classify` on descriptions read from standard input.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { tempDir } from '../helpers/tmp.ts';
import { leads as runLeads } from '../helpers/cli.ts';
import { scaledRelease } from '../helpers/scaled-release.ts';
import type { RefreshSummary } from '../../pipeline/run.ts';
import { STAGES } from '../../pipeline/stages/index.ts';
import { classifyApplication } from '../../pipeline/normalise/classify.ts';

const leads = async (args: string[], env: Record<string, string> = {}, input = '') => {
  const r = await runLeads(args, { ...process.env, ...env }, input);
  return { status: r.code, stdout: r.stdout, stderr: r.stderr };
};

test("classify: one JSON object per input line, the refresh's own classification, no name in the output", async () => {
  const lines = [
    'Single storey extension to rear with 2 no. velux rooflights',
    'RETENTION - 1.875m high boundary wall to front',
    'I, Mary Glass, intend to apply for permission for a dormer window to the rear',
    JSON.stringify({
      description: 'Construction of a new dwelling house',
      application_number: '24/100',
      application_type: 'OUTLINE PERMISSION',
      num_units: 1,
    }),
    JSON.stringify({ DevelopmentDescription: 'Single storey extension to rear', ApplicationType: 'RETENTION' }),
    '',
  ];
  const r = await leads(['classify'], {}, lines.join('\n') + '\n');
  assert.is(r.status, 0, r.stderr);
  const got = r.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  assert.is(got.length, lines.length);
  for (const g of got)
    for (const k of ['use_class', 'works_kind', 'verticals', 'explicit_verticals', 'vertical_evidence', 'demolition'])
      assert.ok(k in g, k);
  assert.equal(got[0], { ...classifyApplication({ description: lines[0]! }) });
  assert.is(got[1]!['works_kind'], 'retention');
  assert.equal(got[1]!['verticals'], []);
  assert.not.match(r.stdout, /mary|glass/i);
  assert.equal(got[2]!['explicit_verticals'], ['roofing', 'windows_doors']);
  assert.is(got[3]!['application_number'], '24/100');
  assert.is(got[3]!['works_kind'], 'outline');
  assert.is(got[3]!['use_class'], 'house');
  assert.is(got[4]!['works_kind'], 'retention');
});

test('classify: a line that is not a JSON object is an error line and exit 1', async () => {
  const r = await leads(['classify'], {}, '{nope\nSingle storey extension\n');
  assert.is(r.status, 1);
  const got = r.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  assert.ok('error' in got[0]!);
  assert.is(got[1]!['use_class'], 'residential_extension');
  assert.match(r.stderr, /1 line\(s\) could not be read/);
});

test('generate into one folder, refresh --raw from it into another DATA_DIR', async () => {
  const raw = tempDir('leads-cli-raw-');
  const data = tempDir('leads-cli-data-');
  const g = await leads(['generate', '--scale', 'tiny', '--seed', '3', '--out', raw, '--json']);
  assert.is(g.status, 0, g.stderr);
  assert.equal(readdirSync(raw).sort(), [
    'commencements',
    'companies',
    'fetch-log.json',
    'infrastructure',
    'materials',
    'planning',
    'ppr',
    'rents',
  ]);
  assert.is(
    JSON.parse(readFileSync(join(raw, 'fetch-log.json'), 'utf8')).origin,
    'generated',
    'generate says the files are generated',
  );
  const r = await leads(['refresh', '--raw', raw, '--json', '--quiet'], { DATA_DIR: data });
  assert.is(r.status, 0, r.stderr);
  const summary = JSON.parse(r.stdout) as RefreshSummary;
  assert.is(summary.status, 'published');
  // what a scheduler alerts on (docs/operations.md): every stage's time and rows, the row counts, the gates
  assert.equal(
    Object.keys(summary.stages),
    STAGES.map((s) => s.name),
    'a timing per stage, in order',
  );
  for (const [name, t] of Object.entries(summary.stages)) {
    assert.ok(
      Number.isFinite(t.ms) && t.ms >= 0 && Number.isInteger(t.rows) && t.rows >= 0 && Number.isFinite(t.rows_per_s),
      `stage ${name}: ${JSON.stringify(t)}`,
    );
  }
  assert.ok(
    summary.counts['leads']! > 0 && Object.values(summary.counts).every((n) => Number.isInteger(n)),
    JSON.stringify(summary.counts),
  );
  assert.ok(summary.wallMs > 0 && summary.gates.passed === true, JSON.stringify(summary.gates));
  assert.ok(existsSync(join(data, 'releases', summary.releaseId!, 'manifest.json')));
  assert.not.ok(existsSync(join(data, 'raw')), '--raw read from the given folder, nothing generated under DATA_DIR');
  const again = await leads(['refresh', '--raw', raw, '--json', '--quiet'], { DATA_DIR: data });
  assert.is(JSON.parse(again.stdout).status, 'unchanged');
});

test('ingest prints the dry-run report for a generated file', async () => {
  // the raw files the generator wrote for the cached tiny release (test/helpers/scaled-release.ts
  // keeps them beside it; `leads generate` itself is tested above), not generated a second time
  const tiny = await scaledRelease('tiny', 7);
  const raw = join(dirname(dirname(tiny.truthFile)), 'raw');
  const ppr = readdirSync(join(raw, 'ppr')).map((f) => join(raw, 'ppr', f));
  const r = await leads(['ingest', 'ppr', ...ppr, '--json']);
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
  test(`usage error exits 2: leads ${args.join(' ')}`, async () => {
    const r = await leads(args);
    assert.is(r.status, 2);
    assert.match(r.stderr, message);
  });
}

test.run();
