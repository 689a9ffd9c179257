/**
 * Atomic publishing of releases under `<dataDir>`:
 *
 *   releases/<id>/         one folder per published release (Parquet, GeoJSON, manifest.json)
 *   releases/.build-<id>/  a release being built; never read by the API
 *   current -> releases/<id>   a symlink, switched with a single rename(2)
 *   .refresh.lock          pid of the running refresh (common/refresh-lock.ts)
 *
 * A refresh that fails or is killed at any point leaves `current` pointing at the previous,
 * complete release: the new one only becomes visible through the final rename.
 */
import { existsSync, readlinkSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, symlink, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { BUILD_PREFIX, removeBuildFolders } from '../../common/refresh-lock.ts';

export { acquireRefreshLock, RefreshLockedError } from '../../common/refresh-lock.ts';

export interface CurrentRelease {
  id: string;
  dir: string;
}

export const releasesDir = (dataDir: string): string => join(dataDir, 'releases');
const currentLink = (dataDir: string): string => join(dataDir, 'current');

/** The release `current` points at, or null before the first publish. */
export function currentRelease(dataDir: string): CurrentRelease | null {
  try {
    const target = readlinkSync(currentLink(dataDir));
    const id = target.split('/').pop()!;
    const dir = join(releasesDir(dataDir), id);
    return existsSync(join(dir, 'manifest.json')) ? { id, dir } : null;
  } catch {
    return null;
  }
}

/**
 * Create the build folder for a new release, removing leftovers of killed builds first
 * (safe: the caller holds the refresh lock, so no other build is running).
 */
export async function createBuildDir(dataDir: string, releaseId: string): Promise<string> {
  const root = releasesDir(dataDir);
  await mkdir(root, { recursive: true });
  await removeBuildFolders(dataDir);
  const dir = join(root, `${BUILD_PREFIX}${releaseId}`);
  await mkdir(dir, { recursive: true });
  return dir;
}

/** Move a finished build into place and switch `current` to it with one atomic rename. */
export async function publishRelease(dataDir: string, buildDir: string, releaseId: string): Promise<CurrentRelease> {
  const dir = join(releasesDir(dataDir), releaseId);
  await rename(buildDir, dir);
  const tmpLink = join(dataDir, `.current-${process.pid}`);
  await unlink(tmpLink).catch(() => undefined);
  await symlink(join('releases', releaseId), tmpLink);
  await rename(tmpLink, currentLink(dataDir));
  return { id: releaseId, dir };
}

/**
 * Delete releases built more than `weeks` weeks before `now`, never the current one. Returns
 * the ids removed. Export cursors are pinned to a release, so this window is also how long
 * such cursors stay valid.
 */
export async function pruneReleases(dataDir: string, weeks: number, now: Date): Promise<string[]> {
  const root = releasesDir(dataDir);
  const current = currentRelease(dataDir)?.id;
  const cutoff = now.getTime() - weeks * 7 * 86_400_000;
  const removed: string[] = [];
  for (const name of existsSync(root) ? await readdir(root) : []) {
    if (name.startsWith('.') || name === current) continue;
    let builtAt: number;
    try {
      builtAt = Date.parse(
        (JSON.parse(await readFile(join(root, name, 'manifest.json'), 'utf8')) as { built_at: string }).built_at,
      );
    } catch {
      continue; // not a release folder we understand: leave it alone
    }
    if (builtAt < cutoff) {
      await rm(join(root, name), { recursive: true, force: true });
      removed.push(name);
    }
  }
  return removed.sort();
}
