/**
 * common/refresh-lock.ts: the refresh lock and the sweep of build folders a killed refresh left
 * (issue 31 fault 4). The killed refresh is real: a child process takes the lock, starts a build
 * folder and is killed with SIGKILL, leaving both behind.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { acquireRefreshLock, removeStaleBuilds } from '../../common/refresh-lock.ts';
import { REPO_ROOT, tempDir } from '../helpers/tmp.ts';

/** A refresh killed mid-build: a child holding the lock with `releases/.build-<id>/` half written, then SIGKILL. */
async function killedRefresh(data: string): Promise<void> {
  const script = `
    import { acquireRefreshLock } from './common/refresh-lock.ts';
    import { mkdirSync, writeFileSync } from 'node:fs';
    await acquireRefreshLock(${JSON.stringify(data)});
    mkdirSync(${JSON.stringify(join(data, 'releases', '.build-20261116T060000Z'))}, { recursive: true });
    writeFileSync(${JSON.stringify(join(data, 'releases', '.build-20261116T060000Z', 'leads.parquet'))}, 'partial');
    console.log('building');
    setInterval(() => {}, 1000);`;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve) =>
    child.stdout!.on('data', (d: Buffer) => d.toString().includes('building') && resolve()),
  );
  child.kill('SIGKILL');
  await new Promise((r) => child.once('exit', r));
}

test('a killed refresh leaves a build folder and its lock; the sweep removes the folder and frees the lock', async () => {
  const data = tempDir();
  await killedRefresh(data);
  assert.ok(existsSync(join(data, 'releases', '.build-20261116T060000Z')), 'the kill left the folder');
  assert.ok(existsSync(join(data, '.refresh.lock')), 'and its lock');
  mkdirSync(join(data, 'releases', '20261109T060000Z'));
  assert.equal(await removeStaleBuilds(data), ['.build-20261116T060000Z']);
  assert.equal(readdirSync(join(data, 'releases')), ['20261109T060000Z'], 'a published release is kept');
  assert.not.ok(existsSync(join(data, '.refresh.lock')));
});

test('while a refresh holds the lock the sweep touches nothing', async () => {
  const data = tempDir();
  const release = await acquireRefreshLock(data);
  // a live process holding the lock (this one cannot be told apart from itself: a child)
  const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 10000)']);
  await new Promise((r) => child.once('spawn', r));
  writeFileSync(join(data, '.refresh.lock'), String(child.pid));
  mkdirSync(join(data, 'releases', '.build-running'), { recursive: true });
  try {
    assert.is(await removeStaleBuilds(data), null);
    assert.ok(existsSync(join(data, 'releases', '.build-running')));
  } finally {
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    await release();
  }
});

test('no releases folder: nothing to sweep', async () => {
  assert.equal(await removeStaleBuilds(tempDir()), []);
});

test.run();
