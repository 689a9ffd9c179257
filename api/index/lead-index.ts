/**
 * The in-memory lead index of a release: what `GET /v1/leads` filters, sorts, counts and pages
 * with, in well under a millisecond, instead of two DuckDB queries (~12 ms of CPU for a page and
 * its total, 16 ms for `q`; docs/performance.md).
 *
 * Built once per release at load, from the release's tables through DuckDB, and read-only after:
 *  - rows are positions 0…n-1 in `newest` order (received_date DESC, id DESC); `oldest` is the
 *    same order backwards; `value_desc` / `value_asc` walk one permutation sorted by
 *    (est_value DESC, id DESC) forwards / backwards;
 *  - every value of every enumerated filter (authority, county, readiness, status, use_class,
 *    scale, vertical, has_contact, demolition) is a bitset of rows; a request ORs the sets of
 *    one filter's values and ANDs the filters; `min_value` / `min_units` scan a typed column;
 *  - `q` scores BM25 from the release's search index held as typed arrays (postings per term),
 *    exactly the formula of common/search-query.ts (docs/search.md), scores rounded to 9 places.
 *
 * The SQL builders of api/query/leads-query.ts remain the reference semantics (and serve bulk
 * reads in DuckDB); test/api/index/lead-index.test.ts checks that both give the same pages and
 * totals over many generated queries.
 */
import { BM25, tokenize } from '../../common/search-text.ts';
import type { ApiDb } from '../db.ts';
import type { LeadsFilters, LeadsPageRequest, LeadsSort } from '../query/leads-query.ts';
import { andInto, count, emptySet, hasBit, orInto, popcount32, setBit, type Bitset } from './bitset.ts';

/** A page row: the lead id and its value of the sort column (for `next_cursor`). */
export interface IndexRow {
  id: number;
  sortValue: string | number;
}

export interface IndexPage {
  /** Up to `limit` rows in the order of the sort, after `offset` / `after`. */
  rows: IndexRow[];
  /** Rows matching the filters (regardless of paging). */
  total: number;
}

/** Enumerated filters held as one bitset per value, and the leads column each reads. */
const SET_FILTERS = {
  authority: 'planning_authority',
  county: 'county',
  readiness: 'lead_readiness',
  status: 'status',
  use_class: 'use_class',
  scale: 'scale',
} as const;
type SetFilter = keyof typeof SET_FILTERS | 'vertical';

/** Where the index reads from: table expressions of the release (api/release.ts `tables`). */
export interface LeadIndexSource {
  leads: string;
  /** The search index, or null when the release has none (`q` then matches nothing). */
  search: { terms: string; postings: string; avgdl: number } | null;
}

const DAY_MS = 86_400_000;
const isoDay = (day: number): string => new Date(day * DAY_MS).toISOString().slice(0, 10);
const dayOf = (iso: string): number => Math.round(Date.parse(`${iso}T00:00:00Z`) / DAY_MS);
/** Scores as the SQL rounds them (`round(score, 9)`), so a cursor's score compares equal. */
const round9 = (x: number): number => Math.round(x * 1e9) / 1e9;

export class LeadIndex {
  readonly size: number;
  private readonly ids: Int32Array;
  private readonly days: Int32Array;
  private readonly values: Float64Array;
  /** num_units; NaN for null (never ≥ anything, as in SQL). */
  private readonly units: Float64Array;
  private readonly sets = new Map<SetFilter, Map<string, Bitset>>();
  private readonly flags: Record<'has_contact' | 'demolition', { true: Bitset; false: Bitset }>;
  /** Positions sorted by (est_value DESC, id DESC). */
  private readonly byValue: Int32Array;
  private readonly valueRange: RangeIndex;
  private readonly unitsRange: RangeIndex;
  private readonly search: SearchPostings | null;
  // Scratch space for one query at a time (queries are synchronous).
  private readonly scores: Float64Array;
  private readonly touched: Int32Array;

  private constructor(cols: Columns, search: SearchPostings | null) {
    const n = cols.ids.length;
    this.size = n;
    this.ids = cols.ids;
    this.days = cols.days;
    this.values = cols.values;
    this.units = cols.units;
    for (const [f, values] of cols.categorical) {
      const m = new Map<string, Bitset>();
      values.forEach((v, pos) => {
        for (const one of f === 'vertical' ? (v as string[]) : [v as string | null]) {
          if (one === null) continue;
          let s = m.get(one);
          if (!s) m.set(one, (s = emptySet(n)));
          setBit(s, pos);
        }
      });
      this.sets.set(f, m);
    }
    const flagSets = (v: (boolean | null)[]): { true: Bitset; false: Bitset } => {
      const t = emptySet(n);
      const f = emptySet(n);
      v.forEach((b, pos) => (b === true ? setBit(t, pos) : b === false ? setBit(f, pos) : undefined));
      return { true: t, false: f };
    };
    this.flags = { has_contact: flagSets(cols.hasContact), demolition: flagSets(cols.demolition) };
    const perm = Int32Array.from({ length: n }, (_, i) => i);
    perm.sort((a, b) => this.values[b]! - this.values[a]! || this.ids[b]! - this.ids[a]!);
    this.byValue = perm;
    this.valueRange = new RangeIndex(this.values, perm);
    const byUnits = Int32Array.from({ length: n }, (_, i) => i).filter((i) => !Number.isNaN(this.units[i]!));
    byUnits.sort((a, b) => this.units[b]! - this.units[a]!);
    this.unitsRange = new RangeIndex(this.units, byUnits);
    this.search = search;
    this.scores = new Float64Array(search ? n : 0);
    this.touched = new Int32Array(search ? n : 0);
  }

  /** Read the release's leads (and search index) through DuckDB and build the index. */
  static async load(db: ApiDb, src: LeadIndexSource): Promise<LeadIndex> {
    const cols = await readColumns(db, src.leads);
    const slots = new Map<number, number>();
    cols.ids.forEach((id, pos) => slots.set(id, pos));
    const search = src.search ? await SearchPostings.load(db, src.search, slots) : null;
    return new LeadIndex(cols, search);
  }

  /** One page of ids for a request (same semantics as `leadsPageQuery` + `leadsCountQuery`). */
  page(req: LeadsPageRequest): IndexPage {
    const n = this.size;
    const filter = this.filterSet(req.filters);
    let matched: Bitset | null = filter;
    let hits = 0;
    if (req.filters.q !== undefined) {
      const qs = emptySet(n);
      hits = this.score(req.filters.q, qs);
      if (matched) andInto(matched, qs);
      else matched = qs;
    }
    try {
      const total = matched ? count(matched) : n;
      const rows = req.sort === 'relevance' ? this.relevancePage(req, hits, matched!) : this.orderedPage(req, matched);
      return { rows, total };
    } finally {
      for (let i = 0; i < hits; i++) this.scores[this.touched[i]!] = 0;
    }
  }

  /** The bitset of rows passing every filter except `q`, or null when there is none. */
  private filterSet(f: LeadsFilters): Bitset | null {
    const n = this.size;
    let acc: Bitset | null = null;
    const and = (s: Bitset, owned: boolean): void => {
      if (acc) andInto(acc, s);
      else acc = owned ? s : s.slice();
    };
    const lists: [SetFilter, string[] | undefined][] = [
      ['vertical', f.vertical],
      ...(Object.keys(SET_FILTERS) as (keyof typeof SET_FILTERS)[]).map((k) => [k, f[k]] as [SetFilter, string[] | undefined]),
    ];
    for (const [name, wanted] of lists) {
      if (!wanted?.length) continue;
      const m = this.sets.get(name)!;
      if (wanted.length === 1) {
        and(m.get(wanted[0]!) ?? emptySet(n), false);
        continue;
      }
      const union = emptySet(n);
      for (const v of wanted) {
        const s = m.get(v);
        if (s) orInto(union, s);
      }
      and(union, true);
    }
    if (f.min_value !== undefined) and(this.valueRange.atLeast(f.min_value), true);
    if (f.min_units !== undefined) and(this.unitsRange.atLeast(f.min_units), true);
    if (f.has_contact !== undefined) and(this.flags.has_contact[f.has_contact ? 'true' : 'false'], false);
    if (f.demolition !== undefined) and(this.flags.demolition[f.demolition ? 'true' : 'false'], false);
    return acc;
  }

  /**
   * BM25 of `q` into `scores` (rounded as the SQL rounds them); marks the rows holding a query
   * term in `hit` and lists them in `touched`; returns how many.
   */
  private score(q: string, hit: Bitset): number {
    const ix = this.search;
    if (!ix) return 0;
    const scores = this.scores;
    const touched = this.touched;
    let hits = 0;
    for (const term of new Set(tokenize(q))) {
      const t = ix.terms.get(term);
      if (t === undefined) continue;
      for (let p = ix.start[t]!, end = ix.start[t + 1]!; p < end; p++) {
        const pos = ix.rows[p]!;
        // every impact is > 0 (idf > 0, tf ≥ 1), so a zero score means not touched yet
        if (scores[pos] === 0) touched[hits++] = pos;
        scores[pos]! += ix.impact[p]!;
      }
    }
    for (let i = 0; i < hits; i++) {
      const pos = touched[i]!;
      scores[pos] = round9(scores[pos]!);
      setBit(hit, pos);
    }
    return hits;
  }

  /** Pages of the newest / oldest / value sorts: walk the sort order, keep rows in `matched`. */
  private orderedPage(req: LeadsPageRequest, matched: Bitset | null): IndexRow[] {
    const n = this.size;
    const out: IndexRow[] = [];
    let skip = req.offset;
    const want = req.limit;
    const byDate = req.sort === 'newest' || req.sort === 'oldest';
    const forward = req.sort === 'newest' || req.sort === 'value_desc';
    const at = byDate ? (k: number): number => k : (k: number): number => this.byValue[k]!;
    const sortValue = byDate ? (pos: number): string | number => isoDay(this.days[pos]!) : (pos: number): string | number => this.values[pos]!;
    // First order index k (in forward order) strictly after the cursor key.
    let from = 0;
    if (req.after) {
      const kv = byDate ? dayOf(String(req.after[0])) : Number(req.after[0]);
      const kid = req.after[1];
      const primary = byDate ? this.days : this.values;
      // In forward order (DESC, id DESC), "row ≤ key" holds for a prefix: find its end.
      let lo = 0;
      let hi = n;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        const pos = at(mid);
        const v = primary[pos]!;
        const le = v < kv || (v === kv && this.ids[pos]! < kid);
        if (le) hi = mid;
        else lo = mid + 1;
      }
      from = lo; // forward: rows after the key are [lo, n); backward: rows after it are [0, lo) reversed
      if (!forward) {
        // backward order (ASC, id ASC): rows strictly after the key are those > key, i.e. before
        // the first row ≥ key in forward order.
        lo = 0;
        hi = n;
        while (lo < hi) {
          const mid = (lo + hi) >>> 1;
          const pos = at(mid);
          const v = primary[pos]!;
          const ge = v < kv || (v === kv && this.ids[pos]! <= kid);
          if (ge) hi = mid;
          else lo = mid + 1;
        }
        from = lo;
      }
    } else if (!forward) from = n;
    if (byDate && matched) {
      // Positions are the order itself: walk the bitset's words.
      return forward ? this.walkForward(matched, from, skip, want, sortValue) : this.walkBackward(matched, from, skip, want, sortValue);
    }
    if (forward) {
      for (let k = from; k < n && out.length < want; k++) {
        const pos = at(k);
        if (matched && !hasBit(matched, pos)) continue;
        if (skip > 0) skip--;
        else out.push({ id: this.ids[pos]!, sortValue: sortValue(pos) });
      }
    } else {
      for (let k = from - 1; k >= 0 && out.length < want; k--) {
        const pos = at(k);
        if (matched && !hasBit(matched, pos)) continue;
        if (skip > 0) skip--;
        else out.push({ id: this.ids[pos]!, sortValue: sortValue(pos) });
      }
    }
    return out;
  }

  /** Set positions ≥ from, ascending, skipping `skip` of them (whole words at a time). */
  private walkForward(s: Bitset, from: number, skip: number, want: number, sv: (pos: number) => string | number): IndexRow[] {
    const out: IndexRow[] = [];
    for (let w = from >>> 5; w < s.length && out.length < want; w++) {
      let x = s[w]!;
      if (w === from >>> 5) x &= ~((1 << (from & 31)) - 1) | 0;
      if (x === 0) continue;
      const c = popcount32(x);
      if (skip >= c) {
        skip -= c;
        continue;
      }
      while (x !== 0 && out.length < want) {
        const bit = 31 - Math.clz32(x & -x);
        x &= x - 1;
        if (skip > 0) skip--;
        else {
          const pos = (w << 5) + bit;
          out.push({ id: this.ids[pos]!, sortValue: sv(pos) });
        }
      }
    }
    return out;
  }

  /** Set positions < from, descending, skipping `skip` of them. */
  private walkBackward(s: Bitset, from: number, skip: number, want: number, sv: (pos: number) => string | number): IndexRow[] {
    const out: IndexRow[] = [];
    if (from <= 0) return out;
    const last = (from - 1) >>> 5;
    for (let w = last; w >= 0 && out.length < want; w--) {
      let x = s[w]!;
      if (w === last && ((from - 1) & 31) !== 31) x &= (1 << (((from - 1) & 31) + 1)) - 1;
      if (x === 0) continue;
      const c = popcount32(x);
      if (skip >= c) {
        skip -= c;
        continue;
      }
      while (x !== 0 && out.length < want) {
        const bit = 31 - Math.clz32(x);
        x &= ~(1 << bit);
        if (skip > 0) skip--;
        else {
          const pos = (w << 5) + bit;
          out.push({ id: this.ids[pos]!, sortValue: sv(pos) });
        }
      }
    }
    return out;
  }

  /** Relevance pages: the best `offset + limit` of the matched rows by (score DESC, id ASC). */
  private relevancePage(req: LeadsPageRequest, hits: number, matched: Bitset): IndexRow[] {
    const k = req.offset + req.limit;
    const ks = req.after ? Number(req.after[0]) : Infinity;
    const kid = req.after ? req.after[1] : -Infinity;
    const better = (a: number, b: number): boolean =>
      this.scores[a]! > this.scores[b]! || (this.scores[a] === this.scores[b] && this.ids[a]! < this.ids[b]!);
    // Bounded heap with the worst kept row on top.
    const heap: number[] = [];
    const up = (i: number): void => {
      while (i > 0) {
        const p = (i - 1) >> 1;
        if (!better(heap[p]!, heap[i]!)) break;
        [heap[p], heap[i]] = [heap[i]!, heap[p]!];
        i = p;
      }
    };
    const down = (i: number): void => {
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let worst = i;
        if (l < heap.length && better(heap[worst]!, heap[l]!)) worst = l;
        if (r < heap.length && better(heap[worst]!, heap[r]!)) worst = r;
        if (worst === i) return;
        [heap[worst], heap[i]] = [heap[i]!, heap[worst]!];
        i = worst;
      }
    };
    for (let i = 0; i < hits; i++) {
      const pos = this.touched[i]!;
      if (!hasBit(matched, pos)) continue;
      const s = this.scores[pos]!;
      if (req.after && !(s < ks || (s === ks && this.ids[pos]! > kid))) continue;
      if (heap.length < k) {
        heap.push(pos);
        up(heap.length - 1);
      } else if (k > 0 && better(pos, heap[0]!)) {
        heap[0] = pos;
        down(0);
      }
    }
    heap.sort((a, b) => (better(a, b) ? -1 : better(b, a) ? 1 : 0));
    return heap.slice(req.offset).map((pos) => ({ id: this.ids[pos]!, sortValue: this.scores[pos]! }));
  }
}

/**
 * `column ≥ min` as a bitset without scanning the column: `order` lists the positions with a
 * value, sorted by value descending, so the answer is a prefix of `order`; cumulative bitsets of
 * every `STEP`-th prefix are kept, and a query copies the nearest one and adds fewer than `STEP`
 * rows (~30 µs instead of a ~1 ms scan with unpredictable branches).
 */
class RangeIndex {
  private static readonly PARTS = 64;
  private readonly step: number;
  private readonly prefixes: Bitset[] = [];
  constructor(
    private readonly column: Float64Array,
    private readonly order: Int32Array,
  ) {
    const n = column.length;
    this.step = Math.max(1, Math.ceil(order.length / RangeIndex.PARTS));
    const acc = emptySet(n);
    for (let k = 0; k <= order.length; k++) {
      if (k % this.step === 0) this.prefixes.push(acc.slice());
      if (k < order.length) setBit(acc, order[k]!);
    }
  }

  atLeast(min: number): Bitset {
    let lo = 0;
    let hi = this.order.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.column[this.order[mid]!]! >= min) lo = mid + 1;
      else hi = mid;
    }
    const j = Math.floor(lo / this.step);
    const s = this.prefixes[j]!.slice();
    for (let k = j * this.step; k < lo; k++) setBit(s, this.order[k]!);
    return s;
  }
}

/** The columns the index is built from, positions in newest order. */
interface Columns {
  ids: Int32Array;
  days: Int32Array;
  values: Float64Array;
  units: Float64Array;
  categorical: Map<SetFilter, (string | null | string[])[]>;
  hasContact: (boolean | null)[];
  demolition: (boolean | null)[];
}

async function readColumns(db: ApiDb, leads: string): Promise<Columns> {
  const [{ n } = { n: 0 }] = await db.all<{ n: number }>(`SELECT count(*) AS n FROM ${leads}`);
  const cols: Columns = {
    ids: new Int32Array(n),
    days: new Int32Array(n),
    values: new Float64Array(n),
    units: new Float64Array(n),
    categorical: new Map([['vertical', new Array(n)], ...Object.keys(SET_FILTERS).map((k) => [k as SetFilter, new Array(n)] as const)]),
    hasContact: new Array(n),
    demolition: new Array(n),
  };
  const setNames = Object.keys(SET_FILTERS) as (keyof typeof SET_FILTERS)[];
  // One string object per distinct value (each chunk's strings are garbage at once).
  const interned = new Map<string, string>();
  const intern = (v: string | null): string | null => {
    if (v === null) return null;
    const hit = interned.get(v);
    if (hit !== undefined) return hit;
    interned.set(v, v);
    return v;
  };
  let at = 0;
  await db.columns(
    `SELECT CAST(id AS INTEGER), CAST(received_date - DATE '1970-01-01' AS INTEGER), CAST(est_value AS DOUBLE), CAST(num_units AS DOUBLE),
            array_to_string(verticals, chr(31)), has_contact, demolition, ${setNames.map((k) => SET_FILTERS[k]).join(', ')}
       FROM ${leads} ORDER BY received_date DESC, id DESC`,
    [],
    (c, rows) => {
      for (let r = 0; r < rows; r++, at++) {
        if (at >= n) throw new Error('the leads table grew while the index was built');
        cols.ids[at] = c[0]![r] as number;
        cols.days[at] = c[1]![r] as number;
        cols.values[at] = (c[2]![r] as number | null) ?? -Infinity;
        cols.units[at] = (c[3]![r] as number | null) ?? NaN;
        const v = c[4]![r] as string | null;
        cols.categorical.get('vertical')![at] = v ? v.split('\u001f').map((x) => intern(x)!) : [];
        cols.hasContact[at] = c[5]![r] as boolean | null;
        cols.demolition[at] = c[6]![r] as boolean | null;
        setNames.forEach((k, i) => (cols.categorical.get(k)![at] = intern(c[7 + i]![r] as string | null)));
      }
    },
  );
  return cols;
}

/**
 * The search index as typed arrays: per term, its postings (row position and BM25 impact). The
 * impact of a posting, idf · tf·(k1+1) / (tf + k1·(1 − b + b·dl/avgdl)), depends on nothing in
 * the query, so it is computed once at load; a query adds impacts.
 */
class SearchPostings {
  private constructor(
    readonly terms: Map<string, number>,
    /** Postings of term t are [start[t], start[t+1]). */
    readonly start: Int32Array,
    readonly rows: Int32Array,
    readonly impact: Float64Array,
  ) {}

  /**
   * Postings are read in file order (the release writes them sorted by term: docs/search.md), one
   * scan with no sort, so loading holds no more than a chunk of rows at a time.
   */
  static async load(db: ApiDb, src: { terms: string; postings: string; avgdl: number }, slots: Map<number, number>): Promise<SearchPostings> {
    const termRows = await db.all<{ term: string; idf: number }>(`SELECT term, CAST(idf AS DOUBLE) AS idf FROM ${src.terms} ORDER BY term`);
    const terms = new Map<string, number>();
    const idf = new Float64Array(termRows.length);
    termRows.forEach((t, i) => {
      terms.set(t.term, i);
      idf[i] = t.idf;
    });
    const [{ n } = { n: 0 }] = await db.all<{ n: number }>(`SELECT count(*) AS n FROM ${src.postings}`);
    const start = new Int32Array(termRows.length + 1);
    const rows = new Int32Array(n);
    const impact = new Float64Array(n);
    const { k1, b } = BM25;
    const avgdl = Math.max(src.avgdl, 1e-9);
    let at = 0;
    let prevTerm = -1;
    await db.columns(
      `SELECT p.term, CAST(p.lead_id AS INTEGER), CAST(p.tf AS INTEGER), CAST(p.dl AS INTEGER)
         FROM ${src.postings} AS p`,
      [],
      (c, count) => {
        for (let r = 0; r < count; r++) {
          const t = terms.get(c[0]![r] as string);
          const pos = slots.get(c[1]![r] as number);
          if (t === undefined || pos === undefined) continue; // a posting of a lead not served
          if (t < prevTerm) throw new Error('search_postings is not sorted by term (docs/search.md): rebuild the release');
          while (prevTerm < t) start[++prevTerm] = at;
          rows[at] = pos;
          const tf = c[2]![r] as number;
          impact[at] = (idf[t]! * (tf * (k1 + 1))) / (tf + k1 * (1 - b + (b * (c[3]![r] as number)) / avgdl));
          at++;
        }
      },
    );
    while (prevTerm < termRows.length) start[++prevTerm] = at;
    return new SearchPostings(terms, start, rows.subarray(0, at), impact.subarray(0, at));
  }
}

export type { LeadsSort };
