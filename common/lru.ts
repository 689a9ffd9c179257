/**
 * The API's memos, one kind each: `Lru`, a map that keeps its `entries` most recently used values
 * (rendered tiles); `rememberTexts`, a function of a text remembered for the last texts (parsed
 * polygons, search bodies as queries); `lastAnswer`, a function remembered for its last argument
 * (the client address of a connection, the throttle key of an address, today's date and budget
 * reset).
 *
 * `Lru`: `get` makes a value the most recent, `set` adds one and forgets the least recent beyond
 * `entries`. (A `Map` iterates in insertion order, so the least recent is its first key.)
 *
 * @example
 *   const lru = new Lru<string, number>(2);
 *   lru.set('a', 1); lru.set('b', 2); lru.get('a'); lru.set('c', 3);
 *   lru.get('b') // undefined: the least recently used was forgotten
 */
export class Lru<K, V> {
  private readonly map = new Map<K, V>();

  readonly entries: number;
  constructor(entries: number) {
    this.entries = entries;
    if (!(Number.isInteger(entries) && entries > 0))
      throw new RangeError(`an LRU keeps at least one entry, not ${entries}`);
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

/**
 * `make` of a text, remembered for the last `limits.entries` texts of at most `limits.maxChars`
 * characters (a longer text is made every time; a `make` that throws remembers nothing).
 */
export function rememberTexts<V>(
  limits: { readonly entries: number; readonly maxChars: number },
  make: (text: string) => V,
): (text: string) => V {
  const kept = new Lru<string, V>(limits.entries);
  return (text) => {
    const known = kept.get(text);
    if (known !== undefined) return known;
    const made = make(text);
    if (text.length <= limits.maxChars) kept.set(text, made);
    return made;
  };
}

/**
 * `f` remembering its last answer, for calls whose argument has the same `keyOf` (the argument
 * itself unless given) as the last one: the one-entry memo of per-request calls that repeat (the
 * same client, the same day). A key that is NaN never matches, so it is always computed; a call
 * that throws remembers nothing.
 */
export function lastAnswer<A, R>(f: (a: A) => R, keyOf: (a: A) => unknown = (a) => a): (a: A) => R {
  let key: unknown = NaN; // (equal to no key: the first call computes)
  let answer: R | undefined;
  return (a) => {
    const k = keyOf(a);
    if (k !== key) {
      answer = f(a);
      key = k;
    }
    return answer as R;
  };
}
