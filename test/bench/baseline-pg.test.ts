/**
 * The bench baseline's pure parts: parameter parsing (the same contract as /v1/leads), the SQL
 * it sends to PostgreSQL, and its keyset cursors. No PostgreSQL needed.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  BASELINE_SCHEMA,
  BaselineParamError,
  baselineCursor,
  baselineListQuery,
  parseBaselineList,
  type EnumValues,
} from '../../bench/baseline-pg.ts';

const fold = (xs: string[]): Map<string, string> =>
  new Map(
    xs.map((x) => [
      x
        .normalize('NFD')
        .replace(/[\u0300-\u036f]/g, '')
        .toLowerCase(),
      x,
    ]),
  );
const values: EnumValues = {
  authority: fold(['Dún Laoghaire-Rathdown', 'Cork County']),
  county: fold(['Dublin', 'Cork']),
  readiness: fold(['granted', 'commencing']),
  status: fold(['active', 'closed']),
  use_class: fold(['house']),
  scale: fold(['minor', 'major']),
  vertical: fold(['solar', 'roofing']),
};
const parse = (qs: string) => parseBaselineList(new URLSearchParams(qs), values);
const COLS = ['id', 'received_date', 'county'];

test('authority and county match regardless of case and accents; comma means OR', () => {
  const r = parse('authority=dun%20laoghaire-rathdown&county=CORK,dublin');
  assert.equal(r.filters.authority, ['Dún Laoghaire-Rathdown']);
  assert.equal(r.filters.county, ['Cork', 'Dublin']);
});

test('defaults: newest first, page 1 of 25; relevance when q is given', () => {
  const r = parse('');
  assert.equal([r.sort, r.page, r.pageSize, r.q], ['newest', 1, 25, null]);
  assert.is(parse('q=Roof%20Extensions').sort, 'relevance');
  assert.equal(parse('q=Roof%20Extensions').q, ['roof', 'extensions']);
});

test('bad parameters are rejected naming the parameter', () => {
  const cases: [string, string][] = [
    ['colour=red', 'colour'],
    ['county=Atlantis', 'county'],
    ['min_value=-1', 'min_value'],
    ['page=0', 'page'],
    ['page_size=101', 'page_size'],
    ['has_contact=maybe', 'has_contact'],
    ['sort=relevance', 'sort'],
    ['cursor=%7B%7D', 'cursor'],
  ];
  for (const [qs, param] of cases) {
    assert.throws(
      () => parse(qs),
      (e: unknown) => e instanceof BaselineParamError && e.param === param,
      qs,
    );
  }
});

test('filters become bound parameters, in order, with the page last', () => {
  const cases: [string, string, unknown[]][] = [
    [
      '',
      `SELECT l.id, l.received_date, l.county FROM ${BASELINE_SCHEMA}.leads l ORDER BY l.received_date DESC, l.id DESC LIMIT $1 OFFSET $2`,
      [25, 0],
    ],
    [
      'vertical=solar&county=Cork&min_value=100&demolition=1&page=3&page_size=10&sort=value_desc',
      `SELECT l.id, l.received_date, l.county FROM ${BASELINE_SCHEMA}.leads l WHERE l.verticals && $1::text[] AND l.county = ANY($2::text[]) AND l.est_value >= $3 AND l.demolition = $4 ORDER BY l.est_value DESC NULLS LAST, l.id DESC LIMIT $5 OFFSET $6`,
      [['solar'], ['Cork'], 100, true, 10, 20],
    ],
    [
      'q=roof&status=active',
      `SELECT l.id, l.received_date, l.county, ts_rank(l.search, to_tsquery('english', $1)) AS score FROM ${BASELINE_SCHEMA}.leads l WHERE l.search @@ to_tsquery('english', $1) AND l.status = ANY($2::text[]) ORDER BY score DESC, l.id ASC LIMIT $3 OFFSET $4`,
      ['roof', ['active'], 25, 0],
    ],
  ];
  for (const [qs, sql, params] of cases) {
    const q = baselineListQuery(parse(qs), COLS);
    assert.is(q.page.sql, sql, qs);
    assert.equal(q.page.params, params, qs);
  }
});

test('the count query has the same WHERE and no paging', () => {
  const q = baselineListQuery(parse('county=Cork&min_units=2&page=2'), COLS);
  assert.is(
    q.count.sql,
    `SELECT count(*)::int AS n FROM ${BASELINE_SCHEMA}.leads l WHERE l.county = ANY($1::text[]) AND l.num_units >= $2`,
  );
  assert.equal(q.count.params, [['Cork'], 2]);
});

test('a cursor continues after its row, and only for the same filters', () => {
  const first = parse('county=Cork');
  const cursor = baselineCursor(first, { received_date: '2025-03-01', id: 42 });
  const next = parse(`county=Cork&page_size=50&cursor=${cursor}`);
  assert.equal(next.cursor?.key, ['2025-03-01', 42]);
  const q = baselineListQuery(next, COLS);
  assert.ok(q.page.sql.includes('(l.received_date, l.id) < ($2::date, $3)'));
  assert.equal(q.page.params, [['Cork'], '2025-03-01', 42, 50, 0]);
  assert.throws(
    () => parse(`county=Dublin&cursor=${cursor}`),
    (e: unknown) => e instanceof BaselineParamError && e.param === 'cursor',
  );
});

test.run();
