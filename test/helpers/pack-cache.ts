/**
 * Indexes the tests build from a release, kept on disk between test processes and runs: the
 * built tree as a pack (api/engine/pack.ts, the format the index-building child sends the server)
 * under `.tmp/packs/`, named by a fingerprint of the code that builds it (every file under api/,
 * common/ and schemas/, and package-lock.json: a change to any of them builds afresh) and a key
 * of what it was built from (a release's manifest, which holds every file's SHA-256). The first
 * process to need one builds it with the project's own code and writes it; the others, in this
 * run and later ones, read it (~0.02 s instead of 0.5–3 s of CPU). Packs of other code are removed
 * when one is written. Two processes building the same pack at once both write it whole (a file
 * renamed into place), so a reader never sees half of one.
 *
 * @example const tree = await cachedPack('geo-index', manifestKey(dir), async () => (await LeadIndex.load(db, src)).parts());
 */
import { createHash } from 'node:crypto';
import {
  createReadStream,
  createWriteStream,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
} from 'node:fs';
import { join, relative } from 'node:path';
import { readPack, writePack, type Packable } from '../../api/engine/pack.ts';
import { REPO_ROOT } from './tmp.ts';

const DIR = join(REPO_ROOT, '.tmp', 'packs');

let fingerprint: string | undefined;

/** SHA-256 (12 hex) over every file under api/, common/ and schemas/ and package-lock.json. */
function codeFingerprint(): string {
  if (fingerprint) return fingerprint;
  const h = createHash('sha256');
  const walk = (dir: string): void => {
    for (const e of readdirSync(dir).sort()) {
      const p = join(dir, e);
      if (statSync(p).isDirectory()) walk(p);
      else h.update(relative(REPO_ROOT, p)).update('\0').update(readFileSync(p)).update('\0');
    }
  };
  for (const d of ['api', 'common', 'schemas']) walk(join(REPO_ROOT, d));
  h.update(readFileSync(join(REPO_ROOT, 'package-lock.json')));
  h.update(readFileSync(new URL(import.meta.url).pathname)); // how the cache is laid out
  return (fingerprint = h.digest('hex').slice(0, 12));
}

/** A key of a release's content: its id and its manifest (every file's size and SHA-256). */
export function manifestKey(id: string, dir: string): string {
  return createHash('sha256')
    .update(id)
    .update('\0')
    .update(readFileSync(join(dir, 'manifest.json')))
    .digest('hex')
    .slice(0, 24);
}

/** Where the pack of `name` and `key` built by this code is kept (it may not exist yet). */
export function packFile(name: string, key: string): string {
  return join(DIR, `${codeFingerprint()}-${name}-${key}.pack`);
}

/**
 * The tree `build` makes for `name` and `key` (typed arrays, Maps and JSON values: what
 * api/engine/pack.ts carries), from `.tmp/packs/` when this code built it before, else built now
 * and written there. `build` must depend only on what `key` names.
 */
export async function cachedPack<T>(name: string, key: string, build: () => Promise<T>): Promise<T> {
  const code = codeFingerprint();
  const file = packFile(name, key);
  if (existsSync(file)) return (await readPack(createReadStream(file))) as T;
  const tree = await build();
  mkdirSync(DIR, { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    await writePack(createWriteStream(tmp), tree as Packable);
    renameSync(tmp, file);
  } finally {
    rmSync(tmp, { force: true });
  }
  for (const f of readdirSync(DIR)) if (!f.startsWith(`${code}-`)) rmSync(join(DIR, f), { force: true });
  return tree;
}
