/**
 * A map that keeps its `entries` most recently used values: `get` makes a value the most recent,
 * `set` adds one and forgets the least recent beyond `entries`. (A `Map` iterates in insertion
 * order, so the least recent is its first key.) The API's memos use it: parsed polygons, search
 * bodies as queries, rendered tiles.
 *
 * @example
 *   const lru = new Lru<string, number>(2);
 *   lru.set('a', 1); lru.set('b', 2); lru.get('a'); lru.set('c', 3);
 *   lru.get('b') // undefined: the least recently used was forgotten
 */
export class Lru<K, V> {
  private readonly map = new Map<K, V>();

  constructor(readonly entries: number) {
    if (!(Number.isInteger(entries) && entries > 0)) throw new RangeError(`an LRU keeps at least one entry, not ${entries}`);
  }

  /** The value of `key` (now the most recent), or undefined. */
  get(key: K): V | undefined {
    const v = this.map.get(key);
    if (v !== undefined || this.map.has(key)) {
      this.map.delete(key);
      this.map.set(key, v as V);
    }
    return v;
  }

  /** Whether `key` is kept (without making it more recent). */
  has(key: K): boolean {
    return this.map.has(key);
  }

  /** Keep `value` as the most recent, forgetting the least recent beyond `entries`. */
  set(key: K, value: V): void {
    this.map.delete(key);
    this.map.set(key, value);
    while (this.map.size > this.entries) this.map.delete(this.map.keys().next().value as K);
  }

  get size(): number {
    return this.map.size;
  }
}
