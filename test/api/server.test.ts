/**
 * The server: a release swapped in while requests are in flight (none fails; later requests see
 * the new release), HTTPS with HSTS on a self-signed certificate, 503 before any release, the
 * command-line entry with graceful shutdown, and docs/api.md documenting every config key.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { rejects } from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import { join } from 'node:path';
import { API_DEFAULTS, loadApiConfig } from '../../api/config.ts';
import { HSTS } from '../../api/middleware/security-headers.ts';
import { startServer } from '../../api/server.ts';
import { MALLOC_ARENAS, missingFlags, SERVING_V8_FLAGS } from '../../api/startup/serving-process.ts';
import { assertProblem, publishCopyOfRelease, startTestApi } from '../helpers/api.ts';
import { waitUntil } from '../helpers/wait.ts';
import { recordInManifest } from '../helpers/manifest.ts';
import { REPO_ROOT, tempDir } from '../helpers/tmp.ts';
import { enginePackPreload } from '../helpers/engine-pack-preload.ts';

test('a new release published while requests are in flight: none fails, later requests get it', async () => {
  // freshEngine: the new release's indexes build in a child process, as in production, while requests run
  const api = await startTestApi({
    config: { duckdbConnections: 4, releasePollMs: 60_000 },
    freshEngine: 'new releases',
  });
  try {
    const before = api.release();
    const paths = [
      '/v1/meta',
      '/v1/leads?page_size=5',
      '/v1/leads?sort=value_desc&page_size=3',
      '/v1/infrastructure',
      '/v1/leads?q=house',
    ];
    const results: { status: number; release: string | undefined; path: string }[] = [];
    let swapped = false;
    const fire = async (n: number): Promise<void> => {
      const path = paths[n % paths.length]!;
      // ent_feed: no daily row budget, so a slow switch on a busy machine cannot exhaust it
      const res = await api.request(path, { key: api.keys.ent_feed });
      results.push({ status: res.status, release: res.body?._meta?.release, path });
    };
    // ~50 requests in flight; the release is switched and loaded while they run
    const inFlight = Array.from({ length: 50 }, (_, i) => fire(i));
    const swap = (async () => {
      await waitUntil('a first answer from the old release', () => results.length > 0, {
        attempts: 6000,
        intervalMs: 5,
      }); // the others still in flight
      publishCopyOfRelease(api.dataDir, '20261116T060000Z');
      swapped = await api.checkRelease();
    })();
    const more = (async () => {
      // keeps requests running across the switch (the indexes build in a child process for a
      // second or more), and a few after it: one at a time, 10 ms apart. Back to back they cost
      // the file ~5 s of CPU and starved the build (a child at a lower priority) on a busy machine.
      const deadline = Date.now() + 120_000;
      for (let i = 0, extra = 5; Date.now() < deadline && (!swapped || extra-- > 0); i++) {
        await fire(i);
        await new Promise((r) => setTimeout(r, 10));
      }
    })();
    await Promise.all([...inFlight, swap, more]);
    assert.ok(swapped, 'the new release was loaded');
    const failed = results.filter((r) => r.status !== 200);
    assert.equal(failed, [], 'no request failed during the switch');
    assert.ok(results.length >= 55);
    for (const r of results)
      assert.ok(r.release === before || r.release === '20261116T060000Z', `${r.path}: ${r.release}`);
    assert.ok(
      results.some((r) => r.release === before),
      'some answered from the old release',
    );
    assert.equal(
      results.slice(-5).map((r) => r.release),
      Array(5).fill('20261116T060000Z'),
      'requests after the switch get the new one',
    );
    assert.is(api.release(), '20261116T060000Z');
    const after = await Promise.all(paths.map((p) => api.request(p)));
    for (const r of after) {
      assert.is(r.status, 200);
      assert.is(r.body._meta.release, '20261116T060000Z');
    }
    const meta = (await api.request('/v1/meta')).body;
    assert.is(meta.release.id, '20261116T060000Z');
    // an ETag of the old release does not match any more
    assert.is.not(after[0]!.headers.get('etag'), null);
  } finally {
    await api.close();
  }
});

test('a published release whose indexes cannot be built is not served: the previous one keeps answering', async () => {
  const api = await startTestApi({ config: { releasePollMs: 60_000 } });
  try {
    const before = api.release();
    publishCopyOfRelease(api.dataDir, '20261116T060000Z');
    const dir = join(api.dataDir, 'releases', '20261116T060000Z');
    writeFileSync(join(dir, 'leads.parquet'), 'damaged');
    recordInManifest(dir, 'leads.parquet'); // so it passes the checksums and fails the build
    await rejects(api.checkRelease(), /building the indexes of .*20261116T060000Z failed/);
    const refused = (await api.request('/v1/meta')).body.release_status.refused;
    assert.is(refused.release, '20261116T060000Z');
    assert.match(refused.reason, /^building the indexes of <release> failed \(exit 1\)/);
    assert.is(api.release(), before);
    for (const path of ['/v1/leads?page_size=3', '/v1/leads?q=house', `/v1/meta`]) {
      const res = await api.request(path);
      assert.is(res.status, 200, `${path}: ${res.text.slice(0, 200)}`);
      assert.is(res.body._meta?.release ?? res.body.release?.id, before);
    }
  } finally {
    await api.close();
  }
});

test('HTTPS with HSTS when a certificate and key are configured', async () => {
  const dir = tempDir('leads-tls-');
  const cert = join(dir, 'cert.pem');
  const key = join(dir, 'key.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-subj',
      '/CN=localhost',
      '-days',
      '1',
      '-keyout',
      key,
      '-out',
      cert,
    ],
    { stdio: 'ignore' },
  );
  const api = await startTestApi({ config: { tlsCertFile: cert, tlsKeyFile: key } });
  try {
    assert.match(api.baseUrl, /^https:\/\/127\.0\.0\.1:\d+$/);
    const get = (path: string, auth: boolean) =>
      new Promise<{ status: number; headers: Record<string, unknown>; body: any }>((resolve, reject) => {
        const req = https.get(
          api.baseUrl + path,
          {
            ca: readFileSync(cert),
            checkServerIdentity: () => undefined, // the certificate names localhost; we connect to 127.0.0.1
            headers: auth ? { Authorization: `Bearer ${api.keys.ent_api}` } : {},
          },
          (res) => {
            let text = '';
            res.on('data', (c) => (text += c));
            res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: JSON.parse(text) }));
          },
        );
        req.on('error', reject);
      });
    const ok = await get('/v1/meta', true);
    assert.is(ok.status, 200);
    assert.is(ok.headers['strict-transport-security'], HSTS);
    assert.is(ok.body._meta.release, api.release());
    const denied = await get('/v1/meta', false);
    assert.is(denied.status, 401);
    assert.is(denied.headers['strict-transport-security'], HSTS, 'HSTS on errors too');
  } finally {
    await api.close();
  }
});

test('no release yet: the server starts and answers 503 no_release', async () => {
  const dataDir = tempDir('leads-empty-');
  const config = loadApiConfig({}, { dataDir, port: 0, host: '127.0.0.1', duckdbConnections: 1, duckdbThreads: 1 });
  const s = await startServer(config, { log: () => {} });
  try {
    const res = await fetch(`${s.url}/v1/meta`);
    assertProblem({ status: res.status, headers: res.headers, body: await res.json() }, 503, 'no_release');
    // the published reference needs neither a release nor a key
    const doc = await fetch(`${s.url}/v1/openapi.json`);
    assert.is(doc.status, 200);
    assert.is(((await doc.json()) as { openapi: string }).openapi.slice(0, 3), '3.1');
    assert.is((await fetch(`${s.url}/v1/docs`)).status, 200);
  } finally {
    await s.close();
  }
});

test('a build folder a killed refresh left is removed at start (issue 31), unless a refresh holds the lock', async () => {
  const dataDir = tempDir('leads-stale-build-');
  mkdirSync(join(dataDir, 'releases', '.build-20261116T060000Z'), { recursive: true });
  writeFileSync(join(dataDir, 'releases', '.build-20261116T060000Z', 'leads.parquet'), 'partial');
  writeFileSync(join(dataDir, '.refresh.lock'), '999999999'); // the killed refresh's lock: no such process
  const logs: string[] = [];
  const config = loadApiConfig({}, { dataDir, port: 0, host: '127.0.0.1', duckdbConnections: 1, duckdbThreads: 1 });
  const s = await startServer(config, { log: (l) => void logs.push(l) });
  await s.close();
  assert.equal(readdirSync(join(dataDir, 'releases')), []);
  assert.ok(logs.includes('removed 1 build folder(s) a killed refresh left: .build-20261116T060000Z'), logs.join('\n'));
});

test('node api/server.ts: prints the URL and how to get a key, serves with its memory settings, stops cleanly on SIGTERM', async () => {
  const api = await startTestApi(); // reuse its data folder and state file
  try {
    // the real command (tsx, as the systemd unit runs it); its indexes from the tests' packs (the build is not what is tested here)
    const child = spawn('node', ['--import', 'tsx', ...enginePackPreload(), 'api/server.ts'], {
      cwd: REPO_ROOT,
      env: {
        ...process.env,
        DATA_DIR: api.dataDir,
        DATABASE_URL: api.config.databaseUrl,
        PORT: '0',
        HOST: '127.0.0.1',
        DUCKDB_CONNECTIONS: '1',
        DUCKDB_THREADS: '1',
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (c) => (stderr += c));
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    const deadline = Date.now() + 30_000;
    while (!/npx leads keys create/.test(stderr) && Date.now() < deadline && child.exitCode === null)
      await new Promise((r) => setTimeout(r, 50));
    const url = /listening on (http:\/\/\S+)\/v1/.exec(stderr)?.[1];
    assert.ok(url, stderr);
    assert.match(
      stderr,
      'npx leads accounts create --name you --plan premium && npx leads keys create --account you --scope ent_api --json',
    );
    const res = await fetch(`${url}/v1/meta`, { headers: { Authorization: `Bearer ${api.keys.commonwealth}` } });
    assert.is(res.status, 200);
    assert.is(((await res.json()) as any)._meta.scope, 'commonwealth');
    // the process that serves is the one started (replaced in place), with the serving memory settings
    const cmdline = readFileSync(`/proc/${child.pid}/cmdline`, 'utf8').split('\0');
    for (const flag of SERVING_V8_FLAGS) assert.ok(cmdline.includes(flag), `${flag}: ${cmdline.join(' ')}`);
    assert.ok(
      cmdline.some((a) => a.endsWith('api/server.ts')),
      cmdline.join(' '),
    );
    const environ = readFileSync(`/proc/${child.pid}/environ`, 'utf8').split('\0');
    assert.ok(environ.includes(`MALLOC_ARENA_MAX=${MALLOC_ARENAS}`));
    child.kill('SIGTERM');
    assert.is(await exited, 0, stderr);
    assert.match(stderr, 'SIGTERM');
    for (const k of Object.values(api.keys)) assert.not.ok(stderr.includes(k), 'no key in the server log');
  } finally {
    await api.close();
  }
});

test('the serving flags are added only where the process was not started with them', () => {
  assert.equal(missingFlags([]), [...SERVING_V8_FLAGS]);
  // a flag given with another value (either spelling), on the command line or in NODE_OPTIONS, is kept
  assert.equal(missingFlags(['--heap_growing_percent=30', '--import', 'tsx']), ['--max-semi-space-size=16']);
  assert.equal(missingFlags(['--heap-growing-percent=30'], '--max-semi-space-size=8'), []);
  assert.equal(missingFlags([], '--max-old-space-size=512'), [...SERVING_V8_FLAGS]);
});

test('docs/api.md documents every configuration key with its environment variable', () => {
  const doc = readFileSync(join(REPO_ROOT, 'docs/api.md'), 'utf8');
  const rows = doc.split('\n').filter((l) => l.startsWith('|'));
  for (const [key, d] of Object.entries(API_DEFAULTS)) {
    assert.ok(
      rows.some((r) => r.includes(`\`${d.env}\``) && r.includes(`\`${key}\``)),
      `docs/api.md has a table row for ${key} (${d.env})`,
    );
  }
});

test('an unreachable PostgreSQL state store stops the start with the error', async () => {
  const dataDir = tempDir('leads-nopg-');
  const config = loadApiConfig(
    {},
    {
      dataDir,
      port: 0,
      host: '127.0.0.1',
      duckdbConnections: 1,
      duckdbThreads: 1,
      databaseUrl: 'postgres://127.0.0.1:1/test',
    },
  );
  await rejects(
    () => startServer(config, { log: () => {} }),
    (e: unknown) =>
      /ECONNREFUSED/.test(
        String((e as Error)?.message ?? e) +
          String((e as { code?: string })?.code ?? '') +
          String((e as { errors?: unknown[] })?.errors?.map((x) => (x as Error).message) ?? ''),
      ),
  );
});

test.run();
