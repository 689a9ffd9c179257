/**
 * Preloaded (`node --import <this file> api/server.ts`: `enginePackPreload()`) into the API
 * processes a test starts where the process itself is what is tested (a cluster, a SIGTERM or
 * SIGKILL and a restart): their index-building children (api/engine/build-child.ts, started with
 * the server's `--import` flags) send the pack the test processes built before for the same
 * release files and code (`.tmp/packs`, test/helpers/pack-cache.ts, as `reuseEngine` keeps it),
 * instead of building the same indexes again (~0.4 s of CPU each). The child's first step runs as
 * it does: the files are checked against the manifest (`verifyReleaseFiles`), and a release that
 * does not match, or has no pack yet, is left to the child itself (its refusal, its build).
 * Nothing else of the server changes; the child's own build is tested in
 * test/api/engine/release-indexes.test.ts.
 */
import { createReadStream, createWriteStream, existsSync, realpathSync } from 'node:fs';
import { basename } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { verifyReleaseFiles } from '../../api/releases/verify-release.ts';
import { manifestKey, packFile } from './pack-cache.ts';

const CHILD = fileURLToPath(new URL('../../api/engine/build-child.ts', import.meta.url));

/** The node arguments that preload this file (after the process's loader flags, before the script). */
export function enginePackPreload(): string[] {
  return ['--import', fileURLToPath(import.meta.url)];
}

async function sendCachedPack(dir: string): Promise<void> {
  const started = Date.now();
  try {
    const v = await verifyReleaseFiles(dir);
    const file = packFile('leads-engine', manifestKey(basename(dir), dir));
    if (!existsSync(file)) return;
    process.stderr.write(`indexes: ${v.files} files match the manifest; the pack the tests built from them is sent\n`);
    await pipeline(createReadStream(file), createWriteStream('', { fd: 3 }));
    process.stderr.write(`indexes: read from .tmp/packs in ${Date.now() - started} ms\n`);
    process.exit(0);
  } catch {
    // the child checks again and answers (refused: …) as it does
  }
}

const argv1 = process.argv[1];
if (argv1 && existsSync(argv1) && realpathSync(argv1) === CHILD && process.argv[2])
  await sendCachedPack(process.argv[2]);
