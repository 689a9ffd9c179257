/**
 * The wavelet matrix of api/engine/range-quantile.ts against a brute-force sort of each range:
 * random sequences (small and wide alphabets, runs of equal values, lengths around word
 * boundaries), every k of many random ranges, and `countBelow` at and around present values.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { buildRangeQuantile, RangeQuantile } from '../../../api/engine/range-quantile.ts';
import { seededRandom } from '../../helpers/random.ts';

function check(values: number[], rand: () => number, ranges: number): void {
  const rq = new RangeQuantile(buildRangeQuantile(values));
  const n = values.length;
  for (let t = 0; t < ranges; t++) {
    const a = Math.floor(rand() * (n + 1));
    const b = Math.floor(rand() * (n + 1));
    const [from, to] = a <= b ? [a, b] : [b, a];
    const sorted = values.slice(from, to).sort((x, y) => x - y);
    for (let k = 0; k < sorted.length; k++)
      assert.is(rq.kth(from, to, k), sorted[k], `kth(${from}, ${to}, ${k}) of ${n}`);
    for (const v of [
      0,
      1,
      sorted[0] ?? 0,
      (sorted[sorted.length >> 1] ?? 0) + 1,
      sorted[sorted.length - 1] ?? 0,
      2 ** 31 - 1,
    ]) {
      assert.is(rq.countBelow(from, to, v), sorted.filter((x) => x < v).length, `countBelow(${from}, ${to}, ${v})`);
    }
  }
}

test('kth and countBelow equal a sort of the range, for every k', () => {
  const rand = seededRandom(20261125);
  for (const n of [1, 2, 31, 32, 33, 64, 65, 500, 1031]) {
    for (const width of [1, 2, 7, 1000, 2 ** 20, 2 ** 30]) {
      const values = Array.from({ length: n }, () => Math.floor(rand() * width));
      check(values, rand, n > 500 ? 15 : 40);
    }
  }
});

test('runs of equal values and a constant sequence', () => {
  const rand = seededRandom(7);
  check(
    Array.from({ length: 300 }, (_, i) => Math.floor(i / 50)),
    rand,
    50,
  );
  check(new Array(97).fill(5), rand, 20);
  check(new Array(40).fill(0), rand, 20);
});

test('k outside the range is refused, an empty sequence answers counts', () => {
  const rq = new RangeQuantile(buildRangeQuantile([3, 1, 2]));
  assert.throws(() => rq.kth(0, 3, 3), /outside/);
  assert.throws(() => rq.kth(1, 1, 0), /outside/);
  assert.is(new RangeQuantile(buildRangeQuantile([])).countBelow(0, 0, 5), 0);
});

test.run();
