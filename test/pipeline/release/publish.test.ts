import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { rejects } from 'node:assert/strict';
import { existsSync, mkdirSync, readlinkSync, writeFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import {
  acquireRefreshLock,
  createBuildDir,
  currentRelease,
  publishRelease,
  pruneReleases,
  RefreshLockedError,
} from '../../../pipeline/release/publish.ts';
import { tempDir } from '../../helpers/tmp.ts';

function fakeBuild(dir: string, builtAt: string): void {
  writeFileSync(join(dir, 'manifest.json'), JSON.stringify({ built_at: builtAt }));
  writeFileSync(join(dir, 'leads.parquet'), 'x');
}

test('publish switches current atomically and leaves the old release intact', async () => {
  const data = tempDir();
  assert.is(currentRelease(data), null);
  const b1 = await createBuildDir(data, 'r1');
  fakeBuild(b1, '2026-11-09T00:00:00Z');
  assert.is(currentRelease(data), null, 'a build folder is never current');
  await publishRelease(data, b1, 'r1');
  assert.equal(currentRelease(data)?.id, 'r1');
  assert.is(readlinkSync(join(data, 'current')), join('releases', 'r1'));
  const b2 = await createBuildDir(data, 'r2');
  fakeBuild(b2, '2026-11-16T00:00:00Z');
  await publishRelease(data, b2, 'r2');
  assert.equal(currentRelease(data)?.id, 'r2');
  assert.ok(existsSync(join(data, 'releases', 'r1', 'manifest.json')));
});

test('createBuildDir removes leftovers of a killed build', async () => {
  const data = tempDir();
  mkdirSync(join(data, 'releases', '.build-old'), { recursive: true });
  writeFileSync(join(data, 'releases', '.build-old', 'leads.parquet'), 'partial');
  await createBuildDir(data, 'new');
  assert.not.ok(existsSync(join(data, 'releases', '.build-old')));
  assert.ok(existsSync(join(data, 'releases', '.build-new')));
});

test('refresh lock: second taker refused while the holder lives; a dead holder is taken over', async () => {
  const data = tempDir();
  const release = await acquireRefreshLock(data);
  // a live process holding the lock
  const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 10000)']);
  await new Promise((r) => child.once('spawn', r));
  writeFileSync(join(data, '.refresh.lock'), String(child.pid));
  await rejects(
    () => acquireRefreshLock(data),
    (e: unknown) => e instanceof RefreshLockedError && /pid \d+/.test((e as Error).message),
  );
  child.kill('SIGKILL');
  await new Promise((r) => child.once('exit', r));
  const again = await acquireRefreshLock(data);
  assert.is(readFileSync(join(data, '.refresh.lock'), 'utf8'), String(process.pid));
  await again();
  assert.not.ok(existsSync(join(data, '.refresh.lock')));
  await release();
});

test('prune removes releases older than the window, never the current one', async () => {
  const data = tempDir();
  for (const [id, at] of [
    ['old', '2026-08-01T00:00:00Z'],
    ['mid', '2026-10-20T00:00:00Z'],
    ['cur', '2026-07-01T00:00:00Z'],
  ] as const) {
    const b = await createBuildDir(data, id);
    fakeBuild(b, at);
    await publishRelease(data, b, id);
  }
  const removed = await pruneReleases(data, 8, new Date('2026-11-22T00:00:00Z'));
  assert.equal(removed, ['old']);
  assert.ok(existsSync(join(data, 'releases', 'cur')), 'current kept even though it is old');
  assert.ok(existsSync(join(data, 'releases', 'mid')));
});

test.run();
