/**
 * Order statistics of any range of a fixed sequence of small integers — "the k-th smallest of
 * xs[from…to)" and "how many of xs[from…to) are below v" — in O(log σ) each, whatever the
 * range's length: a wavelet matrix (Claude, Navarro & Ordóñez, "The wavelet matrix", SPIRE 2012).
 *
 * The detail index keeps one per comparables area (the sales' price ranks in date order), so the
 * median price of a lead's 24-month window is two `kth` calls instead of gathering and selecting
 * tens of thousands of prices per request.
 *
 * Layout: level l (the most significant bit first) is a bit vector of the sequence as reordered
 * by the levels above (zeros first, stably); `ones` holds the count of ones before each 32-bit
 * word, so rank is one lookup and one popcount. Everything is in typed arrays (`RangeQuantileParts`),
 * so the structure moves between processes with the other index parts (api/engine/pack.ts).
 */

export interface RangeQuantileParts {
  /** Sequence length. */
  n: number;
  /** Bits per value. */
  bits: number;
  /** Level l's bit vector: words [l * words, (l + 1) * words). */
  words: Uint32Array;
  /** Ones before each word, per level (same indexing as `words`). */
  ones: Uint32Array;
  /** Zeros of each level. */
  zeros: Uint32Array;
}

function popcount(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  x = (x + (x >>> 4)) & 0x0f0f0f0f;
  return Math.imul(x, 0x01010101) >>> 24;
}

/** Build over `values` (non-negative integers below 2^31). */
export function buildRangeQuantile(values: ArrayLike<number>): RangeQuantileParts {
  const n = values.length;
  let max = 0;
  for (let i = 0; i < n; i++) if (values[i]! > max) max = values[i]!;
  const bits = Math.max(1, 32 - Math.clz32(max));
  const perLevel = (n >>> 5) + 1;
  const words = new Uint32Array(bits * perLevel);
  const ones = new Uint32Array(bits * perLevel);
  const zeros = new Uint32Array(bits);
  let cur = Uint32Array.from(values);
  let next = new Uint32Array(n);
  for (let level = 0; level < bits; level++) {
    const shift = bits - 1 - level;
    const base = level * perLevel;
    let z = 0;
    for (let i = 0; i < n; i++) if (((cur[i]! >>> shift) & 1) === 0) z++;
    zeros[level] = z;
    let zi = 0;
    let oi = z;
    for (let i = 0; i < n; i++) {
      const v = cur[i]!;
      if ((v >>> shift) & 1) {
        words[base + (i >>> 5)]! |= 1 << (i & 31);
        next[oi++] = v;
      } else next[zi++] = v;
    }
    let count = 0;
    for (let w = 0; w < perLevel; w++) {
      ones[base + w] = count;
      count += popcount(words[base + w]!);
    }
    [cur, next] = [next, cur];
  }
  return { n, bits, words, ones, zeros };
}

export class RangeQuantile {
  private readonly perLevel: number;
  private readonly p: RangeQuantileParts;
  constructor(p: RangeQuantileParts) {
    this.p = p;
    this.perLevel = (p.n >>> 5) + 1;
  }

  /** Ones in level `level`'s bit vector before position i. */
  private rank1(level: number, i: number): number {
    const at = level * this.perLevel + (i >>> 5);
    const rest = i & 31;
    return this.p.ones[at]! + (rest === 0 ? 0 : popcount(this.p.words[at]! & ((1 << rest) - 1)));
  }

  /** The k-th smallest (0-based) of the values in [from, to); requires 0 ≤ k < to − from. */
  kth(from: number, to: number, k: number): number {
    if (!(k >= 0 && k < to - from)) throw new RangeError(`k ${k} outside a range of ${to - from}`);
    let value = 0;
    let l = from;
    let r = to;
    for (let level = 0; level < this.p.bits; level++) {
      const ol = this.rank1(level, l);
      const or = this.rank1(level, r);
      const zerosInRange = r - l - (or - ol);
      if (k < zerosInRange) {
        l -= ol;
        r -= or;
      } else {
        k -= zerosInRange;
        value |= 1 << (this.p.bits - 1 - level);
        l = this.p.zeros[level]! + ol;
        r = this.p.zeros[level]! + or;
      }
    }
    return value >>> 0;
  }

  /** How many values in [from, to) are below `v`. */
  countBelow(from: number, to: number, v: number): number {
    if (v >= 2 ** this.p.bits) return to - from;
    if (v <= 0) return 0;
    let below = 0;
    let l = from;
    let r = to;
    for (let level = 0; level < this.p.bits && l < r; level++) {
      const ol = this.rank1(level, l);
      const or = this.rank1(level, r);
      if ((v >>> (this.p.bits - 1 - level)) & 1) {
        below += r - l - (or - ol); // the zeros here are below v
        l = this.p.zeros[level]! + ol;
        r = this.p.zeros[level]! + or;
      } else {
        l -= ol;
        r -= or;
      }
    }
    return below;
  }
}
