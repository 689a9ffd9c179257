/**
 * Two release folders compared table by table (issue 34: a refresh made faster must publish the
 * same release). Each Parquet table is compared by its rows with DuckDB (`EXCEPT ALL` both ways,
 * so the order rows were written in does not matter, and a row written twice does); every other
 * file byte for byte. `manifest.json` is left out: it names the release and times the build.
 *
 * `make bench ARGS="--only refresh --against REF"` builds the same raw files with REF's code and
 * prints the result (bench/run.ts).
 *
 * @example
 *   const d = await compareReleases('data/current', '.tmp/other/current');
 *   d.differing; // [] when equal, else e.g. ['leads.parquet: 3 rows only in the first, 3 only in the second']
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { openDb, sqlString } from '../pipeline/lib/duckdb.ts';

export interface ReleaseDiff {
  /** Files compared (the manifest left out). */
  files: number;
  /** One line per file that differs or is in one release only. */
  differing: string[];
}

/** Paths of every file under `dir`, relative and '/'-separated, sorted. */
function filesUnder(dir: string, root = dir, out: string[] = []): string[] {
  for (const e of readdirSync(dir)) {
    const p = join(dir, e);
    if (statSync(p).isDirectory()) filesUnder(p, root, out);
    else out.push(relative(root, p).split(sep).join('/'));
  }
  return out.sort();
}

/** Compare the releases in folders `a` and `b` (symlinks such as `current` are followed). */
export async function compareReleases(a: string, b: string): Promise<ReleaseDiff> {
  const inA = filesUnder(a).filter((f) => f !== 'manifest.json');
  const inB = new Set(filesUnder(b).filter((f) => f !== 'manifest.json'));
  const differing: string[] = [];
  for (const f of [...inB].filter((f) => !inA.includes(f))) differing.push(`${f}: only in the second`);
  const db = await openDb();
  try {
    for (const f of inA) {
      if (!inB.has(f)) differing.push(`${f}: only in the first`);
      else if (f.endsWith('.parquet')) {
        const [pa, pb] = [sqlString(join(a, f)), sqlString(join(b, f))];
        const only = async (x: string, y: string): Promise<number> => {
          const [r] = await db.all<{ n: bigint | number }>(
            `SELECT count(*) AS n FROM (SELECT * FROM read_parquet(${x}) EXCEPT ALL SELECT * FROM read_parquet(${y}))`,
          );
          return Number(r!.n);
        };
        const [ab, ba] = [await only(pa, pb), await only(pb, pa)];
        if (ab + ba > 0) differing.push(`${f}: ${ab} rows only in the first, ${ba} only in the second`);
      } else if (!readFileSync(join(a, f)).equals(readFileSync(join(b, f)))) differing.push(`${f}: bytes differ`);
    }
  } finally {
    db.close();
  }
  return { files: new Set([...inA, ...inB]).size, differing };
}
