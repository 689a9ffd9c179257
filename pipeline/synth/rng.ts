/**
 * Deterministic pseudo-random numbers for the generator. Every record draws from its own small
 * PRNG seeded by (run seed, stream label, record index), so a record's content never depends on
 * how many other records were generated before it: week N+1 can add records without disturbing
 * the ones of week N, and any record can be regenerated on its own. Never Math.random.
 */

/** 32-bit string hash (FNV-1a), used to turn stream labels into seeds. */
export function hashString(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** Mix two 32-bit values into one well-spread 32-bit value (murmur3 finaliser). */
export function mix32(a: number, b: number): number {
  let h = (a ^ Math.imul(b ^ (b >>> 16), 0x85ebca6b)) >>> 0;
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  h ^= h >>> 16;
  h = Math.imul(h ^ (h >>> 15), 0x2c1b3c6d);
  h ^= h >>> 12;
  return h >>> 0;
}

/** A small fast PRNG (sfc32) with the helpers the generator needs. */
export class Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seedA: number, seedB: number, seedC = 0x9e3779b9, seedD = 0x6a09e667) {
    this.a = seedA >>> 0;
    this.b = seedB >>> 0;
    this.c = seedC >>> 0;
    this.d = seedD >>> 0;
    for (let i = 0; i < 12; i++) this.u32();
  }

  /** Next unsigned 32-bit integer. */
  u32(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return t >>> 0;
  }

  /** Uniform float in [0, 1). */
  next(): number {
    return this.u32() / 4294967296;
  }

  /** Uniform integer in [lo, hi] (inclusive). */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }

  /** Uniform float in [lo, hi). */
  float(lo: number, hi: number): number {
    return lo + this.next() * (hi - lo);
  }

  /** True with probability p. */
  chance(p: number): boolean {
    return this.next() < p;
  }

  /** One element of a non-empty array. */
  pick<T>(arr: readonly T[]): T {
    return arr[Math.floor(this.next() * arr.length)]!;
  }

  /** Standard normal deviate (Box–Muller). */
  normal(): number {
    const u = 1 - this.next();
    const v = this.next();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  }

  /** Index drawn with the given cumulative weights (see `cumulative`). */
  weighted(cum: readonly number[]): number {
    const x = this.next() * cum[cum.length - 1]!;
    let lo = 0;
    let hi = cum.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cum[mid]! > x) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }
}

/** Cumulative sums of weights, for `Rng.weighted`. */
export function cumulative(weights: readonly number[]): number[] {
  const out: number[] = [];
  let s = 0;
  for (const w of weights) out.push((s += w));
  return out;
}

/** A weighted table of values with a prebuilt cumulative index. */
export class Table<T> {
  readonly values: readonly T[];
  private readonly cum: number[];
  constructor(entries: readonly (readonly [T, number])[]) {
    this.values = entries.map((e) => e[0]);
    this.cum = cumulative(entries.map((e) => e[1]));
  }
  /** Draw one value. */
  draw(r: Rng): T {
    return this.values[r.weighted(this.cum)]!;
  }
}

/** The PRNG of one record: (run seed, stream label, record index) → independent stream. */
export function recordRng(seed: number, stream: string, index: number): Rng {
  const s = hashString(stream);
  const a = mix32(seed >>> 0, s);
  const b = mix32(index >>> 0, a ^ 0x5bd1e995);
  const c = mix32(Math.floor(index / 4294967296) ^ s, b);
  return new Rng(a, b, c, mix32(c, 0x27d4eb2f));
}

/**
 * Evenly spread selection: true for about `p` of consecutive indexes (exactly ⌊(n+off)·p⌋ of
 * the first n), so rare injections (bad rows, duplicates) hit the same share at every scale
 * instead of clustering by chance. `offset` shifts the pattern per stream.
 */
export function evenlySpread(index: number, p: number, offset = 0): boolean {
  const i = index + offset;
  return Math.floor((i + 1) * p) > Math.floor(i * p);
}
