/**
 * A release at a larger scale than the tiny one (`SCALES.small` / `SCALES.default`), built once
 * by the project's own generator and pipeline and cached under the repository's `.tmp/`, keyed by
 * scale, seed and a fingerprint of the generator's and the pipeline's code: a change to either
 * builds a fresh one. A default-scale build takes minutes on two cores; later runs reuse it.
 *
 * @example const { dir } = await scaledRelease('default'); // …/.tmp/release-default-7-<hash>/releases/<id>
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { loadPipelineConfig } from '../../pipeline/config.ts';
import { runPipeline } from '../../pipeline/run.ts';
import { generateRaw, SCALES } from '../../pipeline/synth/generate.ts';
import { REPO_ROOT } from './tmp.ts';

const BUILD_TIME = new Date('2026-11-09T06:00:00Z');

/** SHA-256 (12 hex) over every .ts / .json file under pipeline/, common/ and schemas/ but the API's query schemas (`*-query.schema.json`). */
function codeFingerprint(): string {
  const h = createHash('sha256');
  const walk = (dir: string): void => {
    for (const e of readdirSync(dir).sort()) {
      const p = join(dir, e);
      if (statSync(p).isDirectory()) walk(p);
      else if (/\.(ts|json)$/.test(e) && !e.endsWith('-query.schema.json')) h.update(relative(REPO_ROOT, p)).update('\0').update(readFileSync(p)).update('\0');
    }
  };
  for (const d of ['pipeline', 'common', 'schemas']) walk(join(REPO_ROOT, d));
  return h.digest('hex').slice(0, 12);
}

const built = new Map<string, Promise<{ id: string; dir: string }>>();

/** The release of `scale` and `seed` (built on first use, then read from `.tmp/`). */
export function scaledRelease(scale: 'small' | 'default', seed = 7): Promise<{ id: string; dir: string }> {
  const key = `${scale}-${seed}-${codeFingerprint()}`;
  let p = built.get(key);
  if (!p) {
    p = (async () => {
      const root = join(REPO_ROOT, '.tmp', `release-${key}`);
      const releases = join(root, 'releases');
      if (existsSync(join(root, 'done'))) {
        const id = readdirSync(releases).find((d) => !d.startsWith('.'))!;
        return { id, dir: join(releases, id) };
      }
      const work = `${root}.building-${process.pid}`;
      rmSync(work, { recursive: true, force: true });
      mkdirSync(work, { recursive: true });
      const raw = join(work, 'raw');
      await generateRaw({ outDir: raw, scale: SCALES[scale], seed, week: 1 });
      const config = loadPipelineConfig({}, { dataDir: work, rawDir: raw, progress: false });
      const s = await runPipeline(config, { now: () => BUILD_TIME, log: () => {} });
      if (s.status !== 'published' || !s.releaseId) throw new Error(`the ${scale} release was not published: ${s.message}`);
      rmSync(raw, { recursive: true, force: true });
      mkdirSync(join(work, 'done'));
      rmSync(root, { recursive: true, force: true });
      renameSync(work, root);
      return { id: s.releaseId, dir: join(releases, s.releaseId) };
    })();
    built.set(key, p);
  }
  return p;
}
