/** ByteWriter (growth, short and long copies) and BufferPool (reuse only of what was given back). */
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

test('BufferPool: a buffer is reused only after it is given back; large ones are never pooled', () => {
  const pool = new BufferPool(1024, 2);
  const a = pool.take(100);
  const b = pool.take(100);
  assert.is.not(a, b);
  assert.is(a.length, 1024);
  pool.give(a);
  assert.is(pool.take(10), a, 'reused after give');
  const big = pool.take(5000);
  assert.is(big.length, 5000);
  pool.give(big);
  assert.is(pool.idle, 0, 'a buffer of another size is not kept');
  pool.give(a);
  pool.give(b);
  pool.give(Buffer.alloc(1024));
  assert.is(pool.idle, 2, 'at most `keep` idle buffers');
});

test.run();
