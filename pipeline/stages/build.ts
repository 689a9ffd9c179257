/**
 * One build of a release: its id (from the injected clock), its folder `releases/.build-<id>/`
 * (only the final rename publishes it), and the DuckDB instance of the current phase.
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { PipelineConfig } from '../config.ts';
import { openDb, type Db } from '../lib/duckdb.ts';
import { createBuildDir } from '../release/publish.ts';

export interface Build {
  readonly releaseId: string;
  /** The build's clock reading: release id, `built_at`, retention. */
  readonly now: Date;
  /** The build folder. */
  readonly dir: string;
  /** The DuckDB instance of the current phase. */
  db(): Db;
  /**
   * Close the current DuckDB instance (if any) and open a new one. A fresh instance for each
   * heavy phase hands the previous one's buffer pool back, which keeps the refresh's peak memory
   * down. Each instance keeps its tables in a file of the build folder (`.duckdb-<n>`, removed
   * when the instance is closed): only the buffer pool's share of them is in memory.
   */
  fresh(): Promise<Db>;
  /** Run `stop` when the build is closed (work started beside the stages, such as the sales reader). */
  onClose(stop: () => Promise<unknown> | void): void;
  /**
   * Stop what runs beside the stages — waiting until it has stopped, so nothing writes into the
   * folder after this — and close the DuckDB instance, if open (idempotent).
   */
  close(): Promise<void>;
}

/** `2026-11-09T06:00:00.000Z` → `20261109T060000Z`. */
export const releaseIdAt = (now: Date): string =>
  now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');

/** Create the build folder; no DuckDB instance is open until `fresh()`. */
export async function startBuild(config: PipelineConfig, now: Date): Promise<Build> {
  const releaseId = releaseIdAt(now);
  const dir = await createBuildDir(config.dataDir, releaseId);
  let db: Db | null = null;
  let dbFile: string | null = null;
  let instances = 0;
  const stops: (() => Promise<unknown> | void)[] = [];
  const closeDb = async (): Promise<void> => {
    db?.close();
    db = null;
    if (dbFile) await Promise.all([dbFile, `${dbFile}.wal`].map((f) => rm(f, { force: true })));
    dbFile = null;
  };
  return {
    releaseId,
    now,
    dir,
    db() {
      if (!db) throw new Error('the build has no open DuckDB instance');
      return db;
    },
    async fresh() {
      await closeDb();
      dbFile = join(dir, `.duckdb-${++instances}`);
      return (db = await openDb({
        memoryLimit: config.duckdbMemoryLimit,
        tempDirectory: join(dir, '.duckdb-tmp'),
        path: dbFile,
      }));
    },
    onClose(stop) {
      stops.push(stop);
    },
    async close() {
      await Promise.all(stops.splice(0).map((stop) => stop()));
      await closeDb();
    },
  };
}
