/** Bitsets over row positions: set algebra and counts, including the partial last word. */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  andCount,
  andInto,
  clearBit,
  count,
  emptySet,
  fullSet,
  hasBit,
  nextWord,
  orInto,
  prevWord,
  popcount32,
  ScratchSets,
  selectBits,
  setBit,
} from '../../../api/engine/bitset.ts';
import { seededRandom } from '../../helpers/random.ts';

test('fullSet holds exactly rows 0…n-1, across a partial last word', () => {
  for (const n of [0, 1, 31, 32, 33, 64, 100]) {
    const s = fullSet(n);
    assert.is(count(s), n, `n=${n}`);
    if (n > 0) assert.ok(hasBit(s, n - 1));
    assert.not.ok(hasBit(s, n), `bit ${n} must be clear`);
  }
});

test('ScratchSets: sets taken within one round are distinct and zeroed; after giveBack the same sets are lent again, zeroed', () => {
  const scratch = new ScratchSets(70);
  const a = scratch.take();
  const b = scratch.take();
  assert.is.not(a, b);
  assert.is(a.length, 3);
  setBit(a, 3);
  setBit(b, 69);
  assert.is(count(a) + count(b), 2, 'each its own bits');
  scratch.giveBack();
  const again = [scratch.take(), scratch.take(), scratch.take()];
  assert.ok(again[0] === a && again[1] === b, 'the same arrays: nothing allocated per round');
  assert.is.not(again[2], a);
  assert.equal(again.map(count), [0, 0, 0], 'zeroed when taken again');
});

test('set, and, or, popcount', () => {
  const a = emptySet(70);
  const b = emptySet(70);
  for (const i of [0, 5, 31, 32, 69]) setBit(a, i);
  for (const i of [5, 32, 40]) setBit(b, i);
  const or = a.slice();
  orInto(or, b);
  assert.is(count(or), 6);
  const and = a.slice();
  andInto(and, b);
  assert.equal(
    [...Array(70).keys()].filter((i) => hasBit(and, i)),
    [5, 32],
  );
  assert.is(popcount32(0xffffffff), 32);
  assert.is(popcount32(0x80000001), 2);
});

test('selectBits: the set bits in order from a start, after a skip, both ways (against a plain scan)', () => {
  const rnd = seededRandom(3);
  for (const n of [1, 31, 32, 33, 95, 200, 1000]) {
    for (const density of [0, 0.02, 0.3, 1]) {
      const s = emptySet(n);
      const bits: number[] = [];
      for (let i = 0; i < n; i++) if (rnd() < density) (setBit(s, i), bits.push(i));
      for (let k = 0; k < 40; k++) {
        const from = Math.floor(rnd() * (n + 2));
        const skip = Math.floor(rnd() * 10);
        const want = Math.floor(rnd() * 12);
        const fwd = bits.filter((b) => b >= from).slice(skip, skip + want);
        const bwd = bits
          .filter((b) => b < from)
          .reverse()
          .slice(skip, skip + want);
        assert.equal(
          selectBits(s, from, skip, want, true),
          fwd,
          `n=${n} from=${from} skip=${skip} want=${want} forward`,
        );
        assert.equal(
          selectBits(s, from, skip, want, false),
          bwd,
          `n=${n} from=${from} skip=${skip} want=${want} backward`,
        );
      }
    }
  }
});

test('nextWord / prevWord: the nearest non-zero word either way, across runs of zero words of every length and alignment', () => {
  const rnd = seededRandom(8);
  for (const words of [0, 1, 7, 8, 9, 16, 17, 40, 300]) {
    for (const density of [0, 0.01, 0.1, 0.5]) {
      const s = new Uint32Array(words);
      for (let w = 0; w < words; w++) if (rnd() < density) s[w] = 1 << Math.floor(rnd() * 32);
      for (let w = -1; w <= words; w++) {
        let next = Math.max(w, 0);
        while (next < words && s[next] === 0) next++;
        let prev = Math.min(w, words - 1);
        while (prev >= 0 && s[prev] === 0) prev--;
        if (w >= 0) assert.is(nextWord(s, w), next, `words=${words} density=${density} nextWord(${w})`);
        if (w < words) assert.is(prevWord(s, w), prev, `words=${words} density=${density} prevWord(${w})`);
      }
    }
  }
});

test('selectBits and andCount on large sparse sets (long runs of zero words passed over): against a plain scan', () => {
  const rnd = seededRandom(9);
  for (const n of [5_000, 40_000]) {
    for (const bitsWanted of [1, 3, 40, 400]) {
      const s = emptySet(n);
      for (let i = 0; i < bitsWanted; i++) setBit(s, Math.floor(rnd() * n));
      const bits = [...Array(n).keys()].filter((i) => hasBit(s, i));
      assert.equal(selectBits(s, 0, 0, n, true), bits, `n=${n} ${bitsWanted} bits: all, ascending`);
      assert.equal(selectBits(s, n, 0, n, false), [...bits].reverse(), `n=${n} ${bitsWanted} bits: all, descending`);
      for (let k = 0; k < 20; k++) {
        const from = Math.floor(rnd() * (n + 1));
        const skip = Math.floor(rnd() * 3);
        assert.equal(
          selectBits(s, from, skip, 5, true),
          bits.filter((b) => b >= from).slice(skip, skip + 5),
          `n=${n} from=${from} skip=${skip} forward`,
        );
        assert.equal(
          selectBits(s, from, skip, 5, false),
          bits
            .filter((b) => b < from)
            .reverse()
            .slice(skip, skip + 5),
          `n=${n} from=${from} skip=${skip} backward`,
        );
      }
      const dense = emptySet(n).fill(0xffffffff);
      const into = emptySet(n);
      assert.is(andCount(into, [dense, s]), bits.length, `n=${n}: a sparse AND is counted`);
      assert.equal(selectBits(into, 0, 0, n, true), bits);
    }
  }
});

test('andCount: the AND of 1 to 5 sets and its count in one pass, into a fresh set or over one of them', () => {
  const rnd = seededRandom(34);
  for (const n of [1, 31, 32, 33, 200, 1000]) {
    for (let k = 1; k <= 5; k++) {
      const sets = Array.from({ length: k }, () => {
        const s = emptySet(n);
        for (let i = 0; i < n; i++) if (rnd() < 0.7) setBit(s, i);
        return s;
      });
      const want = [...Array(n).keys()].filter((i) => sets.every((s) => hasBit(s, i)));
      const into = emptySet(n).fill(0xffffffff); // whatever it held is written over
      assert.is(andCount(into, sets), want.length, `n=${n} k=${k}: count`);
      assert.equal(selectBits(into, 0, 0, n + 1, true), want, `n=${n} k=${k}: rows`);
      const over = sets.map((s) => s.slice());
      assert.is(andCount(over[k - 1]!, over), want.length, `n=${n} k=${k}: over its last set`);
      assert.equal(selectBits(over[k - 1]!, 0, 0, n + 1, true), want, `n=${n} k=${k}: rows over its last set`);
    }
  }
  const high = Uint32Array.of(0x80000000, 0xffffffff);
  assert.is(andCount(emptySet(64), [high, high]), 33, 'the top bit counts');
});

test('clearBit clears one bit; ScratchSets.lent knows the sets of the round', () => {
  const s = fullSet(40);
  clearBit(s, 31);
  clearBit(s, 39);
  assert.is(count(s), 38);
  assert.not.ok(hasBit(s, 31));
  const scratch = new ScratchSets(40);
  const a = scratch.take();
  assert.ok(scratch.lent(a));
  assert.not.ok(scratch.lent(s), 'a set of its own is not lent');
  scratch.giveBack();
  assert.not.ok(scratch.lent(a), 'given back');
});

test.run();
