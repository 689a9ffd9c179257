/**
 * `sort=last_changed` / `last_changed_asc` in the lead index, on week 4 of the weekly releases
 * (test/helpers/weekly-releases.ts), where leads last changed in different weeks: the same pages,
 * sort values and totals as the SQL builders (the reference), at every depth, through keyset
 * cursors, and a whole walk that visits every lead once in (last_changed, id) order.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { join } from 'node:path';
import { openApiDb, sqlString, type ApiDb } from '../../../api/duckdb/db.ts';
import { LeadIndex } from '../../../api/engine/lead-index.ts';
import {
  leadsCountQuery,
  leadsPageIdsQuery,
  SORT_VALUE_COLUMN,
  type LeadsFilters,
  type LeadsPageRequest,
  type LeadsSource,
} from '../../../api/query/leads-query.ts';
import { weeklyReleases } from '../../helpers/weekly-releases.ts';

let db: ApiDb;
let src: LeadsSource;
let ix: LeadIndex;
const SORTS = ['last_changed', 'last_changed_asc'] as const;

test.before(async () => {
  const w = await weeklyReleases();
  db = await openApiDb({ connections: 1, threads: 1, memoryLimit: '256MB' });
  const leads = `read_parquet(${sqlString(join(w.dir(w.ids.at(-1)!), 'leads.parquet'))})`;
  ix = await LeadIndex.load(db, { leads, search: null }); // from the Parquet file, as the API builds it
  // the reference reads the rows once into a table (the same rows and types), not the file per query
  await db.all(`CREATE TABLE ref_leads AS SELECT * FROM ${leads}`);
  src = { leads: 'ref_leads', search: null };
});

test.after(() => db.close());

async function assertSame(req: LeadsPageRequest, label: string): Promise<number> {
  const p = leadsPageIdsQuery(src, req);
  const rows = await db.all(p.sql, p.params);
  const c = leadsCountQuery(src, req.filters);
  const [{ total }] = (await db.all<{ total: number }>(c.sql, c.params)) as [{ total: number }];
  const got = ix.page(req);
  assert.is(got.total, Number(total), `${label}: total`);
  assert.is(
    got.rows.map((r) => `${r.id}:${r.sortValue}`).join(' '),
    rows.map((r) => `${r['id']}:${String(r[SORT_VALUE_COLUMN])}`).join(' '),
    `${label}: page`,
  );
  return Number(total);
}

test('week 4 has leads last changed in several weeks (the sort is not a tie on one date)', async () => {
  const rows = await db.all<{ d: string; n: number }>(
    `SELECT CAST(last_changed AS VARCHAR) AS d, count(*) AS n FROM ${src.leads} GROUP BY 1 ORDER BY 1`,
  );
  assert.ok(rows.length >= 3, `last_changed dates: ${JSON.stringify(rows)}`);
});

test('every depth, with and without filters (walk and rank-bitset paths): same as SQL', async () => {
  const [{ county } = { county: '' }] = await db.all<{ county: string }>(
    `SELECT county FROM ${src.leads} GROUP BY 1 ORDER BY count(*) DESC LIMIT 1`,
  );
  const [{ d } = { d: '' }] = await db.all<{ d: string }>(
    `SELECT CAST(max(last_changed) AS VARCHAR) AS d FROM ${src.leads}`,
  );
  const filterSets: LeadsFilters[] = [
    {},
    { county: [county] },
    { changed_since: d },
    { county: [county], min_value: 500_000 },
  ];
  for (const filters of filterSets) {
    for (const sort of SORTS) {
      const total = await assertSame(
        { filters, sort, limit: 9, offset: 0, after: null },
        `${JSON.stringify(filters)} ${sort}`,
      );
      for (const offset of [Math.floor(total / 2), Math.max(0, total - 4), total + 2]) {
        await assertSame(
          { filters, sort, limit: 9, offset, after: null },
          `${JSON.stringify(filters)} ${sort} +${offset}`,
        );
      }
    }
  }
});

test("keyset cursors: every page after a cursor is SQL's, and a whole walk visits each lead once in order", async () => {
  for (const sort of SORTS) {
    for (const filters of [{}, { min_value: 250_000 }] as LeadsFilters[]) {
      const seen: string[] = [];
      let after: [string | number, number] | null = null;
      let pages = 0;
      for (;;) {
        const req: LeadsPageRequest = { filters, sort, limit: 83, offset: 0, after };
        if (pages % 3 === 0) await assertSame(req, `${sort} ${JSON.stringify(filters)} page ${pages}`);
        const { rows, total } = ix.page(req);
        seen.push(...rows.map((r) => `${r.sortValue}|${String(r.id).padStart(9, '0')}`));
        pages++;
        if (rows.length < 83) {
          assert.is(seen.length, total, `${sort}: walked ${seen.length} of ${total}`);
          break;
        }
        after = [rows.at(-1)!.sortValue, rows.at(-1)!.id];
      }
      const ordered = [...seen].sort();
      assert.equal(seen, sort === 'last_changed' ? ordered.reverse() : ordered, `${sort}: (last_changed, id) order`);
      assert.is(new Set(seen).size, seen.length);
    }
  }
});

test.run();
