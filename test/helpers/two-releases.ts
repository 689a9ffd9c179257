/**
 * Two consecutive weekly releases built by the project's generator and pipeline in one data
 * folder (week 1, then week 2 on top of it, so the registry carries ids over), for tests of
 * what changes between refreshes: stable ids, `since` / `updated_since`. Built once and cached under
 * `.tmp/` like the weekly releases; each process gets its own copy.
 */
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
