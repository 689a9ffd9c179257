/**
 * Infrastructure query builders: parameter parsing (ajv, errors naming each parameter), the SQL
 * and params of each clause, then the same queries on the tiny release's real Parquet rows,
 * checked against an independent filter in JavaScript.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { join } from 'node:path';
import { ApiError } from '../../../api/http/errors.ts';
import { openApiDb, sqlString, type ApiDb } from '../../../api/duckdb/db.ts';
import {
  infraByIdQuery,
  infraCountQuery,
  infraKeyset,
  infraOrder,
  infraPageQuery,
  infraSortKey,
  infraSortKeyValid,
  infraWhere,
  normalisedInfraFilters,
  parseInfrastructureQuery,
  type InfraFilters,
  type InfraSort,
} from '../../../api/query/infrastructure-query.ts';
import { decodeCursor, encodeCursor, filtersHash } from '../../../api/query/paging.ts';
import { tinyRelease } from '../../helpers/api.ts';

const OPTS = { renewables: false, pageSizeDefault: 25, pageSizeMax: 100, pageMax: 100 };
const parse = (q: Record<string, string | string[]>, renewables = false) =>
  parseInfrastructureQuery(q, { ...OPTS, renewables });

/** The 400 an invalid query throws, with its per-parameter errors. */
function rejected(q: Record<string, string | string[]>, renewables = false): ApiError {
  let err: unknown;
  assert.throws(() => {
    try {
      parse(q, renewables);
    } catch (e) {
      err = e;
      throw e;
    }
  });
  assert.instance(err, ApiError);
  return err as ApiError;
}

test('parse: defaults, comma lists, numbers, booleans, canonical places', () => {
  assert.equal(parse({}), { filters: {}, sort: 'id', page: 1, pageSize: 25, cursor: null });
  const r = parse({
    vertical: 'wind, solar',
    county: 'cork,DUBLIN',
    authority: 'dun laoghaire-rathdown',
    min_mw: '10',
    max_mw: '99.5',
    fast_lane: '1',
    auction_winner: 'false',
    auction_round: 'ress 3',
    since: '2025-01-01',
    sort: 'capacity_desc',
    page: '2',
    page_size: '10',
  });
  assert.equal(r.filters, {
    vertical: ['wind', 'solar'],
    county: ['Cork', 'Dublin'],
    authority: ['Dún Laoghaire-Rathdown'],
    min_mw: 10,
    max_mw: 99.5,
    fast_lane: true,
    auction_winner: false,
    auction_round: ['ress 3'],
    since: '2025-01-01',
  });
  assert.is(r.sort, 'capacity_desc');
  assert.is(r.page, 2);
  assert.is(r.pageSize, 10);
  assert.equal(parse({ cursor: 'abc' }).page, null);
});

test('parse: renewables default to and accept only wind, solar, battery_storage', () => {
  assert.equal(parse({}, true).filters.vertical, ['wind', 'solar', 'battery_storage']);
  assert.equal(parse({ vertical: 'solar' }, true).filters.vertical, ['solar']);
  const e = rejected({ vertical: 'wind,grid' }, true);
  assert.is(e.code, 'invalid_parameter');
  assert.equal(e.errors, [
    { name: 'vertical', reason: 'not an allowed value', allowed: ['wind', 'solar', 'battery_storage'] },
  ]);
});

test('parse: every bad parameter is named, enums list their allowed values', () => {
  const e = rejected({
    vertical: 'nuclear',
    min_mw: '-1',
    fast_lane: 'yes',
    since: '2025-13-45',
    status: 'built',
    page_size: '500',
    technology: 'coal',
  });
  assert.is(e.status, 400);
  assert.is(e.code, 'invalid_parameter');
  const by = new Map(e.errors!.map((x) => [x.name, x]));
  assert.equal([...by.keys()].sort(), [
    'fast_lane',
    'min_mw',
    'page_size',
    'since',
    'status',
    'technology',
    'vertical',
  ]);
  assert.equal(by.get('vertical')!.allowed, ['data_centre', 'wind', 'solar', 'battery_storage', 'grid']);
  assert.equal(by.get('status')!.allowed, ['proposed', 'in_planning', 'consented', 'refused', 'operational']);
  assert.ok(by.get('technology')!.allowed!.includes('onshore_wind'));
  assert.is(by.get('fast_lane')!.reason, 'must be true, false, 1 or 0');
  assert.ok(by.get('county') === undefined);
  const c = rejected({ county: 'Atlantis' });
  assert.ok(c.errors![0]!.allowed!.includes('Cork'));
});

test('parse: unknown parameters, min > max, page beyond the maximum, page with cursor', () => {
  const u = rejected({ colour: 'red', vertical: 'wind' });
  assert.is(u.code, 'unknown_parameter');
  assert.is(u.errors![0]!.name, 'colour');
  assert.equal(
    rejected({ min_mw: '50', max_mw: '10' }).errors!.map((x) => x.name),
    ['max_mw'],
  );
  assert.match(rejected({ page: '101' }).errors![0]!.reason, /cursor/);
  assert.equal(
    rejected({ page: '2', cursor: 'x' }).errors!.map((x) => x.name),
    ['cursor'],
  );
  assert.equal(
    rejected({ sort: 'id', vertical: 'wind' as string, min_mw: ['1', '2'] }).errors!.map((x) => x.name),
    ['min_mw'],
  );
});

test('where: one clause per filter, every value bound', () => {
  const cases: [InfraFilters, string, unknown[]][] = [
    [{}, '', []],
    [{ vertical: ['wind', 'solar'] }, 'WHERE vertical IN (?, ?)', ['wind', 'solar']],
    [{ technology: ['bess'] }, 'WHERE technology IN (?)', ['bess']],
    [{ county: ['Cork'] }, 'WHERE county IN (?)', ['Cork']],
    [{ authority: ['Fingal'] }, 'WHERE planning_authority IN (?)', ['Fingal']],
    [{ min_mw: 5, max_mw: 50 }, 'WHERE capacity_mw >= ? AND capacity_mw <= ?', [5, 50]],
    [{ consenting_route: ['appeal'] }, 'WHERE consenting_route IN (?)', ['appeal']],
    [{ fast_lane: true }, 'WHERE eu_fast_lane = ?', [true]],
    [
      { auction_round: ['RESS 3', 'ress4'] },
      "WHERE lower(replace(auction_round, ' ', '')) IN (?, ?)",
      ['ress3', 'ress4'],
    ],
    [{ auction_winner: false }, 'WHERE auction_winner = ?', [false]],
    [{ status: ['consented'] }, 'WHERE status IN (?)', ['consented']],
    [{ since: '2025-01-01' }, 'WHERE first_seen >= CAST(? AS DATE)', ['2025-01-01']],
    [{ updated_since: '2025-01-01' }, 'WHERE last_changed >= CAST(? AS DATE)', ['2025-01-01']],
  ];
  for (const [f, sql, params] of cases) assert.equal(infraWhere(f), { sql, params }, JSON.stringify(f));
});

test('order, keyset and page queries', () => {
  assert.is(infraOrder('id'), 'ORDER BY id ASC');
  assert.is(infraOrder('capacity_desc'), 'ORDER BY coalesce(capacity_mw, -1) DESC, id ASC');
  assert.is(infraOrder('newest'), 'ORDER BY first_seen DESC, id DESC');
  assert.equal(infraKeyset('id', [7]), { sql: 'id > ?', params: [7] });
  assert.equal(infraKeyset('capacity_desc', [12.5, 7]), {
    sql: '(coalesce(capacity_mw, -1) < ? OR (coalesce(capacity_mw, -1) = ? AND id > ?))',
    params: [12.5, 12.5, 7],
  });
  assert.equal(infraKeyset('newest', ['2025-01-02', 7]).params, ['2025-01-02', '2025-01-02', 7]);
  assert.throws(() => infraKeyset('newest', [1]), /needs 2/);
  const p = infraPageQuery('t', { filters: { vertical: ['wind'] }, sort: 'id', pageSize: 10, offset: 20 });
  assert.match(
    p.sql,
    /^SELECT "id", "project_key", .* FROM t WHERE vertical IN \(\?\) ORDER BY id ASC LIMIT \? OFFSET \?$/,
  );
  assert.equal(p.params, ['wind', 11, 20]);
  const k = infraPageQuery('t', { filters: {}, sort: 'id', pageSize: 10, after: [5] });
  assert.match(k.sql, /FROM t WHERE id > \? ORDER BY id ASC LIMIT \?$/);
  assert.equal(k.params, [5, 11]);
  assert.equal(infraCountQuery('t', { fast_lane: false }), {
    sql: 'SELECT count(*)::BIGINT AS total FROM t WHERE eu_fast_lane = ?',
    params: [false],
  });
  const one = infraByIdQuery('t', 42);
  assert.match(one.sql, /^SELECT "id", "project_key", .* FROM t WHERE id = \?$/);
  assert.equal(one.params, [42]);
  assert.equal(infraSortKey('capacity_desc', { id: 3, capacity_mw: null }), [-1, 3]);
  assert.ok(infraSortKeyValid('newest', ['2025-01-01', 3]));
  assert.not.ok(infraSortKeyValid('newest', [{ x: 1 }, 3]));
  assert.not.ok(infraSortKeyValid('id', ['1']));
});

test('cursor: round trip, other filters or sort rejected, garbage rejected', () => {
  const h = filtersHash('infrastructure', { vertical: ['wind'] }, 'id');
  assert.is(filtersHash('infrastructure', { vertical: ['wind'], min_mw: undefined }, 'id'), h);
  assert.is.not(filtersHash('infrastructure', { vertical: ['wind'] }, 'newest'), h);
  assert.equal(normalisedInfraFilters({ vertical: ['wind', 'solar', 'wind'], auction_round: ['RESS 3'], min_mw: 1 }), {
    vertical: ['solar', 'wind'],
    auction_round: ['ress3'],
    min_mw: 1,
  });
  const secrets = { cursorSecret: 'infrastructure-query-test-secret-0123456789', cursorSecretsPrevious: [] };
  const c = encodeCursor([42], 'R1', h, secrets);
  assert.equal(decodeCursor(c, h, secrets), { key: [42], release: 'R1' });
  assert.throws(
    () => decodeCursor(c, filtersHash('infrastructure', {}, 'id'), secrets),
    (e: unknown) => e instanceof ApiError && e.errors![0]!.name === 'cursor',
  );
  assert.throws(
    () => decodeCursor('not a cursor!', h, secrets),
    (e: unknown) => e instanceof ApiError && e.code === 'invalid_parameter',
  );
  assert.throws(
    () => decodeCursor(Buffer.from('{"k":1}').toString('base64url'), h, secrets),
    (e: unknown) => e instanceof ApiError,
  );
});

// ---- the same queries on real rows --------------------------------------------------------

let db: ApiDb;
let table: string;
let rows: Record<string, any>[];

test.before(async () => {
  const rel = await tinyRelease();
  db = await openApiDb({ connections: 1, threads: 1, memoryLimit: '256MB' });
  table = `read_parquet(${sqlString(join(rel.dir, 'infrastructure.parquet'))})`;
  rows = await db.all(`SELECT * FROM ${table}`);
});
test.after(() => db.close());

/** Independent JavaScript version of the filters. */
function matches(r: Record<string, any>, f: InfraFilters): boolean {
  const inL = (v: unknown, l?: string[]) => !l || l.includes(v as string);
  return (
    inL(r.vertical, f.vertical) &&
    inL(r.technology, f.technology) &&
    inL(r.county, f.county) &&
    inL(r.planning_authority, f.authority) &&
    (f.min_mw === undefined || (r.capacity_mw !== null && r.capacity_mw >= f.min_mw)) &&
    (f.max_mw === undefined || (r.capacity_mw !== null && r.capacity_mw <= f.max_mw)) &&
    inL(r.consenting_route, f.consenting_route) &&
    (f.fast_lane === undefined || r.eu_fast_lane === f.fast_lane) &&
    (!f.auction_round ||
      (r.auction_round !== null &&
        f.auction_round
          .map((x) => x.toLowerCase().replace(/ /g, ''))
          .includes(r.auction_round.toLowerCase().replace(/ /g, '')))) &&
    (f.auction_winner === undefined || r.auction_winner === f.auction_winner) &&
    inL(r.status, f.status) &&
    (!f.since || r.first_seen >= f.since) &&
    (!f.updated_since || r.last_changed >= f.updated_since)
  );
}

test('real rows: each filter alone and combined equals the independent filter', async () => {
  assert.ok(rows.length >= 8, `tiny release has projects (${rows.length})`);
  const some = (k: string) => rows.find((r) => r[k] !== null)![k];
  const cases: InfraFilters[] = [
    { vertical: ['wind', 'solar'] },
    { technology: [some('technology')] },
    { county: [some('county')] },
    { authority: [some('planning_authority')] },
    { min_mw: 20 },
    { max_mw: 20 },
    { consenting_route: ['strategic_infrastructure', 'appeal'] },
    { fast_lane: true },
    { fast_lane: false },
    { auction_round: [String(some('auction_round')).toLowerCase()] },
    { auction_winner: true },
    { status: ['operational'] },
    { since: some('first_seen') },
    { updated_since: some('last_changed') },
    { vertical: ['wind'], min_mw: 5, status: ['operational', 'consented'] },
  ];
  let nonEmpty = 0;
  for (const f of cases) {
    const c = infraCountQuery(table, f);
    const [{ total }] = (await db.all<{ total: number }>(c.sql, c.params)) as [{ total: number }];
    const expected = rows.filter((r) => matches(r, f)).length;
    assert.is(total, expected, JSON.stringify(f));
    if (expected > 0 && expected < rows.length) nonEmpty++;
  }
  assert.ok(nonEmpty >= 10, `most cases select a proper subset (${nonEmpty})`);
});

test('real rows: page walk and keyset walk agree for every sort, no duplicates or gaps', async () => {
  const f: InfraFilters = {};
  for (const sort of ['id', 'capacity_desc', 'newest'] as InfraSort[]) {
    const pages: number[] = [];
    for (let off = 0; ; off += 3) {
      const q = infraPageQuery(table, { filters: f, sort, pageSize: 3, offset: off });
      const got = await db.all<{ id: number }>(q.sql, q.params);
      pages.push(...got.slice(0, 3).map((r) => r.id));
      if (got.length <= 3) break;
    }
    const keyset: number[] = [];
    let after: unknown[] | null = null;
    for (;;) {
      const q = infraPageQuery(table, { filters: f, sort, pageSize: 3, after });
      const got = await db.all(q.sql, q.params);
      const served = got.slice(0, 3);
      keyset.push(...served.map((r) => r['id'] as number));
      if (got.length <= 3) break;
      after = infraSortKey(sort, served.at(-1)!);
    }
    assert.is(new Set(keyset).size, rows.length, `${sort}: every row once`);
    assert.equal(keyset, pages, `${sort}: keyset walk = page walk`);
  }
});

test('real rows: by id, every project and no other', async () => {
  for (const r of rows) {
    const q = infraByIdQuery(table, Number(r.id));
    const got = await db.all<Record<string, unknown>>(q.sql, q.params);
    assert.is(got.length, 1);
    assert.is(got[0]!['id'], r.id);
  }
  const none = infraByIdQuery(table, 999_999_999);
  assert.equal(await db.all(none.sql, none.params), []);
});

test.run();
