/**
 * A release of the project's generator and pipeline at a scale (`tiny` for the API tests,
 * `small`, `default`), built once and cached under the repository's `.tmp/`, keyed by scale,
 * seed and a fingerprint of the generator's and the pipeline's code: a change to either builds a
 * fresh one, so a second `make test` (or `make test FILE=…`) reuses the releases of the first.
 * A default-scale build takes minutes on two cores. The release is shared: a test that changes
 * files copies it first. `truthFile` is the generator's ground truth about names
 * (pipeline/synth/truth.ts), kept beside the release, never in it; the tiny release also keeps its
 * raw files there (`raw/`, beside `truth/`). Test processes running at the same time build it once
 * between them (test/helpers/build-once.ts).
 *
 * @example const { dir } = await scaledRelease('default'); // …/.tmp/release-default-7-<hash>/releases/<id>
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { loadPipelineConfig } from '../../pipeline/config.ts';
import { runPipeline } from '../../pipeline/run.ts';
import { generateRaw, SCALES } from '../../pipeline/synth/generate.ts';
import { buildOnce } from './build-once.ts';
import { REPO_ROOT } from './tmp.ts';

const BUILD_TIME = new Date('2026-11-09T06:00:00Z');

/** SHA-256 (12 hex) over every .ts / .json file under pipeline/, common/ and schemas/ but the API's query schemas (`*-query.schema.json`), and this file. */
export function codeFingerprint(): string {
  const h = createHash('sha256');
  const walk = (dir: string): void => {
    for (const e of readdirSync(dir).sort()) {
      const p = join(dir, e);
      if (statSync(p).isDirectory()) walk(p);
      else if (/\.(ts|json)$/.test(e) && !e.endsWith('-query.schema.json'))
        h.update(relative(REPO_ROOT, p)).update('\0').update(readFileSync(p)).update('\0');
    }
  };
  for (const d of ['pipeline', 'common', 'schemas']) walk(join(REPO_ROOT, d));
  h.update(readFileSync(new URL(import.meta.url).pathname)); // how the cache is laid out
  return h.digest('hex').slice(0, 12);
}

export interface CachedRelease {
  id: string;
  dir: string;
  truthFile: string;
}

const built = new Map<string, Promise<CachedRelease>>();
let fingerprint: string | undefined;

/** The release of `scale` and `seed` (built on first use, then read from `.tmp/`). */
export function scaledRelease(scale: 'tiny' | 'small' | 'default', seed = 7): Promise<CachedRelease> {
  fingerprint ??= codeFingerprint();
  const key = `${scale}-${seed}-${fingerprint}`;
  let p = built.get(key);
  if (!p) {
    p = (async () => {
      const root = join(REPO_ROOT, '.tmp', `release-${key}`);
      const releases = join(root, 'releases');
      const truthFile = join(root, 'truth', 'names.json');
      if (!existsSync(join(root, 'done'))) {
        // Releases of this scale and seed built from older code are of no further use.
        const tmp = join(REPO_ROOT, '.tmp');
        for (const d of existsSync(tmp) ? readdirSync(tmp) : []) {
          if (d.startsWith(`release-${scale}-${seed}-`) && !d.startsWith(`release-${key}`) && !d.includes('.building-'))
            rmSync(join(tmp, d), { recursive: true, force: true });
        }
      }
      // built once even when several test processes ask at the same time (test/helpers/build-once.ts)
      await buildOnce(root, async (work) => {
        const raw = join(work, 'raw');
        await generateRaw({
          outDir: raw,
          scale: SCALES[scale],
          seed,
          week: 1,
          truthFile: join(work, 'truth', 'names.json'),
        });
        const config = loadPipelineConfig({}, { dataDir: work, rawDir: raw, progress: false });
        const s = await runPipeline(config, { now: () => BUILD_TIME, log: () => {} });
        if (s.status !== 'published' || !s.releaseId)
          throw new Error(`the ${scale} release was not published: ${s.message}`);
        // the tiny release keeps its raw files beside it (a few MB; the privacy test reads them)
        if (scale !== 'tiny') rmSync(raw, { recursive: true, force: true });
      });
      const id = readdirSync(releases).find((d) => !d.startsWith('.'))!;
      return { id, dir: join(releases, id), truthFile };
    })();
    // a failed build is not remembered: the next file of this worker tries again
    p.catch(() => built.delete(key));
    built.set(key, p);
  }
  return p;
}
