/**
 * Streaming a DuckDB `COPY … TO` file while it is written: the bytes are exactly DuckDB's file,
 * with a head; the temp file stays 0600 while DuckDB writes it and is gone afterwards; a client that goes away interrupts the COPY and
 * the file is deleted; a failing COPY fails the stream; long statements wait for a slot and a
 * queued one can be cancelled.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { rejects } from 'node:assert/strict';
import { join } from 'node:path';
import { buffer } from 'node:stream/consumers';
import { createServer, get, type IncomingMessage } from 'node:http';
import { pipeline } from 'node:stream';
import { createGunzip, createGzip } from 'node:zlib';
import { defaultAloneSlots, openApiDb, StatementCancelled, sqlString, type ApiDb } from '../../../api/duckdb/db.ts';
import { chunkBuffers, copyStream, ExportTempBoundError } from '../../../api/render/copy-stream.ts';
import { ExportTempSpace } from '../../../api/exports/temp-space.ts';
import { tempDir } from '../../helpers/tmp.ts';

let db: ApiDb;
test.before(async () => {
  db = await openApiDb({ connections: 1, threads: 1, memoryLimit: '128MB', aloneSlots: 1 });
});
test.after(() => db.close());

const ROWS = `SELECT i AS id, 'row ' || i || ' "quoted"' AS t, i * 0.5 AS x FROM range(300000) r(i)`;
const exportFiles = (dir: string): string[] => readdirSync(dir).filter((f) => f.startsWith('export-'));
/** A temp space of its own (its process folder is `dir`). */
const space = (): ExportTempSpace => new ExportTempSpace({ root: tempDir('copy-stream-'), maxBytes: 1e12, waitMs: 0 });
const until = async (ok: () => boolean, ms = 5000): Promise<void> => {
  const t0 = Date.now();
  while (!ok()) {
    if (Date.now() - t0 > ms) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
};

test('the stream is the head and then exactly the file DuckDB writes; the temp file is removed', async () => {
  const temp = space();
  const dir = temp.dir;
  const got = await buffer(
    copyStream(db, {
      sql: ROWS,
      params: [],
      options: 'FORMAT JSON',
      head: 'HEAD\n',
      file: await temp.acquire('jsonl', 0),
    }),
  );
  const ref = join(tempDir('copy-ref-'), 'ref.jsonl');
  await db.run(`COPY (${ROWS}) TO ${sqlString(ref)} (FORMAT JSON)`);
  const expected = Buffer.concat([Buffer.from('HEAD\n'), readFileSync(ref)]);
  assert.ok(expected.length > 5_000_000, `${expected.length} bytes: larger than many chunks`);
  assert.ok(got.equals(expected), `${got.length} vs ${expected.length} bytes`);
  await until(() => exportFiles(dir).length === 0);
});

/** GET `path` from `server` as a slow client: nothing read for 200 ms, then a pause every 64 KB or so. */
async function slowGet(port: number, path: string): Promise<Buffer> {
  const res = await new Promise<IncomingMessage>((resolve, reject) =>
    get({ host: '127.0.0.1', port, path }, resolve).once('error', reject),
  );
  res.pause();
  await new Promise((r) => setTimeout(r, 200)); // the socket's buffers fill: the server's writes go asynchronous
  const parts: Buffer[] = [];
  let since = 0;
  const body = path.endsWith('gzip') ? res.pipe(createGunzip()) : res;
  body.on('data', (d: Buffer) => {
    parts.push(d);
    since += d.length;
    if (since > 65_536) {
      since = 0;
      body.pause();
      setTimeout(() => body.resume(), 2);
    }
  });
  res.resume();
  await new Promise((resolve, reject) => body.once('end', resolve).once('error', reject));
  return Buffer.concat(parts);
}

test('through a real HTTP response to a slow client: exactly the file, its chunk buffers reused; gzip too', async () => {
  const temp = space();
  const ref = join(tempDir('copy-ref-'), 'ref.jsonl');
  await db.run(`COPY (${ROWS}) TO ${sqlString(ref)} (FORMAT JSON)`);
  const expected = readFileSync(ref);
  // as Koa sends a stream body (stream.pipeline into the response), with or without gzip
  const server = createServer((req, res) => {
    void temp.acquire('jsonl', 0).then((file) => {
      const s = copyStream(db, { sql: ROWS, params: [], options: 'FORMAT JSON', file });
      if (req.url!.endsWith('gzip')) pipeline(s, createGzip({ level: 1 }), res, () => {});
      else pipeline(s, res, () => {});
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  try {
    const before = chunkBuffers.allocated;
    const plain = await slowGet(port, '/plain');
    const allocated = chunkBuffers.allocated - before;
    assert.ok(plain.equals(expected), `identity: ${plain.length} vs ${expected.length} bytes, the same bytes`);
    const chunks = Math.ceil(expected.length / (256 * 1024));
    assert.ok(allocated < chunks / 2, `${allocated} chunk buffers for ${chunks} chunks: reused`);
    const gzipped = await slowGet(port, '/gzip');
    assert.ok(gzipped.equals(expected), `gzip: ${gzipped.length} vs ${expected.length} bytes, the same bytes`);
  } finally {
    server.close();
  }
  await until(() => exportFiles(temp.dir).length === 0);
});

test('parameters are bound; a client that goes away interrupts the COPY and the file is deleted', async () => {
  const temp = space();
  const dir = temp.dir;
  const small = await buffer(
    copyStream(db, {
      sql: 'SELECT ? AS a',
      params: ['x"y'],
      options: 'FORMAT CSV, HEADER false',
      file: await temp.acquire('csv', 0),
    }),
  );
  assert.is(small.toString(), '"x""y"\n');
  const big = `SELECT i, repeat('x', 200) AS pad FROM range(20000000) r(i)`;
  const s = copyStream(db, { sql: big, params: [], options: 'FORMAT CSV', file: await temp.acquire('csv', 0) });
  const first = await new Promise<Buffer>((resolve) => s.once('data', resolve));
  assert.ok(first.length > 0);
  const [writing] = exportFiles(dir);
  assert.is((statSync(join(dir, writing!)).mode & 0o777).toString(8), '600', 'the file DuckDB is writing stays 0600');
  s.destroy();
  await until(() => exportFiles(dir).length === 0 && temp.heldBytes() === 0, 10_000);
  // the slot is free again (aloneSlots: 1): the interrupted COPY no longer runs
  await until(() => db.aloneLoad().running === 0, 10_000);
  assert.equal(db.aloneLoad(), { running: 0, waiting: 0 });
  const next = db.runAlone(`COPY (SELECT 1 AS a) TO ${sqlString(join(dir, 'after.csv'))} (FORMAT CSV)`);
  assert.equal(
    db.aloneLoad(),
    { running: 1, waiting: 0 },
    'the next long statement starts at once, queued behind nothing',
  );
  await next;
});

test('a failing COPY fails the stream (the connection is cut, never a short file that looks whole)', async () => {
  const temp = space();
  const dir = temp.dir;
  const s = copyStream(db, {
    sql: `SELECT CAST('nope' AS INTEGER) AS n`,
    params: [],
    options: 'FORMAT CSV',
    file: await temp.acquire('csv', 0),
  });
  let error: unknown = null;
  try {
    await buffer(s);
  } catch (e) {
    error = e;
  }
  assert.match(String(error), /Conversion Error|Could not convert/);
  await until(() => exportFiles(dir).length === 0);
});

test('default slots for long statements: libuv pool minus 2, at most cores minus 1, at least 1', () => {
  assert.is(defaultAloneSlots({}, 2), 1, '2 cores: one COPY at a time (a second starves the event loop)');
  assert.is(defaultAloneSlots({}, 8), 2, 'default pool of 4 leaves 2 threads free');
  assert.is(defaultAloneSlots({ UV_THREADPOOL_SIZE: '16' }, 8), 7);
  assert.is(defaultAloneSlots({ UV_THREADPOOL_SIZE: '2' }, 8), 1);
  assert.is(defaultAloneSlots({}, 1), 1);
});

test('long statements take the slots in turn; a queued one can be cancelled', async () => {
  const dir = tempDir('copy-stream-');
  const slow = db.startAlone(
    `COPY (SELECT i, repeat('x', 100) FROM range(3000000) r(i)) TO ${sqlString(join(dir, 'slow.csv'))} (FORMAT CSV)`,
  );
  const queued = db.startAlone(`COPY (SELECT 1 AS a) TO ${sqlString(join(dir, 'queued.csv'))} (FORMAT CSV)`);
  queued.cancel();
  let cancelled: unknown = null;
  await queued.done.catch((e: unknown) => (cancelled = e));
  assert.instance(cancelled, StatementCancelled);
  const next = db.startAlone(`COPY (SELECT 2 AS a) TO ${sqlString(join(dir, 'next.csv'))} (FORMAT CSV)`);
  const order: string[] = [];
  await Promise.all([slow.done.then(() => order.push('slow')), next.done.then(() => order.push('next'))]);
  assert.equal(order, ['slow', 'next'], 'one slot: the second waits for the first');
  assert.equal(readdirSync(dir).sort(), ['next.csv', 'slow.csv'], 'the cancelled one never ran');
});

test('one export passing EXPORT_TEMP_MAX_MB is stopped: its COPY cancelled, the stream failed, the file deleted (issue 31)', async () => {
  const bound = 20e6;
  const temp = new ExportTempSpace({ root: tempDir('copy-stream-bound-'), maxBytes: bound, waitMs: 0 });
  const dir = temp.dir;
  // admitted (its estimate is 0 rows), then writes far more than the bound: ~200 MB unbounded
  const big = `SELECT i, repeat('x', 200) AS pad FROM range(1000000) r(i)`;
  const s = copyStream(db, { sql: big, params: [], options: 'FORMAT CSV', file: await temp.acquire('csv', 0) });
  let largest = 0;
  const sampler = setInterval(() => {
    for (const f of exportFiles(dir))
      largest = Math.max(largest, statSync(join(dir, f), { throwIfNoEntry: false })?.size ?? 0);
  }, 1);
  s.pause(); // a client that reads nothing: DuckDB writes ahead of it
  s.once('data', () => {});
  try {
    await rejects(buffer(s), (e: unknown) => e instanceof ExportTempBoundError && e.limitBytes === bound);
    await until(() => exportFiles(dir).length === 0 && temp.heldBytes() === 0, 10_000);
  } finally {
    clearInterval(sampler);
  }
  assert.ok(largest > bound * 0.5, `the file grew (${largest} bytes)`);
  // stopped well short of the ~200 MB it would write unbounded; how far past the bound it got is
  // what DuckDB wrote between two looks: ~2 MB alone, up to ~18 MB with the quick loop on both cores
  assert.ok(largest <= bound * 2.5, `the file stopped near the bound: ${largest} bytes for ${bound}`);
  console.log(`  bound ${bound} bytes: largest file seen ${largest} bytes`);
});

test.run();
