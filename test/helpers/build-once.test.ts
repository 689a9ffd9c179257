/** buildOnce (test/helpers/build-once.ts): the cache of releases every API test waits on. */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildOnce } from './build-once.ts';
import { tempDir } from './tmp.ts';

test('a folder whose parent does not exist yet (a fresh clone has no .tmp/) is built', async () => {
  const dir = join(tempDir('build-once-'), 'not-yet', 'release');
  await buildOnce(dir, async (work) => writeFileSync(join(work, 'a.txt'), 'a'));
  assert.ok(existsSync(join(dir, 'a.txt')));
  assert.ok(existsSync(join(dir, 'done')));
});

test('asked for twice at once, it is built once', async () => {
  const dir = join(tempDir('build-once-'), 'release');
  let builds = 0;
  const build = async (work: string): Promise<void> => {
    builds++;
    await new Promise((r) => setTimeout(r, 300));
    writeFileSync(join(work, 'a.txt'), 'a');
  };
  await Promise.all([buildOnce(dir, build), buildOnce(dir, build)]);
  assert.is(builds, 1);
});

test('a failed build leaves no lock and no half-built folder; the next call builds it', async () => {
  const parent = tempDir('build-once-');
  const dir = join(parent, 'release');
  try {
    await buildOnce(dir, async () => {
      throw new Error('generator failed');
    });
    assert.unreachable('the failure reached the caller');
  } catch (e) {
    assert.match((e as Error).message, 'generator failed');
  }
  assert.not.ok(existsSync(`${dir}.lock`));
  await buildOnce(dir, async (work) => writeFileSync(join(work, 'a.txt'), 'a'));
  assert.equal(readdirSync(parent), ['release']);
});

test.run();
