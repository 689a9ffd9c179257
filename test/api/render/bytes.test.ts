/** ByteWriter (growth, short and long copies, its DataView) and BufferPool (reuse only of what was given back). */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { BufferPool, ByteWriter } from '../../../api/render/bytes.ts';

test('ByteWriter: ascii, utf8, bytes and byte append in order and grow past the first buffer', () => {
  const w = new ByteWriter(4);
  const src = Buffer.from('0123456789abcdefghijklmnopqrstuvwxyz0123456789');
  w.ascii('{"a":');
  w.utf8('"Dún Laoghaire – €"');
  w.bytes(src, 2, 5); // short run
  w.bytes(src, 0, src.length); // long run
  w.byte(0x7d);
  w.ascii('x'.repeat(40));
  const want = `{"a":"Dún Laoghaire – €"234${src.toString()}}${'x'.repeat(40)}`;
  assert.is(w.toString(), want);
  assert.is(w.view().toString(), want);
  const taken = w.take();
  assert.is(taken.toString(), want);
  assert.is(w.len, 0, 'take empties the writer');
  w.ascii('again');
  assert.is(taken.toString(), want, 'the taken copy is its own');
});

test('ByteWriter.dataView: over the current buffer (a pooled one with an offset too), made again when the writer grows', () => {
  const pooled = Buffer.alloc(64).subarray(8, 24);
  const w = new ByteWriter(pooled);
  const v = w.dataView();
  assert.is(w.dataView(), v, 'kept while the buffer is the same');
  v.setUint32(0, 0x41424344);
  w.len = 4;
  assert.is(w.toString(), 'ABCD', "at the buffer's own offset");
  w.ensure(100);
  const grown = w.dataView();
  assert.is.not(grown, v);
  assert.is(grown.byteLength, w.buf.length);
  grown.setUint32(4, 0x45464748);
  w.len = 8;
  assert.is(w.toString(), 'ABCDEFGH', 'the grown buffer kept what was written');
});

test('BufferPool: a buffer is reused only after it is given back; larger ones by power-of-two size, up to 8 MB', () => {
  const pool = new BufferPool(1024, 2);
  const a = pool.take(100);
  const b = pool.take(100);
  assert.is.not(a, b);
  assert.is(a.length, 1024);
  pool.give(a);
  assert.is(pool.take(10), a, 'reused after give');
  const big = pool.take(5000);
  assert.is(big.length, 8192, 'rounded up to a power of two');
  pool.give(big);
  assert.is(pool.idle, 1, 'kept for its size');
  assert.is(pool.take(4097), big, 'reused for any request of its size class');
  assert.is.not(pool.take(3000), big, 'not while it is out');
  pool.give(Buffer.alloc(5000));
  pool.give(big.subarray(0, 4096));
  assert.is(pool.idle, 0, 'a buffer of another size, or a view, is not kept');
  const huge = pool.take(9 * 1024 * 1024);
  assert.is(huge.length, 9 * 1024 * 1024, 'past 8 MB: exactly what was asked');
  pool.give(huge);
  assert.is(pool.idle, 0, 'and never kept');
  for (let i = 0; i < 6; i++) pool.give(Buffer.allocUnsafeSlow(2048));
  assert.is(pool.idle, 4, 'at most 4 idle buffers of each larger size');
  pool.give(a);
  pool.give(b);
  pool.give(Buffer.alloc(1024));
  assert.is(pool.idle, 6, 'at most `keep` idle buffers of the pool size');
});

test.run();
