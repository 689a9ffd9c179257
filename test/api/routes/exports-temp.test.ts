/**
 * The export temp files over real HTTP and the real server command (issue 13, 3.2): a file
 * export's temp file is `0600` in a `0700` folder of the server's own and is gone when the
 * response ends; past EXPORT_TEMP_MAX_MB a new export waits, then gets `503 export_busy` with
 * `Retry-After` (and is not charged); a server killed with SIGKILL mid-export leaves its files
 * behind, and the next server start removes them.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { defaultAloneSlots } from '../../../api/duckdb/db.ts';
import { loaderArgs } from '../../../api/startup/loader-args.ts';
import { assertProblem, startTestApi } from '../../helpers/api.ts';
import { REPO_ROOT } from '../../helpers/tmp.ts';
import { enginePackPreload } from '../../helpers/engine-pack-preload.ts';

const mode = (p: string): string => (statSync(p).mode & 0o777).toString(8);
const until = async (ok: () => boolean, ms = 30_000, what = 'condition'): Promise<void> => {
  const t0 = Date.now();
  while (!ok()) {
    if (Date.now() - t0 > ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
};

test("an export's temp file is 0600, in a 0700 folder of the server's own, and removed when the response ends", async () => {
  const api = await startTestApi();
  try {
    const root = api.config.exportTempDir;
    const own = api.server.exportTemp.dir;
    assert.is(join(own, '..'), root, 'the process folder is inside EXPORT_TEMP_DIR');
    assert.match(own.slice(root.length + 1), new RegExp(`-${process.pid}-[0-9a-f]{8}$`));
    // hold every slot for long statements, so the export's COPY waits with its file created
    const blockers = Array.from({ length: defaultAloneSlots() }, () =>
      api.server.db.startAlone('SELECT count(*) FROM range(1000000000000)'),
    );
    const res = api.request('/v1/export/applications.parquet?county=Cork', { key: api.keys.custom });
    await until(() => readdirSync(own).length === 1, 30_000, 'the temp file');
    const [file] = readdirSync(own);
    assert.match(file!, /^export-[0-9a-f-]{36}\.parquet$/);
    assert.is(mode(join(own, file!)), '600', 'the file: owner only');
    assert.is(mode(own), '700', "the server's folder: owner only");
    assert.is(mode(root), '700', 'EXPORT_TEMP_DIR: owner only');
    assert.not.ok(
      readdirSync(tmpdir()).some(
        (f) =>
          f.startsWith('leads-export-') &&
          f.endsWith('.parquet') &&
          statSync(join(tmpdir(), f)).mtimeMs > Date.now() - 5000,
      ),
      'nothing in the system temp folder',
    );
    for (const b of blockers) b.cancel();
    await Promise.allSettled(blockers.map((b) => b.done));
    const r = await res;
    assert.is(r.status, 200);
    assert.ok(r.text.startsWith('PAR1'), 'a Parquet file');
    // removed off the event loop, its space given back once it is gone
    await until(
      () => readdirSync(own).length === 0 && api.server.exportTemp.heldBytes() === 0,
      10_000,
      'the file to be removed and its space given back',
    );
  } finally {
    await api.close();
  }
});

test('past EXPORT_TEMP_MAX_MB a new export waits, then gets 503 export_busy with Retry-After and is not charged; it proceeds when space frees', async () => {
  const api = await startTestApi({ config: { exportTempMaxMb: 1, exportTempWaitMs: 300 } });
  try {
    const path = '/v1/export/applications.parquet'; // ~0.3 MB expected (CSV and JSON Lines take no temp space)
    const budget = async (): Promise<string | null> =>
      (await api.request('/v1/meta')).headers.get('x-budget-remaining');
    const before = await budget();
    // a slow reader's file holding 0.9 MB of the 1 MB
    const held = await api.server.exportTemp.acquire('jsonl', 450);
    const answer = api.request(path);
    await until(() => api.server.exportTemp.waitingExports() === 1, 10_000, 'the export to wait for space');
    const busy = await answer;
    assert.is(api.server.exportTemp.waitingExports(), 0, 'it gave up waiting');
    assertProblem(busy, 503, 'export_busy');
    assert.is(busy.headers.get('retry-after'), '30');
    assert.match(busy.body.detail, /temp space/);
    assert.is(await budget(), before, 'a refused export charges nothing');
    // quotes take no temp space
    assert.is((await api.request(`${path}?dry_run=1`)).status, 200);
    assert.is((await api.request(path, { method: 'HEAD' })).status, 200);
    // space freed while an export waits: it goes ahead
    const waiting = api.request(path);
    await until(() => api.server.exportTemp.waitingExports() === 1, 10_000, 'the export to wait for space');
    held.release();
    const ok = await waiting;
    assert.is(ok.status, 200);
    assert.ok(ok.text.startsWith('PAR1'));
    assert.is.not(await budget(), before, 'the export that ran was charged');
    await until(() => api.server.exportTemp.heldBytes() === 0, 10_000, 'the space to be released');
  } finally {
    await api.close();
  }
});

test('CSV and JSON Lines take no temp space: written from memory, they go ahead while Parquet exports hold it all', async () => {
  const api = await startTestApi({ config: { exportTempMaxMb: 1, exportTempWaitMs: 300 } });
  try {
    const held = await api.server.exportTemp.acquire('jsonl', 499); // 0.998 MB of the 1 MB
    for (const ext of ['csv', 'jsonl']) {
      const res = await api.request(`/v1/export/applications.${ext}`);
      assert.is(res.status, 200, `${ext}: ${res.text.slice(0, 200)}`);
      assert.ok(
        res.text.length > 500_000,
        `${ext}: the whole file (${res.text.length} bytes), where 2 KB of space are left`,
      );
    }
    assert.equal(readdirSync(api.server.exportTemp.dir), [held.path.split('/').pop()], 'no temp file of theirs');
    assertProblem(await api.request('/v1/export/applications.parquet'), 503, 'export_busy');
    await held.release();
  } finally {
    await api.close();
  }
});

/**
 * Start `node api/server.ts` on `dataDir` (with the test process's loader flags: none in the test
 * runner's workers, which strip the types themselves; its indexes from the tests' packs,
 * test/helpers/engine-pack-preload.ts); resolves with the child once it listens.
 */
async function serve(
  dataDir: string,
  databaseUrl: string,
): Promise<{ child: ChildProcess; log: () => string; exited: Promise<number | null> }> {
  const child = spawn(process.execPath, [...loaderArgs(), ...enginePackPreload(), 'api/server.ts'], {
    cwd: REPO_ROOT,
    env: {
      ...process.env,
      DATA_DIR: dataDir,
      DATABASE_URL: databaseUrl,
      PORT: '0',
      HOST: '127.0.0.1',
      DUCKDB_CONNECTIONS: '1',
      DUCKDB_THREADS: '1',
      WEBHOOK_INTERVAL_MS: '0',
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (c) => (stderr += c));
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  await until(() => /listening on/.test(stderr) || child.exitCode !== null, 60_000, 'the server to listen');
  assert.match(stderr, /listening on/);
  return { child, log: () => stderr, exited };
}

test('a server killed with SIGKILL mid-export leaves its temp files; the next start removes them (and only them)', async () => {
  const api = await startTestApi(); // its data folder, state file and (live) temp folder
  const root = api.config.exportTempDir;
  const host = hostname().replace(/[^A-Za-z0-9.]/g, '_');
  const legacy = join(tmpdir(), `leads-export-${randomUUID()}.csv`);
  try {
    const first = await serve(api.dataDir, api.config.databaseUrl);
    const folder = readdirSync(root).find((d) => d.startsWith(`${host}-${first.child.pid}-`));
    assert.ok(folder, `the server's folder in ${readdirSync(root).join(', ')}`);
    // what an export in progress leaves there (DuckDB writing, the response streaming)
    const leftover = join(root, folder!, `export-${randomUUID()}.jsonl`);
    writeFileSync(leftover, '{"applicant_org":"Acme Ltd"}\n'.repeat(1000), { mode: 0o600 });
    first.child.kill('SIGKILL');
    await first.exited;
    assert.ok(existsSync(leftover), 'SIGKILL leaves the file behind');
    // and what else may be there: a stray file, another host's live folder, an earlier version's file in the system temp folder
    writeFileSync(join(root, 'stray.csv'), 'x');
    mkdirSync(join(root, 'other-host.example-4242-0123abcd'));
    writeFileSync(legacy, 'x', { mode: 0o644 });
    utimesSync(legacy, new Date(Date.now() - 3_600_000), new Date(Date.now() - 3_600_000));

    const second = await serve(api.dataDir, api.config.databaseUrl);
    const left = readdirSync(root);
    assert.not.ok(left.includes(folder!), "the killed server's folder is removed");
    assert.not.ok(existsSync(leftover));
    assert.not.ok(left.includes('stray.csv'));
    assert.ok(left.includes('other-host.example-4242-0123abcd'), "another host's folder is its own to clean");
    assert.ok(existsSync(api.server.exportTemp.dir), "a live server's folder is kept");
    assert.ok(
      left.some((d) => d.startsWith(`${host}-${second.child.pid}-`)),
      'the new server has its own folder',
    );
    assert.not.ok(existsSync(legacy), "an earlier version's file in the system temp folder is removed");
    assert.match(second.log(), /export temp: removed \d+ leftovers/);
    assert.is(mode(root), '700');
    second.child.kill('SIGTERM');
    assert.is(await second.exited, 0, second.log());
    assert.not.ok(
      readdirSync(root).some((d) => d.startsWith(`${host}-${second.child.pid}-`)),
      'a clean stop removes its own folder',
    );
  } finally {
    await api.close();
  }
});

test.run();
