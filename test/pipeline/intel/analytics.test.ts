/**
 * The analytics stage inside a real refresh of the generator's tiny dataset: the four tables are
 * published and listed in the manifest, the private staging copy of the sales is gone, nothing
 * personal is published, yields recover the gross yields the generator built in, material
 * year-on-year changes agree with the levels, and emerging zones are ranked by their components.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { openDb, sqlString, type Db } from '../../../pipeline/lib/duckdb.ts';
import { expectedGrossYield } from '../../../pipeline/synth/rents.ts';
import { isoToDay } from '../../../pipeline/synth/output.ts';
import { tinyRelease } from '../../helpers/api.ts';

let dir: string;
let db: Db;
const rows = (t: string): Promise<Record<string, any>[]> =>
  db.all(`SELECT * FROM read_parquet(${sqlString(join(dir, `${t}.parquet`))})`);

test.before(async () => {
  dir = (await tinyRelease()).dir;
  db = await openDb();
});
test.after(() => db?.close());

test('the four tables are in the release and its manifest; the staging copy is gone; no personal data', async () => {
  const m = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'));
  for (const t of ['price_index', 'yields', 'emerging_zones', 'material_costs']) {
    assert.ok(m.counts.tables[t] > 0, `${t} counted`);
    assert.ok(m.files[`${t}.parquet`], `${t} checksummed`);
    assert.is((await rows(t)).length, m.counts.tables[t]);
  }
  assert.ok(m.analytics.pairs_used > 0 && m.analytics.homes_used > 0);
  assert.is(m.analytics.sales, m.counts.tables.sales);
  assert.ok(m.analytics.excluded_sales.not_full_market_price > 0 && m.analytics.excluded_sales.new_dwelling > 0);
  assert.ok(m.stages.analytics.ms >= 0);
  assert.not.ok(
    readdirSync(dir).some((f) => f.startsWith('.intel')),
    'no staging file published',
  );
  const cols = (
    await db.all<{ column_name: string }>(
      `DESCRIBE SELECT * FROM read_parquet(${sqlString(join(dir, 'sales.parquet'))})`,
    )
  ).map((c) => c.column_name);
  assert.not.ok(cols.includes('eircode_hash'), 'the Eircode hash stays out of the sales table');
  for (const t of ['price_index', 'yields', 'emerging_zones', 'material_costs']) {
    const names = (
      await db.all<{ column_name: string }>(
        `DESCRIBE SELECT * FROM read_parquet(${sqlString(join(dir, `${t}.parquet`))})`,
      )
    ).map((c) => c.column_name);
    assert.not.ok(
      names.some((n) => /address|eircode|home|name|phone/.test(n)),
      `${t}: ${names.join(', ')}`,
    );
  }
});

test('yields recover the gross yields the generator built into rents and prices (Dublin and Cork)', async () => {
  const ys = await rows('yields');
  // tiny scale: 20-80 sales behind each median, so single quarters are noisy; the typical ratio must be close
  const checked = ys.filter(
    (r) => (r.county === 'Dublin' || r.county === 'Cork') && r.property_type !== 'apartment' && r.sales >= 20,
  );
  assert.ok(checked.length > 60, `${checked.length} quarters checked`);
  const ratios = checked
    .map((r) => r.gross_yield_pct / 100 / expectedGrossYield(r.county, r.property_type, isoToDay(r.period_start) - 90))
    .sort((x, y) => x - y);
  const median = ratios[Math.floor(ratios.length / 2)]!;
  assert.ok(Math.abs(median - 1) < 0.1, `median ratio to the built-in yield ${median.toFixed(3)}`);
  assert.ok(
    ratios[0]! > 0.7 && ratios.at(-1)! < 1.35,
    `every quarter within the noise of its sample (${ratios[0]!.toFixed(2)}..${ratios.at(-1)!.toFixed(2)})`,
  );
});

test('material costs: year-on-year from the levels; one latest month per material', async () => {
  const mc = await rows('material_costs');
  const by = new Map(mc.map((r) => [`${r.material}|${r.month}`, r]));
  for (const r of mc) {
    const prev = by.get(`${r.material}|${Number(r.month.slice(0, 4)) - 1}${r.month.slice(4)}`);
    if (!prev) assert.is(r.yoy_pct, null);
    else
      assert.ok(Math.abs(r.yoy_pct - (r.index_value / prev.index_value - 1) * 100) < 0.051, `${r.material} ${r.month}`);
  }
  const latest = mc.filter((r) => r.latest);
  assert.is(latest.length, new Set(mc.map((r) => r.material)).size);
});

test('emerging zones: 26 counties ranked by the mean of their component z-scores', async () => {
  const z = (await rows('emerging_zones')).sort((a, b) => a.rank - b.rank);
  assert.is(z.length, 26);
  for (const r of z) {
    const parts = [r.applications_z, r.commencements_z, r.price_z].filter((v) => v !== null);
    assert.ok(Math.abs(r.score - parts.reduce((a: number, b: number) => a + b, 0) / parts.length) < 0.002, r.county);
    if (r.applications_prev_12m > 0)
      assert.ok(
        Math.abs(
          r.applications_growth_pct - ((r.applications_12m - r.applications_prev_12m) / r.applications_prev_12m) * 100,
        ) < 0.01,
      );
  }
  for (let i = 1; i < z.length; i++) assert.ok(z[i - 1]!.score >= z[i]!.score);
  assert.ok(existsSync(join(dir, 'leads.parquet')));
});

test.run();
