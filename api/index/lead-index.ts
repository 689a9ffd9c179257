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
 *  - `q` is the release's search index (api/index/search-index.ts): the leads holding a query
 *    term as a bitset (ANDed with the filters; the total), and for the relevance sort the top
 *    rows by BM25, exactly the formula of common/search-query.ts (docs/search.md), scores
 *    rounded to 9 places, found without scoring every posting.
 *
 * The SQL builders of api/query/leads-query.ts remain the reference semantics (and serve bulk
 * reads in DuckDB); test/api/index/lead-index.test.ts checks that both give the same pages and
 * totals over many generated queries.
 */
import type { ApiDb } from '../db.ts';
import type { LeadsFilters, LeadsPageRequest, LeadsSort } from '../query/leads-query.ts';
import { andInto, count, emptySet, hasBit, orInto, selectBits, setBit, wordsFor, type Bitset } from './bitset.ts';
import { SearchIndex, type SearchIndexParts } from './search-index.ts';

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
/** 'YYYY-MM-DD' of a day number, memoised (a Date per row costs ~1 µs; a release spans a few thousand days). */
const isoDays = new Map<number, string>();
const isoDay = (day: number): string => {
  let s = isoDays.get(day);
  if (s === undefined) {
    if (isoDays.size > 100_000) isoDays.clear();
    isoDays.set(day, (s = new Date(day * DAY_MS).toISOString().slice(0, 10)));
  }
  return s;
};
const dayOf = (iso: string): number => Math.round(Date.parse(`${iso}T00:00:00Z`) / DAY_MS);

/** Everything a `LeadIndex` is made of (a release loader can move it between processes). */
export interface LeadIndexParts {
  /** Per row position (newest order): lead id, received day, est_value (-Infinity for null), num_units (NaN for null). */
  ids: Int32Array;
  days: Int32Array;
  values: Float64Array;
  units: Float64Array;
  /** Per enumerated filter, a bitset per value. */
  sets: Map<string, Map<string, Bitset>>;
  /** has_contact / demolition: the rows where the flag is true, and where it is false. */
  flags: Map<string, Bitset>;
  /** Positions by (est_value DESC, id DESC), and each position's index in that order. */
  byValue: Int32Array;
  rankOf: Int32Array;
  /** Positions with a num_units, by num_units DESC. */
  byUnits: Int32Array;
  /** The cumulative bitsets of `RangeIndex` over byValue and byUnits, concatenated. */
  valuePrefixes: Uint32Array;
  unitsPrefixes: Uint32Array;
  search: SearchIndexParts | null;
}

export class LeadIndex {
  readonly size: number;
  private readonly ids: Int32Array;
  private readonly days: Int32Array;
  private readonly values: Float64Array;
  private readonly sets: Map<string, Map<string, Bitset>>;
  private readonly flags: Map<string, Bitset>;
  private readonly byValue: Int32Array;
  private readonly rankOf: Int32Array;
  private readonly valueRange: RangeIndex;
  private readonly unitsRange: RangeIndex;
  private readonly search: SearchIndex | null;

  constructor(
    private readonly p: LeadIndexParts,
    opts: { exhaustiveMax?: number } = {},
  ) {
    this.size = p.ids.length;
    this.ids = p.ids;
    this.days = p.days;
    this.values = p.values;
    this.sets = p.sets;
    this.flags = p.flags;
    this.byValue = p.byValue;
    this.rankOf = p.rankOf;
    this.valueRange = new RangeIndex(p.values, p.byValue, p.valuePrefixes);
    this.unitsRange = new RangeIndex(p.units, p.byUnits, p.unitsPrefixes);
    this.search = p.search ? new SearchIndex(p.search, p.ids, opts) : null;
  }

  /** The parts (to move the index to another process). */
  parts(): LeadIndexParts {
    return this.p;
  }

  /** Read the release's leads (and search index) through DuckDB and build the index (`exhaustiveMax`: see SearchIndex). */
  static async load(db: ApiDb, src: LeadIndexSource, opts: { exhaustiveMax?: number } = {}): Promise<LeadIndex> {
    const cols = await readColumns(db, src.leads);
    const slots = new Map<number, number>();
    cols.ids.forEach((id, pos) => slots.set(id, pos));
    const search = src.search ? await SearchIndex.load(db, src.search, slots, cols.ids, opts) : null;
    return new LeadIndex(buildParts(cols, search?.parts() ?? null), opts);
  }

  /** One page of ids for a request (same semantics as `leadsPageQuery` + `leadsCountQuery`). */
  page(req: LeadsPageRequest): IndexPage {
    const n = this.size;
    let matched = this.filterSet(req.filters);
    let terms: number[] = [];
    if (req.filters.q !== undefined) {
      // the leads holding any query term, within the other filters
      terms = this.search ? this.search.termsOf(req.filters.q) : [];
      const holding = this.search ? this.search.union(terms) : emptySet(n);
      if (matched) andInto(holding, matched);
      matched = holding;
    }
    const total = matched ? count(matched) : n;
    if (req.sort !== 'relevance') return { rows: this.orderedPage(req, matched, total), total };
    const rows = this.search && matched ? this.search.top(terms, matched, total, req) : [];
    return { rows, total };
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
    if (f.has_contact !== undefined) and(this.flags.get(`has_contact=${f.has_contact}`)!, false);
    if (f.demolition !== undefined) and(this.flags.get(`demolition=${f.demolition}`)!, false);
    return acc;
  }

  /**
   * Pages of the newest / oldest / value sorts. Positions are the newest order, so date pages
   * are the set bits of `matched` in order. Value pages walk the (est_value DESC, id DESC)
   * permutation and keep matched rows — unless the filter is selective and the page deep, when
   * the walk would visit ~(offset + limit)·n/total rows: then the matched rows' ranks in that
   * permutation are set in a bitset of their own, whose set bits in order are the page.
   */
  private orderedPage(req: LeadsPageRequest, matched: Bitset | null, total: number): IndexRow[] {
    const n = this.size;
    const byDate = req.sort === 'newest' || req.sort === 'oldest';
    const forward = req.sort === 'newest' || req.sort === 'value_desc';
    const from = req.after ? this.afterKey(byDate, forward, req.after) : forward ? 0 : n;
    const perm = this.byValue;
    let positions: number[];
    if (byDate) positions = matched ? selectBits(matched, from, req.offset, req.limit, forward) : this.range(from, req.offset, req.limit, forward);
    else if (!matched) positions = this.range(from, req.offset, req.limit, forward).map((k) => perm[k]!);
    else if (((req.offset + req.limit) * n) / Math.max(total, 1) <= 2 * (total + n / 32)) {
      positions = [];
      let skip = req.offset;
      const step = forward ? 1 : -1;
      for (let k = forward ? from : from - 1; k >= 0 && k < n && positions.length < req.limit; k += step) {
        const pos = perm[k]!;
        if (!hasBit(matched, pos)) continue;
        if (skip > 0) skip--;
        else positions.push(pos);
      }
    } else {
      const ranks = emptySet(n);
      const rankOf = this.rankOf;
      for (let w = 0; w < matched.length; w++) {
        let x = matched[w]!;
        while (x !== 0) {
          const bit = 31 - Math.clz32(x & -x);
          x &= x - 1;
          setBit(ranks, rankOf[(w << 5) + bit]!);
        }
      }
      positions = selectBits(ranks, from, req.offset, req.limit, forward).map((k) => perm[k]!);
    }
    return byDate
      ? positions.map((pos) => ({ id: this.ids[pos]!, sortValue: isoDay(this.days[pos]!) }))
      : positions.map((pos) => ({ id: this.ids[pos]!, sortValue: this.values[pos]! }));
  }

  /** Order indices `from…` (forward) or `…from-1` (backward) after skipping, up to `want`. */
  private range(from: number, skip: number, want: number, forward: boolean): number[] {
    const out: number[] = [];
    if (forward) for (let k = from + skip; k < this.size && out.length < want; k++) out.push(k);
    else for (let k = from - 1 - skip; k >= 0 && out.length < want; k--) out.push(k);
    return out;
  }

  /**
   * Where a keyset cursor continues, as an index in forward order (newest: positions; value:
   * the permutation): forward pages continue at it, backward pages below it.
   */
  private afterKey(byDate: boolean, forward: boolean, after: readonly [string | number, number]): number {
    const n = this.size;
    const kv = byDate ? dayOf(String(after[0])) : Number(after[0]);
    const kid = after[1];
    const primary = byDate ? this.days : this.values;
    const at = byDate ? (k: number): number => k : (k: number): number => this.byValue[k]!;
    // In forward order (DESC, id DESC), "row ≤ key" holds for a prefix: forward pages start at
    // its end. Backward pages (ASC, id ASC) continue with the rows > key, i.e. before the first
    // row ≥ key in forward order.
    let lo = 0;
    let hi = n;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const pos = at(mid);
      const v = primary[pos]!;
      const before = forward ? v < kv || (v === kv && this.ids[pos]! < kid) : v < kv || (v === kv && this.ids[pos]! <= kid);
      if (before) hi = mid;
      else lo = mid + 1;
    }
    return lo;
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
  private readonly words: number;

  constructor(
    private readonly column: Float64Array,
    private readonly order: Int32Array,
    /** Bitsets of the first 0, step, 2·step, … rows of `order`, concatenated (`RangeIndex.prefixes`). */
    private readonly prefixes: Uint32Array,
  ) {
    this.step = RangeIndex.stepFor(order.length);
    this.words = wordsFor(column.length);
  }

  static stepFor(rows: number): number {
    return Math.max(1, Math.ceil(rows / RangeIndex.PARTS));
  }

  /** The cumulative bitsets a `RangeIndex` over `order` keeps (n = rows of the column). */
  static prefixes(n: number, order: Int32Array): Uint32Array {
    const step = RangeIndex.stepFor(order.length);
    const words = wordsFor(n);
    const out = new Uint32Array((Math.floor(order.length / step) + 1) * words);
    const acc = emptySet(n);
    for (let k = 0; k <= order.length; k++) {
      if (k % step === 0) out.set(acc, (k / step) * words);
      if (k < order.length) setBit(acc, order[k]!);
    }
    return out;
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
    const s = this.prefixes.slice(j * this.words, (j + 1) * this.words);
    for (let k = j * this.step; k < lo; k++) setBit(s, this.order[k]!);
    return s;
  }
}

/** The index's parts from the leads' columns (and the search index's parts). */
function buildParts(cols: Columns, search: SearchIndexParts | null): LeadIndexParts {
  const n = cols.ids.length;
  const sets = new Map<string, Map<string, Bitset>>();
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
    sets.set(f, m);
  }
  const flags = new Map<string, Bitset>();
  for (const [name, v] of [['has_contact', cols.hasContact], ['demolition', cols.demolition]] as const) {
    const t = emptySet(n);
    const f = emptySet(n);
    v.forEach((b, pos) => (b === true ? setBit(t, pos) : b === false ? setBit(f, pos) : undefined));
    flags.set(`${name}=true`, t);
    flags.set(`${name}=false`, f);
  }
  const byValue = Int32Array.from({ length: n }, (_, i) => i);
  byValue.sort((a, b) => cols.values[b]! - cols.values[a]! || cols.ids[b]! - cols.ids[a]!);
  const rankOf = new Int32Array(n);
  byValue.forEach((pos, k) => (rankOf[pos] = k));
  const byUnits = Int32Array.from({ length: n }, (_, i) => i).filter((i) => !Number.isNaN(cols.units[i]!));
  byUnits.sort((a, b) => cols.units[b]! - cols.units[a]!);
  return {
    ids: cols.ids,
    days: cols.days,
    values: cols.values,
    units: cols.units,
    sets,
    flags,
    byValue,
    rankOf,
    byUnits,
    valuePrefixes: RangeIndex.prefixes(n, byValue),
    unitsPrefixes: RangeIndex.prefixes(n, byUnits),
    search,
  };
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

export type { LeadsSort };
