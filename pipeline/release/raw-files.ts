/**
 * A refresh's input: the raw files by source folder, and the fingerprint that tells a refresh
 * whether anything changed since the current release (raw files plus the pipeline's own code and
 * schemas, so a code change rebuilds).
 */
import { createHash } from 'node:crypto';
import { createReadStream, existsSync, readFileSync } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface RawFiles {
  all: string[];
  by: Record<'planning' | 'commencements' | 'ppr' | 'companies' | 'infrastructure' | 'rents' | 'materials', string[]>;
}

/** Every raw file (`.csv`, `.json`) under `rawDir/<source>/`, by source folder, sorted for determinism. */
export async function listRawFiles(rawDir: string): Promise<RawFiles> {
  const by: RawFiles['by'] = {
    planning: [],
    commencements: [],
    ppr: [],
    companies: [],
    infrastructure: [],
    rents: [],
    materials: [],
  };
  for (const source of Object.keys(by) as (keyof RawFiles['by'])[]) {
    const dir = join(rawDir, source);
    if (!existsSync(dir)) continue;
    by[source] = (await readdir(dir))
      .filter((f) => /\.(csv|json)$/i.test(f))
      .sort()
      .map((f) => join(dir, f));
  }
  return { all: Object.values(by).flat(), by };
}

/** sha256 over the raw files' names and bytes plus the pipeline's own code and schemas. */
export async function inputFingerprint(rawDir: string, files: string[]): Promise<string> {
  const h = createHash('sha256');
  for (const f of files) {
    h.update(`${relative(rawDir, f)}\0${(await stat(f)).size}\0`);
    for await (const chunk of createReadStream(f)) h.update(chunk as Buffer);
  }
  for (const dir of ['pipeline', 'schemas', 'common']) {
    for (const f of await walkCode(join(REPO_ROOT, dir))) {
      h.update(relative(REPO_ROOT, f));
      h.update(readFileSync(f));
    }
  }
  return h.digest('hex');
}

/** Every `.ts` and `.json` file under `dir`, depth first, names sorted. */
async function walkCode(dir: string): Promise<string[]> {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  for (const e of (await readdir(dir, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...(await walkCode(p)));
    else if (/\.(ts|json)$/.test(e.name)) out.push(p);
  }
  return out;
}
