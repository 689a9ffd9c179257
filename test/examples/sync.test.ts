/**
 * The sync examples (examples/sync/sync.py, standard library only, and examples/sync/sync.ts) run
 * as a customer runs them — child processes against a real server — over four weekly releases:
 * week 1's full export, then the event feed each week. Their SQLite mirrors must equal week 4's
 * export record by record, field by field.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { startTestApi, type TestApi } from '../helpers/api.ts';
import { tempDir } from '../helpers/tmp.ts';
import { weeklyReleases, type WeeklyReleases } from '../helpers/weekly-releases.ts';

const run = promisify(execFile);
const ROOT = new URL('../../', import.meta.url).pathname;
let api: TestApi;
let w: WeeklyReleases;
const dir = tempDir('leads-sync-examples-');

test.before(async () => {
  w = await weeklyReleases();
  w.switchTo(w.ids[0]!);
  api = await startTestApi({ config: { dataDir: w.dataDir } });
});
test.after(async () => {
  await api?.close();
});

const EXAMPLES = {
  python: (env: NodeJS.ProcessEnv) => run('python3', [join(ROOT, 'examples/sync/sync.py')], { env }),
  typescript: (env: NodeJS.ProcessEnv) =>
    run(process.execPath, ['--import', 'tsx', join(ROOT, 'examples/sync/sync.ts')], { env, cwd: ROOT }),
};

test('sync.py and sync.ts keep a SQLite mirror exact: week 1 export + events through week 4 = week 4 export', async () => {
  const env = (name: string): NodeJS.ProcessEnv => ({
    ...process.env,
    LEADS_API_URL: api.baseUrl,
    LEADS_API_KEY: api.keys.ent_api,
    LEADS_DB: join(dir, `${name}.sqlite`),
    LEADS_FILTER: 'county=Cork,Dublin',
  });
  const out: Record<string, string[]> = { python: [], typescript: [] };
  for (const id of w.ids) {
    w.switchTo(id);
    await api.checkRelease();
    for (const [name, exec] of Object.entries(EXAMPLES)) {
      const r = await exec(env(name));
      out[name]!.push(r.stdout.trim());
    }
  }
  const want = new Map<number, unknown>();
  let url = '/v1/export/applications?limit=1000&county=Cork,Dublin';
  for (;;) {
    const res = await api.request(url, { key: api.keys.ent_feed });
    for (const r of res.body.results) want.set(r.id, r);
    if (!res.body.next_cursor) break;
    url = `/v1/export/applications?limit=1000&county=Cork,Dublin&cursor=${encodeURIComponent(res.body.next_cursor)}`;
  }
  for (const name of Object.keys(EXAMPLES)) {
    assert.match(out[name]![0]!, /^full export: \d+ leads of release /, `${name}: ${out[name]![0]}`);
    assert.ok(
      out[name]!.slice(1).every((l) => l.startsWith('events applied: ')),
      out[name]!.join(' | '),
    );
    const db = new Database(join(dir, `${name}.sqlite`), { readonly: true });
    const rows = db.prepare('SELECT id, data FROM leads ORDER BY id').all() as { id: number; data: string }[];
    db.close();
    assert.equal(
      rows.map((r) => r.id),
      [...want.keys()].sort((a, b) => a - b),
      `${name}: the same leads`,
    );
    for (const r of rows) assert.equal(JSON.parse(r.data), want.get(r.id), `${name}: lead ${r.id}`);
  }
});

test.run();
