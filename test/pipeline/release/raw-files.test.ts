/** The refresh's input: raw files by source, sorted; the fingerprint moves with names and bytes. */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { inputFingerprint, listRawFiles } from '../../../pipeline/release/raw-files.ts';
import { tempDir } from '../../helpers/tmp.ts';

const raw = tempDir('leads-raw-files-');
mkdirSync(join(raw, 'ppr'));
mkdirSync(join(raw, 'planning'));
mkdirSync(join(raw, 'unknown-source'));
writeFileSync(join(raw, 'ppr', 'PPR-2026.csv'), 'a\n');
writeFileSync(join(raw, 'ppr', 'PPR-2014.CSV'), 'b\n');
writeFileSync(join(raw, 'ppr', 'notes.txt'), 'ignored\n');
writeFileSync(join(raw, 'planning', 'applications.json'), '{}\n');
writeFileSync(join(raw, 'unknown-source', 'x.csv'), 'ignored\n');

test('listRawFiles: .csv and .json only, sorted, by source; absent sources empty', async () => {
  const f = await listRawFiles(raw);
  assert.equal(f.by.ppr, [join(raw, 'ppr', 'PPR-2014.CSV'), join(raw, 'ppr', 'PPR-2026.csv')]);
  assert.equal(f.by.planning, [join(raw, 'planning', 'applications.json')]);
  assert.equal(f.by.rents, []);
  assert.equal(f.all, [join(raw, 'planning', 'applications.json'), ...f.by.ppr]);
});

test('inputFingerprint: stable for the same files, changes with a byte or a name', async () => {
  const fp = async () => inputFingerprint(raw, (await listRawFiles(raw)).all);
  const first = await fp();
  assert.match(first, /^[0-9a-f]{64}$/);
  assert.is(await fp(), first);
  writeFileSync(join(raw, 'ppr', 'PPR-2026.csv'), 'c\n');
  const changed = await fp();
  assert.is.not(changed, first);
  renameSync(join(raw, 'ppr', 'PPR-2026.csv'), join(raw, 'ppr', 'PPR-2027.csv'));
  assert.is.not(await fp(), changed);
});

test.run();
