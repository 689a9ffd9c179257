/**
 * Two consecutive weekly releases built by the project's generator and pipeline in one data
 * folder (week 1, then week 2 on top of it, so the registry carries ids over), for tests of
 * what changes between refreshes: stable ids, `since` / `updated_since`. Built once and cached under
 * `.tmp/` like the weekly releases; each process gets its own copy.
 */
import * as assert from 'uvu/assert';
import { symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { buildWeeks } from './weekly-releases.ts';

export interface TwoReleases {
  dataDir: string;
  first: string;
  second: string;
  /** Point `current` at one of them (the pipeline's atomic symlink switch). */
  switchTo(id: string): void;
}

let built: Promise<TwoReleases> | null = null;

export function twoReleases(seed = 7): Promise<TwoReleases> {
  built ??= buildWeeks('leads-two-releases-', seed, 2).then(({ dataDir, ids, switchTo }) => ({
    dataDir,
    first: ids[0]!,
    second: ids[1]!,
    switchTo,
  }));
  return built;
}

/**
 * The two releases, for a test API that serves week 1 (the tiny release is week 1's): week 2 is
 * linked into the API's data folder, ready to be published with `serveRelease(api, two.second)`
 * (test/helpers/api.ts).
 */
export async function weekTwoBeside(api: { dataDir: string; release: () => string }): Promise<TwoReleases> {
  const two = await twoReleases();
  assert.is(api.release(), two.first, 'the test API serves the week-1 release');
  symlinkSync(join(two.dataDir, 'releases', two.second), join(api.dataDir, 'releases', two.second));
  return two;
}
