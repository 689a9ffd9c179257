/**
 * Fixed-size bitsets over row positions (one bit per lead of a release), the building block of
 * the in-memory lead index: a filter value is a bitset, OR within a filter, AND across filters.
 * 201,300 rows → 6,291 words; an AND or OR of two sets costs ~5 µs.
 *
 * The passes over every word (`andCount`, `count`, `orInto`, `setRanks`) run in WebAssembly when
 * their sets live in a kernel's memory (api/engine/bitset-kernel.ts: the sets a pack brings and the
 * scratch sets of their pool), else in the JavaScript loops below; the answers are the same.
 */
import { forKernel, kernelOf } from './bitset-kernel.ts';

export type Bitset = Uint32Array;

export const wordsFor = (n: number): number => (n + 31) >>> 5;

export function emptySet(n: number): Bitset {
  return forKernel(new Uint32Array(wordsFor(n)));
}

/**
 * Bitsets of one size lent to the synchronous steps of one computation and all taken back at its
 * end (`LeadIndex.page`: a request's filter sets, its area's matches, its range and key filters' sets,
 * the search's groups and term sets, a value page's ranks): each
 * `take()` is zeroed (`take(from)` a copy of `from`), `giveBack()` returns every set taken since
 * the last one. A fresh set per
 * request is a 25 KB ArrayBuffer (201,300 rows), which V8 counts as external memory: at a county
 * polygon's ~1,000 requests a second a worker, that churn brought full (mark-compact) collections
 * of 8–17 ms (docs/performance.md, "After the leaf-test work").
 */
export class ScratchSets {
  private readonly sets: Bitset[] = [];
  private used = 0;

  private readonly n: number;
  private readonly pool: Uint32Array | undefined;
  /**
   * `pool` (optional): room for sets of `n` rows (`scratchPool`), taken before any set is
   * allocated — where it lives in a kernel's memory, the passes over the scratch sets run there.
   */
  constructor(n: number, pool?: Uint32Array) {
    this.n = n;
    this.pool = pool;
  }

  take(from?: Bitset): Bitset {
    const s = this.takeForWrite();
    if (from) s.set(from);
    else s.fill(0);
    return s;
  }

  /**
   * A set whose words are whatever they were: for a caller that writes every word (`andCount`'s
   * `into`, a range's copied prefix). Zeroing it first was a pass over 126 KB at 5× the default data.
   */
  takeForWrite(): Bitset {
    if (this.used === this.sets.length) {
      const words = wordsFor(this.n);
      const at = this.sets.length * poolStride(this.n);
      this.sets.push(
        this.pool && at + words <= this.pool.length ? this.pool.subarray(at, at + words) : emptySet(this.n),
      );
    }
    return this.sets[this.used++]!;
  }

  /** Whether `s` is one of the sets lent since the last `giveBack` (a set the caller may write over). */
  lent(s: Bitset): boolean {
    const at = this.sets.indexOf(s);
    return at >= 0 && at < this.used;
  }

  giveBack(): void {
    this.used = 0;
  }
}

/** Words between the starts of two pool sets: a set's words rounded up to 8 bytes (the kernel reads two words at a time). */
const poolStride = (n: number): number => (wordsFor(n) + 1) & ~1;

/** Room for `sets` scratch sets of `n` rows (a `ScratchSets` pool). */
export function scratchPool(n: number, sets: number): Uint32Array {
  return forKernel(new Uint32Array(sets * poolStride(n)));
}

/** The set of every row < n. */
export function fullSet(n: number): Bitset {
  const s = new Uint32Array(wordsFor(n)).fill(0xffffffff);
  const tail = n & 31;
  if (tail !== 0) s[s.length - 1] = (1 << tail) - 1;
  return s;
}

export function setBit(s: Bitset, i: number): void {
  s[i >>> 5]! |= 1 << (i & 31);
}

export function clearBit(s: Bitset, i: number): void {
  s[i >>> 5]! &= ~(1 << (i & 31));
}

export function hasBit(s: Bitset, i: number): boolean {
  return (s[i >>> 5]! & (1 << (i & 31))) !== 0;
}

/** `into |= other` (in place). */
export function orInto(into: Bitset, other: Bitset): void {
  const k = kernelOf(into.buffer);
  if (k !== undefined && other.buffer === into.buffer) return k.or1(into.byteOffset, other.byteOffset, into.length);
  for (let w = 0; w < into.length; w++) into[w]! |= other[w]!;
}

/** `into &= other` (in place). */
export function andInto(into: Bitset, other: Bitset): void {
  for (let w = 0; w < into.length; w++) into[w]! &= other[w]!;
}

/**
 * `into = sets[0] & sets[1] & …` in one pass, and its population count: what a page's filters
 * ask of their sets (the rows and `total`) read once and written once, instead of a copy, an
 * in-place AND per further set and a counting pass (at 5× the default data a set is 126 KB, more
 * than the CPU's fastest caches: each pass is a trip to memory). `into` may be one of `sets`.
 */
export function andCount(into: Bitset, sets: readonly Bitset[]): number {
  const n = into.length;
  const k = kernelOf(into.buffer);
  if (k !== undefined && sets.every((s) => s.buffer === into.buffer)) {
    const o = into.byteOffset;
    if (sets.length === 1) return k.and1(o, sets[0]!.byteOffset, n);
    if (sets.length === 2) return k.and2(o, sets[0]!.byteOffset, sets[1]!.byteOffset, n);
    // more than three: the first three, then each further set ANDed into `into` — so a set that is
    // `into` itself goes first, before the first pass writes over it
    const at = sets.indexOf(into);
    const s = at >= 3 ? [into, ...sets.filter((x) => x !== into)] : sets;
    let c = k.and3(o, s[0]!.byteOffset, s[1]!.byteOffset, s[2]!.byteOffset, n);
    for (let i = 3; i < s.length; i++) c = k.and2(o, o, s[i]!.byteOffset, n);
    return c;
  }
  let c = 0;
  // a word of the result is mostly 0 (an AND of filters is sparse): it is not counted
  if (sets.length === 1) {
    const a = sets[0]!;
    for (let w = 0; w < n; w++) {
      const x = (into[w] = a[w]!);
      if (x !== 0) c += popcount32(x);
    }
  } else if (sets.length === 2) {
    const a = sets[0]!;
    const b = sets[1]!;
    for (let w = 0; w < n; w++) {
      const x = (into[w] = a[w]! & b[w]!);
      if (x !== 0) c += popcount32(x);
    }
  } else if (sets.length === 3) {
    const a = sets[0]!;
    const b = sets[1]!;
    const d = sets[2]!;
    for (let w = 0; w < n; w++) {
      const x = (into[w] = a[w]! & b[w]! & d[w]!);
      if (x !== 0) c += popcount32(x);
    }
  } else {
    for (let w = 0; w < n; w++) {
      let x = sets[0]![w]!;
      for (let i = 1; i < sets.length; i++) x &= sets[i]![w]!;
      into[w] = x;
      if (x !== 0) c += popcount32(x);
    }
  }
  return c;
}

/**
 * For each row of `matched`, the bit of its rank (`rankOf[row]`) set in `ranks` (zeroed by the
 * caller): the set in a sort's order, whose set bits in order are the sort's page of it.
 */
export function setRanks(ranks: Bitset, matched: Bitset, rankOf: Int32Array): void {
  const k = kernelOf(ranks.buffer);
  if (k !== undefined && matched.buffer === ranks.buffer && rankOf.buffer === ranks.buffer)
    return k.ranks(ranks.byteOffset, matched.byteOffset, rankOf.byteOffset, matched.length);
  for (let w = nextWord(matched, 0); w < matched.length; w = nextWord(matched, w + 1)) {
    let x = matched[w]!;
    while (x !== 0) {
      const bit = 31 - Math.clz32(x & -x);
      x &= x - 1;
      setBit(ranks, rankOf[(w << 5) + bit]!);
    }
  }
}

export function popcount32(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return Math.imul((x + (x >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24;
}

/** Set bits of every 16-bit value: a population count in two table reads a word. */
const BITS16 = new Uint8Array(1 << 16);
for (let i = 1; i < 1 << 16; i++) BITS16[i] = (i & 1) + BITS16[i >>> 1]!;

export function count(s: Bitset): number {
  const k = kernelOf(s.buffer);
  if (k !== undefined) return k.count(s.byteOffset, s.length);
  let c = 0;
  const n = s.length;
  for (let w = 0; w < n; w++) {
    const x = s[w]!;
    c += BITS16[x & 0xffff]! + BITS16[x >>> 16]!;
  }
  return c;
}

/**
 * The first word of `s` at or after word `w` that is not 0, or `s.length`: eight zero words are
 * passed over at one test. A walk over the set bits of a sparse set (a page's few hundred matches
 * among 31,450 words at 5× the default data) visits its words in ~10 µs instead of ~37 µs one
 * by one; a dense set pays one test a word, as before (docs/performance.md).
 */
export function nextWord(s: Bitset, w: number): number {
  const n = s.length;
  if (w < n && s[w] !== 0) return w;
  while (
    w + 8 <= n &&
    (s[w]! | s[w + 1]! | s[w + 2]! | s[w + 3]! | s[w + 4]! | s[w + 5]! | s[w + 6]! | s[w + 7]!) === 0
  )
    w += 8;
  while (w < n && s[w] === 0) w++;
  return w;
}

/** The last word of `s` at or before word `w` that is not 0, or -1 (`nextWord` walking down). */
export function prevWord(s: Bitset, w: number): number {
  if (w >= 0 && s[w] !== 0) return w;
  while (w >= 7 && (s[w]! | s[w - 1]! | s[w - 2]! | s[w - 3]! | s[w - 4]! | s[w - 5]! | s[w - 6]! | s[w - 7]!) === 0)
    w -= 8;
  while (w >= 0 && s[w] === 0) w--;
  return w;
}

/**
 * Up to `want` set bits of `s`, after skipping `skip` of them: ascending from bit `from`
 * (forward), or descending from bit `from - 1` (backward). Whole words are skipped by their
 * population count.
 *
 * @example selectBits(s, 0, 50, 25, true) // the 51st to 75th set bits, ascending
 */
export function selectBits(s: Bitset, from: number, skip: number, want: number, forward: boolean): number[] {
  const out: number[] = [];
  if (want <= 0) return out;
  if (forward) {
    if (from < 0) from = 0;
    const first = from >>> 5;
    for (let w = first; w < s.length; w = nextWord(s, w + 1)) {
      let x = s[w]!;
      if (w === first) x &= ~((1 << (from & 31)) - 1) | 0;
      if (x === 0) continue;
      const c = BITS16[x & 0xffff]! + BITS16[x >>> 16]!;
      if (skip >= c) {
        skip -= c;
        continue;
      }
      while (x !== 0) {
        const bit = 31 - Math.clz32(x & -x);
        x &= x - 1;
        if (skip > 0) skip--;
        else if (out.push((w << 5) + bit) === want) return out;
      }
    }
    return out;
  }
  const top = Math.min(from, s.length * 32) - 1;
  if (top < 0) return out;
  for (let w = top >>> 5; w >= 0; w = prevWord(s, w - 1)) {
    let x = s[w]!;
    if (w === top >>> 5 && (top & 31) !== 31) x &= (1 << ((top & 31) + 1)) - 1;
    if (x === 0) continue;
    const c = BITS16[x & 0xffff]! + BITS16[x >>> 16]!;
    if (skip >= c) {
      skip -= c;
      continue;
    }
    while (x !== 0) {
      const bit = 31 - Math.clz32(x);
      x &= ~(1 << bit);
      if (skip > 0) skip--;
      else if (out.push((w << 5) + bit) === want) return out;
    }
  }
  return out;
}
