/**
 * The repeat-sale index recovers a known price path. Unit cases of the regression itself (exact
 * data, a disconnected quarter), then the acceptance case: sales of 40,000 homes drawn from a
 * known quarterly path with per-sale noise (plus not-full-market-price and new-dwelling sales
 * at distorted prices, which the matcher must leave out) go through the real pipeline pieces —
 * the private staging file, DuckDB's pair matcher and cell aggregation, the three-stage WRS —
 * and every quarter with enough pairs must be within 2% of the path.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { openDb } from '../../../pipeline/lib/duckdb.ts';
import { pairCellsSql, pairsSql } from '../../../pipeline/intel/pairs.ts';
import { openIntelSalesSink, readIntelSalesSql } from '../../../pipeline/intel/sales-input.ts';
import { priceIndexRows, quarterLabel } from '../../../pipeline/intel/analytics.ts';
import { repeatSalesIndex, type PairCell } from '../../../pipeline/intel/wrs.ts';
import { recordRng } from '../../../pipeline/synth/rng.ts';
import type { SaleRow } from '../../../pipeline/types.ts';
import { tempDir } from '../../helpers/tmp.ts';

test('noise-free pairs give the exact path; the base quarter is 0', () => {
  const beta = [0, 0.1, -0.05, 0.2];
  const cells: PairCell[] = [];
  for (let a = 0; a < 4; a++)
    for (let b = a + 1; b < 4; b++) {
      const y = beta[b]! - beta[a]!;
      cells.push({ a, b, n: 3, sy: 3 * y, syy: 3 * y * y });
    }
  const r = repeatSalesIndex(cells)!;
  assert.is(r.base, 0);
  for (const p of r.points) assert.ok(Math.abs(p.log_index - beta[p.period]!) < 1e-9, `period ${p.period}`);
  assert.equal(
    r.points.map((p) => p.pairs),
    [9, 9, 9, 9],
  );
  assert.is(r.disconnected.length, 0);
});

test('periods no pair links to the main group are reported, not estimated', () => {
  const r = repeatSalesIndex([
    { a: 0, b: 1, n: 10, sy: 1, syy: 0.11 },
    { a: 1, b: 2, n: 10, sy: 1, syy: 0.11 },
    { a: 5, b: 6, n: 2, sy: 0.2, syy: 0.03 },
  ])!;
  assert.equal(
    r.points.map((p) => p.period),
    [0, 1, 2],
  );
  assert.equal(r.disconnected, [5, 6]);
  assert.is(repeatSalesIndex([]), null);
});

/** The known path: a fall, a recovery and a boom, 2010Q1..2021Q4 (48 quarters), log scale. */
const PATH = (q: number): number => Math.log(100) - 0.35 * Math.sin((Math.PI * q) / 24) + 0.012 * q;
const START = 2010 * 4;
const QUARTERS = 48;

function saleOn(
  home: number,
  q: number,
  day: number,
  price: number,
  opts: { nfmp?: boolean; isNew?: boolean; eircode: boolean },
): SaleRow {
  const y = Math.floor((START + q) / 4);
  const m = ((START + q) % 4) * 3 + 1 + Math.floor(day / 30);
  return {
    date_of_sale: `${y}-${String(m).padStart(2, '0')}-${String((day % 28) + 1).padStart(2, '0')}`,
    address: `${home} Known Path Road, Townland ${home % 97}`,
    county: home % 2 ? 'Cork' : 'Dublin',
    eircode_routing_key: opts.eircode ? (home % 2 ? 'T12' : 'D08') : null,
    home_key: 'x'.repeat(64),
    eircode_hash: opts.eircode ? `h${home}` : null,
    price_cents: Math.round(price * 100),
    not_full_market_price: opts.nfmp ?? false,
    vat_exclusive: opts.isNew ?? false,
    description: null,
    is_new_dwelling: opts.isNew ?? false,
    property_size: null,
    line: 0,
  };
}

test('sales drawn from a known path with noise: the index is within 2% of the path at every quarter with enough pairs', async () => {
  const dir = tempDir('leads-wrs-');
  const sink = openIntelSalesSink(dir);
  for (let h = 0; h < 40_000; h++) {
    const r = recordRng(11, 'wrs-home', h);
    const value = 250_000 * Math.exp(r.normal() * 0.4);
    let q = r.int(0, QUARTERS - 2);
    const sales = r.chance(0.3) ? 3 : 2;
    for (let k = 0; k < sales && q < QUARTERS; k++) {
      const noise = Math.exp(r.normal() * 0.08);
      const isNew = k === 0 && r.chance(0.1);
      const nfmp = r.chance(0.04);
      const price = (Math.exp(PATH(q)) / 100) * value * noise * (isNew ? 1.25 : 1) * (nfmp ? 0.5 : 1);
      sink.write(saleOn(h, q, r.int(0, 89), price, { isNew, nfmp, eircode: r.chance(0.7) }));
      q += r.int(2, 16);
    }
  }
  sink.close();
  const db = await openDb();
  try {
    await db.run(`CREATE TABLE s AS SELECT * FROM ${readIntelSalesSql(sink.path)}`);
    await db.run(pairsSql('s'));
    const cells = await db.all<{ county: string | null; a: number; b: number; n: number; sy: number; syy: number }>(
      pairCellsSql(),
    );
    const national = priceIndexRows(cells).filter((r) => r.area === 'Ireland');
    assert.is(national[0]!.quarter, quarterLabel(START), 'based on the first quarter');
    const ENOUGH = 300;
    const checked = national.filter((r) => (r.pairs as number) >= ENOUGH);
    assert.ok(
      checked.length >= QUARTERS - 2,
      `nearly every quarter has enough pairs (${checked.length} of ${national.length})`,
    );
    const truth = (quarter: string): number =>
      100 * Math.exp(PATH(Number(quarter.slice(0, 4)) * 4 + Number(quarter.slice(5)) - 1 - START) - PATH(0));
    const errors = checked.map((r) => ({
      quarter: r.quarter,
      error: (r.index_value as number) / truth(r.quarter as string) - 1,
    }));
    const worst = errors.reduce((a, b) => (Math.abs(b.error) > Math.abs(a.error) ? b : a));
    console.log(
      `  known path: ${checked.length} quarters with ≥ ${ENOUGH} pairs, worst error ${(worst.error * 100).toFixed(2)}% (${worst.quarter})`,
    );
    for (const e of errors)
      assert.ok(Math.abs(e.error) <= 0.02, `${e.quarter}: ${(e.error * 100).toFixed(2)}% off the path`);
    // the standard errors are honest: the path lies inside most 95% intervals
    const inside = checked.filter(
      (r) => truth(r.quarter as string) >= (r.ci_low as number) && truth(r.quarter as string) <= (r.ci_high as number),
    ).length;
    assert.ok(inside / checked.length >= 0.85, `${inside} of ${checked.length} intervals cover the path`);
    const [{ n }] = await db.all<{ n: number }>(`SELECT count(*)::BIGINT AS n FROM intel_pairs WHERE reason IS NULL`);
    assert.ok(n > 20_000, `${n} pairs used`);
  } finally {
    db.close();
  }
});

test.run();
