/**
 * The infrastructure generator at scales above 1 (issue 14.5): its files, read by the project's
 * own adapter, pass the project's own quality gate at every scale `leads generate` accepts. Only
 * the infrastructure source is generated (a small company registry supplies developer names), so
 * scale 100 stays fast.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadPipelineConfig } from '../../../pipeline/config.ts';
import { checkGates } from '../../../pipeline/release/gates.ts';
import { countReasons } from '../../../pipeline/sources/common.ts';
import { readInfrastructure } from '../../../pipeline/sources/infrastructure.ts';
import { buildCompanies } from '../../../pipeline/synth/companies.ts';
import { WEEK1_SNAPSHOT } from '../../../pipeline/synth/generate.ts';
import { buildProjects, writeInfrastructure } from '../../../pipeline/synth/infrastructure.ts';
import { isoToDay } from '../../../pipeline/synth/output.ts';

const root = mkdtempSync(join(tmpdir(), 'synth-infra-test-'));
const registry = buildCompanies(7, 0.05);
const config = loadPipelineConfig({}, { dataDir: root, rawDir: root });
const limits = { maxShrinkRatio: config.gateMaxShrinkRatio, maxRejectRatio: config.gateMaxRejectRatio };

test.after(() => rmSync(root, { recursive: true, force: true }));

/** Generate the four infrastructure files at `scale` for `week` and read them back. */
async function generateAndRead(scale: number, week: number) {
  const dir = join(root, `s${scale}-w${week}`);
  const snap1 = isoToDay(WEEK1_SNAPSHOT);
  const asOf = snap1 + 7 * (week - 1);
  writeInfrastructure(buildProjects(7, scale, snap1, asOf, registry), asOf, dir);
  const files = readdirSync(join(dir, 'infrastructure'))
    .sort()
    .map((f) => join(dir, 'infrastructure', f));
  const r = await readInfrastructure(files);
  return { lines: r.lines, rows: r.rows.length, rejects: r.rejects.length, reasons: countReasons(r.rejects) };
}

for (const scale of [5, 100]) {
  test(`infrastructure at scale ${scale}: passes the quality gate, weeks 1 and 2, with no more duplicates than the planted bad rows`, async () => {
    const w1 = await generateAndRead(scale, 1);
    const g1 = checkGates({ infrastructure: w1 }, null, limits);
    assert.ok(g1.passed, `week 1: ${g1.messages.join('; ')}`);
    // the generator plants 0.2% damaged rows per file; duplicates beyond them are collisions
    assert.ok(
      (w1.reasons['duplicate'] ?? 0) <= Math.ceil(w1.lines * 0.002),
      `week 1 duplicates: ${JSON.stringify(w1.reasons)} of ${w1.lines} lines`,
    );
    const w2 = await generateAndRead(scale, 2);
    const g2 = checkGates({ infrastructure: w2 }, { infrastructure: w1 }, limits);
    assert.ok(g2.passed, `week 2: ${g2.messages.join('; ')}`);
  });
}

test.run();
