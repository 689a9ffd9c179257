/**
 * The tests' seeded random numbers in [0, 1]: one LCG (glibc's constants), so a seed gives the same
 * sequence in every test that draws from it.
 *
 * @example const rnd = seededRandom(17); rnd(); // the same number on every run
 */
export function seededRandom(seed: number): () => number {
  let s = seed;
  return () => (s = (s * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
}
