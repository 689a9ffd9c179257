import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Table, evenlySpread, hashString, recordRng } from '../../../pipeline/synth/rng.ts';

const draw = (seed: number, stream: string, index: number, n = 8): number[] =>
  Array.from(
    { length: n },
    (
      (r) => () =>
        r.u32()
    )(recordRng(seed, stream, index)),
  );

test('recordRng: same (seed, stream, index) → same sequence; any change → another', () => {
  const base = draw(1, 'planning', 7);
  assert.equal(draw(1, 'planning', 7), base);
  const cases: [number, string, number][] = [
    [2, 'planning', 7],
    [1, 'ppr', 7],
    [1, 'planning', 8],
    [1, 'planning', 7 + 2 ** 32],
  ];
  for (const [seed, stream, index] of cases)
    assert.not.equal(draw(seed, stream, index), base, `${seed}/${stream}/${index}`);
});

test('Rng helpers stay in range', () => {
  const r = recordRng(3, 'range', 0);
  for (let i = 0; i < 2000; i++) {
    const x = r.next();
    assert.ok(x >= 0 && x < 1);
    const k = r.int(-2, 3);
    assert.ok(Number.isInteger(k) && k >= -2 && k <= 3);
  }
});

test('Table.draw follows the weights', () => {
  const t = new Table<string>([
    ['a', 1],
    ['b', 3],
    ['c', 0],
  ]);
  const r = recordRng(5, 'table', 0);
  const n = { a: 0, b: 0, c: 0 } as Record<string, number>;
  for (let i = 0; i < 4000; i++) n[t.draw(r)]!++;
  assert.is(n.c, 0);
  assert.ok(n.b! / 4000 > 0.7 && n.b! / 4000 < 0.8, `b share ${n.b! / 4000}`);
});

test('evenlySpread: exactly ⌊n·p⌋ hits in the first n indexes', () => {
  const cases: [number, number][] = [
    [1000, 0.0025],
    [10_000, 0.001],
    [399, 0.0025],
    [777, 0.1],
  ];
  for (const [n, p] of cases) {
    let hits = 0;
    for (let i = 0; i < n; i++) if (evenlySpread(i, p)) hits++;
    assert.is(hits, Math.floor(n * p), `${n} × ${p}`);
  }
});

test('hashString: stable FNV-1a', () => {
  assert.is(hashString(''), 0x811c9dc5);
  assert.is.not(hashString('a'), hashString('b'));
});

test.run();
