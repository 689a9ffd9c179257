/** Checksums of a release folder: every file, recursively, but the manifest and dot-files. */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { checksumFiles } from '../../../pipeline/release/checksums.ts';
import { tempDir } from '../../helpers/tmp.ts';

test('size and sha256 of every file, sub-folders included; manifest.json and dot-names left out', async () => {
  const dir = tempDir('leads-checksums-');
  mkdirSync(join(dir, 'geojson', 'leads'), { recursive: true });
  mkdirSync(join(dir, '.duckdb-tmp'));
  writeFileSync(join(dir, 'rejects.jsonl'), 'x\n');
  writeFileSync(join(dir, 'geojson', 'leads', 'clare.ndjson'), '{}\n');
  writeFileSync(join(dir, 'manifest.json'), '{}');
  writeFileSync(join(dir, '.sales.ndjson'), 'staging');
  writeFileSync(join(dir, '.duckdb-tmp', 'spill'), 'spill');
  const sums = await checksumFiles(dir);
  assert.equal(Object.keys(sums), [join('geojson', 'leads', 'clare.ndjson'), 'rejects.jsonl']);
  assert.equal(sums['rejects.jsonl'], {
    bytes: 2,
    sha256: createHash('sha256').update('x\n').digest('hex'),
    rows: null,
  });
});

test.run();
