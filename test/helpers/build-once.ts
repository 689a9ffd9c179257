/**
 * A folder under `.tmp/` built once however many test processes ask for it at the same time (the
 * test runner runs several, test/runner/main.ts): the first takes a lock file (`<dir>.lock`,
 * created exclusively, holding its pid), builds into `<dir>.building-<pid>` and renames that to
 * `<dir>` with a `done` marker inside; the others wait for the marker. A lock whose process has
 * died (a killed run) is taken over. The parent folder is made if missing (a fresh clone has no `.tmp/`).
 *
 * @example const dir = await buildOnce(join(REPO_ROOT, '.tmp', 'release-tiny-7-<hash>'), async (work) => { … });
 */
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeSync,
} from 'node:fs';
import { dirname } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/** Build `dir` once with `build(work)` (it fills the empty folder `work`); resolves when `dir` is complete. */
export async function buildOnce(dir: string, build: (work: string) => Promise<void>): Promise<void> {
  const lock = `${dir}.lock`;
  mkdirSync(dirname(dir), { recursive: true }); // `.tmp/` of a fresh clone
  for (;;) {
    if (existsSync(`${dir}/done`)) return;
    let fd: number;
    try {
      fd = openSync(lock, 'wx');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      let text: string;
      try {
        text = readFileSync(lock, 'utf8').trim();
      } catch {
        continue; // released meanwhile
      }
      // a lock file just created has no pid yet: its writer gets 10 s to write it
      const mtime = statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? 0;
      const stale = text === '' ? Date.now() - mtime > 10_000 : !alive(Number(text));
      if (stale) rmSync(lock, { force: true });
      await sleep(200);
      continue;
    }
    try {
      writeSync(fd, String(process.pid));
      closeSync(fd);
      if (existsSync(`${dir}/done`)) return;
      const work = `${dir}.building-${process.pid}`;
      rmSync(work, { recursive: true, force: true });
      mkdirSync(work, { recursive: true });
      try {
        await build(work);
      } catch (e) {
        rmSync(work, { recursive: true, force: true });
        throw e;
      }
      mkdirSync(`${work}/done`);
      rmSync(dir, { recursive: true, force: true }); // a half-built one of a killed run
      renameSync(work, dir);
      return;
    } finally {
      rmSync(lock, { force: true });
    }
  }
}
