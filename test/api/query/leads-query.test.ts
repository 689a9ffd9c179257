/**
 * The leads list builders: table-driven SQL and params, then the same queries on the tiny
 * generated release (counts compared with an independent DuckDB query over leads.parquet).
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { join } from 'node:path';
import { openApiDb, sqlString, type ApiDb } from '../../../api/duckdb/db.ts';
import {
  leadsCountQuery,
  leadsCursorWhere,
  leadsLimit,
  leadsOrder,
  leadsPageIdsQuery,
  leadsPageQuery,
  leadsWhere,
  normalisedFilters,
  searchAvgdlQuery,
  sortKeyValid,
  SORT_VALUE_COLUMN,
  TOTAL_COLUMN,
  type LeadsFilters,
  type LeadsPageRequest,
  type LeadsSource,
  type SortKey,
} from '../../../api/query/leads-query.ts';
import { tokenize } from '../../../common/search-text.ts';
import { tinyRelease } from '../../helpers/api.ts';

/** [name, filters, WHERE sql, params, independent predicate over leads.parquet] */
const CASES: [string, LeadsFilters, string, unknown[], string][] = [
  ['none', {}, 'TRUE', [], 'TRUE'],
  ['vertical', { vertical: ['solar'] }, 'list_contains(l.verticals, ?)', ['solar'], `'solar' = ANY(verticals)`],
  [
    'vertical OR',
    { vertical: ['solar', 'roofing'] },
    '(list_contains(l.verticals, ?) OR list_contains(l.verticals, ?))',
    ['solar', 'roofing'],
    `('solar' = ANY(verticals) OR 'roofing' = ANY(verticals))`,
  ],
  [
    'authority',
    { authority: ['Dún Laoghaire-Rathdown'] },
    'l.planning_authority IN (?)',
    ['Dún Laoghaire-Rathdown'],
    `planning_authority = 'Dún Laoghaire-Rathdown'`,
  ],
  [
    'county OR',
    { county: ['Cork', 'Dublin'] },
    'l.county IN (?, ?)',
    ['Cork', 'Dublin'],
    `county IN ('Cork', 'Dublin')`,
  ],
  [
    'readiness',
    { readiness: ['commencing', 'granted'] },
    'l.lead_readiness IN (?, ?)',
    ['commencing', 'granted'],
    `lead_readiness IN ('commencing', 'granted')`,
  ],
  ['status', { status: ['active'] }, 'l.status IN (?)', ['active'], `status = 'active'`],
  ['use_class', { use_class: ['house'] }, 'l.use_class IN (?)', ['house'], `use_class = 'house'`],
  ['scale', { scale: ['major', 'large'] }, 'l.scale IN (?, ?)', ['major', 'large'], `scale IN ('major', 'large')`],
  ['min_value', { min_value: 500000 }, 'l.est_value >= ?', [500000], 'est_value >= 500000'],
  ['min_units', { min_units: 2 }, 'l.num_units >= ?', [2], 'num_units >= 2'],
  ['has_contact', { has_contact: false }, 'l.has_contact = ?', [false], 'NOT has_contact'],
  ['demolition', { demolition: true }, 'l.demolition = ?', [true], 'demolition'],
  [
    'application_type',
    { application_type: ['PERMISSION', 'RETENTION'] },
    'l.application_type IN (?, ?)',
    ['PERMISSION', 'RETENTION'],
    `application_type IN ('PERMISSION', 'RETENTION')`,
  ],
  [
    'received_from',
    { received_from: '2025-06-01' },
    'l.received_date >= CAST(? AS DATE)',
    ['2025-06-01'],
    `received_date >= DATE '2025-06-01'`,
  ],
  [
    'received_to',
    { received_to: '2025-06-01' },
    'l.received_date <= CAST(? AS DATE)',
    ['2025-06-01'],
    `received_date <= DATE '2025-06-01'`,
  ],
  [
    'received range and type',
    { application_type: ['PERMISSION'], received_from: '2025-03-01', received_to: '2025-09-30' },
    'l.application_type IN (?) AND l.received_date >= CAST(? AS DATE) AND l.received_date <= CAST(? AS DATE)',
    ['PERMISSION', '2025-03-01', '2025-09-30'],
    `application_type = 'PERMISSION' AND received_date BETWEEN DATE '2025-03-01' AND DATE '2025-09-30'`,
  ],
  [
    'combined',
    { county: ['Dublin'], status: ['planning', 'approved'], min_value: 100000, demolition: false },
    'l.county IN (?) AND l.status IN (?, ?) AND l.est_value >= ? AND l.demolition = ?',
    ['Dublin', 'planning', 'approved', 100000, false],
    `county = 'Dublin' AND status IN ('planning', 'approved') AND est_value >= 100000 AND NOT demolition`,
  ],
];

test('leadsWhere: SQL and params per filter', () => {
  for (const [name, f, sql, params] of CASES) assert.equal(leadsWhere(f), { sql, params }, name);
});

test('leadsOrder, leadsLimit, leadsCursorWhere', () => {
  assert.is(leadsOrder('newest').sql, 'ORDER BY l.received_date DESC, l.id DESC');
  assert.is(leadsOrder('oldest').sql, 'ORDER BY l.received_date ASC, l.id ASC');
  assert.is(leadsOrder('value_desc').sql, 'ORDER BY l.est_value DESC, l.id DESC');
  assert.is(leadsOrder('relevance').sql, 'ORDER BY s.score DESC, l.id ASC');
  assert.equal(leadsLimit(26), { sql: 'LIMIT ?', params: [26] });
  assert.equal(leadsLimit(26, 50), { sql: 'LIMIT ? OFFSET ?', params: [26, 50] });
  assert.equal(leadsCursorWhere('newest', ['2026-01-02', 7]), {
    sql: '(l.received_date, l.id) < (CAST(? AS DATE), CAST(? AS BIGINT))',
    params: ['2026-01-02', 7],
  });
  assert.equal(leadsCursorWhere('value_asc', [10, 7]), {
    sql: '(l.est_value, l.id) > (CAST(? AS BIGINT), CAST(? AS BIGINT))',
    params: [10, 7],
  });
  assert.equal(leadsCursorWhere('relevance', [1.5, 7]), {
    sql: '(s.score < CAST(? AS DOUBLE) OR (s.score = CAST(? AS DOUBLE) AND l.id > CAST(? AS BIGINT)))',
    params: [1.5, 1.5, 7],
  });
});

test('sortKeyValid and normalisedFilters', () => {
  assert.ok(sortKeyValid('newest', ['2026-01-01', 3]));
  assert.not.ok(sortKeyValid('newest', [5, 3]));
  assert.not.ok(sortKeyValid('value_desc', ['2026-01-01', 3]));
  assert.not.ok(sortKeyValid('relevance', [1.2, 'x']));
  assert.equal(normalisedFilters({ county: ['Dublin', 'Cork', 'Dublin'], q: 'x' }), {
    county: ['Cork', 'Dublin'],
    q: 'x',
  });
});

test('page query binds every value and asks for no table by name', () => {
  const src: LeadsSource = { leads: 'LEADS', search: { termsTable: 'TERMS', postingsTable: 'POSTINGS', avgdl: 12.5 } };
  const p = leadsPageQuery(src, {
    filters: { q: "roof o'brien", county: ['Cork'] },
    sort: 'relevance',
    limit: 26,
    offset: 0,
    after: [2.5, 9],
  });
  assert.not.match(p.sql, /o'brien|Cork/);
  assert.match(p.sql, /FROM TERMS WHERE term IN \(\?, \?\)/);
  assert.match(p.sql, /FROM POSTINGS WHERE/);
  assert.match(p.sql, /JOIN LEADS AS l ON l.id = s.lead_id/);
  assert.not.match(p.sql, /ILIKE/i);
  // terms (qt), terms (hits), what each item of q must hold (roof; o'brien → brien), then the filters
  assert.equal(p.params, ['roof', 'brien', 'roof', 'brien', 'roof', 'brien', 'Cork', 2.5, 2.5, 9, 26]);
  const c = leadsCountQuery(src, { county: ['Cork'] });
  assert.equal(c, { sql: 'SELECT count(*) AS total FROM LEADS AS l WHERE l.county IN (?)', params: ['Cork'] });
});

// --- the same queries on the tiny release --------------------------------------------------------

let db: ApiDb;
let src: LeadsSource;
let leadsFile: string;

test.before(async () => {
  const rel = await tinyRelease();
  db = await openApiDb({ connections: 2, threads: 1, memoryLimit: '256MB' });
  leadsFile = `read_parquet(${sqlString(join(rel.dir, 'leads.parquet'))})`;
  const a = searchAvgdlQuery(join(rel.dir, 'search_terms.parquet'));
  const [{ avgdl }] = (await db.all<{ avgdl: number }>(a.sql, a.params)) as [{ avgdl: number }];
  src = {
    leads: leadsFile,
    search: {
      termsTable: `read_parquet(${sqlString(join(rel.dir, 'search_terms.parquet'))})`,
      postingsTable: `read_parquet(${sqlString(join(rel.dir, 'search_postings.parquet'))})`,
      avgdl,
    },
  };
});
test.after(() => db.close());

test('counts equal an independent query for every filter alone and combined (and are not trivial)', async () => {
  const [{ n: all }] = (await db.all<{ n: number }>(`SELECT count(*) AS n FROM ${leadsFile}`)) as [{ n: number }];
  assert.ok(all > 100);
  for (const [name, f, , , predicate] of CASES) {
    const c = leadsCountQuery(src, f);
    const [{ total }] = (await db.all<{ total: number }>(c.sql, c.params)) as [{ total: number }];
    const [{ n }] = (await db.all<{ n: number }>(`SELECT count(*) AS n FROM ${leadsFile} WHERE ${predicate}`)) as [
      { n: number },
    ];
    assert.is(total, n, name);
    if (name !== 'none') assert.ok(total < all, `${name} filters something`);
    if (name !== 'combined') assert.ok(total > 0, `${name} matches something`);
  }
});

test('keyset walk equals offset walk, in order, for every sort', async () => {
  for (const sort of ['newest', 'oldest', 'value_desc', 'value_asc'] as const) {
    const filters: LeadsFilters = { county: ['Dublin'] };
    const offsetIds: number[] = [];
    for (let offset = 0; ; offset += 40) {
      const p = leadsPageQuery(src, { filters, sort, limit: 40, offset, after: null });
      const rows = await db.all(p.sql, p.params);
      offsetIds.push(...rows.map((r) => r['id'] as number));
      if (rows.length < 40) break;
    }
    const keysetIds: number[] = [];
    let after: SortKey | null = null;
    for (;;) {
      const p = leadsPageQuery(src, { filters, sort, limit: 40, offset: 0, after });
      const rows = await db.all(p.sql, p.params);
      keysetIds.push(...rows.map((r) => r['id'] as number));
      if (rows.length < 40) break;
      const last = rows.at(-1)!;
      after = [last[SORT_VALUE_COLUMN] as string | number, last['id'] as number];
    }
    const c = leadsCountQuery(src, filters);
    const [{ total }] = (await db.all<{ total: number }>(c.sql, c.params)) as [{ total: number }];
    assert.is(offsetIds.length, total, sort);
    assert.equal(keysetIds, offsetIds, sort);
    assert.is(new Set(keysetIds).size, total, `${sort}: no duplicates`);
    const [{ ids }] = (await db.all<{ ids: number[] }>(
      `SELECT list(id ORDER BY ${sort === 'newest' ? 'received_date DESC, id DESC' : sort === 'oldest' ? 'received_date, id' : sort === 'value_desc' ? 'est_value DESC, id DESC' : 'est_value, id'}) AS ids FROM ${leadsFile} WHERE county = 'Dublin'`,
    )) as [{ ids: number[] }];
    assert.equal(offsetIds, ids, `${sort}: order`);
  }
});

test('q: a lead holding a rare term ranks first; q combines with filters; no terms → nothing', async () => {
  // A word whose index term occurs in one lead only (found with the shared tokenizer, in JS).
  const docs = await db.all<{ id: number; county: string; text: string }>(
    `SELECT id, county, concat_ws(' ', description, address, planning_authority, application_number) AS text FROM ${leadsFile}`,
  );
  const df = new Map<string, { ids: Set<number>; word: string; county: string }>();
  for (const d of docs) {
    for (const word of d.text.toLowerCase().split(/[^a-z]+/)) {
      for (const term of tokenize(word)) {
        const e = df.get(term) ?? { ids: new Set<number>(), word, county: d.county };
        e.ids.add(d.id);
        df.set(term, e);
      }
    }
  }
  const found = [...df.values()].find((e) => e.ids.size === 1 && e.word.length >= 5);
  const rare = found && { id: [...found.ids][0]!, word: found.word, county: found.county };
  assert.ok(rare, 'a word found in one lead only');
  const p = leadsPageQuery(src, {
    filters: { q: `${rare!.word} OR dwelling` },
    sort: 'relevance',
    limit: 5,
    offset: 0,
    after: null,
  });
  const rows = await db.all(p.sql, p.params);
  assert.is(rows[0]!['id'], rare!.id);
  const c = leadsCountQuery(src, { q: rare!.word, county: [rare!.county] });
  assert.equal(await db.all(c.sql, c.params), [{ total: 1 }]);
  const other = rare!.county === 'Cork' ? 'Dublin' : 'Cork';
  const c2 = leadsCountQuery(src, { q: rare!.word, county: [other] });
  assert.equal(await db.all(c2.sql, c2.params), [{ total: 0 }]);
  const none = leadsCountQuery(src, { q: 'the of and' });
  assert.equal(await db.all(none.sql, none.params), [{ total: 0 }]);
  // relevance order: scores non-increasing, ties by id ascending
  const all = leadsPageQuery(src, {
    filters: { q: 'extension roof' },
    sort: 'relevance',
    limit: 1000,
    offset: 0,
    after: null,
  });
  const ranked = await db.all(all.sql, all.params);
  assert.ok(ranked.length > 5);
  for (let i = 1; i < ranked.length; i++) {
    const [a, b] = [ranked[i - 1]!, ranked[i]!];
    const sa = a[SORT_VALUE_COLUMN] as number;
    const sb = b[SORT_VALUE_COLUMN] as number;
    assert.ok(sa > sb || (sa === sb && (a['id'] as number) < (b['id'] as number)), `row ${i}`);
  }
});

test('leadsPageIdsQuery: the same ids, sort values and totals as leadsPageQuery, narrow', async () => {
  const reqs: LeadsPageRequest[] = [
    { filters: {}, sort: 'newest', limit: 26, offset: 0, after: null },
    { filters: { county: ['Cork', 'Dublin'] }, sort: 'value_desc', limit: 11, offset: 5, after: null },
    { filters: { q: 'extension' }, sort: 'relevance', limit: 11, offset: 0, after: null },
  ];
  for (const req of reqs) {
    const wide = leadsPageQuery(src, req);
    const narrow = leadsPageIdsQuery(src, req);
    assert.equal(narrow.params, wide.params);
    assert.match(narrow.sql, /^SELECT l\.id, \S+ AS _sort_value/);
    const a = await db.all(wide.sql, wide.params);
    const b = await db.all(narrow.sql, narrow.params);
    assert.ok(a.length > 1, req.sort);
    assert.equal(Object.keys(b[0]!).sort(), ['id', SORT_VALUE_COLUMN, ...(req.filters.q ? [TOTAL_COLUMN] : [])].sort());
    assert.equal(
      b,
      a.map((r) => ({
        id: r['id'],
        [SORT_VALUE_COLUMN]: r[SORT_VALUE_COLUMN],
        ...(req.filters.q ? { [TOTAL_COLUMN]: r[TOTAL_COLUMN] } : {}),
      })),
    );
  }
});

test.run();
