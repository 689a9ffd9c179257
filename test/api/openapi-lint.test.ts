/**
 * `redocly lint` (the @redocly/cli package, recommended rules and redocly.yaml) on the document a
 * server serves with a real PUBLIC_BASE_URL: no error, and exactly the warnings redocly.yaml lists
 * with their reasons and counts.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startTestApi, type TestApi } from '../helpers/api.ts';
import { tempDir } from '../helpers/tmp.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const PUBLIC = 'https://api.leads.ie/v1';
let api: TestApi;

test.before(async () => {
  api = await startTestApi({ config: { publicBaseUrl: PUBLIC } });
});
test.after(async () => {
  await api?.close();
});

/** The warnings redocly.yaml's comment justifies: `- rule (count): reason`. */
function justified(): Record<string, number> {
  const text = readFileSync(join(ROOT, 'redocly.yaml'), 'utf8');
  return Object.fromEntries([...text.matchAll(/^# - ([a-z0-9.-]+) \((\d+)\):/gm)].map((m) => [m[1]!, Number(m[2])]));
}

test('the served document: 0 errors, and only the warnings redocly.yaml justifies, as many as it says', async () => {
  const res = await api.request('/v1/openapi.json');
  assert.equal(
    res.body.servers.map((s: { url: string }) => s.url),
    [PUBLIC],
    'the public base URL is the server',
  );
  const file = join(tempDir('redocly-'), 'openapi.json');
  writeFileSync(file, res.text);
  const { stdout } = await promisify(execFile)(
    join(ROOT, 'node_modules', '.bin', 'redocly'),
    ['lint', file, '--format=json', `--config=${join(ROOT, 'redocly.yaml')}`],
    {
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
      maxBuffer: 64 << 20,
    },
  );
  const report = JSON.parse(stdout) as {
    totals: { errors: number; warnings: number };
    problems: { ruleId: string; severity: string; message: string }[];
  };
  const errors = report.problems.filter((p) => p.severity === 'error');
  assert.equal(
    errors.map((p) => `${p.ruleId}: ${p.message}`),
    [],
  );
  const counts: Record<string, number> = {};
  for (const p of report.problems) counts[p.ruleId] = (counts[p.ruleId] ?? 0) + 1;
  assert.equal(counts, justified());
});

test.run();
