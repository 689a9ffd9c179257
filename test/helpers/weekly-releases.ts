/**
 * Four consecutive weekly releases (weeks 1–4, tiny scale) built by the project's generator and
 * pipeline in one data folder, each on top of the last (so ids, the registry and the event log
 * carry over), for the sync tests: the event log, `changed_since`, `/v1/events`, lead history,
 * the mirror. Built once and cached under `.tmp/` by the fingerprint of test/helpers/scaled-release.ts
 * (and this file), however many test processes ask at once (test/helpers/build-once.ts); each
 * process gets its own copy of the data folder (without the raw files), built on first use.
 * `switchTo` points `current` at one of them.
 */
import { createHash } from 'node:crypto';
import { cpSync, existsSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { loadPipelineConfig } from '../../pipeline/config.ts';
import { runPipeline } from '../../pipeline/run.ts';
import { generateRaw, SCALES, snapshotDate } from '../../pipeline/synth/generate.ts';
import { buildOnce } from './build-once.ts';
import { codeFingerprint } from './scaled-release.ts';
import { REPO_ROOT, tempDir } from './tmp.ts';

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
 * Weeks 1..`weeks` (tiny scale) built in order into one data folder, each on top of the last,
 * cached under `.tmp/weeks-<seed>-<weeks>-<hash>`; the generator's ground truth about names is
 * kept for the last week only. Resolves to a fresh copy of it (the caller may switch `current`
 * and publish on top). Shared by `weeklyReleases` and `twoReleases` (test/helpers/two-releases.ts).
 */
export async function buildWeeks(prefix: string, seed: number, weeks: number): Promise<WeeklyReleases> {
  const cache = await weeksCache(seed, weeks);
  const dataDir = tempDir(prefix);
  cpSync(cache, dataDir, {
    recursive: true,
    verbatimSymlinks: true, // `current` stays relative
    filter: (src) => !(dirname(src) === cache && /^(raw-week\d+|done|ids\.json)$/.test(basename(src))),
  });
  const { ids } = JSON.parse(readFileSync(join(cache, 'ids.json'), 'utf8')) as { ids: string[] };
  const truthFile = join(dataDir, 'truth', 'names.json');
  const switchTo = (id: string): void => {
    const tmp = join(dataDir, `.current-${id}-${Date.now()}`);
    symlinkSync(`releases/${id}`, tmp);
    renameSync(tmp, join(dataDir, 'current'));
  };
  return { dataDir, ids, truthFile, dir: (id) => join(dataDir, 'releases', id), switchTo };
}

/**
 * Publish week `week` (2…4) of seed 7 into `dataDir` as the refresh of that week's generated
 * files at 06:00 of its snapshot date, on top of the weeks before it, publishes it: the cached
 * weekly build's release of that week (the same generator, pipeline and clock), copied in and made
 * `current`, without building it again. For tests of what a new release causes (webhook
 * deliveries), not of the refresh itself (test/pipeline/run.test.ts runs week 2 for real).
 * Resolves with its id and as-of date.
 */
export async function publishWeek(dataDir: string, week: number): Promise<{ id: string; asOf: string }> {
  const cache = await weeksCache(7, WEEKS);
  const { ids } = JSON.parse(readFileSync(join(cache, 'ids.json'), 'utf8')) as { ids: string[] };
  const id = ids[week - 1];
  if (!id) throw new RangeError(`week ${week}: the cache holds weeks 1–${ids.length}`);
  cpSync(join(cache, 'releases', id), join(dataDir, 'releases', id), { recursive: true });
  const tmp = join(dataDir, `.current-${id}-${Date.now()}`);
  symlinkSync(`releases/${id}`, tmp);
  renameSync(tmp, join(dataDir, 'current'));
  const manifest = JSON.parse(readFileSync(join(dataDir, 'releases', id, 'manifest.json'), 'utf8')) as {
    as_of: string;
  };
  return { id, asOf: manifest.as_of };
}

/** The cache folder of weeks 1..`weeks` of `seed`, built first when missing. */
async function weeksCache(seed: number, weeks: number): Promise<string> {
  const hash = createHash('sha256')
    .update(codeFingerprint())
    .update(readFileSync(new URL(import.meta.url).pathname))
    .digest('hex')
    .slice(0, 12);
  const cache = join(REPO_ROOT, '.tmp', `weeks-${seed}-${weeks}-${hash}`);
  const tmp = join(REPO_ROOT, '.tmp');
  if (!existsSync(join(cache, 'done')))
    for (const d of existsSync(tmp) ? readdirSync(tmp) : [])
      // built from older code: of no further use
      if (d.startsWith(`weeks-${seed}-${weeks}-`) && !d.startsWith(basename(cache)) && !d.includes('.building-'))
        rmSync(join(tmp, d), { recursive: true, force: true });
  await buildOnce(cache, (work) => buildWeeksInto(work, seed, weeks).then(() => {}));
  return cache;
}

/** Build weeks 1..`weeks` into `dataDir` (raw files in `raw-week<n>/`), writing their ids to `ids.json`. */
async function buildWeeksInto(dataDir: string, seed: number, weeks: number): Promise<string[]> {
  const ids: string[] = [];
  const truthFile = join(dataDir, 'truth', 'names.json');
  for (let week = 1; week <= weeks; week++) {
    const raw = join(dataDir, `raw-week${week}`);
    await generateRaw({ outDir: raw, scale: SCALES.tiny, seed, week, ...(week === weeks ? { truthFile } : {}) });
    const config = loadPipelineConfig({}, { dataDir, rawDir: raw, progress: false });
    const s = await runPipeline(config, {
      now: () => new Date(`${snapshotDate(week)}T06:00:00Z`),
      log: () => {},
      collectGarbage: () => {}, // none per stage on tiny data (pipeline/stages/context.ts)
    });
    if (s.status !== 'published' || !s.releaseId) throw new Error(`week ${week} was not published: ${s.message}`);
    ids.push(s.releaseId);
  }
  writeFileSync(join(dataDir, 'ids.json'), JSON.stringify({ ids }));
  return ids;
}
