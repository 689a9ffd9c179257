/**
 * The refresh lock of a data folder (`<dataDir>/.refresh.lock`, the pid of the refresh holding
 * it) and the sweep of the build folders a killed refresh left (`releases/.build-<id>/`). Shared
 * by the pipeline (a refresh holds the lock from start to end; pipeline/run.ts) and the API (at
 * start it sweeps the leftovers, only while no refresh holds the lock; api/server.ts), which
 * otherwise share nothing but the files.
 */
import { closeSync, openSync, readFileSync, writeSync } from 'node:fs';
import { mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';

export class RefreshLockedError extends Error {}

/** The prefix of a release folder being built (never read by the API). */
export const BUILD_PREFIX = '.build-';

const lockPath = (dataDir: string): string => join(dataDir, '.refresh.lock');

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Take the refresh lock (one refresh per data dir). A lock left by a process that no longer
 * exists (a killed refresh) is taken over. Returns a release function; throws
 * `RefreshLockedError` while a live process holds it.
 */
export async function acquireRefreshLock(dataDir: string): Promise<() => Promise<void>> {
  await mkdir(dataDir, { recursive: true });
  const path = lockPath(dataDir);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(path, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return async () => {
        await rm(path, { force: true });
      };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      const pid = Number(readFileSync(path, 'utf8').trim());
      if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && processAlive(pid)) {
        throw new RefreshLockedError(`another refresh is running on ${dataDir} (pid ${pid}); wait for it or stop it`);
      }
      await rm(path, { force: true }); // stale lock from a killed refresh
    }
  }
  throw new RefreshLockedError(`could not take the refresh lock ${path}`);
}

/**
 * Remove every `releases/.build-<id>/` folder. Only safe while the caller holds the refresh lock
 * (no build is running); returns the names removed.
 */
export async function removeBuildFolders(dataDir: string): Promise<string[]> {
  const root = join(dataDir, 'releases');
  let names: string[];
  try {
    names = await readdir(root);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw e;
  }
  const stale = names.filter((n) => n.startsWith(BUILD_PREFIX));
  for (const name of stale) await rm(join(root, name), { recursive: true, force: true });
  return stale;
}

/**
 * Remove the build folders a killed refresh left, unless a refresh is running now (then nothing
 * is touched and null is returned: that refresh removes them itself). The lock is held only for
 * the sweep.
 */
export async function removeStaleBuilds(dataDir: string): Promise<string[] | null> {
  let release: () => Promise<void>;
  try {
    release = await acquireRefreshLock(dataDir);
  } catch (e) {
    if (e instanceof RefreshLockedError) return null;
    throw e;
  }
  try {
    return await removeBuildFolders(dataDir);
  } finally {
    await release();
  }
}
