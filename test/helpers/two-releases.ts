/**
 * Two consecutive weekly releases built by the project's generator and pipeline in one data
 * folder (week 1, then week 2 on top of it, so the registry carries ids over), for tests of
 * what changes between refreshes: stable ids, `since` / `updated_since`. Built once per process.
 */
import { renameSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { loadPipelineConfig } from '../../pipeline/config.ts';
import { runPipeline } from '../../pipeline/run.ts';
import { generateRaw, SCALES } from '../../pipeline/synth/generate.ts';
import { tempDir } from './tmp.ts';

export interface TwoReleases {
  dataDir: string;
  first: string;
  second: string;
  /** Point `current` at one of them (the pipeline's atomic symlink switch). */
  switchTo(id: string): void;
}

let built: Promise<TwoReleases> | null = null;

export function twoReleases(seed = 7): Promise<TwoReleases> {
  built ??= (async () => {
    const dataDir = tempDir('leads-two-releases-');
    const ids: string[] = [];
    for (const week of [1, 2]) {
      const raw = join(dataDir, `raw-week${week}`);
      await generateRaw({ outDir: raw, scale: SCALES.tiny, seed, week });
      const config = loadPipelineConfig({}, { dataDir, rawDir: raw, progress: false });
      const s = await runPipeline(config, { now: () => new Date(`2026-11-${week === 1 ? '09' : '16'}T06:00:00Z`), log: () => {} });
      if (s.status !== 'published' || !s.releaseId) throw new Error(`week ${week} was not published: ${s.message}`);
      ids.push(s.releaseId);
    }
    const switchTo = (id: string): void => {
      const tmp = join(dataDir, `.current-${id}-${Date.now()}`);
      symlinkSync(`releases/${id}`, tmp);
      renameSync(tmp, join(dataDir, 'current'));
    };
    return { dataDir, first: ids[0]!, second: ids[1]!, switchTo };
  })();
  return built;
}
