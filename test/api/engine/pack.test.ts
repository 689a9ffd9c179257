/**
 * The pack format (api/engine/pack.ts): typed arrays, Buffers, Maps and JSON values round-trip
 * through a stream as views into one ArrayBuffer, 8-byte aligned; what cannot be packed, and a
 * stream that is cut short, are errors rather than wrong data.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { rejects } from 'node:assert/strict';
import { PassThrough, Readable } from 'node:stream';
import { readPack, writePack, type Packable } from '../../../api/engine/pack.ts';

async function roundTrip(tree: Packable): Promise<Packable> {
  const pipe = new PassThrough();
  const [, got] = await Promise.all([writePack(pipe, tree), readPack(pipe)]);
  return got;
}

test('every kind of value round-trips; arrays are aligned views of one buffer', async () => {
  const big = new Float64Array(300_000).map((_, i) => (i % 7 === 0 ? -Infinity : i % 11 === 0 ? NaN : i / 3));
  const tree = {
    ints: new Int32Array([1, -2, 2 ** 31 - 1]),
    bytes: new Uint8Array([1, 2, 3]), // 3 bytes: the next array must still start at a multiple of 8
    halves: new Uint16Array([65535, 0, 7]),
    big,
    view: new Uint32Array([9, 8, 7, 6, 5]).subarray(1, 4), // only the view's bytes travel
    buf: Buffer.from('Dún Laoghaire – €'),
    maps: new Map<string, Packable>([
      ['a', new Int8Array([-1])],
      ['b', new Map([['c', 'd']])],
    ]),
    list: [1, 'two', null, true, { nested: new Float32Array([1.5]) }],
    empty: new Int32Array(0),
  };
  const got = (await roundTrip(tree)) as any;
  assert.equal([...got.ints], [1, -2, 2 ** 31 - 1]);
  assert.instance(got.ints, Int32Array);
  assert.equal([...got.bytes], [1, 2, 3]);
  assert.instance(got.halves, Uint16Array);
  assert.equal([...got.halves], [65535, 0, 7]);
  assert.is(got.big.length, big.length);
  for (let i = 0; i < big.length; i += 997) assert.ok(Object.is(got.big[i], big[i]), `big[${i}]`);
  assert.equal([...got.view], [8, 7, 6]);
  assert.ok(Buffer.isBuffer(got.buf));
  assert.is(got.buf.toString(), 'Dún Laoghaire – €');
  assert.instance(got.maps, Map);
  assert.equal([...got.maps.get('a')], [-1]);
  assert.is(got.maps.get('b').get('c'), 'd');
  assert.equal(got.list.slice(0, 4), [1, 'two', null, true]);
  assert.equal([...got.list[4].nested], [1.5]);
  assert.is(got.empty.length, 0);
  const arrays = [got.ints, got.bytes, got.halves, got.big, got.view, got.buf, got.list[4].nested];
  for (const a of arrays) {
    assert.is(a.buffer, got.ints.buffer, 'one ArrayBuffer');
    assert.is(a.byteOffset % 8, 0, 'aligned');
  }
});

test('what cannot be packed is refused', async () => {
  await rejects(roundTrip({ x: Infinity }), /cannot pack the number Infinity at \.x/);
  await rejects(roundTrip({ $a: 1 }), /key \$a/);
  await rejects(roundTrip({ d: new DataView(new ArrayBuffer(8)) as unknown as Packable }), /cannot pack a DataView/);
});

test('a short or overlong stream is an error, not a partial result', async () => {
  const pipe = new PassThrough();
  const chunks: Buffer[] = [];
  pipe.on('data', (c: Buffer) => chunks.push(c));
  await writePack(pipe, { a: new Float64Array(1000) });
  const whole = Buffer.concat(chunks);
  await rejects(readPack(Readable.from([whole.subarray(0, whole.length - 100)])), /of 8000 bytes arrived/);
  await rejects(readPack(Readable.from([whole.subarray(0, 10)])), /ended before its header/);
  await rejects(readPack(Readable.from([whole, Buffer.from('extra')])), /more bytes than its header announces/);
  const got = (await readPack(Readable.from([whole.subarray(0, 3), whole.subarray(3, 77), whole.subarray(77)]))) as any;
  assert.is(got.a.length, 1000, 'split anywhere, read whole');
});

test.run();
