/**
 * The release's search index in memory, for `q` in `GET /v1/leads`: the leads `q` matches (a
 * bitset: the filter and the total; `compile` + `match`, the syntax of common/search-syntax.ts),
 * and the top `k` by BM25 without scoring every posting of every term.
 *
 * Scores are exactly those of the reference (common/search-query.ts, docs/search.md): a posting's
 * impact is idf·tf·(k1+1) / (tf + k1·(1 − b + b·dl/avgdl)) (`impactOf`), a lead's score the sum of
 * its terms' impacts in query order, rounded to 9 places as the SQL is compared; ties go to the
 * lower id.
 *
 * Layout, per term t (ids 0…T-1, postings [start[t], start[t+1])):
 *  - `rows` (row positions, ascending) and `tf`, so a term's postings can be merged with others
 *    and searched (`dl` is per row, shared by all its postings);
 *  - `byImpact`: the same postings ordered by (rounded impact DESC, id ASC), so the best leads
 *    of a one-term query come first;
 *  - `maxImpact`, the bound MaxScore prunes with;
 *  - a bitset of its rows when df ≥ n/32 (cheaper to OR than to set bit by bit).
 *
 * Matching (`match`): an item's terms and the filters are ANDed set by set in one counted pass —
 * unless its rarest term has at most n/128 postings: then those are walked and each looked up in
 * the filters and the other terms (`intersect`), a handful of lookups against a pass over every
 * word of two or three sets.
 *
 * Top-k strategies (`top`), all exact:
 *  - one term: walk `byImpact`, keep the leads that pass the filters, stop at the k-th;
 *  - ≤ `exhaustiveMax` (4,096) matched leads: score each of them (a merge of the term lists);
 *  - two terms: the leads holding only A or only B are two impact-order walks (each skipping the
 *    other term's leads); those holding both are scored lead by lead when one list is much
 *    shorter than the other, else by one merge of the two position-ordered lists;
 *  - more terms: MaxScore (Turtle & Flood, 1995): walk only the lists that can still lift a
 *    lead into the top k, look the others up, and stop a lead as soon as it cannot make it.
 */
import { exactTerms, parseSearchQuery, phrasePattern, queryPrefixes } from '../../common/search-syntax.ts';
import { BM25, foldSearchText } from '../../common/search-text.ts';
import type { ApiDb } from '../duckdb/db.ts';
import {
  andCount,
  count,
  hasBit,
  nextWord,
  orInto,
  setBit,
  wordsFor,
  type Bitset,
  type ScratchSets,
} from './bitset.ts';
import { forKernel } from './bitset-kernel.ts';

/** Matched sets up to this size are scored lead by lead (the default of `exhaustiveMax`). */
export const EXHAUSTIVE_MAX = 4096;
/**
 * An `all` item whose rarest term has at most (words of a set) / SPARSE_WALK postings is matched by
 * walking those postings: a lookup or two each, against a pass over every word of 2–3 sets.
 */
const SPARSE_WALK = 4;

/** Scores as the SQL rounds them (`round(score, 9)`), so a cursor's score compares equal. */
export const round9 = (x: number): number => Math.round(x * 1e9) / 1e9;

/**
 * A lead cannot tie with the k-th best when its bound is below it by more than this: covers the
 * order of float sums and the rounding to 9 places (the impact order is by rounded impact).
 */
const EPS = 1e-8;

/** A page row of the relevance sort. */
export interface ScoredRow {
  id: number;
  sortValue: number;
  /** The row position (the lead index's), for what the page needs of the row besides its id. */
  pos: number;
}

/** Everything the index is made of (a release loader can move it between processes). */
export interface SearchIndexParts {
  terms: string[];
  idf: Float64Array;
  start: Int32Array;
  rows: Int32Array;
  tf: Uint8Array;
  /** Document length per row position. */
  dl: Uint16Array;
  byImpact: Int32Array;
  maxImpact: Float64Array;
  /** Per term, the word offset of its bitset in `bitsets`, or -1. */
  bitsetAt: Int32Array;
  bitsets: Uint32Array;
  avgdl: number;
}

/** One item of a compiled query: rows holding `all` its terms or `any` of them; a phrase's `pattern` over the folded search text. */
export interface CompiledItem {
  kind: 'all' | 'any';
  terms: number[];
  pattern: RegExp | null;
}

/** `q` compiled against an index (`SearchIndex.compile`). */
export interface CompiledSearch {
  /** The term ids BM25 scores. */
  terms: number[];
  /** AND of ORs; null: nothing matches. */
  groups: CompiledItem[][] | null;
}

/** The positions of the set bits of `s`, ascending. */
function* setBits(s: Bitset): Generator<number> {
  for (let w = nextWord(s, 0); w < s.length; w = nextWord(s, w + 1)) {
    let x = s[w]!;
    while (x !== 0) {
      const bit = 31 - Math.clz32(x & -x);
      x &= x - 1;
      yield (w << 5) + bit;
    }
  }
}

export class SearchIndex {
  private readonly termId: Map<string, number>;
  private readonly words: number;
  /** Matched sets up to this size are scored lead by lead; larger ones walk the impact order or run MaxScore (tests set 0 to use those on small data). */
  readonly exhaustiveMax: number;

  private readonly p: SearchIndexParts;
  /** Lead id per row position. */
  private readonly ids: Int32Array;
  constructor(p: SearchIndexParts, ids: Int32Array, opts: { exhaustiveMax?: number } = {}) {
    this.p = p;
    this.ids = ids;
    this.termId = new Map(p.terms.map((t, i) => [t, i]));
    this.words = wordsFor(ids.length);
    this.exhaustiveMax = opts.exhaustiveMax ?? EXHAUSTIVE_MAX;
  }

  parts(): SearchIndexParts {
    return this.p;
  }

  /**
   * `q` (parsed by common/search-syntax.ts, the parser the SQL builder uses) against this
   * index's terms: the terms BM25 scores (the exact terms the index knows, then each prefix's
   * terms, de-duplicated, in that order) and the groups as term ids. An item with a term the
   * index does not know, or a prefix no term starts with, can never match and is left out of its
   * group; `groups` is null when a group is left empty or `q` has none (nothing matches).
   * Throws on a malformed `q` (the API's parameter parser refuses it before).
   */
  compile(q: string): CompiledSearch {
    const parsed = parseSearchQuery(q);
    if (parsed.error !== undefined) throw new Error(`q: ${parsed.error}`);
    const scored = new Set<number>();
    for (const term of exactTerms(parsed.ast)) {
      const t = this.termId.get(term);
      if (t !== undefined) scored.add(t);
    }
    const expansions = new Map<string, number[]>();
    for (const p of queryPrefixes(parsed.ast)) {
      const ts = this.termsStartingWith(p);
      expansions.set(p, ts);
      for (const t of ts) scored.add(t);
    }
    const groups: CompiledItem[][] = [];
    for (const g of parsed.ast.groups) {
      const items: CompiledItem[] = [];
      for (const it of g) {
        if (it.kind === 'prefix') {
          const ts = [...new Set(it.prefixes.flatMap((p) => expansions.get(p)!))];
          if (ts.length) items.push({ kind: 'any', terms: ts, pattern: null });
          continue;
        }
        const ts = it.terms.map((term) => this.termId.get(term));
        if (ts.some((t) => t === undefined)) continue;
        items.push({
          kind: 'all',
          terms: ts as number[],
          pattern: it.kind === 'phrase' ? new RegExp(phrasePattern(it.words)) : null,
        });
      }
      groups.push(items);
    }
    const none = groups.length === 0 || groups.some((g) => g.length === 0);
    return { terms: [...scored], groups: none ? null : groups };
  }

  /** The term ids starting with `p` (terms are sorted: one binary search, then a scan). */
  private termsStartingWith(p: string): number[] {
    const terms = this.p.terms;
    let lo = 0;
    let hi = terms.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (terms[mid]! < p) lo = mid + 1;
      else hi = mid;
    }
    const out: number[] = [];
    for (let t = lo; t < terms.length && terms[t]!.startsWith(p); t++) out.push(t);
    return out;
  }

  /**
   * The rows a compiled `q` matches within `within` (every row when null), and how many: each
   * group is the OR of its items (`all`: rows holding every term; `any`: rows holding one), the
   * groups ANDed; a phrase's rows are then kept when `textOf(pos)` (the lead's search text, folded
   * here) holds it. Groups with a phrase go last, so the fewest rows are checked. An item's terms
   * and `within` are ANDed and counted in one pass (`andCount`); a group of one item is that item's
   * set, and a lone term with nothing to AND is the index's own set, its count its postings. The
   * sets it works in, and the one it returns, are taken from `sets` (the caller's, given back when
   * its request ends); the one it returns is only read.
   */
  match(
    c: CompiledSearch,
    within: Bitset | null,
    textOf: ((pos: number) => string) | null,
    sets: ScratchSets,
  ): { set: Bitset; total: number } {
    if (c.groups === null) return { set: sets.take(), total: 0 };
    let acc: Bitset | null = within;
    let total = -1;
    const phraseLast = [...c.groups].sort(
      (a, b) => Number(a.some((x) => x.pattern)) - Number(b.some((x) => x.pattern)),
    );
    for (const g of phraseLast) {
      const gs = g.length === 1 ? null : sets.take();
      for (const it of g) {
        let s: Bitset;
        total = -1;
        if (it.kind === 'any') {
          s = this.union(it.terms, sets.take());
          if (acc) total = andCount(s, [s, acc]);
        } else if (it.terms.length === 1 && !acc && !it.pattern && gs === null) {
          s = this.termBits(it.terms[0]!, sets); // read only from here on
          total = this.df(it.terms[0]!);
        } else {
          const rarest = it.terms.reduce((a, t) => (this.df(t) < this.df(a) ? t : a));
          if (this.df(rarest) * SPARSE_WALK <= this.words) {
            // a rare term: its postings looked up in the others and the filters, not a pass over every word
            s = sets.take();
            total = this.intersect(rarest, it.terms, acc, s);
          } else {
            const parts = it.terms.map((t) => this.termBits(t, sets));
            if (acc) parts.push(acc);
            const into = parts.find((x) => sets.lent(x) && x !== acc) ?? sets.takeForWrite();
            total = andCount(into, parts);
            s = into;
          }
        }
        if (it.pattern) {
          if (!textOf) throw new Error("a phrase needs the leads' search text (LeadIndex option `text`)");
          for (const pos of setBits(s))
            if (!it.pattern.test(foldSearchText(textOf(pos)))) s[pos >>> 5]! &= ~(1 << (pos & 31));
          total = -1;
        }
        if (gs) orInto(gs, s);
        else acc = s;
      }
      if (gs) {
        acc = gs; // every item was within acc
        total = -1;
      }
    }
    return { set: acc!, total: total >= 0 ? total : count(acc!) };
  }

  /**
   * The rows holding every one of `terms` and in `within` (when given), set in `out` (a zeroed
   * set), and how many: the postings of `rarest` (one of `terms`), each looked up in the others
   * (a stored term's bitset, else a gallop along its position-ordered postings) and in `within`.
   */
  private intersect(rarest: number, terms: readonly number[], within: Bitset | null, out: Bitset): number {
    const { start, rows } = this.p;
    const others = terms.filter((t) => t !== rarest);
    const stored = others.map((t) => this.storedBits(t));
    const cur = others.map((t) => start[t]!);
    const end = others.map((t) => start[t + 1]!);
    let c = 0;
    next: for (let p = start[rarest]!, stop = start[rarest + 1]!; p < stop; p++) {
      const pos = rows[p]!;
      if (within !== null && !hasBit(within, pos)) continue;
      for (let j = 0; j < others.length; j++) {
        const bits = stored[j]!;
        if (bits !== null) {
          if (!hasBit(bits, pos)) continue next;
        } else {
          const k = (cur[j] = seek(rows, cur[j]!, end[j]!, pos));
          if (k >= end[j]! || rows[k] !== pos) continue next;
        }
      }
      setBit(out, pos);
      c++;
    }
    return c;
  }

  /** The number of leads holding term t. */
  private df(t: number): number {
    return this.p.start[t + 1]! - this.p.start[t]!;
  }

  /** The BM25 impact of posting `p` of term `t` (the reference formula, operation for operation). */
  impactOf(t: number, p: number): number {
    const { k1, b } = BM25;
    const tf = this.p.tf[p]!;
    return (this.p.idf[t]! * (tf * (k1 + 1))) / (tf + k1 * (1 - b + (b * this.p.dl[this.p.rows[p]!]!) / this.p.avgdl));
  }

  /** The rows holding any of `terms`, set in `out` (a zeroed set of the index's size). */
  union(terms: readonly number[], out: Bitset): Bitset {
    const { start, rows, bitsetAt, bitsets } = this.p;
    for (const t of terms) {
      const at = bitsetAt[t]!;
      if (at >= 0) orInto(out, bitsets.subarray(at, at + this.words));
      else for (let p = start[t]!, end = start[t + 1]!; p < end; p++) setBit(out, rows[p]!);
    }
    return out;
  }

  /**
   * The best `offset + limit` rows of `matched` (a subset of `union(terms)` holding `total` rows)
   * by score, after the cursor key `after` when given; returns those past `offset`.
   */
  top(
    terms: readonly number[],
    matched: Bitset,
    total: number,
    req: { limit: number; offset: number; after: readonly [number | string, number] | null },
    sets: ScratchSets,
  ): ScoredRow[] {
    const k = req.offset + req.limit;
    if (k === 0 || total === 0 || terms.length === 0) return [];
    const heap = new TopK(k, this.ids);
    const after = req.after ? { score: Number(req.after[0]), id: req.after[1] } : null;
    if (terms.length === 1) this.walk(terms[0]!, matched, null, heap, after);
    else if (total <= this.exhaustiveMax) this.exhaustive(terms, matched, heap, after);
    else if (terms.length === 2) this.pair(terms[0]!, terms[1]!, matched, total, heap, after, sets);
    else this.maxScore(terms, matched, heap, after);
    return heap.sorted(req.offset);
  }

  /**
   * Offer the rows of term t in `matched` and not in `exclude`, best first, scored by t alone;
   * stops at the first row the full heap turns down (all later rows score no better).
   */
  private walk(
    t: number,
    matched: Bitset,
    exclude: Bitset | null,
    heap: TopK,
    after: { score: number; id: number } | null,
  ): void {
    const { start, rows, byImpact } = this.p;
    const ids = this.ids;
    let i = start[t]!;
    const end = start[t + 1]!;
    if (after) {
      // (score DESC, id ASC): the rows after the key are a suffix
      let hi = end;
      while (i < hi) {
        const mid = (i + hi) >>> 1;
        const p = byImpact[mid]!;
        const s = round9(this.impactOf(t, p));
        if (s < after.score || (s === after.score && ids[rows[p]!]! > after.id)) hi = mid;
        else i = mid + 1;
      }
    }
    for (; i < end; i++) {
      const p = byImpact[i]!;
      const pos = rows[p]!;
      if (!hasBit(matched, pos) || (exclude !== null && hasBit(exclude, pos))) continue;
      if (!heap.offer(pos, round9(this.impactOf(t, p)), null) && heap.full) return;
    }
  }

  /**
   * Two terms: the rows holding only A and only B are two impact-order walks (each skipping the
   * other term's rows), walked only when `matched` holds such rows (not for `a b`, which matches
   * the rows holding both); those holding both (counted in one pass) are scored one by one when
   * they are few against the two lists, else by one merge of the two lists (`mergeBoth`). All go
   * to one heap: the best k of the three regions are the best k.
   */
  private pair(
    a: number,
    b: number,
    matched: Bitset,
    total: number,
    heap: TopK,
    after: { score: number; id: number } | null,
    sets: ScratchSets,
  ): void {
    const bitsA = this.termBits(a, sets);
    const bitsB = this.termBits(b, sets);
    const both = sets.takeForWrite();
    const inBoth = andCount(both, [matched, bitsA, bitsB]);
    if (inBoth < total) {
      this.walk(a, matched, bitsB, heap, after);
      this.walk(b, matched, bitsA, heap, after);
    }
    // scoring a row costs a gallop in each list (~13 merge steps): merge when that is cheaper
    if (inBoth * 13 > this.df(a) + this.df(b)) return this.mergeBoth(a, b, both, heap, after);
    this.exhaustive([a, b], both, heap, after);
  }

  /**
   * The rows of `matched` holding both terms: one merge of the two position-ordered lists. (Walking one list in impact order with lookups in the
   * other stops early only when the best rows hold both terms at their best impacts; these BM25
   * impacts are nearly flat, so it walked most of the list with a binary search a step.)
   */
  private mergeBoth(
    a: number,
    b: number,
    matched: Bitset,
    heap: TopK,
    after: { score: number; id: number } | null,
  ): void {
    const { start, rows } = this.p;
    let i = start[a]!;
    let j = start[b]!;
    const endA = start[a + 1]!;
    const endB = start[b + 1]!;
    while (i < endA && j < endB) {
      const x = rows[i]!;
      const y = rows[j]!;
      if (x < y) i++;
      else if (y < x) j++;
      else {
        if (hasBit(matched, x)) heap.offer(x, round9(this.impactOf(a, i) + this.impactOf(b, j)), after);
        i++;
        j++;
      }
    }
  }

  /** The rows of term t as a bitset (the stored one for common terms, else built in a set of `sets`). */
  private termBits(t: number, sets: ScratchSets): Bitset {
    return this.storedBits(t) ?? this.union([t], sets.take());
  }

  /** Term t's stored bitset (a view into `bitsets`), or null when it has none (df < n/32). */
  private storedBits(t: number): Bitset | null {
    const at = this.p.bitsetAt[t]!;
    return at >= 0 ? this.p.bitsets.subarray(at, at + this.words) : null;
  }

  /** Score every matched row: one forward merge of the term lists. */
  private exhaustive(
    terms: readonly number[],
    matched: Bitset,
    heap: TopK,
    after: { score: number; id: number } | null,
  ): void {
    const { start, rows } = this.p;
    const cur = terms.map((t) => start[t]!);
    const end = terms.map((t) => start[t + 1]!);
    for (let w = nextWord(matched, 0); w < matched.length; w = nextWord(matched, w + 1)) {
      let x = matched[w]!;
      while (x !== 0) {
        const bit = 31 - Math.clz32(x & -x);
        x &= x - 1;
        const pos = (w << 5) + bit;
        let s = 0;
        for (let j = 0; j < terms.length; j++) {
          const c = (cur[j] = seek(rows, cur[j]!, end[j]!, pos));
          if (c < end[j]! && rows[c] === pos) s += this.impactOf(terms[j]!, c);
        }
        heap.offer(pos, round9(s), after);
      }
    }
  }

  /**
   * MaxScore: terms in ascending order of their best impact; those whose bounds together cannot
   * reach the k-th score (θ) are "non-essential": only the other lists are walked, and a row's
   * non-essential impacts are looked up, best bound first, until the row cannot reach θ.
   */
  private maxScore(
    terms: readonly number[],
    matched: Bitset,
    heap: TopK,
    after: { score: number; id: number } | null,
  ): void {
    const { start, rows, maxImpact } = this.p;
    const m = terms.length;
    const order = [...terms.keys()].sort((a, b) => maxImpact[terms[a]!]! - maxImpact[terms[b]!]!);
    const ub = new Float64Array(m);
    order.forEach((j, i) => (ub[i] = (i > 0 ? ub[i - 1]! : 0) + maxImpact[terms[j]!]!));
    const cur = terms.map((t) => start[t]!);
    const end = terms.map((t) => start[t + 1]!);
    const imp = new Float64Array(m);
    let theta = -Infinity;
    let firstEssential = 0;
    for (;;) {
      let pos = 0x7fffffff;
      for (let i = firstEssential; i < m; i++) {
        const j = order[i]!;
        if (cur[j]! < end[j]! && rows[cur[j]!]! < pos) pos = rows[cur[j]!]!;
      }
      if (pos === 0x7fffffff) return;
      imp.fill(0);
      let partial = 0;
      for (let i = firstEssential; i < m; i++) {
        const j = order[i]!;
        const c = cur[j]!;
        if (c < end[j]! && rows[c] === pos) {
          partial += imp[j] = this.impactOf(terms[j]!, c);
          cur[j] = c + 1;
        }
      }
      if (!hasBit(matched, pos)) continue;
      let reachable = true;
      for (let i = firstEssential - 1; i >= 0; i--) {
        if (partial + ub[i]! + EPS < theta) {
          reachable = false;
          break;
        }
        const j = order[i]!;
        const c = (cur[j] = seek(rows, cur[j]!, end[j]!, pos));
        if (c < end[j]! && rows[c] === pos) partial += imp[j] = this.impactOf(terms[j]!, c);
      }
      if (!reachable) continue;
      let s = 0;
      for (let j = 0; j < m; j++) s += imp[j]!; // query order, as the reference sums
      if (heap.offer(pos, round9(s), after) && heap.full) {
        theta = heap.worstScore;
        while (firstEssential < m && ub[firstEssential]! + EPS < theta) firstEssential++;
        if (firstEssential === m) return;
      }
    }
  }

  /** Build from the release's search tables (postings sorted by term, as the pipeline writes them). */
  static async load(
    db: ApiDb,
    src: { terms: string; postings: string; avgdl: number },
    positionOf: (id: number) => number,
    ids: Int32Array,
    opts: { exhaustiveMax?: number } = {},
  ): Promise<SearchIndex> {
    const n = ids.length;
    const termRows = await db.all<{ term: string; idf: number }>(
      `SELECT term, CAST(idf AS DOUBLE) AS idf FROM ${src.terms} ORDER BY term`,
    );
    const terms = termRows.map((t) => t.term);
    const termId = new Map(terms.map((t, i) => [t, i]));
    const idf = Float64Array.from(termRows, (t) => t.idf);
    const [{ count } = { count: 0 }] = await db.all<{ count: number }>(`SELECT count(*) AS count FROM ${src.postings}`);
    const T = terms.length;
    const start = new Int32Array(T + 1);
    const rows = new Int32Array(count);
    const tf = new Uint8Array(count);
    const dl = new Uint16Array(n);
    const dlSeen = new Uint8Array(n);
    let at = 0;
    let prevTerm = -1;
    // the postings come by term: a term's id is looked up when the term changes (~40 postings a term)
    let lastText: string | null = null;
    let lastId: number | undefined;
    await db.columns(
      `SELECT p.term, CAST(p.lead_id AS INTEGER), CAST(p.tf AS INTEGER), CAST(p.dl AS INTEGER) FROM ${src.postings} AS p`,
      [],
      (c, count) => {
        for (let r = 0; r < count; r++) {
          const text = c[0]![r] as string;
          if (text !== lastText) {
            lastText = text;
            lastId = termId.get(text);
          }
          const t = lastId;
          const pos = positionOf(c[1]![r] as number);
          if (t === undefined || pos < 0) continue; // a posting of a lead not served
          if (t < prevTerm)
            throw new Error('search_postings is not sorted by term (docs/search.md): rebuild the release');
          while (prevTerm < t) start[++prevTerm] = at;
          const f = c[2]![r] as number;
          const d = c[3]![r] as number;
          if (!(f >= 1 && f <= 255) || !(d >= 0 && d <= 65_535))
            throw new Error(`search posting out of range: tf ${f}, dl ${d}`);
          if (dlSeen[pos] && dl[pos] !== d)
            throw new Error(`lead ${c[1]![r]} has two document lengths in search_postings`);
          dl[pos] = d;
          dlSeen[pos] = 1;
          rows[at] = pos;
          tf[at] = f;
          at++;
        }
      },
    );
    while (prevTerm < T) start[++prevTerm] = at;
    const parts: SearchIndexParts = {
      terms,
      idf,
      start,
      rows: rows.subarray(0, at),
      tf: tf.subarray(0, at),
      dl,
      byImpact: new Int32Array(at),
      maxImpact: new Float64Array(T),
      bitsetAt: new Int32Array(T).fill(-1),
      bitsets: new Uint32Array(0),
      avgdl: Math.max(src.avgdl, 1e-9),
    };
    const ix = new SearchIndex(parts, ids, opts);
    ix.finishTerms();
    return ix;
  }

  /** Per term: postings by position, the impact order, the best impact and (for common terms) a bitset. */
  private finishTerms(): void {
    const p = this.p;
    const { start, rows, tf, byImpact, maxImpact, bitsetAt } = p;
    const n = this.ids.length;
    const ids = this.ids;
    const words = this.words;
    const common: number[] = [];
    let order = new Int32Array(0);
    let posTmp = new Int32Array(0);
    let tfTmp = new Uint8Array(0);
    let score = new Float64Array(0);
    for (let t = 0; t < p.terms.length; t++) {
      const s0 = start[t]!;
      const m = start[t + 1]! - s0;
      if (m === 0) continue;
      if (order.length < m) {
        order = new Int32Array(m);
        posTmp = new Int32Array(m);
        tfTmp = new Uint8Array(m);
        score = new Float64Array(m);
      }
      // positions ascending (the file has them in id order)
      for (let j = 0; j < m; j++) order[j] = j;
      const seg = order.subarray(0, m).sort((a, b) => rows[s0 + a]! - rows[s0 + b]!);
      for (let j = 0; j < m; j++) {
        posTmp[j] = rows[s0 + seg[j]!]!;
        tfTmp[j] = tf[s0 + seg[j]!]!;
      }
      rows.set(posTmp.subarray(0, m), s0);
      tf.set(tfTmp.subarray(0, m), s0);
      // impact order: (rounded impact DESC, id ASC)
      let best = 0;
      for (let j = 0; j < m; j++) {
        const x = this.impactOf(t, s0 + j);
        score[j] = round9(x);
        if (x > best) best = x;
        order[j] = j;
      }
      maxImpact[t] = best;
      order.subarray(0, m).sort((a, b) => score[b]! - score[a]! || ids[rows[s0 + a]!]! - ids[rows[s0 + b]!]!);
      for (let j = 0; j < m; j++) byImpact[s0 + j] = s0 + order[j]!;
      if (m * 32 >= n) common.push(t);
    }
    const bitsets = forKernel(new Uint32Array(common.length * words)); // ANDed and ORed by the kernel
    common.forEach((t, i) => {
      bitsetAt[t] = i * words;
      const s = bitsets.subarray(i * words, (i + 1) * words);
      for (let q = start[t]!; q < start[t + 1]!; q++) setBit(s, rows[q]!);
    });
    p.bitsets = bitsets;
  }
}

/** The first index in [from, end) whose row is ≥ pos (rows ascending): gallop, then bisect. */
function seek(rows: Int32Array, from: number, end: number, pos: number): number {
  if (from >= end || rows[from]! >= pos) return from;
  let step = 1;
  let lo = from;
  let hi = from + 1;
  while (hi < end && rows[hi]! < pos) {
    lo = hi;
    step *= 2;
    hi = from + step;
  }
  if (hi > end) hi = end;
  // rows[lo] < pos; answer in (lo, hi]
  lo++;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (rows[mid]! < pos) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The best k rows seen so far (score DESC, id ASC), the worst on top of a binary heap. */
class TopK {
  private readonly pos: Int32Array;
  private readonly score: Float64Array;
  private size = 0;

  private readonly k: number;
  private readonly ids: Int32Array;
  constructor(k: number, ids: Int32Array) {
    this.k = k;
    this.ids = ids;
    this.pos = new Int32Array(k);
    this.score = new Float64Array(k);
  }

  get full(): boolean {
    return this.size === this.k;
  }

  get worstScore(): number {
    return this.score[0]!;
  }

  /** a ranks before b */
  private better(sa: number, pa: number, sb: number, pb: number): boolean {
    return sa > sb || (sa === sb && this.ids[pa]! < this.ids[pb]!);
  }

  /** Offer a row; false when it did not enter (or is not after the cursor key). */
  offer(pos: number, s: number, after: { score: number; id: number } | null): boolean {
    if (after && !(s < after.score || (s === after.score && this.ids[pos]! > after.id))) return false;
    if (this.size < this.k) {
      let i = this.size++;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (!this.better(this.score[parent]!, this.pos[parent]!, s, pos)) break;
        this.pos[i] = this.pos[parent]!;
        this.score[i] = this.score[parent]!;
        i = parent;
      }
      this.pos[i] = pos;
      this.score[i] = s;
      return true;
    }
    if (!this.better(s, pos, this.score[0]!, this.pos[0]!)) return false;
    // replace the worst and sift down
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= this.size) break;
      let w = l;
      const r = l + 1;
      if (r < this.size && this.better(this.score[l]!, this.pos[l]!, this.score[r]!, this.pos[r]!)) w = r;
      if (!this.better(s, pos, this.score[w]!, this.pos[w]!)) break;
      this.pos[i] = this.pos[w]!;
      this.score[i] = this.score[w]!;
      i = w;
    }
    this.pos[i] = pos;
    this.score[i] = s;
    return true;
  }

  /** The rows best first, from `offset` on. */
  sorted(offset: number): ScoredRow[] {
    const idx = Array.from({ length: this.size }, (_, i) => i);
    idx.sort((a, b) => (this.better(this.score[a]!, this.pos[a]!, this.score[b]!, this.pos[b]!) ? -1 : 1));
    return idx
      .slice(offset)
      .map((i) => ({ id: this.ids[this.pos[i]!]!, sortValue: this.score[i]!, pos: this.pos[i]! }));
  }
}
