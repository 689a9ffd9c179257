/**
 * The README's client examples (section "Clients": one ```ts and one ```python block) run as
 * written against a real server on port 0: the TypeScript one importing the SDK by its package
 * name, the Python one with leads_client.py on the path. Each pages a filter to its end (the count
 * must be /v1/leads's total), writes an export to a file and catches a problem by its code.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFile, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestApi, type TestApi } from '../helpers/api.ts';
import { testIf } from '../helpers/skip.ts';
import { tempDir } from '../helpers/tmp.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
const CLIENTS = README.slice(
  README.indexOf('\n## Clients\n'),
  README.indexOf('\n## ', README.indexOf('\n## Clients\n') + 5),
);

/** The README's example in `lang`, exactly as written. */
function snippet(lang: string): string {
  const m = new RegExp('```' + lang + '\\n([\\s\\S]*?)```').exec(CLIENTS);
  if (!m) throw new Error(`README's Clients section has no ${lang} block`);
  return m[1]!;
}

let api: TestApi;
let total = 0;
let corkTotal = 0;
test.before(async () => {
  api = await startTestApi();
  total = (await api.request('/v1/leads?county=Cork&vertical=solar,roofing&page_size=1')).body.total;
  corkTotal = (await api.request('/v1/leads?county=Cork&page_size=1')).body.total;
});
test.after(async () => {
  await api?.close();
});

function run(
  cmd: string,
  args: string[],
  cwd: string,
  env: Record<string, string> = {},
): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    execFile(
      cmd,
      args,
      { cwd, env: { ...process.env, LEADS_API_KEY: api.keys.ent_api, LEADS_BASE_URL: `${api.baseUrl}/v1`, ...env } },
      (e, stdout, stderr) =>
        resolve({ code: e ? (typeof e.code === 'number' ? e.code : 1) : 0, out: stdout, err: stderr }),
    );
  });
}

test('each example is at most 20 lines', () => {
  for (const lang of ['ts', 'python'])
    assert.ok(
      snippet(lang).trimEnd().split('\n').length <= 20,
      `${lang}: ${snippet(lang).trimEnd().split('\n').length} lines`,
    );
});

test('the TypeScript example runs as written, importing the SDK by its package name', async () => {
  const dir = tempDir('readme-ts-');
  mkdirSync(join(dir, 'node_modules', '@irish-construction-leads'), { recursive: true });
  symlinkSync(join(ROOT, 'clients', 'typescript'), join(dir, 'node_modules', '@irish-construction-leads', 'client'));
  writeFileSync(join(dir, 'example.mts'), snippet('ts'));
  // `source`: the package's TypeScript entry (its `default` is the built dist/, not built here)
  const r = await run(
    process.execPath,
    ['--import', import.meta.resolve('tsx'), '--conditions=source', 'example.mts'],
    dir,
  );
  assert.is(r.code, 0, r.err);
  assert.match(r.out, new RegExp(`^${total} leads; budget left today: \\d+$`, 'm'));
  assert.match(r.out, /^invalid_parameter .*page_size/m);
  assert.is(readFileSync(join(dir, 'cork.csv'), 'utf8').trimEnd().split('\r\n').length, corkTotal + 1);
});

testIf(test, spawnSync('python3', ['--version']).status === 0 ? null : 'python3 is not installed')(
  'the Python example runs as written with leads_client.py on the path',
  async () => {
    const dir = tempDir('readme-py-');
    writeFileSync(join(dir, 'example.py'), snippet('python'));
    const r = await run('python3', ['example.py'], dir, {
      PYTHONPATH: join(ROOT, 'clients', 'python'),
      PYTHONDONTWRITEBYTECODE: '1',
    });
    assert.is(r.code, 0, r.err);
    assert.match(r.out, new RegExp(`^${total} leads; budget left today: \\d+$`, 'm'));
    assert.match(r.out, new RegExp(`'mode': 'full', 'leads': ${corkTotal}`));
    assert.match(r.out, /^invalid_parameter .*page_size/m);
    assert.is(readFileSync(join(dir, 'cork.csv'), 'utf8').trimEnd().split('\r\n').length, corkTotal + 1);
  },
);

test.run();
