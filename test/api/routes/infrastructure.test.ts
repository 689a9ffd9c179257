/**
 * GET /v1/infrastructure, /v1/infrastructure/renewables and /v1/infrastructure/{id} over real HTTP on the tiny release:
 * filters alone and combined (checked against the release's own rows), page and cursor walks,
 * masking and shape per scope, caching, and every error with its problem body. Every body is
 * validated against the OpenAPI document.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { join } from 'node:path';
import { openApiDb, sqlString } from '../../../api/duckdb/db.ts';
import { buildOpenApi } from '../../../api/openapi/document.ts';
import { SCOPES } from '../../../api/access/scopes.ts';
import { ATTRIBUTION } from '../../../api/access/scopes.ts';
import { startTestApi, assertProblem, tinyRelease, type TestApi, type TestResponse } from '../../helpers/api.ts';
import { validateResponse } from '../../helpers/openapi.ts';

let api: TestApi;
let doc: Record<string, any>;
let all: Record<string, any>[];

test.before(async () => {
  api = await startTestApi();
  doc = buildOpenApi(api.config);
  const db = await openApiDb({ connections: 1, threads: 1, memoryLimit: '128MB' });
  try {
    all = await db.all(
      `SELECT * FROM read_parquet(${sqlString(join((await tinyRelease()).dir, 'infrastructure.parquet'))}) ORDER BY id`,
    );
  } finally {
    db.close();
  }
});
test.after(async () => {
  await api?.close();
});

/** GET and validate the body against the document (path template without /v1). */
async function get(path: string, key?: string | null): Promise<TestResponse> {
  const res = await api.request(`/v1${path}`, key === undefined ? {} : { key });
  const template = path.startsWith('/infrastructure/renewables')
    ? '/infrastructure/renewables'
    : /^\/infrastructure\/[^/?]+/.test(path)
      ? '/infrastructure/{id}'
      : '/infrastructure';
  assert.equal(
    validateResponse(doc, 'get', template, res.status, res.body),
    [],
    `${path} → ${res.status} matches the OpenAPI document`,
  );
  return res;
}

const ids = (res: TestResponse): number[] => res.body.results.map((r: { id: number }) => r.id);

test('lists every project by id with the page envelope and headers', async () => {
  assert.ok(all.length >= 8, `tiny release has projects (${all.length})`);
  const res = await get('/infrastructure');
  assert.is(res.status, 200);
  assert.match(res.headers.get('content-type')!, /^application\/json/);
  assert.ok(res.headers.get('x-request-id'));
  assert.match(res.headers.get('etag')!, /^W\/"/);
  assert.is(res.headers.get('cache-control'), 'private, max-age=60');
  assert.is(res.body.total, all.length);
  assert.is(res.body.page, 1);
  assert.is(res.body.page_size, 25);
  assert.is(res.body.next_cursor, null);
  assert.equal(
    ids(res),
    all.map((r) => r.id),
  );
  assert.equal(Object.keys(res.body.results[0]), Object.keys(doc.components.schemas.InfrastructureProject.properties));
});

test('each filter alone and combined matches the release rows', async () => {
  const f = (pred: (r: Record<string, any>) => boolean) => all.filter(pred).map((r) => r.id);
  const some = (k: string) => all.find((r) => r[k] !== null)![k];
  const county = some('county') as string;
  const authority = some('planning_authority') as string;
  const round = some('auction_round') as string;
  const cases: [string, number[]][] = [
    ['vertical=wind,solar', f((r) => ['wind', 'solar'].includes(r.vertical))],
    [`technology=${some('technology')}`, f((r) => r.technology === some('technology'))],
    [`county=${encodeURIComponent(county.toUpperCase())}`, f((r) => r.county === county)],
    [`authority=${encodeURIComponent(authority.toLowerCase())}`, f((r) => r.planning_authority === authority)],
    ['min_mw=50', f((r) => r.capacity_mw !== null && r.capacity_mw >= 50)],
    ['max_mw=50', f((r) => r.capacity_mw !== null && r.capacity_mw <= 50)],
    [
      'consenting_route=appeal,strategic_infrastructure',
      f((r) => ['appeal', 'strategic_infrastructure'].includes(r.consenting_route)),
    ],
    ['fast_lane=false', f((r) => r.eu_fast_lane === false)],
    ['fast_lane=1', f((r) => r.eu_fast_lane === true)],
    [`auction_round=${encodeURIComponent(round.toLowerCase().replace(' ', ''))}`, f((r) => r.auction_round === round)],
    ['auction_winner=true', f((r) => r.auction_winner === true)],
    ['status=operational', f((r) => r.status === 'operational')],
    [`since=${some('first_seen')}`, f((r) => r.first_seen >= some('first_seen'))],
    ['since=2999-01-01', []],
    [`updated_since=${some('last_changed')}`, f((r) => r.last_changed >= some('last_changed'))],
    [
      'vertical=wind,solar&min_mw=10&status=operational,consented',
      f(
        (r) =>
          ['wind', 'solar'].includes(r.vertical) &&
          r.capacity_mw >= 10 &&
          ['operational', 'consented'].includes(r.status),
      ),
    ],
  ];
  let proper = 0;
  for (const [q, expected] of cases) {
    const res = await get(`/infrastructure?${q}`);
    assert.is(res.status, 200, q);
    assert.equal(ids(res), expected, q);
    assert.is(res.body.total, expected.length, q);
    if (expected.length > 0 && expected.length < all.length) proper++;
  }
  assert.ok(proper >= 10, `most filters select a proper subset (${proper})`);
});

test('renewables: only wind, solar and battery storage; another vertical is a 400 listing the allowed ones', async () => {
  const res = await get('/infrastructure/renewables');
  const expected = all.filter((r) => ['wind', 'solar', 'battery_storage'].includes(r.vertical)).map((r) => r.id);
  assert.ok(expected.length > 0 && expected.length < all.length);
  assert.equal(ids(res), expected);
  assert.equal(
    ids(await get('/infrastructure/renewables?vertical=solar')),
    all.filter((r) => r.vertical === 'solar').map((r) => r.id),
  );
  const bad = await get('/infrastructure/renewables?vertical=grid');
  assertProblem(bad, 400, 'invalid_parameter');
  assert.equal(bad.body.errors, [
    { name: 'vertical', reason: 'not an allowed value', allowed: ['wind', 'solar', 'battery_storage'] },
  ]);
});

test('page walk and cursor walk: same rows, no duplicates or gaps, for every sort', async () => {
  for (const sort of ['id', 'capacity_desc', 'newest']) {
    const byPage: number[] = [];
    for (let page = 1; ; page++) {
      const res = await get(`/infrastructure?sort=${sort}&page_size=3&page=${page}`);
      assert.is(res.body.page, page);
      byPage.push(...ids(res));
      if (res.body.results.length < 3 || byPage.length === res.body.total) break;
    }
    const byCursor: number[] = [];
    let res = await get(`/infrastructure?sort=${sort}&page_size=3`);
    for (;;) {
      byCursor.push(...ids(res));
      if (!res.body.next_cursor) break;
      res = await get(`/infrastructure?sort=${sort}&page_size=3&cursor=${res.body.next_cursor}`);
      assert.is(res.body.page, null);
    }
    assert.is(new Set(byCursor).size, all.length, `${sort}: every project once`);
    assert.equal(byCursor, byPage, `${sort}: cursor walk = page walk`);
  }
  const capacities = (await get('/infrastructure?sort=capacity_desc&page_size=100')).body.results.map(
    (r: any) => r.capacity_mw ?? -1,
  );
  assert.equal(
    capacities,
    [...capacities].sort((a: number, b: number) => b - a),
  );
});

test('a cursor is bound to its filters and sort; garbage cursors are 400', async () => {
  const first = await get('/infrastructure?page_size=2&vertical=wind,solar');
  assert.ok(first.body.next_cursor);
  const c = first.body.next_cursor;
  assert.is(
    (await get(`/infrastructure?page_size=2&vertical=solar,wind&cursor=${c}`)).status,
    200,
    'same filter set in another order',
  );
  for (const q of [
    `vertical=wind&cursor=${c}`,
    `vertical=wind,solar&sort=newest&cursor=${c}`,
    'cursor=bm9wZQ',
    'cursor=%25%25',
    `vertical=wind,solar&page=2&cursor=${c}`,
  ]) {
    const res = await get(`/infrastructure?page_size=2&${q}`);
    assertProblem(res, 400, 'invalid_parameter');
    assert.equal(
      res.body.errors.map((e: { name: string }) => e.name),
      ['cursor'],
      q,
    );
  }
  // a renewables cursor does not continue an /infrastructure walk
  const r = await get('/infrastructure/renewables?page_size=2');
  assertProblem(await get(`/infrastructure?page_size=2&cursor=${r.body.next_cursor}`), 400, 'invalid_parameter');
});

test('masking: same shape for every scope; applicant fields null for commonwealth with reasons and attribution', async () => {
  const shapes = new Set<string>();
  for (const scope of SCOPES) {
    const res = await get('/infrastructure', api.keys[scope]);
    assert.is(res.status, 200, scope);
    shapes.add(JSON.stringify(res.body.results.map((r: object) => Object.keys(r))));
    assert.is(res.body._meta.scope, scope);
    assert.is(res.body._meta.release, api.release());
    if (scope === 'commonwealth') {
      assert.ok(res.body.results.every((r: any) => r.applicant === null && r.applicant_company_number === null));
      assert.equal(
        res.body._meta.masked.map((m: { field: string }) => m.field),
        ['applicant', 'applicant_evidence', 'applicant_company_number'],
      );
      assert.match(res.body._meta.masked[0].reason, /ent_api/);
      assert.is(res.body._meta.attribution, ATTRIBUTION);
    } else {
      assert.ok(
        res.body.results.some((r: any) => r.applicant !== null),
        `${scope} sees applicants`,
      );
      assert.equal(res.body._meta.masked, []);
      assert.is(res.body._meta.attribution, undefined);
    }
  }
  assert.is(shapes.size, 1, 'every scope gets the same keys');
  // an empty page reports the same masking
  const empty = await get('/infrastructure?since=2999-01-01', api.keys.commonwealth);
  assert.equal(empty.body.results, []);
  assert.is(empty.body._meta.masked.length, 3);
});

test('GET /infrastructure/{id}: the project with its case, as in the list, masked by scope', async () => {
  const list = (await get('/infrastructure?page_size=100')).body.results as Record<string, any>[];
  const withCase = list.find((r) => r.case_id !== null && r.applicant !== null)!;
  assert.ok(withCase, 'the tiny release has a project with a case and an applicant');
  for (const r of list) {
    const res = await get(`/infrastructure/${r.id}`);
    assert.is(res.status, 200);
    const { _meta, ...record } = res.body;
    assert.equal(record, r, `project ${r.id} is the record of the list`);
    assert.equal(_meta, { release: api.release(), scope: 'ent_api', masked: [] });
    assert.match(res.headers.get('etag')!, /^W\//);
  }
  const cw = await get(`/infrastructure/${withCase.id}`, api.keys.commonwealth);
  assert.is(cw.status, 200);
  assert.is(cw.body.applicant, null);
  assert.is(cw.body.applicant_evidence, null);
  assert.is(cw.body.applicant_company_number, null);
  assert.is(cw.body.case_id, withCase.case_id, 'the case is not enriched');
  assert.equal(
    cw.body._meta.masked.map((m: { field: string }) => m.field),
    ['applicant', 'applicant_evidence', 'applicant_company_number'],
  );
  assert.is(cw.body._meta.attribution, ATTRIBUTION);
  // the renewables list is not taken for an id
  assert.is((await get('/infrastructure/renewables?page_size=1')).body.page_size, 1);
  const missing = await get('/infrastructure/999999');
  assertProblem(missing, 404, 'not_found');
  assert.match(missing.body.detail, /infrastructure project 999999/);
  for (const bad of ['abc', '0', '-1', '1.5']) {
    const res = await get(`/infrastructure/${bad}`);
    assertProblem(res, 400, 'invalid_parameter');
    assert.is(res.body.errors[0].name, 'id');
  }
  assertProblem(await get(`/infrastructure/${withCase.id}?vertical=wind`), 400, 'unknown_parameter');
  assertProblem(await get(`/infrastructure/${withCase.id}`, null), 401, 'missing_key');
});

test('ETag and 304', async () => {
  const a = await get('/infrastructure?vertical=wind');
  const etag = a.headers.get('etag')!;
  const b = await api.request('/v1/infrastructure?vertical=wind', { headers: { 'If-None-Match': etag } });
  assert.is(b.status, 304);
  assert.is(b.text, '');
  assert.equal(validateResponse(doc, 'get', '/infrastructure', 304, null), []);
  const other = await get('/infrastructure?vertical=wind', api.keys.commonwealth);
  assert.is.not(other.headers.get('etag'), etag, 'the ETag depends on the scope');
});

test('errors: unknown and invalid parameters, paging bounds, auth, method', async () => {
  const unknown = await get('/infrastructure?colour=red');
  assertProblem(unknown, 400, 'unknown_parameter');
  assert.is(unknown.body.errors[0].name, 'colour');
  const invalid = await get(
    '/infrastructure?vertical=nuclear&min_mw=abc&fast_lane=maybe&since=yesterday&county=Atlantis',
  );
  assertProblem(invalid, 400, 'invalid_parameter');
  assert.equal(invalid.body.errors.map((e: { name: string }) => e.name).sort(), [
    'county',
    'fast_lane',
    'min_mw',
    'since',
    'vertical',
  ]);
  assert.ok(invalid.body.errors.find((e: { name: string }) => e.name === 'vertical').allowed.includes('data_centre'));
  assertProblem(await get('/infrastructure?page=101'), 400, 'invalid_parameter');
  assertProblem(await get('/infrastructure?page_size=101'), 400, 'invalid_parameter');
  assertProblem(await get('/infrastructure?page=0'), 400, 'invalid_parameter');
  assertProblem(await get('/infrastructure?min_mw=60&max_mw=50'), 400, 'invalid_parameter');
  const anon = await get('/infrastructure', null);
  assertProblem(anon, 401, 'missing_key');
  assert.match(anon.headers.get('www-authenticate')!, /^Bearer/);
  assertProblem(await get('/infrastructure/renewables', 'lk_ea_' + 'x'.repeat(43)), 401, 'unknown_key');
  const post = await api.request('/v1/infrastructure', { method: 'POST' });
  assertProblem(post, 405, 'method_not_allowed');
  assert.match(post.headers.get('allow')!, /GET/);
  assert.equal(validateResponse(doc, 'get', '/infrastructure', 405, post.body), []);
});

test.run();
