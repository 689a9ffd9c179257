/**
 * The in-memory detail index gives the same company-360 sections as the SQL builders of
 * api/query/lead-detail-query.ts (the reference) for a third of the leads of the tiny generated release.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { join } from 'node:path';
import { openApiDb, sqlString, type ApiDb } from '../../../api/duckdb/db.ts';
import { DetailIndex, keyedJson, keyedValue, windowStartDay } from '../../../api/engine/detail-index.ts';
import {
  companyQuery,
  filingsQuery,
  nearbyLeadsQuery,
  recentSalesQuery,
  salesSummaryQuery,
  suppliersQuery,
} from '../../../api/query/lead-detail-query.ts';
import type { Release } from '../../../api/releases/release.ts';
import { tinyRelease } from '../../helpers/api.ts';

let db: ApiDb;
let t: Release['tables'];
/** The same tables read into DuckDB once, for the SQL reference. */
let ref: Release['tables'];
let dx: DetailIndex;

test.before(async () => {
  const dir = (await tinyRelease()).dir;
  db = await openApiDb({ connections: 1, threads: 1, memoryLimit: '256MB' });
  const pq = (f: string): string => `read_parquet(${sqlString(join(dir, `${f}.parquet`))})`;
  t = Object.fromEntries(
    [
      'leads',
      'lead_neighbours',
      'suppliers',
      'companies',
      'filings',
      'sales',
      'changes',
      'infrastructure',
      'search_terms',
      'search_postings',
    ].map((n) => [n, pq(n)]),
  ) as Release['tables'];
  // the index is built from the Parquet files, as the API builds it
  dx = await DetailIndex.load(db, t, join(dir, 'sales.parquet'));
  // The reference reads each table once into a table of its own (the same rows and types as the
  // Parquet file), so each of its ~2,000 queries does not parse the files again.
  const tables: Record<string, string> = {};
  for (const [name, source] of Object.entries(t)) {
    await db.run(`CREATE TABLE ref_${name} AS SELECT * FROM ${source}`);
    tables[name] = `ref_${name}`;
  }
  ref = tables as Release['tables'];
});

test.after(() => db.close());

test('windowStartDay: 24 months back, clamped to the month end as DuckDB does', () => {
  const iso = (d: number): string => new Date(d * 86_400_000).toISOString().slice(0, 10);
  assert.is(iso(windowStartDay('2026-11-09')), '2024-11-09');
  assert.is(iso(windowStartDay('2024-02-29')), '2022-02-28');
  assert.is(iso(windowStartDay('2026-03-31', 1)), '2026-02-28');
  assert.is(iso(windowStartDay('2026-01-15', 1)), '2025-12-15');
});

test('a third of the leads: area comparables, nearby leads, suppliers, companies and filings equal the SQL', async () => {
  const leads = await db.all<{
    id: number;
    county: string;
    eircode_routing_key: string | null;
    received_date: string;
    verticals: string[] | null;
    applicant_company_number: string | null;
    main_contractor_company_number: string | null;
  }>(
    `SELECT id, county, eircode_routing_key, received_date, verticals, applicant_company_number, main_contractor_company_number FROM ${ref.leads} WHERE id % 3 = 0`,
  );
  const q = (x: { sql: string; params: unknown[] }): Promise<Record<string, unknown>[]> => db.all(x.sql, x.params);
  const stats = {
    withSales: 0,
    withMedian: 0,
    withNearby: 0,
    withSuppliers: 0,
    withCompany: 0,
    withFilings: 0,
    noRoutingKey: 0,
  };
  for (const lead of leads) {
    const [summary] = await q(salesSummaryQuery(ref, lead));
    const got = dx.salesSummary(lead);
    assert.equal(
      got,
      { sales_count: Number(summary!['sales_count']), median_price_eur: summary!['median_price_eur'] ?? null },
      `lead ${lead.id} summary`,
    );
    assert.equal(dx.recentSales(lead), await q(recentSalesQuery(ref, lead)), `lead ${lead.id} recent sales`);
    const nearby = (await q(nearbyLeadsQuery(ref, lead.id))).map((r) => [r['id'], r['distance_m']]);
    assert.equal(
      dx.nearby(lead.id).map((n) => [n.neighbour_id, n.distance_m]),
      nearby,
      `lead ${lead.id} nearby`,
    );
    const suppliers = await q(suppliersQuery(ref, lead.county, lead.verticals ?? []));
    assert.equal(dx.suppliers(lead.county, lead.verticals ?? []), suppliers, `lead ${lead.id} suppliers`);
    for (const no of [lead.applicant_company_number, lead.main_contractor_company_number]) {
      if (!no) continue;
      const [company] = await q(companyQuery(ref, no));
      assert.equal(dx.company(no), company ?? null, `company ${no}`);
      const filings = await q(filingsQuery(ref, no));
      assert.equal(dx.filings(no), filings, `filings ${no}`);
      if (company) stats.withCompany++;
      if (filings.length) stats.withFilings++;
    }
    if (got.sales_count > 0) stats.withSales++;
    if (got.sales_count > 1 && got.sales_count % 2 === 0) stats.withMedian++;
    if (nearby.length) stats.withNearby++;
    if (suppliers.length) stats.withSuppliers++;
    if (!lead.eircode_routing_key) stats.noRoutingKey++;
  }
  // the comparison is not vacuous: every section is non-empty for many leads
  for (const [k, v] of Object.entries(stats)) assert.ok(v > 0, `${k}: ${v}`);
  assert.is(dx.company('no-such-company'), null);
  assert.equal(dx.filings('no-such-company'), []);
});

test('keyedJson: values by key as JSON text off the heap; each read is a fresh copy; unknown keys are undefined', () => {
  const j = keyedJson(
    new Map<string, unknown>([
      ['b', [{ x: 'Dún €' }]],
      ['a', { n: 1.5, d: null }],
      ['c', []],
    ]),
  );
  assert.equal(j.keys, ['a', 'b', 'c']);
  assert.equal(keyedValue(j, 'a'), { n: 1.5, d: null });
  const b = keyedValue(j, 'b') as { x: string }[];
  assert.equal(b, [{ x: 'Dún €' }]);
  b[0]!.x = 'changed';
  assert.equal(keyedValue(j, 'b'), [{ x: 'Dún €' }]);
  assert.equal(keyedValue(j, 'c'), []);
  for (const k of ['', '0', 'aa', 'd']) assert.is(keyedValue(j, k), undefined, k);
  assert.is(keyedValue(keyedJson(new Map()), 'a'), undefined);
});

test.run();
