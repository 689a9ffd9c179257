/**
 * `column ≥ min` / `column ≤ max` from the cumulative prefixes (api/engine/range-index.ts) equal
 * a scan of the column, nulls left out, at every cut — below and above each kept prefix, so the
 * bits a query adds to the prefix under it and those it takes out of the one over it — and the
 * counts equal the sets' sizes.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { count, emptySet, selectBits } from '../../../api/engine/bitset.ts';
import { RangeIndex } from '../../../api/engine/range-index.ts';
import { seededRandom } from '../../helpers/random.ts';

const rows = (s: Uint32Array, n: number): number[] => selectBits(s, 0, 0, n + 1, true);

test('atLeast / atMost and their counts equal a scan, at every value and between values', () => {
  const rnd = seededRandom(5);
  for (const n of [1, 63, 64, 65, 500, 2_000]) {
    // few distinct values (ties), some nulls
    const column = Float64Array.from({ length: n }, () => (rnd() < 0.1 ? NaN : Math.floor(rnd() * 300)));
    const ix = new RangeIndex(RangeIndex.build(column));
    const bounds = [-1, 0.5, 299, 300, ...Array.from({ length: 60 }, () => Math.floor(rnd() * 310) - 5)];
    for (const b of bounds) {
      const ge = [...column.keys()].filter((i) => column[i]! >= b);
      const le = [...column.keys()].filter((i) => column[i]! <= b);
      const into = emptySet(n).fill(0xffffffff); // whatever it held is written over
      assert.equal(rows(ix.atLeast(b, into), n), ge, `n=${n} ≥ ${b}`);
      assert.is(ix.countAtLeast(b), ge.length, `n=${n} count ≥ ${b}`);
      assert.is(count(into), ge.length);
      assert.equal(rows(ix.atMost(b, emptySet(n)), n), le, `n=${n} ≤ ${b}`);
      assert.is(ix.countAtMost(b), le.length, `n=${n} count ≤ ${b}`);
    }
  }
});

test('every cut of a column of distinct values: the prefix under it plus rows, or the one over it minus rows', () => {
  const n = 640; // 64 parts of 10 rows
  const column = Float64Array.from({ length: n }, (_, i) => (i * 7919) % n);
  const ix = new RangeIndex(RangeIndex.build(column));
  for (let b = -1; b <= n; b++) {
    const ge = [...column.keys()].filter((i) => column[i]! >= b);
    assert.equal(rows(ix.atLeast(b, emptySet(n)), n), ge, `≥ ${b}`);
    assert.is(ix.countAtLeast(b), ge.length);
  }
});

test.run();
