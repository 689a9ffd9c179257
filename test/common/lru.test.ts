/** The LRU of the API's memos: most recent kept, least recent forgotten, `get` refreshes, null is a value. */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Lru } from '../../common/lru.ts';

test('keeps the most recently used entries; get makes an entry the most recent', () => {
  const lru = new Lru<string, number>(3);
  for (const [k, v] of [['a', 1], ['b', 2], ['c', 3]] as const) lru.set(k, v);
  assert.is(lru.get('a'), 1); // a is now the most recent: b is the least
  lru.set('d', 4);
  assert.is(lru.size, 3);
  assert.is(lru.get('b'), undefined);
  assert.equal(['a', 'c', 'd'].map((k) => lru.get(k)), [1, 3, 4]);
  lru.set('c', 30); // a new value for a kept key makes it the most recent, without growing
  lru.set('e', 5);
  assert.is(lru.size, 3);
  assert.not.ok(lru.has('a'));
  assert.equal(['c', 'd', 'e'].map((k) => lru.get(k)), [30, 4, 5]);
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

test.run();
