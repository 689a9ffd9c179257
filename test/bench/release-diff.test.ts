/**
 * bench/release-diff.ts on copies of the tiny release: a copy is equal; a Parquet table with one
 * row changed, a GeoJSON file with one byte changed, and a file in one release only are named;
 * rows written in another order are still equal; the manifest is not compared.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { cpSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { compareReleases } from '../../bench/release-diff.ts';
import { openDb, sqlString } from '../../pipeline/lib/duckdb.ts';
import { tinyRelease } from '../helpers/api.ts';
import { tempDir } from '../helpers/tmp.ts';

/** A private copy of the tiny release. */
async function copyOfTiny(): Promise<string> {
  const dir = join(tempDir('leads-release-diff-'), 'release');
  cpSync((await tinyRelease(7)).dir, dir, { recursive: true, dereference: true });
  return dir;
}

/** Rewrite a Parquet table of `dir` through `select` (a query over `t`). */
async function rewrite(dir: string, table: string, select: string): Promise<void> {
  const file = join(dir, `${table}.parquet`);
  const db = await openDb();
  try {
    await db.run(`CREATE TABLE t AS SELECT * FROM read_parquet(${sqlString(file)})`);
    await db.run(`COPY (${select}) TO ${sqlString(file)} (FORMAT PARQUET)`);
  } finally {
    db.close();
  }
}

test('a copy is equal, rows in another order too; the manifest is not compared', async () => {
  const [a, b] = [await copyOfTiny(), await copyOfTiny()];
  await rewrite(b, 'leads', 'SELECT * FROM t ORDER BY id DESC');
  const m = JSON.parse(readFileSync(join(b, 'manifest.json'), 'utf8'));
  writeFileSync(join(b, 'manifest.json'), JSON.stringify({ ...m, release_id: 'another' }));
  const d = await compareReleases(a, b);
  assert.equal(d.differing, []);
  assert.ok(d.files > 20, `${d.files} files compared`);
});

test('a changed row, a changed byte and a file in one release only are each named', async () => {
  const [a, b] = [await copyOfTiny(), await copyOfTiny()];
  await rewrite(
    b,
    'leads',
    `SELECT * REPLACE (CASE WHEN id = (SELECT min(id) FROM t) THEN 'Changed' ELSE county END AS county) FROM t`,
  );
  const layer = join(b, 'geojson', 'infrastructure.ndjson');
  const bytes = readFileSync(layer);
  bytes[bytes.length >> 1] ^= 1;
  writeFileSync(layer, bytes);
  rmSync(join(b, 'rejects.jsonl'));
  const d = await compareReleases(a, b);
  assert.equal(d.differing, [
    'geojson/infrastructure.ndjson: bytes differ',
    'leads.parquet: 1 rows only in the first, 1 only in the second',
    'rejects.jsonl: only in the first',
  ]);
});

test.run();
