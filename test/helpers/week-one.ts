/**
 * A data folder as the week-1 refresh of the generator's tiny data (seed 7, clock
 * 2026-11-09T06:00:00Z) leaves it, without running that refresh again: the cached tiny release
 * (test/helpers/scaled-release.ts) is exactly that refresh's output, built by the same generator
 * and pipeline at the same clock. Tests of what a later refresh does (week 2 on top of week 1)
 * start from it and run the later refresh for real.
 *
 * @example
 *   const { asOf } = await publishWeekOne(root, join(root, 'raw'));
 *   await generateRaw({ outDir: join(root, 'raw'), scale: SCALES.tiny, seed: 7, week: 2 });
 *   await runPipeline(config, deps); // the week-2 refresh, on top of week 1
 */
import { cpSync, mkdirSync, readFileSync, symlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { tinyRelease } from './api.ts';

/**
 * Copy the week-1 release into `dataDir` (`releases/<id>`, `current` → it) and the week-1 raw
 * files it was built from into `rawDir`, as a week-1 refresh with those folders would have left
 * them. Resolves with the release's id and as-of date.
 */
export async function publishWeekOne(dataDir: string, rawDir: string): Promise<{ id: string; asOf: string }> {
  const rel = await tinyRelease(7);
  mkdirSync(join(dataDir, 'releases'), { recursive: true });
  cpSync(rel.dir, join(dataDir, 'releases', rel.id), { recursive: true, dereference: true });
  symlinkSync(`releases/${rel.id}`, join(dataDir, 'current'));
  cpSync(join(dirname(dirname(rel.dir)), 'raw'), rawDir, { recursive: true });
  const manifest = JSON.parse(readFileSync(join(rel.dir, 'manifest.json'), 'utf8')) as { as_of: string };
  return { id: rel.id, asOf: manifest.as_of };
}
