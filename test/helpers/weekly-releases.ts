/**
 * Four consecutive weekly releases (weeks 1–4, tiny scale) built by the project's generator and
 * pipeline in one data folder, each on top of the last (so ids, the registry and the event log
 * carry over), for the sync tests: the event log, `changed_since`, `/v1/events`, lead history,
 * the mirror. Built once per process; `switchTo` points `current` at one of them.
 */
import { renameSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { loadPipelineConfig } from '../../pipeline/config.ts';
import { runPipeline } from '../../pipeline/run.ts';
import { generateRaw, SCALES, snapshotDate } from '../../pipeline/synth/generate.ts';
import { tempDir } from './tmp.ts';

export interface WeeklyReleases {
  dataDir: string;
  /** Release ids of weeks 1..4, in order. */
  ids: string[];
  /** The generator's ground truth about names of week 4 (pipeline/synth/truth.ts), outside the releases. */
  truthFile: string;
  /** The folder of a release. */
  dir(id: string): string;
  switchTo(id: string): void;
}

let built: Promise<WeeklyReleases> | null = null;

export const WEEKS = 4;

export function weeklyReleases(seed = 7): Promise<WeeklyReleases> {
  built ??= buildWeeks('leads-weekly-releases-', seed, WEEKS);
  return built;
}

/**
 * Weeks 1..`weeks` (tiny scale) built in order into one fresh data folder, each on top of the
 * last; the generator's ground truth about names is kept for the last week only. Shared by
 * `weeklyReleases` and `twoReleases` (test/helpers/two-releases.ts).
 */
export async function buildWeeks(prefix: string, seed: number, weeks: number): Promise<WeeklyReleases> {
  const dataDir = tempDir(prefix);
  const ids: string[] = [];
  const truthFile = join(dataDir, 'truth', 'names.json');
  for (let week = 1; week <= weeks; week++) {
    const raw = join(dataDir, `raw-week${week}`);
    await generateRaw({ outDir: raw, scale: SCALES.tiny, seed, week, ...(week === weeks ? { truthFile } : {}) });
    const config = loadPipelineConfig({}, { dataDir, rawDir: raw, progress: false });
    const s = await runPipeline(config, { now: () => new Date(`${snapshotDate(week)}T06:00:00Z`), log: () => {} });
    if (s.status !== 'published' || !s.releaseId) throw new Error(`week ${week} was not published: ${s.message}`);
    ids.push(s.releaseId);
  }
  const switchTo = (id: string): void => {
    const tmp = join(dataDir, `.current-${id}-${Date.now()}`);
    symlinkSync(`releases/${id}`, tmp);
    renameSync(tmp, join(dataDir, 'current'));
  };
  return { dataDir, ids, truthFile, dir: (id) => join(dataDir, 'releases', id), switchTo };
}
