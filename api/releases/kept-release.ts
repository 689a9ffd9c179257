/**
 * Kept releases: a release that is no longer current but still on disk
 * (`DATA_DIR/releases/<id>/`, removed by the refresh after `RELEASE_RETENTION_WEEKS`, see
 * docs/releases.md). Export cursors are pinned to the release their export started on; when a
 * newer release has been published meanwhile, the next page is read from the kept release's
 * Parquet files (no tables are loaded into memory for it). When the folder is gone the cursor
 * has expired: 410 `cursor_expired`.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { sqlString } from '../duckdb/db.ts';
import { ApiError } from '../http/errors.ts';
import type { Release } from './release.ts';
import { TABLE_NAMES, type TableName } from './tables.ts';

/** What a query needs of a release: its id, folder and table fragments. */
export type ReleaseTables = Pick<Release, 'id' | 'dir' | 'tables' | 'path'>;

/** A kept release's tables as `read_parquet(…)` fragments, or null when it is not on disk. */
export function keptRelease(dataDir: string, id: string): ReleaseTables | null {
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(id)) return null;
  const dir = join(dataDir, 'releases', id);
  if (!existsSync(join(dir, 'manifest.json')) || !existsSync(join(dir, 'leads.parquet'))) return null;
  const tables = {} as Record<TableName, string>;
  for (const t of TABLE_NAMES) tables[t] = `read_parquet(${sqlString(join(dir, `${t}.parquet`))})`;
  return { id, dir, tables, path: (rel: string) => join(dir, rel) };
}

/**
 * The release a cursor was made on: the request's pinned release when it is that one, else the
 * kept release from disk. Throws 410 `cursor_expired` when it is no longer kept.
 */
export function releaseForCursor(dataDir: string, pinned: Release, cursorRelease: string): ReleaseTables {
  if (cursorRelease === pinned.id) return pinned;
  const kept = keptRelease(dataDir, cursorRelease);
  if (!kept) {
    throw new ApiError(
      410,
      'cursor_expired',
      `this cursor belongs to release ${cursorRelease}, which is no longer kept (releases are kept for RELEASE_RETENTION_WEEKS after they are built); start the export again without cursor — it will run on release ${pinned.id}`,
    );
  }
  return kept;
}
