/**
 * The docs keep up with the code: every pipeline configuration variable is in
 * docs/operations.md, every `leads` command is in the README or docs, and every stage of the
 * refresh is in docs/releases.md, and docs/architecture.md names only paths that exist.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PIPELINE_DEFAULTS } from '../pipeline/config.ts';
import { STAGES } from '../pipeline/stages/index.ts';
import { USAGE as API_USAGE } from '../api/cli/main.ts';
import { REPO_ROOT } from './helpers/tmp.ts';

const read = (f: string): string => readFileSync(join(REPO_ROOT, f), 'utf8');

test('every pipeline environment variable is documented in docs/operations.md', () => {
  const ops = read('docs/operations.md');
  for (const spec of Object.values(PIPELINE_DEFAULTS)) {
    if (spec.env) assert.ok(ops.includes(`\`${spec.env}\``), `${spec.env} missing from docs/operations.md`);
  }
});

test('every leads command is documented', () => {
  const docs = read('README.md') + read('docs/operations.md') + read('docs/api.md');
  const pipelineCommands = ['fetch', 'refresh', 'generate', 'ingest'];
  const apiCommands = [...API_USAGE.matchAll(/^  (\w+ \w+)/gm)].map((m) => m[1]!);
  assert.ok(apiCommands.length >= 4, `found API commands: ${apiCommands.join(', ')}`);
  for (const c of pipelineCommands) assert.ok(docs.includes(`leads ${c}`), `leads ${c} missing from the docs`);
  for (const c of apiCommands) assert.ok(docs.includes(`leads ${c}`), `leads ${c} missing from the docs`);
});

test("every stage of the refresh's stage table is in docs/releases.md", () => {
  const releases = read('docs/releases.md');
  for (const { name } of STAGES)
    assert.ok(releases.includes(`\`${name}\``), `stage ${name} missing from docs/releases.md`);
});

test('the README shows the two commands a newcomer needs', () => {
  const readme = read('README.md');
  assert.ok(readme.includes('make serve'));
  assert.ok(readme.includes('make test'));
});

test('docs/architecture.md names only files and folders that exist', () => {
  const page = read('docs/architecture.md');
  // every `path` in backticks that looks like a repository path (has a slash, no spaces or wildcards)
  const paths = [...page.matchAll(/`([a-z][\w.-]*\/[\w./-]*)`/g)]
    .map((m) => m[1]!)
    .filter((p) => !p.includes('<') && !p.startsWith('http'));
  assert.ok(paths.length >= 30, `found only ${paths.length} paths`);
  const missing = paths.filter((p) => !existsSync(join(REPO_ROOT, p.replace(/\*.*$/, ''))));
  assert.equal(missing, [], `docs/architecture.md names paths that do not exist: ${missing.join(', ')}`);
});

test('the README sends a newcomer to docs/architecture.md', () => {
  assert.ok(read('README.md').includes('docs/architecture.md'));
});

test.run();
