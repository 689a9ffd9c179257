/**
 * The in-memory detail index of a release: everything `GET /v1/leads/{id}` adds to the lead (its
 * company-360 sections) answered from typed arrays and small maps, so a detail read makes no
 * DuckDB query (it made seven: ~22 ms of CPU). Built once per release at load, read-only after.
 *
 *  - area comparables: the release's sales sorted by area (county + Eircode routing key, and
 *    county alone) then date; a lead's 24-month window is two binary searches, the median two
 *    order-statistic queries on the area's price ranks (api/engine/range-quantile.ts: O(log n)
 *    whatever the window's length), the recent sales the window's last rows;
 *  - nearby leads: the pipeline's `lead_neighbours`, nearest first, per lead;
 *  - suppliers per county; companies by CRO number and each company's newest filings as JSON
 *    text off the JS heap (`KeyedJson`).
 *
 * Semantics are those of the SQL builders in api/query/lead-detail-query.ts (the reference);
 * test/api/engine/detail-index.test.ts checks both give the same sections for many leads.
 */
import { sqlString, type ApiDb, type Row } from '../duckdb/db.ts';
import {
  COMPANY_COLUMNS,
  COMPARABLES_WINDOW_MONTHS,
  FILINGS_MAX,
  RECENT_SALES_MAX,
  SUPPLIERS_MAX,
} from '../query/lead-detail-query.ts';
import type { ReleaseTables } from '../releases/tables.ts';
import { buildRangeQuantile, RangeQuantile, type RangeQuantileParts } from './range-quantile.ts';

type Tables = Pick<ReleaseTables, 'lead_neighbours' | 'suppliers' | 'companies' | 'filings'>;

/** The area a lead's comparables come from (see `areaWhere` in lead-detail-query.ts). */
export interface LeadArea {
  county: string;
  eircode_routing_key: string | null;
  received_date: string;
}

export interface Neighbour {
  neighbour_id: number;
  distance_m: number;
}

const DAY_MS = 86_400_000;
const dayOf = (iso: string): number => Math.round(Date.parse(`${iso}T00:00:00Z`) / DAY_MS);
const isoDay = (day: number): string => new Date(day * DAY_MS).toISOString().slice(0, 10);

/** First day of the comparables window: `received - INTERVAL n MONTH`, clamped to the month's end as DuckDB does. */
export function windowStartDay(receivedIso: string, months = COMPARABLES_WINDOW_MONTHS): number {
  const [y, m, d] = receivedIso.split('-').map(Number) as [number, number, number];
  const total = y * 12 + (m - 1) - months;
  const year = Math.floor(total / 12);
  const month = total - year * 12;
  const last = new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
  return Math.round(Date.UTC(year, month, Math.min(d, last)) / DAY_MS);
}

/** Sales held as columns (a position per sale). */
interface SalesParts {
  days: Int32Array;
  prices: Float64Array;
  /** 0 false, 1 true, 2 null. */
  isNew: Uint8Array;
  descriptions: (string | null)[];
  descriptionCode: Uint16Array;
  /** Address of position p: `addressBytes[addressOffsets[p], addressOffsets[p+1])` (UTF-8). */
  addressOffsets: Uint32Array;
  addressBytes: Buffer;
  /** Positions per area key (`county` and `county\u0000routing key`), each sorted by (day, sale_id DESC). */
  areas: Map<string, Int32Array>;
  /** The distinct prices, ascending: a price's rank is its index here; a null price ranks `priceValues.length`. */
  priceValues: Float64Array;
  /** Per area key, the price ranks of its positions in the area's order, for range order statistics. */
  priceRanks: Map<string, RangeQuantileParts>;
}

/** Everything a `DetailIndex` is made of (a release loader can move it between processes). */
export interface DetailIndexParts {
  sales: SalesParts;
  /** 1 where the sale's address is null. */
  nullAddress: Uint8Array;
  neighbours: Neighbours;
  suppliersByCounty: Map<string, Row[]>;
  /** Companies and each company's newest filings by CRO number, as JSON text off the JS heap. */
  companies: KeyedJson;
  filingsByCompany: KeyedJson;
}

/**
 * JSON values by key, held as UTF-8 text in one buffer (off the JS heap: ~85,000 company and
 * filing rows as objects are ~19 MB of live heap, which V8's old space then grows to 2–3× before
 * collecting). `keys` are sorted; value i is `bytes[offsets[i], offsets[i+1])`.
 */
export interface KeyedJson {
  keys: string[];
  offsets: Uint32Array;
  bytes: Buffer;
}

/** Hold `values` (by key) as `KeyedJson`. */
export function keyedJson(values: ReadonlyMap<string, unknown>): KeyedJson {
  const keys = [...values.keys()].sort();
  const texts = keys.map((k) => JSON.stringify(values.get(k)));
  const offsets = new Uint32Array(keys.length + 1);
  texts.forEach((t, i) => (offsets[i + 1] = offsets[i]! + Buffer.byteLength(t)));
  return { keys, offsets, bytes: Buffer.from(texts.join('')) };
}

/** The value of `key` (a fresh copy), or undefined. */
export function keyedValue(j: KeyedJson, key: string): unknown {
  let lo = 0;
  let hi = j.keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (j.keys[mid]! < key) lo = mid + 1;
    else hi = mid;
  }
  return lo < j.keys.length && j.keys[lo] === key
    ? JSON.parse(j.bytes.toString('utf8', j.offsets[lo]!, j.offsets[lo + 1]!))
    : undefined;
}

export class DetailIndex {
  /** Scratch for the window's prices (queries are synchronous). */
  private readonly priceRanks: Map<string, RangeQuantile>;
  private readonly p: DetailIndexParts;
  constructor(p: DetailIndexParts) {
    this.p = p;
    this.priceRanks = new Map([...p.sales.priceRanks].map(([key, parts]) => [key, new RangeQuantile(parts)]));
  }

  /** The parts (to move the index to another process). */
  parts(): DetailIndexParts {
    return this.p;
  }

  private address(pos: number): string {
    return this.p.sales.addressBytes.toString(
      'utf8',
      this.p.sales.addressOffsets[pos]!,
      this.p.sales.addressOffsets[pos + 1]!,
    );
  }

  /** Build from the release's tables and its sales Parquet file. */
  static async load(db: ApiDb, t: Tables, salesFile: string): Promise<DetailIndex> {
    const { sales, nullAddress } = await loadSales(db, salesFile);
    const neighbours = await loadNeighbours(db, t.lead_neighbours);
    const suppliersByCounty = new Map<string, Row[]>();
    for (const s of await db.all(
      `SELECT company_number, company_name, vertical, county, nace_code, projects_as_builder FROM ${t.suppliers}
        ORDER BY county, projects_as_builder DESC, company_number, vertical`,
    )) {
      const county = s['county'] as string;
      let list = suppliersByCounty.get(county);
      if (!list) suppliersByCounty.set(county, (list = []));
      list.push(s);
    }
    const companies = new Map<string, Row>();
    for (const c of await db.all(`SELECT ${COMPANY_COLUMNS.join(', ')} FROM ${t.companies}`)) {
      if (!companies.has(c['company_number'] as string)) companies.set(c['company_number'] as string, c);
    }
    const filingsByCompany = new Map<string, Row[]>();
    for (const f of await db.all(
      `SELECT company_number, document_number, filing_type, description, filing_date, effective_date FROM ${t.filings}
        QUALIFY row_number() OVER (PARTITION BY company_number ORDER BY filing_date DESC, document_number DESC NULLS LAST) <= ${FILINGS_MAX}
        ORDER BY company_number, filing_date DESC, document_number DESC NULLS LAST`,
    )) {
      const no = f['company_number'] as string;
      let list = filingsByCompany.get(no);
      if (!list) filingsByCompany.set(no, (list = []));
      list.push(f);
    }
    return new DetailIndex({
      sales,
      nullAddress,
      neighbours,
      suppliersByCounty,
      companies: keyedJson(companies),
      filingsByCompany: keyedJson(filingsByCompany),
    });
  }

  /** The positions of the lead's comparables window (oldest first). */
  private window(lead: LeadArea): { key: string; area: Int32Array; from: number; to: number } {
    const key = lead.eircode_routing_key ? `${lead.county}\u0000${lead.eircode_routing_key}` : lead.county;
    const area = this.p.sales.areas.get(key);
    if (!area) return { key, area: new Int32Array(0), from: 0, to: 0 };
    const days = this.p.sales.days;
    const lowerBound = (day: number): number => {
      let lo = 0;
      let hi = area.length;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (days[area[mid]!]! < day) lo = mid + 1;
        else hi = mid;
      }
      return lo;
    };
    return {
      key,
      area,
      from: lowerBound(windowStartDay(lead.received_date)),
      to: lowerBound(dayOf(lead.received_date)),
    };
  }

  /** Count and median price of the window's sales (`salesSummaryQuery`). */
  salesSummary(lead: LeadArea): { sales_count: number; median_price_eur: number | null } {
    const { key, from, to } = this.window(lead);
    const ranks = this.priceRanks.get(key);
    const values = this.p.sales.priceValues;
    // null prices rank last (values.length): the window's priced sales are those ranked below
    const m = ranks && to > from ? ranks.countBelow(from, to, values.length) : 0;
    const price = (k: number): number => values[ranks!.kth(from, to, k)]!;
    let median: number | null = null;
    if (m % 2 === 1) median = price((m - 1) / 2);
    else if (m > 0) median = medianOfTwo(price(m / 2 - 1), price(m / 2));
    return { sales_count: to - from, median_price_eur: median };
  }

  /** The window's newest sales, newest first (`recentSalesQuery`). */
  recentSales(lead: LeadArea): Row[] {
    const { area, from, to } = this.window(lead);
    const out: Row[] = [];
    const s = this.p.sales;
    for (let k = to - 1; k >= from && out.length < RECENT_SALES_MAX; k--) {
      const pos = area[k]!;
      out.push({
        date_of_sale: isoDay(s.days[pos]!),
        address: this.p.nullAddress[pos] ? null : this.address(pos),
        price_eur: Number.isNaN(s.prices[pos]!) ? null : s.prices[pos]!,
        is_new_dwelling: s.isNew[pos] === 2 ? null : s.isNew[pos] === 1,
        description: s.descriptions[s.descriptionCode[pos]!] ?? null,
      });
    }
    return out;
  }

  /** The lead's precomputed nearest leads (ids and distances), nearest first. */
  nearby(id: number): Neighbour[] {
    const nb = this.p.neighbours;
    const slot = Number.isInteger(id) && id >= 0 && id < nb.start.length - 1 ? id : -1;
    if (slot < 0) return [];
    const out: Neighbour[] = [];
    for (let k = nb.start[slot]!; k < nb.start[slot + 1]!; k++)
      out.push({ neighbour_id: nb.ids[k]!, distance_m: nb.distances[k]! });
    return out;
  }

  /** Suppliers of the county in any of the verticals, top by projects (`suppliersQuery`). */
  suppliers(county: string, verticals: readonly string[]): Row[] {
    if (verticals.length === 0) return [];
    const wanted = new Set(verticals);
    const out: Row[] = [];
    for (const s of this.p.suppliersByCounty.get(county) ?? []) {
      if (!wanted.has(s['vertical'] as string)) continue;
      out.push({ ...s });
      if (out.length === SUPPLIERS_MAX) break;
    }
    return out;
  }

  /** One company by CRO number (`companyQuery`), a fresh object. */
  company(companyNumber: string): Row | null {
    return (keyedValue(this.p.companies, companyNumber) as Row | undefined) ?? null;
  }

  /** A company's newest filings (`filingsQuery`), fresh objects. */
  filings(companyNumber: string): Row[] {
    return (keyedValue(this.p.filingsByCompany, companyNumber) as Row[] | undefined) ?? [];
  }
}

/** Precomputed nearest leads: those of lead id `i` are [start[i], start[i+1]) of ids / distances. */
interface Neighbours {
  start: Int32Array;
  ids: Int32Array;
  distances: Float64Array;
}

async function loadNeighbours(db: ApiDb, table: string): Promise<Neighbours> {
  const [{ n, max } = { n: 0, max: -1 }] = await db.all<{ n: number; max: number | null }>(
    `SELECT count(*) AS n, CAST(coalesce(max(lead_id), -1) AS INTEGER) AS max FROM ${table}`,
  );
  const ids = new Int32Array(n);
  const distances = new Float64Array(n);
  const counts = new Int32Array(Math.max(0, max ?? -1) + 2);
  let at = 0;
  await db.columns(
    `SELECT CAST(lead_id AS INTEGER), CAST(neighbour_id AS INTEGER), CAST(distance_m AS DOUBLE) FROM ${table} WHERE lead_id >= 0 ORDER BY lead_id, rank`,
    [],
    (c, rows) => {
      for (let r = 0; r < rows; r++, at++) {
        counts[(c[0]![r] as number) + 1]!++;
        ids[at] = c[1]![r] as number;
        distances[at] = c[2]![r] as number;
      }
    },
  );
  for (let i = 1; i < counts.length; i++) counts[i]! += counts[i - 1]!;
  return { start: counts, ids: ids.subarray(0, at), distances: distances.subarray(0, at) };
}

/**
 * The median of an even count as DuckDB computes it for DECIMAL(14,2) prices: the mean of the
 * two middle values, in cents, truncated to a whole cent.
 */
function medianOfTwo(a: number, b: number): number {
  const cents = Math.trunc((Math.round(a * 100) + Math.round(b * 100)) / 2);
  return cents / 100;
}

/**
 * The property sales of the release as columns: one position per sale with a date and a county,
 * in file order; the positions of each area sorted by (day, sale_id DESC); each area's price
 * ranks for the window medians.
 */
async function loadSales(db: ApiDb, file: string): Promise<{ sales: SalesParts; nullAddress: Uint8Array }> {
  const sales = `read_parquet(${sqlString(file)}, file_row_number = true)`;
  const [{ n } = { n: 0 }] = await db.all<{ n: number }>(`SELECT count(*) AS n FROM ${sales}`);
  const s: SalesParts = {
    days: new Int32Array(n),
    prices: new Float64Array(n),
    isNew: new Uint8Array(n),
    descriptions: [],
    descriptionCode: new Uint16Array(n),
    addressOffsets: new Uint32Array(n + 1),
    addressBytes: Buffer.alloc(0),
    areas: new Map(),
    priceValues: new Float64Array(0),
    priceRanks: new Map(),
  };
  const nullAddress = new Uint8Array(n);
  const sidRank = await saleIdRanks(db, sales, n);
  const rows = await readSaleRows(db, sales, n, s, nullAddress);
  const { at, fileRow } = rows;
  for (let i = 0; i < at; i++) fileRow[i] = sidRank[fileRow[i]!]!;
  sortIntoAreas(s, { ...rows, rankOf: fileRow }); // position → rank of its sale_id
  rankPricesByArea(s, at);
  return { sales: s, nullAddress };
}

/**
 * The sale ids' rank (ties within a day are broken by sale_id DESC), by file row: the window
 * sorts only these two narrow columns.
 */
async function saleIdRanks(db: ApiDb, sales: string, n: number): Promise<Int32Array> {
  const sidRank = new Int32Array(n);
  await db.columns(
    `SELECT CAST(file_row_number AS INTEGER), CAST(dense_rank() OVER (ORDER BY sale_id DESC) AS INTEGER) FROM ${sales}`,
    [],
    (c, rows) => {
      for (let r = 0; r < rows; r++) sidRank[c[0]![r] as number] = c[1]![r] as number;
    },
  );
  return sidRank;
}

/** The sales read into `s` by position: `at` positions, each one's county and routing key as place codes, and its file row. */
interface SaleRows {
  at: number;
  countyOf: Int32Array;
  rkOf: Int32Array;
  placeNames: string[];
  fileRow: Int32Array;
}

/**
 * The wide rows in file order, with no sort in DuckDB (it would hold them all), into the columns
 * of `s` (positions are sorted into areas after); `nullAddress` marks null addresses.
 */
async function readSaleRows(
  db: ApiDb,
  sales: string,
  n: number,
  s: SalesParts,
  nullAddress: Uint8Array,
): Promise<SaleRows> {
  const descriptionCodes = new Map<string | null, number>();
  // County and routing key as codes (the strings of a chunk are garbage at once).
  const places = new Map<string, number>();
  const placeNames: string[] = [];
  const code = (v: string | null): number => {
    if (v === null) return -1;
    let c = places.get(v);
    if (c === undefined) {
      places.set(v, (c = placeNames.length));
      placeNames.push(v);
    }
    return c;
  };
  const countyOf = new Int32Array(n);
  const rkOf = new Int32Array(n);
  let bytes = Buffer.allocUnsafe(Math.max(1024, n * 48));
  let used = 0;
  let at = 0;
  const fileRow = new Int32Array(n);
  await db.columns(
    `SELECT county, eircode_routing_key, CAST(date_of_sale - DATE '1970-01-01' AS INTEGER), CAST(price_eur AS DOUBLE), is_new_dwelling,
            description, address, CAST(file_row_number AS INTEGER)
       FROM ${sales} WHERE date_of_sale IS NOT NULL AND county IS NOT NULL`,
    [],
    (c, rows) => {
      for (let r = 0; r < rows; r++, at++) {
        countyOf[at] = code(c[0]![r] as string);
        rkOf[at] = code(c[1]![r] as string | null);
        s.days[at] = c[2]![r] as number;
        s.prices[at] = (c[3]![r] as number | null) ?? NaN;
        const isNew = c[4]![r] as boolean | null;
        s.isNew[at] = isNew === null ? 2 : isNew ? 1 : 0;
        const d = c[5]![r] as string | null;
        let dc = descriptionCodes.get(d);
        if (dc === undefined) {
          descriptionCodes.set(d, (dc = s.descriptions.length));
          s.descriptions.push(d);
        }
        s.descriptionCode[at] = dc;
        const addr = c[6]![r] as string | null;
        if (addr === null) nullAddress[at] = 1;
        else {
          const len = Buffer.byteLength(addr);
          if (used + len > bytes.length) {
            const bigger = Buffer.allocUnsafe(Math.max(bytes.length * 2, used + len));
            bytes.copy(bigger, 0, 0, used);
            bytes = bigger;
          }
          used += bytes.write(addr, used);
        }
        s.addressOffsets[at + 1] = used;
        fileRow[at] = c[7]![r] as number;
      }
    },
  );
  s.addressBytes = Buffer.from(bytes.subarray(0, used));
  return { at, countyOf, rkOf, placeNames, fileRow };
}

/** Areas: positions by (county, routing key) and by county, each sorted by (day, sale_id DESC). */
function sortIntoAreas(s: SalesParts, rows: SaleRows & { rankOf: Int32Array }): void {
  const { at, countyOf, rkOf, placeNames, rankOf } = rows;
  const byDay = (a: number, b: number): number => s.days[a]! - s.days[b]! || rankOf[a]! - rankOf[b]!;
  const order = Int32Array.from({ length: at }, (_, i) => i).sort(
    (a, b) => countyOf[a]! - countyOf[b]! || rkOf[a]! - rkOf[b]! || byDay(a, b),
  );
  let countyStart = 0;
  let rkStart = 0;
  for (let i = 1; i <= at; i++) {
    const a = order[i - 1]!;
    const b = i < at ? order[i]! : -1;
    const countyChanged = b < 0 || countyOf[b] !== countyOf[a];
    if (countyChanged || rkOf[b] !== rkOf[a]) {
      if (rkOf[a]! >= 0)
        s.areas.set(`${placeNames[countyOf[a]!]}\u0000${placeNames[rkOf[a]!]}`, order.slice(rkStart, i));
      rkStart = i;
    }
    if (countyChanged) {
      s.areas.set(placeNames[countyOf[a]!]!, order.slice(countyStart, i).sort(byDay));
      countyStart = i;
    }
  }
}

/** Price ranks per area, for the window medians. */
function rankPricesByArea(s: SalesParts, at: number): void {
  const prices = s.prices.subarray(0, at);
  s.priceValues = Float64Array.from(new Set(prices.filter((p) => !Number.isNaN(p)))).sort();
  const rankOfPrice = new Map<number, number>();
  s.priceValues.forEach((p, i) => rankOfPrice.set(p, i));
  const nullRank = s.priceValues.length;
  for (const [key, area] of s.areas) {
    const ranks = new Uint32Array(area.length);
    for (let k = 0; k < area.length; k++) ranks[k] = rankOfPrice.get(s.prices[area[k]!]!) ?? nullRank;
    s.priceRanks.set(key, buildRangeQuantile(ranks));
  }
}
