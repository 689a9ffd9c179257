/**
 * Child-process entry of `loadReleaseIndexes` (api/index/release-indexes.ts):
 *
 *   node --import tsx api/index/build-child.ts <release dir>
 *
 * builds the release's indexes with a DuckDB of its own and writes them as a pack
 * (api/index/pack.ts) on file descriptor 3; progress lines on stderr start with `indexes: `.
 * Importing this module starts nothing.
 */
import { createWriteStream } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { openApiDb } from '../db.ts';
import { writePack } from './pack.ts';
import { buildReleaseIndexes, packIndexes } from './release-indexes.ts';

async function main(dir: string): Promise<void> {
  const started = Date.now();
  const db = await openApiDb({ connections: 2, threads: 2, memoryLimit: '1GB' });
  try {
    const ix = await buildReleaseIndexes(db, dir);
    process.stderr.write(`indexes: ${ix.rows.size} leads (row store ${(ix.rows.bytes / 1e6).toFixed(1)} MB) built in ${Date.now() - started} ms\n`);
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
