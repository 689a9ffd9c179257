/**
 * The `analytics` stage of the refresh: market intelligence built from the release's own inputs.
 *
 *   sales (private staging copy) → repeat-sale pairs (DuckDB) → WRS price index per area (JS)
 *   sales + RTB rents            → gross yields by area, dwelling class and quarter
 *   leads.parquet + price index  → emerging zones (growth of applications, commencements, prices)
 *   WPM28 material indices       → material-cost levels and year-on-year change
 *
 * Each table is validated against its schema in `schemas/` and written as Parquet next to the
 * other release tables. Nothing here holds personal data: the pairs never leave DuckDB.
 */
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import type { Db } from '../lib/duckdb.ts';
import { sqlString } from '../lib/duckdb.ts';
import { columnsFromSchema, writeTable, type TableSpec } from '../release/tables.ts';
import type { MaterialRow, RentRow } from '../types.ts';
import type { Validators } from '../validate.ts';
import { pairCellsSql, pairCountsSql, pairsSql, salesFunnelSql, PAIR_RULES, quarterOf } from './pairs.ts';
import { readIntelSalesSql } from './sales-input.ts';
import { repeatSalesIndex, type PairCell } from './wrs.ts';

/** A quarter point with fewer pairs than this is flagged `low_sample`. */
export const LOW_SAMPLE_PAIRS = 30;
/** Yields need at least this many sales behind the typical price. */
export const MIN_YIELD_SALES = 10;
const NATIONAL = 'Ireland';

export interface AnalyticsInput {
  /** The private sales staging file (pipeline/intel/sales-input.ts); removed once read. */
  salesPath: string;
  /** The release's leads table, for emerging zones (absent → no zones). */
  leadsParquet: string | null;
  rents: readonly RentRow[];
  materials: readonly MaterialRow[];
  /** The release's as-of date (YYYY-MM-DD). */
  asOf: string;
  buildDir: string;
  validators: Validators;
}

export interface AnalyticsSummary {
  tables: Record<'price_index' | 'yields' | 'emerging_zones' | 'material_costs', number>;
  /** What happened to the sales and pairs (for the manifest and the docs). */
  pairs: {
    sales: number;
    excluded_sales: Record<string, number>;
    eligible_sales: number;
    pairs_used: number;
    homes_used: number;
    excluded_pairs: Record<string, number>;
  };
}

/** `8040` → `2010Q1`. */
export const quarterLabel = (q: number): string => `${Math.floor(q / 4)}Q${(q % 4) + 1}`;
/** `8040` → `2010-01-01`. */
export const quarterStart = (q: number): string =>
  `${Math.floor(q / 4)}-${String((q % 4) * 3 + 1).padStart(2, '0')}-01`;
/** `2010-05-17` → 8041. */
export const quarterNumber = (iso: string): number =>
  Number(iso.slice(0, 4)) * 4 + Math.floor((Number(iso.slice(5, 7)) - 1) / 3);

const round = (x: number, d: number): number => Math.round(x * 10 ** d) / 10 ** d;

/** Run the stage: build, validate and write the four analytics tables. */
export async function runAnalytics(db: Db, input: AnalyticsInput): Promise<AnalyticsSummary> {
  await db.run(`CREATE OR REPLACE TEMP TABLE intel_sales AS SELECT * FROM ${readIntelSalesSql(input.salesPath)}`);
  await rm(input.salesPath, { force: true });
  const [funnel] = await db.all<Record<string, number>>(salesFunnelSql('intel_sales'));
  await db.run(pairsSql('intel_sales'));
  const outcomes = await db.all<{ outcome: string; pairs: number; homes: number }>(pairCountsSql());
  const cells = await db.all<{ county: string | null; a: number; b: number; n: number; sy: number; syy: number }>(
    pairCellsSql(),
  );
  await db.run('DROP TABLE intel_pairs');

  const index = priceIndexRows(cells);
  const typical = await db.all<{ county: string | null; dwelling: string | null; q: number; price: number; n: number }>(
    typicalPriceSql('intel_sales'),
  );
  await db.run('DROP TABLE intel_sales');
  const yields = yieldRows(typical, input.rents);
  const zones =
    input.leadsParquet && existsSync(input.leadsParquet)
      ? emergingZoneRows(await db.all(zoneCountsSql(input.leadsParquet), [input.asOf]), index, input.asOf)
      : [];
  const materials = materialCostRows(input.materials);

  const tables = {
    price_index: await write(db, input, 'price_index', 'price-index-point', 'area, period_start', index),
    yields: await write(db, input, 'yields', 'rental-yield', 'area, property_type, period_start', yields),
    emerging_zones: await write(db, input, 'emerging_zones', 'emerging-zone', 'rank', zones),
    material_costs: await write(db, input, 'material_costs', 'material-cost', 'material, month', materials),
  };
  const used = outcomes.find((o) => o.outcome === 'used');
  const f = funnel ?? {};
  return {
    tables,
    pairs: {
      sales: f['sales'] ?? 0,
      excluded_sales: {
        not_full_market_price: f['not_full_market_price'] ?? 0,
        new_dwelling: f['new_dwelling'] ?? 0,
        below_minimum_price: f['below_minimum_price'] ?? 0,
        no_address: f['no_address'] ?? 0,
        ambiguous_home: f['ambiguous_home'] ?? 0,
      },
      eligible_sales: f['eligible'] ?? 0,
      pairs_used: used?.pairs ?? 0,
      homes_used: used?.homes ?? 0,
      excluded_pairs: Object.fromEntries(outcomes.filter((o) => o.outcome !== 'used').map((o) => [o.outcome, o.pairs])),
    },
  };
}

async function write(
  db: Db,
  input: AnalyticsInput,
  name: string,
  kind: Parameters<Validators['validate']>[0],
  orderBy: string,
  rows: Record<string, unknown>[],
): Promise<number> {
  for (const [i, r] of rows.entries()) {
    const problems = input.validators.validate(kind, r);
    if (problems.length)
      throw new Error(`analytics table ${name} row ${i} failed schema validation: ${problems.join('; ')}`);
  }
  const spec: TableSpec = { name, columns: columnsFromSchema(kind), orderBy, rowGroupRows: 100_000 };
  return writeTable(db, input.buildDir, spec, rows);
}

/** The index rows of every area with pairs: the national series first, then each county. */
export function priceIndexRows(
  cells: readonly { county: string | null; a: number; b: number; n: number; sy: number; syy: number }[],
): Record<string, unknown>[] {
  const byArea = new Map<string, PairCell[]>();
  for (const c of cells) {
    const area = c.county ?? NATIONAL;
    let list = byArea.get(area);
    if (!list) byArea.set(area, (list = []));
    list.push({ a: c.a, b: c.b, n: c.n, sy: c.sy, syy: c.syy });
  }
  const out: Record<string, unknown>[] = [];
  const areas = [...byArea.keys()].sort((x, y) => (x === NATIONAL ? -1 : y === NATIONAL ? 1 : x < y ? -1 : 1));
  for (const area of areas) {
    const r = repeatSalesIndex(byArea.get(area)!);
    if (!r) continue;
    for (const p of r.points) {
      const level = 100 * Math.exp(p.log_index);
      out.push({
        area,
        county: area === NATIONAL ? null : area,
        quarter: quarterLabel(p.period),
        period_start: quarterStart(p.period),
        index_value: round(level, 3),
        std_error: round(level * p.std_error, 3),
        ci_low: round(100 * Math.exp(p.log_index - 1.96 * p.std_error), 3),
        ci_high: round(100 * Math.exp(p.log_index + 1.96 * p.std_error), 3),
        pairs: p.pairs,
        low_sample: p.pairs < LOW_SAMPLE_PAIRS,
        base_quarter: quarterLabel(r.base),
      });
    }
  }
  return out;
}

/**
 * SQL: median price and count of the yield-eligible sales (full market price, second-hand, at
 * least the pair matcher's minimum price) over the four quarters ending in each quarter `q`, per
 * county (NULL = national) and dwelling class (NULL = all). A sale counts in its own quarter and
 * the three after it; quarters after the last sale are dropped.
 */
export function typicalPriceSql(sales: string): string {
  return `WITH s AS (
  SELECT county, dwelling, ${quarterOf('date_of_sale')} AS q, price_cents FROM ${sales}
  WHERE market AND second_hand AND price_cents >= ${PAIR_RULES.minPriceCents}
),
w AS (SELECT county, dwelling, q + k AS q, price_cents FROM s, range(0, 4) AS t(k) WHERE q + k <= (SELECT max(q) FROM s))
SELECT county, dwelling, q, median(price_cents) / 100.0 AS price, count(*)::BIGINT AS n
FROM w GROUP BY GROUPING SETS ((county, dwelling, q), (county, q), (dwelling, q), (q))`;
}

/** Join the typical prices with the RTB rents (all bedroom counts, the State and the counties). */
export function yieldRows(
  typical: readonly { county: string | null; dwelling: string | null; q: number; price: number; n: number }[],
  rents: readonly RentRow[],
): Record<string, unknown>[] {
  const rentCells = new Map<string, { sum: number; n: number }>();
  for (const r of rents) {
    if (!r.all_bedrooms) continue;
    const area = r.national ? NATIONAL : r.county; // the adapter sets county only for a bare county name
    if (!area) continue;
    const key = `${area}|${r.dwelling}|${quarterNumber(r.period_start)}`;
    const c = rentCells.get(key) ?? { sum: 0, n: 0 };
    c.sum += r.rent_eur;
    c.n++;
    rentCells.set(key, c);
  }
  const out: Record<string, unknown>[] = [];
  for (const t of typical) {
    if (t.n < MIN_YIELD_SALES || !(t.price > 0)) continue;
    const area = t.county ?? NATIONAL;
    const dwelling = t.dwelling ?? 'all';
    const rent = rentCells.get(`${area}|${dwelling}|${t.q}`);
    if (!rent) continue;
    const monthly = rent.sum / rent.n;
    out.push({
      area,
      county: t.county,
      property_type: dwelling,
      quarter: quarterLabel(t.q),
      period_start: quarterStart(t.q),
      monthly_rent_eur: round(monthly, 2),
      rent_cells: rent.n,
      typical_price_eur: round(t.price, 2),
      sales: t.n,
      gross_yield_pct: round(((monthly * 12) / t.price) * 100, 2),
    });
  }
  const key = (r: Record<string, unknown>): string =>
    `${r.area === NATIONAL ? '0' : '1'}${String(r.area)}|${String(r.property_type)}|${String(r.quarter)}`;
  return out.sort((a, b) => (key(a) < key(b) ? -1 : 1));
}

/**
 * SQL (one bound parameter: the as-of date): per county, planning applications received and
 * commencements in the 12 months to the date and in the 12 months before.
 */
export function zoneCountsSql(leadsParquet: string): string {
  const win = (col: string, fromMonths: number, toMonths: number): string =>
    `count(*) FILTER (WHERE ${col} > CAST($1 AS DATE) - INTERVAL ${fromMonths} MONTH AND ${col} <= CAST($1 AS DATE) - INTERVAL ${toMonths} MONTH)::BIGINT`;
  return `SELECT county,
  ${win('received_date', 12, 0)} AS applications_12m,
  ${win('received_date', 24, 12)} AS applications_prev_12m,
  ${win('commencement_date', 12, 0)} AS commencements_12m,
  ${win('commencement_date', 24, 12)} AS commencements_prev_12m
FROM read_parquet(${sqlString(leadsParquet)}) GROUP BY county ORDER BY county`;
}

/** Rank counties by the mean z-score of application growth, commencement growth and price momentum. */
export function emergingZoneRows(
  counts: readonly Record<string, unknown>[],
  index: readonly Record<string, unknown>[],
  asOf: string,
): Record<string, unknown>[] {
  const lastComplete = quarterNumber(asOf) - 1; // the quarter before the as-of date's is complete
  const level = new Map<string, number>();
  for (const p of index) level.set(`${p.area}|${p.quarter}`, p.index_value as number);
  const growth = (cur: number, prev: number): number | null =>
    prev > 0 ? round(((cur - prev) / prev) * 100, 2) : null;
  const rows = counts
    .filter((c) => typeof c.county === 'string')
    .map((c) => {
      const county = c.county as string;
      let priceChange: number | null = null;
      let priceQuarter: string | null = null;
      for (let q = lastComplete; q >= lastComplete - 3 && priceChange === null; q--) {
        const now = level.get(`${county}|${quarterLabel(q)}`);
        const before = level.get(`${county}|${quarterLabel(q - 4)}`);
        if (now !== undefined && before !== undefined && before > 0) {
          priceChange = round((now / before - 1) * 100, 2);
          priceQuarter = quarterLabel(q);
        }
      }
      return {
        county,
        applications_12m: Number(c.applications_12m),
        applications_prev_12m: Number(c.applications_prev_12m),
        applications_growth_pct: growth(Number(c.applications_12m), Number(c.applications_prev_12m)),
        commencements_12m: Number(c.commencements_12m),
        commencements_prev_12m: Number(c.commencements_prev_12m),
        commencements_growth_pct: growth(Number(c.commencements_12m), Number(c.commencements_prev_12m)),
        price_change_pct: priceChange,
        price_quarter: priceQuarter,
      };
    });
  const z = (values: (number | null)[]): (number | null)[] => {
    const xs = values.filter((v): v is number => v !== null);
    if (xs.length < 2) return values.map((v) => (v === null ? null : 0));
    const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
    const sd = Math.sqrt(xs.reduce((a, b) => a + (b - mean) ** 2, 0) / (xs.length - 1));
    return values.map((v) => (v === null ? null : sd > 0 ? round((v - mean) / sd, 3) : 0));
  };
  const za = z(rows.map((r) => r.applications_growth_pct));
  const zc = z(rows.map((r) => r.commencements_growth_pct));
  const zp = z(rows.map((r) => r.price_change_pct));
  const scored = rows.map((r, i) => {
    const parts = [za[i], zc[i], zp[i]].filter((v): v is number => v !== null && v !== undefined);
    return {
      ...r,
      applications_z: za[i] ?? null,
      commencements_z: zc[i] ?? null,
      price_z: zp[i] ?? null,
      score: parts.length ? round(parts.reduce((a, b) => a + b, 0) / parts.length, 3) : 0,
    };
  });
  scored.sort((a, b) => b.score - a.score || (a.county < b.county ? -1 : 1));
  return scored.map((r, i) => ({
    rank: i + 1,
    area: r.county,
    county: r.county,
    score: r.score,
    applications_12m: r.applications_12m,
    applications_prev_12m: r.applications_prev_12m,
    applications_growth_pct: r.applications_growth_pct,
    applications_z: r.applications_z,
    commencements_12m: r.commencements_12m,
    commencements_prev_12m: r.commencements_prev_12m,
    commencements_growth_pct: r.commencements_growth_pct,
    commencements_z: r.commencements_z,
    price_change_pct: r.price_change_pct,
    price_quarter: r.price_quarter,
    price_z: r.price_z,
    as_of: asOf,
  }));
}

/** Every material's monthly levels with the year-on-year change and the latest month flagged. */
export function materialCostRows(materials: readonly MaterialRow[]): Record<string, unknown>[] {
  const byMaterial = new Map<string, Map<string, number>>();
  for (const m of materials) {
    let s = byMaterial.get(m.material);
    if (!s) byMaterial.set(m.material, (s = new Map()));
    s.set(m.month, m.index_value);
  }
  const out: Record<string, unknown>[] = [];
  for (const material of [...byMaterial.keys()].sort()) {
    const s = byMaterial.get(material)!;
    const months = [...s.keys()].sort();
    const latest = months.at(-1);
    for (const month of months) {
      const y = Number(month.slice(0, 4));
      const prev = s.get(`${y - 1}${month.slice(4)}`);
      const v = s.get(month)!;
      out.push({
        material,
        month,
        period_start: `${month}-01`,
        index_value: v,
        yoy_pct: prev ? round((v / prev - 1) * 100, 1) : null,
        latest: month === latest,
      });
    }
  }
  return out;
}
