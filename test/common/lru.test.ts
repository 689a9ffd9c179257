/**
 * The API's memos: the LRU (most recent kept, least recent forgotten, `get` refreshes, null is a
 * value), texts remembered within their limits, and the last answer.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { lastAnswer, Lru, rememberTexts } from '../../common/lru.ts';

test('keeps the most recently used entries; get makes an entry the most recent', () => {
  const lru = new Lru<string, number>(3);
  for (const [k, v] of [
    ['a', 1],
    ['b', 2],
    ['c', 3],
  ] as const)
    lru.set(k, v);
  assert.is(lru.get('a'), 1); // a is now the most recent: b is the least
  lru.set('d', 4);
  assert.is(lru.size, 3);
  assert.is(lru.get('b'), undefined);
  assert.equal(
    ['a', 'c', 'd'].map((k) => lru.get(k)),
    [1, 3, 4],
  );
  lru.set('c', 30); // a new value for a kept key makes it the most recent, without growing
  lru.set('e', 5);
  assert.is(lru.size, 3);
  assert.not.ok(lru.has('a'));
  assert.equal(
    ['c', 'd', 'e'].map((k) => lru.get(k)),
    [30, 4, 5],
  );
});

test('null is a value (an empty tile): kept, refreshed and told apart from absent', () => {
  const lru = new Lru<string, number | null>(2);
  lru.set('empty', null);
  lru.set('x', 1);
  assert.is(lru.get('empty'), null); // refreshed: x is now the least recent
  lru.set('y', 2);
  assert.ok(lru.has('empty'));
  assert.not.ok(lru.has('x'));
  assert.is(lru.get('x'), undefined);
});

test('refuses a size below one', () => {
  assert.throws(() => new Lru(0), /at least one entry/);
  assert.throws(() => new Lru(1.5), /at least one entry/);
});

test('rememberTexts: made once per text while kept; a long text made every time; a throw remembers nothing', () => {
  const made: string[] = [];
  const of = rememberTexts({ entries: 2, maxChars: 5 }, (text) => {
    made.push(text);
    if (text === 'bad') throw new Error('bad text');
    return { text };
  });
  const a = of('a');
  assert.is(of('a'), a);
  of('b');
  of('c'); // forgets a
  assert.is.not(of('a'), a);
  assert.throws(() => of('bad'), /bad text/);
  assert.throws(() => of('bad'), /bad text/);
  of('longer');
  of('longer');
  assert.equal(made, ['a', 'b', 'c', 'a', 'bad', 'bad', 'longer', 'longer']);
});

test('lastAnswer: computed when the key changes, remembered while it repeats; a NaN key is never remembered', () => {
  let calls = 0;
  const day = lastAnswer(
    (ms: number) => (calls++, Math.floor(ms / 10)),
    (ms) => (ms >= 0 ? Math.floor(ms / 10) : NaN),
  );
  assert.equal([day(1), day(9), day(12), day(15), day(3)], [0, 0, 1, 1, 0]);
  assert.is(calls, 3);
  day(-5);
  day(-5);
  assert.is(calls, 5);
  const plain = lastAnswer((s: string) => (calls++, s.toUpperCase()));
  assert.equal([plain('a'), plain('a'), plain('b')], ['A', 'A', 'B']);
  assert.is(calls, 7);
});

test.run();
