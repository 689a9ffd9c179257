/**
 * The index of a `key` filter (api/query/lead-filters.ts: `application_number`): a column with a
 * value per lead, matched exactly after `foldKey` (surrounding spaces and case ignored). A bitset
 * per value, as `enum` / `multi` columns have, would cost a release's size in bits per distinct
 * reference; instead the row positions are sorted by folded value and the folded texts kept
 * once in one buffer, so a lookup is a binary search (~18 comparisons at default scale).
 */
import { foldKey } from '../query/lead-filters.ts';
import { setBit, type Bitset } from './bitset.ts';

/** What a `KeyIndex` is made of (moved between processes by api/engine/pack.ts). */
export interface KeyIndexParts {
  /** Row positions with a value, by folded value (UTF-8 byte order), then position. */
  order: Int32Array;
  /** The folded values in `order`, UTF-8, back to back; value k is `text[offsets[k], offsets[k+1])`. */
  text: Uint8Array;
  offsets: Int32Array;
}

export class KeyIndex {
  private readonly text: Buffer;

  private readonly p: KeyIndexParts;
  constructor(p: KeyIndexParts) {
    this.p = p;
    this.text = Buffer.from(p.text.buffer, p.text.byteOffset, p.text.byteLength);
  }

  /** The parts over a column's values by row position (null: no value). */
  static build(values: readonly (string | null)[]): KeyIndexParts {
    const folded: { pos: number; key: Buffer }[] = [];
    values.forEach((v, pos) => {
      if (v !== null) folded.push({ pos, key: Buffer.from(foldKey(v), 'utf8') });
    });
    folded.sort((a, b) => Buffer.compare(a.key, b.key) || a.pos - b.pos);
    const offsets = new Int32Array(folded.length + 1);
    folded.forEach((f, k) => (offsets[k + 1] = offsets[k]! + f.key.length));
    const text = Buffer.concat(folded.map((f) => f.key));
    return {
      order: Int32Array.from(folded.map((f) => f.pos)),
      text: new Uint8Array(text.buffer, text.byteOffset, text.byteLength),
      offsets,
    };
  }

  parts(): KeyIndexParts {
    return this.p;
  }

  /** The positions whose folded value equals `foldKey(value)`, set in `out` (a zeroed set of the index's size, lent by the caller). */
  match(value: string, out: Bitset): Bitset {
    const want = Buffer.from(foldKey(value), 'utf8');
    const { order, offsets } = this.p;
    // value k compared with the wanted one (Buffer#compare: source slice against target)
    const at = (k: number): number => this.text.compare(want, 0, want.length, offsets[k]!, offsets[k + 1]!);
    let lo = 0;
    let hi = order.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (at(mid) < 0)
        lo = mid + 1; // value at mid sorts before the wanted one
      else hi = mid;
    }
    for (let k = lo; k < order.length && at(k) === 0; k++) setBit(out, order[k]!);
    return out;
  }
}
