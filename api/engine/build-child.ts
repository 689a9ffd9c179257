/**
 * Child-process entry of `loadReleaseIndexes` (api/engine/release-indexes.ts):
 *
 *   node --import tsx api/engine/build-child.ts <release dir>
 *
 * first checks every file of the release against its manifest (api/releases/verify-release.ts,
 * streamed): a mismatch writes `refused: <reason>` on stderr and exits with `REFUSED_EXIT` before
 * anything is built. Then it builds the release's indexes with a DuckDB of its own and writes them
 * as a pack (api/engine/pack.ts) on file descriptor 3; progress lines on stderr start with
 * `indexes: `. Importing this module starts nothing. DuckDB and the engine are imported only once
 * the files match: a refused release costs the child ~0.1 s of CPU instead of ~0.5 s.
 */
import { createWriteStream } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { ReleaseRefusedError, REFUSED_EXIT, verifyReleaseFiles } from '../releases/verify-release.ts';

async function main(dir: string): Promise<void> {
  const started = Date.now();
  try {
    const v = await verifyReleaseFiles(dir);
    process.stderr.write(
      `indexes: ${v.files} files (${(v.bytes / 1e6).toFixed(1)} MB) match the manifest, checked in ${Date.now() - started} ms\n`,
    );
  } catch (e) {
    if (!(e instanceof ReleaseRefusedError)) throw e;
    process.stderr.write(`refused: ${e.reason.replace(/\n/g, ' ')}\n`);
    process.exit(REFUSED_EXIT);
  }
  const [{ openApiDb }, { writePack }, { buildReleaseIndexes, packIndexes }] = await Promise.all([
    import('../duckdb/db.ts'),
    import('./pack.ts'),
    import('./release-indexes.ts'),
  ]);
  const db = await openApiDb({ connections: 2, threads: 2, memoryLimit: '1GB' });
  try {
    const ix = await buildReleaseIndexes(db, dir);
    process.stderr.write(
      `indexes: ${ix.rows.size} leads (row store ${(ix.rows.bytes / 1e6).toFixed(1)} MB) built in ${Date.now() - started} ms\n`,
    );
    await writePack(createWriteStream('', { fd: 3 }), packIndexes(ix));
  } finally {
    db.close();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const dir = process.argv[2];
  if (!dir) {
    process.stderr.write('usage: build-child.ts <release dir>\n');
    process.exit(2);
  }
  main(dir).catch((e: Error) => {
    process.stderr.write(`${e.stack ?? e.message}\n`);
    process.exit(1);
  });
}
