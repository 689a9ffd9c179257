/**
 * The in-memory lead index of a release: what `GET /v1/leads` filters, sorts, counts and pages
 * with, in well under a millisecond, instead of two DuckDB queries (~12 ms of CPU for a page and
 * its total, 16 ms for `q`; docs/performance.md).
 *
 * Built once per release at load, from the release's tables through DuckDB, and read-only after:
 *  - rows are positions 0…n-1 in `newest` order (received_date DESC, id DESC); `oldest` is the
 *    same order backwards; `value_desc` / `value_asc` walk one permutation sorted by
 *    (est_value DESC, id DESC) forwards / backwards, `last_changed` / `last_changed_asc` another
 *    sorted by (last_changed DESC, id DESC);
 *  - the filters are those of the filter table (api/query/lead-filters.ts), each evaluated by the
 *    strategy of its kind: every value of an `enum` / `multi` filter's column is a bitset of rows
 *    (a request ORs the sets of one filter's values and ANDs the filters); a `flag` is two
 *    bitsets (true, false); a `range` / `date` column is a `RangeIndex` (positions sorted by
 *    value, with cumulative bitsets) answering `>=` and `<=` without a scan;
 *  - a `key` column (`application_number`) is a `KeyIndex` (positions sorted by folded value,
 *    api/engine/key-index.ts); the `geometry` filters are one `GeoIndex` (a k-d tree over lon/lat
 *    and the exact test of api/gis/geometry.ts, api/engine/geo-index.ts), which also gives
 *    `distance_m` and the `distance` sort (by the served distance, rounded to 0.1 m, then id);
 *  - `q` is the release's search index (api/engine/search-index.ts): the leads holding a query
 *    term as a bitset (ANDed with the filters; the total), and for the relevance sort the top
 *    rows by BM25, exactly the formula of common/search-query.ts (docs/search.md), scores
 *    rounded to 9 places, found without scoring every posting.
 *
 * The SQL builders of api/query/leads-query.ts remain the reference semantics (and serve bulk
 * reads in DuckDB); test/api/engine/lead-index.test.ts checks that both give the same pages and
 * totals over many generated queries.
 */
import type { ApiDb } from '../duckdb/db.ts';
import type { LeadsFilters, LeadsPageRequest, LeadsSort } from '../query/leads-query.ts';
import { FILTERS, filtersOfKind } from '../query/lead-filters.ts';
import type { AreaFilters } from '../gis/geometry.ts';
import { servedDistance } from '../gis/point-tests.ts';
import {
  andCount,
  count,
  emptySet,
  hasBit,
  orInto,
  ScratchSets,
  scratchPool,
  selectBits,
  setBit,
  setRanks,
  type Bitset,
} from './bitset.ts';
import { forKernel } from './bitset-kernel.ts';
import { GeoIndex, type GeoIndexParts } from './geo-index.ts';
import { KeyIndex, type KeyIndexParts } from './key-index.ts';
import { RangeIndex, type RangeParts } from './range-index.ts';
import { positionsOf } from './row-store.ts';
import { SearchIndex, type SearchIndexParts } from './search-index.ts';

/** A page row: the lead id and its value of the sort column (for `next_cursor`). */
export interface IndexRow {
  id: number;
  sortValue: string | number;
  /** Its row position in this index. */
  pos: number;
  /** With `near`: the distance from it in metres, rounded to 0.1 m (`distance_m`). */
  distance?: number;
}

export interface IndexPage {
  /** Up to `limit` rows in the order of the sort, after `offset` / `after`. */
  rows: IndexRow[];
  /** Rows matching the filters (regardless of paging). */
  total: number;
}

/** The rows passing a request's filters (`q` aside) and how many they are. */
interface Matched {
  set: Bitset;
  total: number;
}

/** Columns held as one bitset per value (`enum` / `multi` filters), and whether each holds a list. */
const SET_COLUMNS: ReadonlyMap<string, boolean> = new Map(
  filtersOfKind('enum', 'multi').map((f) => [f.column, f.kind === 'enum' && f.listColumn === true]),
);
/** Columns held as two bitsets, true and false (`flag` filters). */
const FLAG_COLUMNS: readonly string[] = [...new Set(filtersOfKind('flag').map((f) => f.column))];
/** Columns held as a `RangeIndex` (`range` filters: numbers; `date` filters: day numbers). */
const RANGE_COLUMNS: ReadonlyMap<string, 'number' | 'date'> = new Map(
  filtersOfKind('range', 'date').map((f) => [f.column, f.kind === 'date' ? 'date' : 'number']),
);
/** Columns held as a `KeyIndex` (`key` filters). */
const KEY_COLUMNS: readonly string[] = [...new Set(filtersOfKind('key').map((f) => f.column))];
/** The latitude and longitude columns of the `geometry` filters (one pair for all of them). */
const GEO_COLUMNS: readonly [string, string] = (() => {
  const g = filtersOfKind('geometry');
  if (g.some((f) => f.column !== g[0]!.column || f.lonColumn !== g[0]!.lonColumn))
    throw new Error('the geometry filters must share their lat / lon columns');
  return [g[0]?.column ?? 'lat', g[0]?.lonColumn ?? 'lon'];
})();

/** Where the index reads from: table expressions of the release (api/releases/release.ts `tables`). */
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
  /** Per row position (newest order): lead id, received day, est_value (-Infinity for null; the value sorts), last_changed day. */
  ids: Int32Array;
  days: Int32Array;
  values: Float64Array;
  changed: Int32Array;
  /** Per `enum` / `multi` column, a bitset per value. */
  sets: Map<string, Map<string, Bitset>>;
  /** Per `flag` column: `<column>=true` and `<column>=false`, the rows where it is true / false. */
  flags: Map<string, Bitset>;
  /** Positions by (est_value DESC, id DESC), and each position's index in that order. */
  byValue: Permutation;
  /** Positions by (last_changed DESC, id DESC), and each position's index in that order. */
  byChanged: Permutation;
  /** Positions by id DESC (walked backwards by the cursor export), and each position's index in that order. */
  byId: Permutation;
  /** Per `range` / `date` column, its `RangeIndex` parts. */
  ranges: Map<string, RangeParts>;
  /** Per `key` column, its `KeyIndex` parts. */
  keys: Map<string, KeyIndexParts>;
  /** The k-d tree of the `geometry` filters. */
  geo: GeoIndexParts;
  search: SearchIndexParts | null;
  /**
   * Room for `SCRATCH_POOL_SETS` scratch sets (zeros, `scratchPool`): travelling in the pack, it
   * arrives in the kernel's memory beside the sets, so the passes over a page's scratch sets run
   * in WebAssembly too (api/engine/bitset-kernel.ts). Absent, scratch sets are allocated.
   */
  scratch?: Uint32Array;
}

/**
 * Scratch sets in the pool: more than a page takes (a filter's union per `multi` filter, a range's
 * prefix, an area's matches, `q`'s groups and terms, the AND and the value sort's ranks: 9 in
 * the engine tests' deepest page); a page past them allocates, and its passes over those run in JavaScript.
 */
const SCRATCH_POOL_SETS = 24;

/** Positions in the DESC order of a sort other than received date, and each position's rank in it. */
export interface Permutation {
  order: Int32Array;
  rankOf: Int32Array;
}

/** The sorts answered by walking positions: by received date (the positions themselves) or a permutation. */
type Walk = 'date' | 'value' | 'changed' | 'id';
interface WalkOrder {
  walk: Walk;
  forward: boolean;
}
const WALKS: Record<Exclude<LeadsSort, 'relevance' | 'distance'>, WalkOrder> = {
  newest: { walk: 'date', forward: true },
  oldest: { walk: 'date', forward: false },
  value_desc: { walk: 'value', forward: true },
  value_asc: { walk: 'value', forward: false },
  last_changed: { walk: 'changed', forward: true },
  last_changed_asc: { walk: 'changed', forward: false },
};
/** The range filter on the value sort's own column (`min_value` on `est_value`): it cuts the value walk short. */
const VALUE_FLOOR = FILTERS.find((d) => d.kind === 'range' && d.column === 'est_value')!;
/** The cursor export's order, id ascending (`exportRowsQuery`): the id permutation (id DESC) backwards. */
const ID_ORDER: WalkOrder = { walk: 'id', forward: false };

export interface LeadIndexOptions {
  /** Matched sets up to this size are scored lead by lead (see SearchIndex). */
  exhaustiveMax?: number;
  /**
   * A lead's search text by id (common/search-syntax.ts `searchDocText`: what the release's
   * search index was built from), for `q`'s phrases: the release's row store gives it
   * (`rowSearchText`, api/engine/row-store.ts). Without it a phrase query throws.
   */
  text?: (id: number) => string;
}

export class LeadIndex {
  readonly size: number;
  private readonly ids: Int32Array;
  private readonly days: Int32Array;
  private readonly values: Float64Array;
  private readonly changed: Int32Array;
  private readonly sets: Map<string, Map<string, Bitset>>;
  private readonly flags: Map<string, Bitset>;
  private readonly byValue: Permutation;
  private readonly byChanged: Permutation;
  private readonly byId: Permutation;
  private readonly ranges: Map<string, RangeIndex>;
  private readonly keys: Map<string, KeyIndex>;
  private readonly geo: GeoIndex;
  private readonly search: SearchIndex | null;
  /** The sets one `page` works with, lent and taken back (`ScratchSets`): none of them outlives the call. */
  private readonly scratch: ScratchSets;

  /** The counts of the sets the index keeps that requests asked for alone (`cardinality`). */
  private readonly counts = new WeakMap<Bitset, number>();

  /** The search text of the lead at a position (for phrases), from `LeadIndexOptions.text`. */
  private readonly textOf: ((pos: number) => string) | null;

  private readonly p: LeadIndexParts;
  constructor(p: LeadIndexParts, opts: LeadIndexOptions = {}) {
    this.p = p;
    this.size = p.ids.length;
    this.ids = p.ids;
    this.days = p.days;
    this.values = p.values;
    this.changed = p.changed;
    this.sets = p.sets;
    this.flags = p.flags;
    this.byValue = p.byValue;
    this.byChanged = p.byChanged;
    this.byId = p.byId;
    this.ranges = new Map([...p.ranges].map(([c, r]) => [c, new RangeIndex(r)]));
    this.keys = new Map([...p.keys].map(([c, k]) => [c, new KeyIndex(k)]));
    this.geo = new GeoIndex(p.geo);
    this.search = p.search ? new SearchIndex(p.search, p.ids, opts) : null;
    this.scratch = new ScratchSets(this.size, p.scratch);
    const text = opts.text;
    this.textOf = text ? (pos) => text(this.ids[pos]!) : null;
  }

  /** The parts (to move the index to another process). */
  parts(): LeadIndexParts {
    return this.p;
  }

  /** Read the release's leads (and search index) through DuckDB and build the index (`exhaustiveMax`: see SearchIndex). */
  static async load(db: ApiDb, src: LeadIndexSource, opts: LeadIndexOptions = {}): Promise<LeadIndex> {
    const cols = await readColumns(db, src.leads);
    const search = src.search ? await SearchIndex.load(db, src.search, positionsOf(cols.ids), cols.ids, opts) : null;
    return new LeadIndex(buildParts(cols, search?.parts() ?? null), opts);
  }

  /** One page of ids for a request (same semantics as `leadsPageQuery` + `leadsCountQuery`). */
  page(req: LeadsPageRequest): IndexPage {
    try {
      return this.pageOf(req);
    } finally {
      this.scratch.giveBack();
    }
  }

  /**
   * Up to `limit` leads matching `filters` in id order after `afterId` (same semantics as
   * `exportRowsQuery`: the cursor export's pages), and the total matching.
   */
  idPage(filters: LeadsFilters, afterId: number | null, limit: number): IndexPage {
    try {
      const after: LeadsPageRequest['after'] = afterId === null ? null : [afterId, afterId];
      return this.pageOf({ filters, sort: 'newest', limit, offset: 0, after }, ID_ORDER);
    } finally {
      this.scratch.giveBack();
    }
  }

  private pageOf(req: LeadsPageRequest, order?: WalkOrder): IndexPage {
    const filtered = this.filterSet(req.filters);
    let matched = filtered?.set ?? null;
    let total = filtered?.total ?? this.size;
    let terms: number[] = [];
    if (req.filters.q !== undefined) {
      // the leads `q` matches (every group of its words, phrases and prefixes), within the other filters
      const compiled = this.search ? this.search.compile(req.filters.q) : null;
      terms = compiled?.terms ?? [];
      const found = compiled ? this.search!.match(compiled, matched, this.textOf, this.scratch) : null;
      matched = found?.set ?? this.scratch.take();
      total = found?.total ?? 0;
    }
    if (req.sort === 'distance')
      return { rows: matched && req.filters.near ? this.distancePage(req, matched) : [], total };
    const rows: IndexRow[] =
      order || req.sort !== 'relevance'
        ? this.orderedPage(req, matched, total, order ?? WALKS[req.sort as keyof typeof WALKS])
        : this.search && matched
          ? this.search.top(terms, matched, total, req, this.scratch)
          : [];
    const near = req.filters.near;
    if (near) for (const r of rows) r.distance = servedDistance(this.geo.distance(near, r.pos));
    return { rows, total };
  }

  /**
   * A page by distance from `near` (the served distance, rounded to 0.1 m, then id): every matched
   * lead is within the radius, so the set is bounded by the circle; after the cursor's
   * (distance, id), sorted, sliced.
   */
  private distancePage(req: LeadsPageRequest, matched: Bitset): IndexRow[] {
    const near = req.filters.near!;
    const after = req.after;
    const ad = after ? Number(after[0]) : 0;
    const aid = after ? after[1] : 0;
    const rows: IndexRow[] = [];
    for (const pos of selectBits(matched, 0, 0, this.size, true)) {
      const d = servedDistance(this.geo.distance(near, pos));
      const id = this.ids[pos]!;
      if (after && (d < ad || (d === ad && id <= aid))) continue;
      rows.push({ id, sortValue: d, distance: d, pos });
    }
    rows.sort((a, b) => (a.sortValue as number) - (b.sortValue as number) || a.id - b.id);
    return rows.slice(req.offset, req.offset + req.limit);
  }

  /**
   * The rows passing every filter except `q` and how many they are, or null when there is no
   * filter: each filter of the table gives a set by the strategy of its kind (the index's own set
   * when one value or flag is asked, else one built in a scratch set), and the sets are ANDed
   * and counted in one pass (`andCount`). A single set the index keeps is used as it is, its
   * count remembered (`cardinality`); a single range's count is its cut.
   */
  private filterSet(f: LeadsFilters): Matched | null {
    const parts: Bitset[] = [];
    /** The count of the single part, when known without a pass (-1: not known). */
    let known = -1;
    const given = f as Record<string, unknown>;
    let areaDone = false;
    for (const d of FILTERS) {
      const v = given[d.name];
      if (v === undefined) continue;
      switch (d.kind) {
        case 'text':
          break; // q: the search index (`page`)
        case 'key':
          parts.push(this.keys.get(d.column)!.match(v as string, this.scratch.take()));
          known = -1;
          break;
        case 'geometry':
          // every area at once: the tree's candidates in the envelopes' intersection, each tested against all
          if (!areaDone) parts.push(this.geo.match(f as AreaFilters, this.scratch.take()));
          areaDone = true;
          known = -1;
          break;
        case 'enum':
        case 'multi': {
          const wanted = v as string[];
          if (wanted.length === 0) break;
          const m = this.sets.get(d.column)!;
          const found = wanted.map((x) => m.get(x)).filter((s): s is Bitset => s !== undefined);
          if (found.length <= 1) {
            const one = found[0] ?? this.scratch.take();
            parts.push(one);
            known = found.length === 0 ? 0 : this.cardinality(one);
            break;
          }
          const union = this.scratch.take(found[0]);
          for (let i = 1; i < found.length; i++) orInto(union, found[i]!);
          parts.push(union);
          known = -1;
          break;
        }
        case 'range': {
          const r = this.ranges.get(d.column)!;
          parts.push(r.atLeast(v as number, this.scratch.takeForWrite()));
          known = r.countAtLeast(v as number);
          break;
        }
        case 'date': {
          const r = this.ranges.get(d.column)!;
          const day = dayOf(v as string);
          const into = this.scratch.takeForWrite(); // a range's prefix is copied whole
          parts.push(d.bound === 'from' ? r.atLeast(day, into) : r.atMost(day, into));
          known = d.bound === 'from' ? r.countAtLeast(day) : r.countAtMost(day);
          break;
        }
        case 'flag': {
          const one = this.flags.get(`${d.column}=${v as boolean}`)!;
          parts.push(one);
          known = this.cardinality(one);
          break;
        }
      }
    }
    if (parts.length === 0) return null;
    if (parts.length === 1) return { set: parts[0]!, total: known >= 0 ? known : count(parts[0]!) };
    // the first built part is written over (it is the request's); else a fresh scratch set
    const into = parts.find((s) => this.scratch.lent(s)) ?? this.scratch.takeForWrite();
    return { set: into, total: andCount(into, parts) };
  }

  /** The number of rows in a set the index keeps (a value's, a flag's), counted once. */
  private cardinality(s: Bitset): number {
    let c = this.counts.get(s);
    if (c === undefined) this.counts.set(s, (c = count(s)));
    return c;
  }

  /**
   * Pages of the date, value and last-changed sorts. Positions are the newest order, so date pages
   * are the set bits of `matched` in order. The other sorts walk their permutation (DESC, id DESC)
   * and keep matched rows — unless the filter is selective and the page deep, when the walk would
   * visit ~(offset + limit)·n/total rows, or the walk runs past that budget (the matched rows lie
   * further along than their density says): then the matched rows' ranks in that permutation are
   * set in a bitset of their own, whose set bits in order are the page. A value walk under
   * `min_value` ends (or, ascending, starts) at the leads below it.
   */
  private orderedPage(
    req: LeadsPageRequest,
    matched: Bitset | null,
    total: number,
    { walk, forward }: WalkOrder,
  ): IndexRow[] {
    const n = this.size;
    // the value sort under a minimum value: the rows below it are the end of the walk's forward
    // order (value DESC), so the walk stops there (forward) or starts there (backward, value_asc)
    // instead of stepping over every cheaper lead
    const end = walk === 'value' ? this.valueCut(req.filters) : n;
    const from = Math.min(end, req.after ? this.afterKey(walk, forward, req.after) : forward ? 0 : n);
    let positions: number[];
    if (walk === 'date')
      positions = matched
        ? selectBits(matched, from, req.offset, req.limit, forward)
        : this.range(from, req.offset, req.limit, forward);
    else {
      const permutation = this.permutationOf(walk);
      const perm = permutation.order;
      // setting the matched rows' ranks costs about `total + n/32`; the walk, by the matched rows'
      // density, (offset + limit)·end/total steps — but filters that go with the sort's own order
      // (large schemes under value_asc) leave its first stretch empty: past that budget the walk
      // gives up for the ranks
      const budget = 2 * (total + n / 32);
      if (!matched) positions = this.range(from, req.offset, req.limit, forward).map((k) => perm[k]!);
      else {
        const walked =
          ((req.offset + req.limit) * end) / Math.max(total, 1) <= budget
            ? walkPage(perm, matched, from, end, forward, req, budget)
            : null;
        positions = walked ?? this.rankPage(matched, permutation, from, forward, req);
      }
    }
    const value = (pos: number): string | number =>
      walk === 'date'
        ? isoDay(this.days[pos]!)
        : walk === 'changed'
          ? isoDay(this.changed[pos]!)
          : walk === 'id'
            ? this.ids[pos]!
            : this.values[pos]!;
    return positions.map((pos) => ({ id: this.ids[pos]!, sortValue: value(pos), pos }));
  }

  /**
   * A page of `matched` in the order of `perm` by rank: the matched rows' ranks set in a bitset
   * of their own, whose set bits from `from` in the walk's direction are the page.
   */
  private rankPage(
    matched: Bitset,
    { order: perm, rankOf }: Permutation,
    from: number,
    forward: boolean,
    req: { offset: number; limit: number },
  ): number[] {
    const ranks = this.scratch.take();
    setRanks(ranks, matched, rankOf);
    return selectBits(ranks, from, req.offset, req.limit, forward).map((k) => perm[k]!);
  }

  /**
   * How many leads come first in the value sort's forward order (value DESC) and can match
   * `filters`: those at or above its minimum value (`min_value`, the range filter on the value
   * column), else all.
   */
  private valueCut(filters: LeadsFilters): number {
    const min = (filters as Record<string, unknown>)[VALUE_FLOOR.name] as number | undefined;
    return min === undefined ? this.size : this.ranges.get(VALUE_FLOOR.column)!.countAtLeast(min);
  }

  /** The permutation a walk other than by date follows. */
  private permutationOf(walk: Exclude<Walk, 'date'>): Permutation {
    return walk === 'value' ? this.byValue : walk === 'changed' ? this.byChanged : this.byId;
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
  private afterKey(walk: Walk, forward: boolean, after: readonly [string | number, number]): number {
    const n = this.size;
    const kv = walk === 'value' || walk === 'id' ? Number(after[0]) : dayOf(String(after[0]));
    const kid = after[1];
    const primary =
      walk === 'date' ? this.days : walk === 'value' ? this.values : walk === 'id' ? this.ids : this.changed;
    const perm = walk === 'date' ? null : this.permutationOf(walk).order;
    const at = perm ? (k: number): number => perm[k]! : (k: number): number => k;
    // In forward order (DESC, id DESC), "row ≤ key" holds for a prefix: forward pages start at
    // its end. Backward pages (ASC, id ASC) continue with the rows > key, i.e. before the first
    // row ≥ key in forward order.
    let lo = 0;
    let hi = n;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const pos = at(mid);
      const v = primary[pos]!;
      const before = forward
        ? v < kv || (v === kv && this.ids[pos]! < kid)
        : v < kv || (v === kv && this.ids[pos]! <= kid);
      if (before) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }
}

/**
 * A page of `matched` rows in the order of permutation `perm`, from order index `from` (forward:
 * up to `end`; backward: down to 0), after skipping `offset`; null when that takes more than
 * `budget` steps.
 */
function walkPage(
  perm: Int32Array,
  matched: Bitset,
  from: number,
  end: number,
  forward: boolean,
  req: { offset: number; limit: number },
  budget: number,
): number[] | null {
  const positions: number[] = [];
  let skip = req.offset;
  // order indices from..stop-1 (forward) or from-1 down to stop (backward); the walk's own end is end or 0
  const reach = Math.floor(budget);
  const stop = forward ? Math.min(end, from + reach) : Math.max(0, from - reach);
  const step = forward ? 1 : -1;
  for (let i = 0, k = forward ? from : from - 1, steps = Math.abs(stop - from); i < steps; i++, k += step) {
    if (positions.length === req.limit) break;
    const pos = perm[k]!;
    if (!hasBit(matched, pos)) continue;
    if (skip > 0) skip--;
    else positions.push(pos);
  }
  return positions.length === req.limit || stop === (forward ? end : 0) ? positions : null;
}

/** The index's parts from the leads' columns (and the search index's parts). */
function buildParts(cols: Columns, search: SearchIndexParts | null): LeadIndexParts {
  const n = cols.ids.length;
  const sets = new Map<string, Map<string, Bitset>>();
  for (const [column, values] of cols.sets) {
    const m = new Map<string, Bitset>();
    values.forEach((v, pos) => {
      for (const one of Array.isArray(v) ? v : [v]) {
        if (one === null) continue;
        let s = m.get(one);
        if (!s) m.set(one, (s = emptySet(n)));
        setBit(s, pos);
      }
    });
    sets.set(column, m);
  }
  const flags = new Map<string, Bitset>();
  for (const [column, v] of cols.flags) {
    const t = emptySet(n);
    const f = emptySet(n);
    v.forEach((b, pos) => (b === true ? setBit(t, pos) : b === false ? setBit(f, pos) : undefined));
    flags.set(`${column}=true`, t);
    flags.set(`${column}=false`, f);
  }
  const byValue = permutation(cols.ids, cols.values);
  const byChanged = permutation(cols.ids, cols.changed);
  const byId = permutation(cols.ids, cols.ids);
  const ranges = new Map<string, RangeParts>();
  for (const [column, v] of cols.ranges) ranges.set(column, RangeIndex.build(v));
  const keys = new Map<string, KeyIndexParts>();
  for (const [column, v] of cols.keys) keys.set(column, KeyIndex.build(v));
  return {
    ids: cols.ids,
    days: cols.days,
    values: cols.values,
    changed: cols.changed,
    sets,
    flags,
    byValue,
    byChanged,
    byId,
    ranges,
    keys,
    geo: GeoIndex.build(cols.lat, cols.lon),
    search,
    scratch: scratchPool(n, SCRATCH_POOL_SETS),
  };
}

/** Positions sorted by (key DESC, id DESC), and the rank of each position. */
function permutation(ids: Int32Array, key: ArrayLike<number>): Permutation {
  const order = Int32Array.from({ length: ids.length }, (_, i) => i);
  order.sort((a, b) => key[b]! - key[a]! || ids[b]! - ids[a]!);
  const rankOf = forKernel(new Int32Array(ids.length)); // read by the kernel's `ranks` (setRanks)
  order.forEach((pos, k) => (rankOf[pos] = k));
  return { order, rankOf };
}

/** The columns the index is built from, positions in newest order. */
interface Columns {
  ids: Int32Array;
  days: Int32Array;
  values: Float64Array;
  changed: Int32Array;
  /** `enum` / `multi` columns (a list column: an array per row). */
  sets: Map<string, (string | null | string[])[]>;
  flags: Map<string, (boolean | null)[]>;
  /** `range` / `date` columns as numbers (dates: days since 1970), NaN for null. */
  ranges: Map<string, Float64Array>;
  /** `key` columns. */
  keys: Map<string, (string | null)[]>;
  /** Coordinates (NaN for null). */
  lat: Float64Array;
  lon: Float64Array;
}

async function readColumns(db: ApiDb, leads: string): Promise<Columns> {
  const [{ n } = { n: 0 }] = await db.all<{ n: number }>(`SELECT count(*) AS n FROM ${leads}`);
  const setColumns = [...SET_COLUMNS];
  const rangeColumns = [...RANGE_COLUMNS];
  const cols: Columns = {
    ids: new Int32Array(n),
    days: new Int32Array(n),
    values: new Float64Array(n),
    changed: new Int32Array(n),
    sets: new Map(setColumns.map(([c]) => [c, new Array(n)])),
    flags: new Map(FLAG_COLUMNS.map((c) => [c, new Array(n)])),
    ranges: new Map(rangeColumns.map(([c]) => [c, new Float64Array(n)])),
    keys: new Map(KEY_COLUMNS.map((c) => [c, new Array(n)])),
    lat: new Float64Array(n),
    lon: new Float64Array(n),
  };
  const select = [
    'CAST(id AS INTEGER)',
    `CAST(received_date - DATE '1970-01-01' AS INTEGER)`,
    'CAST(est_value AS DOUBLE)',
    `CAST(last_changed - DATE '1970-01-01' AS INTEGER)`,
    ...setColumns.map(([c, list]) => (list ? `array_to_string(${c}, chr(31))` : c)),
    ...FLAG_COLUMNS,
    ...rangeColumns.map(([c, kind]) =>
      kind === 'date' ? `CAST(${c} - DATE '1970-01-01' AS DOUBLE)` : `CAST(${c} AS DOUBLE)`,
    ),
    ...KEY_COLUMNS.map((c) => `CAST(${c} AS VARCHAR)`),
    ...GEO_COLUMNS.map((c) => `CAST(${c} AS DOUBLE)`),
  ];
  const setsAt = 4;
  const flagsAt = setsAt + setColumns.length;
  const rangesAt = flagsAt + FLAG_COLUMNS.length;
  const setArrays = setColumns.map(([c, list]) => [cols.sets.get(c)!, list] as const);
  const flagArrays = FLAG_COLUMNS.map((c) => cols.flags.get(c)!);
  const rangeArrays = rangeColumns.map(([c]) => cols.ranges.get(c)!);
  const keysAt = rangesAt + rangeColumns.length;
  const keyArrays = KEY_COLUMNS.map((c) => cols.keys.get(c)!);
  const geoAt = keysAt + KEY_COLUMNS.length;
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
    `SELECT ${select.join(', ')}\n       FROM ${leads} ORDER BY received_date DESC, id DESC`,
    [],
    (c, rows) => {
      for (let r = 0; r < rows; r++, at++) {
        if (at >= n) throw new Error('the leads table grew while the index was built');
        cols.ids[at] = c[0]![r] as number;
        cols.days[at] = c[1]![r] as number;
        cols.values[at] = (c[2]![r] as number | null) ?? -Infinity;
        cols.changed[at] = c[3]![r] as number;
        for (let i = 0; i < setArrays.length; i++) {
          const [arr, list] = setArrays[i]!;
          const v = c[setsAt + i]![r] as string | null;
          arr[at] = list ? (v ? v.split('\u001f').map((x) => intern(x)!) : []) : intern(v);
        }
        for (let i = 0; i < flagArrays.length; i++) flagArrays[i]![at] = c[flagsAt + i]![r] as boolean | null;
        for (let i = 0; i < rangeArrays.length; i++)
          rangeArrays[i]![at] = (c[rangesAt + i]![r] as number | null) ?? NaN;
        for (let i = 0; i < keyArrays.length; i++) keyArrays[i]![at] = c[keysAt + i]![r] as string | null;
        cols.lat[at] = (c[geoAt]![r] as number | null) ?? NaN;
        cols.lon[at] = (c[geoAt + 1]![r] as number | null) ?? NaN;
      }
    },
  );
  return cols;
}

export type { LeadsSort };
