/**
 * The /v1/intel/analytics parameter parser and SQL builder: table-driven cases asserting the
 * parsed request, the SQL and its bound parameters, then the same queries on real rows in DuckDB.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { openApiDb } from '../../../api/duckdb/db.ts';
import { ApiError } from '../../../api/http/errors.ts';
import { intelPageQuery, parseIntelQuery, periodDate, type IntelRequest } from '../../../api/query/intel-query.ts';

const OPTS = { pageSizeDefault: 25, pageSizeMax: 100, pageMax: 1000 };

test('periodDate: years, months, days and quarters as inclusive bounds', () => {
  const cases: [string, boolean, string | undefined][] = [
    ['2024', false, '2024-01-01'],
    ['2024', true, '2024-12-31'],
    ['2024-02', true, '2024-02-29'],
    ['2023-02', true, '2023-02-28'],
    ['2024Q2', false, '2024-04-01'],
    ['2024-Q2', true, '2024-06-30'],
    ['2024Q4', true, '2024-12-31'],
    ['2024-03-15', true, '2024-03-15'],
    ['2024-02-30', false, undefined],
    ['2024-13', false, undefined],
    ['24Q1', false, undefined],
  ];
  for (const [raw, end, want] of cases) assert.is(periodDate(raw, end), want, `${raw} ${end}`);
});

test('parseIntelQuery: defaults, canonical county names, period bounds', () => {
  // (the hash a cursor carries is checked by test/api/paging.test.ts)
  const parsed = (q: Record<string, string>, o: Parameters<typeof parseIntelQuery>[1] = OPTS) => {
    const { hash, ...rest } = parseIntelQuery(q, o);
    assert.match(hash!, /^[0-9a-f]{16}$/);
    return rest;
  };
  assert.equal(parsed({ section: 'yields' }), {
    section: 'yields',
    counties: [],
    from: null,
    to: null,
    page: 1,
    pageSize: 25,
    offset: 0,
  });
  assert.equal(
    parsed({
      section: 'price_index',
      county: 'cork,Co. Kerry',
      from: '2015',
      to: '2016Q2',
      page: '2',
      page_size: '10',
    }),
    {
      section: 'price_index',
      counties: ['Cork', 'Kerry'],
      from: '2015-01-01',
      to: '2016-06-30',
      page: 2,
      pageSize: 10,
      offset: 10,
    },
  );
  assert.equal(parsed({ county: 'mayo' }, { ...OPTS, svg: true }), {
    section: 'price_index',
    counties: ['Mayo'],
    from: null,
    to: null,
    page: 1,
    pageSize: 25,
    offset: 0,
  });
});

test('parseIntelQuery: every problem in one 400', () => {
  const err = (q: Record<string, string>, svg = false): ApiError => {
    try {
      parseIntelQuery(q, { ...OPTS, svg });
    } catch (e) {
      return e as ApiError;
    }
    throw new Error(`no error for ${JSON.stringify(q)}`);
  };
  const e = err({ section: 'material_costs', county: 'Cork', from: 'soon', page_size: '500', sort: 'x' });
  assert.is(e.status, 400);
  assert.equal(e.errors!.map((x) => x.name).sort(), ['county', 'from', 'page_size', 'sort']);
  assert.is(err({}).errors![0]!.name, 'section');
  assert.equal(
    err({ section: 'yields', from: '2022', to: '2021' }).errors!.map((x) => x.name),
    ['to'],
  );
  assert.equal(
    err({ county: 'Cork,Kerry' }, true).errors!.map((x) => x.name),
    ['county'],
  );
  assert.equal(
    err({ section: 'yields' }, true).errors!.map((x) => x.reason),
    ['unknown parameter'],
  );
});

const req = (over: Partial<IntelRequest>): IntelRequest => ({
  section: 'price_index',
  counties: [],
  from: null,
  to: null,
  page: 1,
  pageSize: 25,
  ...over,
});

test('intelPageQuery: SQL and bound parameters per section', () => {
  const cases: [Partial<IntelRequest>, RegExp, unknown[]][] = [
    [{}, /WHERE county IS NULL ORDER BY county IS NOT NULL, area, period_start LIMIT \? OFFSET \?$/, [25, 0]],
    [
      { counties: ['Cork'], from: '2015-01-01', page: 3 },
      /WHERE \(county IS NULL OR county IN \(\?\)\) AND period_start >= CAST\(\? AS DATE\)/,
      ['Cork', '2015-01-01', 25, 50],
    ],
    [{ section: 'yields' }, /WHERE period_start = \(SELECT max\(period_start\) FROM t\)/, [25, 0]],
    [
      { section: 'yields', counties: ['Cork', 'Mayo'], to: '2020-12-31' },
      /WHERE county IN \(\?, \?\) AND period_start <= CAST\(\? AS DATE\)/,
      ['Cork', 'Mayo', '2020-12-31', 25, 0],
    ],
    [{ section: 'emerging_zones' }, /FROM t ORDER BY rank LIMIT/, [25, 0]],
    [{ section: 'material_costs' }, /WHERE latest ORDER BY material <> 'All materials'/, [25, 0]],
  ];
  for (const [over, sql, params] of cases) {
    const q = intelPageQuery('t', req(over));
    assert.match(q.sql, sql, JSON.stringify(over));
    assert.equal(q.params, params, JSON.stringify(over));
  }
});

test('intelPageQuery on real rows: national first, counties, range and the total on every row', async () => {
  const db = await openApiDb({ connections: 1, threads: 1, memoryLimit: '64MB' });
  try {
    await db.run(`CREATE TABLE t AS SELECT * FROM (VALUES
      ('Ireland', NULL, DATE '2015-01-01'), ('Ireland', NULL, DATE '2016-01-01'), ('Cork', 'Cork', DATE '2015-01-01'),
      ('Cork', 'Cork', DATE '2016-01-01'), ('Mayo', 'Mayo', DATE '2015-01-01')) v(area, county, period_start)`);
    const q = intelPageQuery('t', req({ counties: ['Cork'], to: '2015-12-31' }));
    const rows = await db.all(q.sql, q.params);
    assert.equal(
      rows.map((r) => [r.area, r.period_start, r._total]),
      [
        ['Ireland', '2015-01-01', 2],
        ['Cork', '2015-01-01', 2],
      ],
    );
  } finally {
    db.close();
  }
});

test.run();
