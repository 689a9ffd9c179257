/**
 * What a release folder holds, for its manifest and for checks: the size and SHA-256 of every
 * file (the API switches to a release only when they match, api/releases/verify-release.ts) and the
 * row count of every Parquet file.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { sqlString, type Db } from '../lib/duckdb.ts';

export type FileChecksums = Record<string, { bytes: number; sha256: string; rows: number | null }>;

/** sha256 and size of every file in the release (recursively) but `manifest.json` and names starting with `.`. */
export async function checksumFiles(dir: string): Promise<FileChecksums> {
  const out: FileChecksums = {};
  for (const f of await walkAll(dir)) {
    const rel = relative(dir, f);
    if (rel === 'manifest.json' || rel.startsWith('.')) continue;
    const h = createHash('sha256');
    for await (const chunk of createReadStream(f)) h.update(chunk as Buffer);
    out[rel] = { bytes: (await stat(f)).size, sha256: h.digest('hex'), rows: null };
  }
  return out;
}

async function walkAll(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of (await readdir(dir, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...(await walkAll(p)));
    else out.push(p);
  }
  return out;
}

/** Count rows of every Parquet file of a release (used by `leads verify` and tests). */
export async function parquetRowCounts(db: Db, releaseDir: string): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const f of (await readdir(releaseDir)).filter((f) => f.endsWith('.parquet')).sort()) {
    const [r] = await db.all<{ n: number }>(
      `SELECT count(*)::BIGINT AS n FROM read_parquet(${sqlString(join(releaseDir, f))})`,
    );
    out[f] = r!.n;
  }
  return out;
}
