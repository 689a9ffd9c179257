/**
 * The bitset kernel (api/engine/bitset-kernel.ts): the checked-in .wasm is what the .wat compiles
 * to; over sets in its memory, `andCount`, `count` and `orInto` give exactly the JavaScript loops'
 * answers and words (every length around a word pair's edges, 1–5 sets, in place, dense and
 * sparse); packs carry the arrays made for it (`forKernel`) into its memory and the rest into
 * plain memory, the scratch pool lends its sets there, and anything else stays on the
 * JavaScript path.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { kernelBuffer, kernelOf } from '../../../api/engine/bitset-kernel.ts';
import {
  andCount,
  count,
  emptySet,
  orInto,
  ScratchSets,
  scratchPool,
  setRanks,
  wordsFor,
  type Bitset,
} from '../../../api/engine/bitset.ts';
import { throughPack } from '../../helpers/through-pack.ts';
import { compileKernel, WASM_FILE } from '../../../api/engine/write-bitset-kernel.ts';
import { seededRandom } from '../../helpers/random.ts';

test('the checked-in bitset-kernel.wasm is what bitset-kernel.wat compiles to (make schemas)', async () => {
  assert.equal([...readFileSync(WASM_FILE)], [...(await compileKernel())]);
});

/** `k` random sets of `n` rows (density 0–60%), in one kernel buffer, and their plain copies. */
function setsOf(n: number, k: number, rnd: () => number): { kernel: Bitset[]; plain: Bitset[] } {
  const words = wordsFor(n);
  const buf = kernelBuffer(4 * words * (k + 1) + 4); // one word more: the sets start at odd words too
  const shift = rnd() < 0.5 ? 1 : 0;
  const kernel: Bitset[] = [];
  const plain: Bitset[] = [];
  for (let i = 0; i < k; i++) {
    const s = new Uint32Array(buf, 4 * (shift + i * words), words);
    const density = rnd() < 0.3 ? 0.01 : rnd() * 0.6;
    for (let b = 0; b < n; b++) if (rnd() < density) s[b >>> 5]! |= 1 << (b & 31);
    kernel.push(s);
    plain.push(s.slice());
  }
  return { kernel, plain };
}

test('andCount, count and orInto: the kernel and the JavaScript loops agree, word for word', () => {
  const rnd = seededRandom(2026);
  let runs = 0;
  for (const n of [1, 31, 32, 33, 63, 64, 65, 95, 96, 97, 1000, 4097, 201_300]) {
    for (let k = 1; k <= 5; k++) {
      // into: a separate set, or (in place) the first input or the last; fresh sets each time
      for (const at of [k, 0, k - 1]) {
        const { kernel, plain } = setsOf(n, k + 1, rnd);
        assert.ok(kernelOf(kernel[0]!.buffer), 'the sets are in a kernel memory');
        assert.is(kernelOf(plain[0]!.buffer), undefined, 'the copies are not');
        const kInto = kernel[at]!;
        const pInto = plain[at]!;
        const got = andCount(kInto, kernel.slice(0, k));
        const want = andCount(pInto, plain.slice(0, k));
        assert.is(got, want, `andCount of ${k} sets of ${n} rows into set ${at}`);
        assert.equal([...kInto], [...pInto], `the AND's words, ${k} sets of ${n} rows`);
        assert.is(count(kInto), count(pInto));
        assert.is(count(kInto), want);
        runs++;
        orInto(kernel[0]!, kernel[k]!);
        orInto(plain[0]!, plain[k]!);
        assert.equal([...kernel[0]!], [...plain[0]!], `orInto, ${n} rows`);
      }
    }
  }
  assert.ok(runs >= 100);
});

test('setRanks: the kernel and the JavaScript loop set the same ranks, for every length around a word', () => {
  const rnd = seededRandom(31);
  for (const n of [1, 31, 32, 33, 64, 65, 1000, 20_001]) {
    const words = wordsFor(n);
    const buf = kernelBuffer(4 * (3 * words + n) + 8);
    const matched = new Uint32Array(buf, 0, words);
    const kRanks = new Uint32Array(buf, 4 * words, words);
    const kRankOf = new Int32Array(buf, 8 * words + 4, n); // at an odd word
    const order = Array.from({ length: n }, (_, i) => i).sort(() => rnd() - 0.5);
    order.forEach((pos, k) => (kRankOf[pos] = k));
    const density = rnd();
    for (let b = 0; b < n; b++) if (rnd() < density) matched[b >>> 5]! |= 1 << (b & 31);
    const pRanks = new Uint32Array(words);
    setRanks(kRanks, matched, kRankOf);
    setRanks(pRanks, matched.slice(), kRankOf.slice());
    assert.equal([...kRanks], [...pRanks], `${n} rows`);
    assert.is(count(kRanks), count(matched));
  }
});

test('a set outside the kernel memory sends the pass to JavaScript, with the same answer', () => {
  const rnd = seededRandom(7);
  const { kernel, plain } = setsOf(5_000, 3, rnd);
  const into = new Uint32Array(wordsFor(5_000));
  const mixed = andCount(into, [kernel[0]!, plain[1]!]); // into and one input outside: the JS loop
  const all = andCount(kernel[2]!, [kernel[0]!, kernel[1]!]);
  assert.is(mixed, all);
  assert.equal([...into], [...kernel[2]!]);
});

test('a pack carries the sets into a kernel memory, the rest not; the scratch pool lends its sets there', async () => {
  const n = 10_000;
  const offsets = new Uint32Array([3, 1, 4, 1, 5]); // a Uint32Array not made for the kernel
  const set = emptySet(n);
  set[7] = 0xdeadbeef;
  const tree = (await throughPack({
    ids: new Int32Array([9, 8, 7]),
    a: set,
    offsets,
    pool: scratchPool(n, 3),
  })) as { ids: Int32Array; a: Uint32Array; offsets: Uint32Array; pool: Uint32Array };
  assert.ok(kernelOf(tree.a.buffer));
  assert.is(tree.pool.buffer, tree.a.buffer);
  assert.is(tree.a[7], 0xdeadbeef);
  assert.is(kernelOf(tree.offsets.buffer), undefined, 'an array not made for the kernel stays in plain memory');
  assert.is(tree.offsets.buffer, tree.ids.buffer);
  assert.equal([...tree.offsets], [3, 1, 4, 1, 5]);
  assert.equal([...tree.ids], [9, 8, 7]);
  const sets = new ScratchSets(n, tree.pool);
  const taken = [sets.take(), sets.take(), sets.take(), sets.take()];
  assert.is(taken.filter((s) => s.buffer === tree.a.buffer).length, 3, 'three from the pool');
  assert.is(kernelOf(taken[3]!.buffer), undefined, 'the fourth allocated');
  // the pool's sets do not overlap, and each starts at a multiple of 8 bytes
  taken.forEach((s, i) => s.fill(i + 1));
  taken.forEach((s, i) => assert.ok(s.every((w) => w === i + 1)));
  for (const s of taken.slice(0, 3)) assert.is(s.byteOffset % 8, 0);
  assert.is(taken[0]!.length, wordsFor(n));
  // given back and taken again: the same sets, zeroed by take()
  sets.giveBack();
  assert.is(sets.take(), taken[0]);
  assert.ok(taken[0]!.every((w) => w === 0));
});

test.run();
