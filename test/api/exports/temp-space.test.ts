/**
 * The export temp space (api/exports/temp-space.ts): private folders and files, leftovers of dead
 * processes removed, and the bound on the space held — reservations, growth past them, waiting
 * in order, 503 after the wait, and bytes per row learnt from real files.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { ApiError } from '../../../api/http/errors.ts';
import { BYTES_PER_ROW_DEFAULT, ExportTempSpace, removeLeftovers } from '../../../api/exports/temp-space.ts';
import { tempDir } from '../../helpers/tmp.ts';

const mode = (p: string): string => (statSync(p).mode & 0o777).toString(8);
const host = hostname().replace(/[^A-Za-z0-9.]/g, '_');

test('the folder is made private (0700), its files 0600; a symlink or a file instead of it stops the start', async () => {
  const root = join(tempDir('export-temp-'), 'made');
  const t = new ExportTempSpace({ root, maxBytes: 1e6, waitMs: 0 });
  assert.is(mode(root), '700');
  assert.is(mode(t.dir), '700');
  const f = await t.acquire('csv', 1);
  assert.is(mode(f.path), '600');
  assert.is(statSync(f.path).size, 0, 'created empty, for DuckDB to write into');
  const released = f.release();
  assert.is(f.release(), released, 'idempotent: the same release');
  await released;
  assert.not.ok(existsSync(f.path));
  const open = tempDir('export-temp-');
  chmodSync(open, 0o755);
  new ExportTempSpace({ root: open, maxBytes: 1e6, waitMs: 0 });
  assert.is(mode(open), '700', 'an existing folder readable by others is closed');
  const link = join(tempDir('export-temp-'), 'link');
  symlinkSync(tempDir('export-temp-target-'), link);
  assert.throws(() => new ExportTempSpace({ root: link, maxBytes: 1e6, waitMs: 0 }), /symlink/);
  const file = join(tempDir('export-temp-'), 'file');
  writeFileSync(file, '');
  assert.throws(() => new ExportTempSpace({ root: file, maxBytes: 1e6, waitMs: 0 }));
  t.close();
  assert.not.ok(existsSync(t.dir), 'close removes the process folder');
});

test('leftovers: folders of dead processes of this host and stray files go; live, own and other hosts stay', () => {
  const root = tempDir('export-temp-');
  const child = spawnSync(process.execPath, ['-e', '']);
  const deadPid = child.pid!;
  const dead = `${host}-${deadPid}-0123abcd`;
  const samePid = `${host}-${process.pid}-89abcdef`; // an earlier life of this pid (a restarted container)
  const live = `${host}-${process.ppid}-00000000`; // the parent process runs
  const other = `elsewhere-${deadPid}-0123abcd`;
  for (const d of [dead, samePid, live, other]) {
    mkdirSync(join(root, d));
    writeFileSync(join(root, d, 'export-x.csv'), 'data');
  }
  writeFileSync(join(root, 'stray.jsonl'), 'data');
  const removed = removeLeftovers(root, 'self');
  assert.ok(
    [dead, samePid, 'stray.jsonl'].every((r) => removed.includes(r)),
    removed.join(', '),
  );
  assert.equal(readdirSync(root).sort(), [live, other].sort());
});

test('one export expected past the whole bound: 507 export_too_large at once, no file made, nothing reserved', async () => {
  const per = BYTES_PER_ROW_DEFAULT.parquet;
  const t = new ExportTempSpace({ root: tempDir('export-temp-'), maxBytes: 10 * per, waitMs: 1000 });
  const refused = await t.acquire('parquet', 11).catch((e: unknown) => e);
  assert.instance(refused, ApiError);
  assert.is((refused as ApiError).status, 507);
  assert.is((refused as ApiError).code, 'export_too_large');
  assert.match(
    (refused as ApiError).message,
    /narrow the filters, or use \.csv or \.jsonl \(written from memory, no temp space\)/,
  );
  assert.equal(readdirSync(t.dir), []);
  assert.is(t.heldBytes(), 0);
  assert.is(t.waitingExports(), 0, 'refused at once, not after the wait');
  const csv = await t.acquire('csv', 11).catch((e: unknown) => e);
  assert.match((csv as ApiError).message, /or use format=parquet/);
  t.close();
});

test('the bound: reservations and growth count; past it exports wait in order, then 503 export_busy with Retry-After', async () => {
  const per = BYTES_PER_ROW_DEFAULT.jsonl;
  const t = new ExportTempSpace({ root: tempDir('export-temp-'), maxBytes: 5 * per, waitMs: 150 });
  const a = await t.acquire('jsonl', 2); // alone: always admitted
  assert.is(t.heldBytes(), 2 * per);
  writeFileSync(a.path, Buffer.alloc(6 * per)); // grown past its reservation, and past the bound
  assert.is(t.heldBytes(), 6 * per);
  const pending = t.acquire('csv', 0).catch((e: unknown) => e);
  assert.is(t.waitingExports(), 1, 'it waits for space instead of being refused at once');
  const refused = await pending;
  assert.is(t.waitingExports(), 0);
  assert.instance(refused, ApiError);
  assert.equal(
    [(refused as ApiError).status, (refused as ApiError).code, (refused as ApiError).headers['Retry-After']],
    [503, 'export_busy', '30'],
  );
  // two waiting: admitted in order when the space frees
  const order: string[] = [];
  const slow = new ExportTempSpace({ root: tempDir('export-temp-'), maxBytes: 3.5 * per, waitMs: 5_000 });
  const big = await slow.acquire('jsonl', 3); // 3 of 3.5 rows' worth
  const first = slow.acquire('jsonl', 2).then((f) => (order.push('first'), f));
  const second = slow.acquire('csv', 0).then((f) => (order.push('second'), f)); // would fit, but waits its turn
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(order, []);
  big.release();
  const [f1, f2] = await Promise.all([first, second]);
  assert.equal(order, ['first', 'second']);
  await Promise.all([f1.release(), f2.release(), a.release()]);
  assert.is(t.heldBytes(), 0);
  assert.is(slow.heldBytes(), 0);
});

test('bytes per row are learnt from the files made', async () => {
  const t = new ExportTempSpace({ root: tempDir('export-temp-'), maxBytes: 1e9, waitMs: 0 });
  assert.is(t.estimate('csv', 10), 10 * BYTES_PER_ROW_DEFAULT.csv);
  const f = await t.acquire('csv', 2000);
  writeFileSync(f.path, Buffer.alloc(2000 * 700));
  f.release();
  assert.is(t.estimate('csv', 10), 7000);
  assert.is(t.estimate('jsonl', 10), 10 * BYTES_PER_ROW_DEFAULT.jsonl, 'per format');
});

test.run();
