/**
 * `GET /v1/leads` and `GET /v1/leads/{id}` over real HTTP on the tiny release, with a key of each
 * scope; every body is validated against schemas/ (lead, lead-detail, leads-page, response-meta).
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type http from 'node:http';
import net from 'node:net';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { openApiDb, sqlString, type ApiDb } from '../../../api/duckdb/db.ts';
import { ATTRIBUTION, CAPABILITIES, SCOPES } from '../../../api/access/scopes.ts';
import { maskRecord, responseMeta } from '../../../api/access/masking.ts';
import {
  assembleLeadDetail,
  companyQuery,
  filingsQuery,
  leadByIdQuery,
  nearbyLeadsQuery,
  recentSalesQuery,
  salesSummaryQuery,
  suppliersQuery,
} from '../../../api/query/lead-detail-query.ts';
import type { Release } from '../../../api/releases/release.ts';
import { assertProblem, startTestApi, type TestApi, type TestResponse } from '../../helpers/api.ts';
import { REPO_ROOT } from '../../helpers/tmp.ts';
import { waitUntil } from '../../helpers/wait.ts';

const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as unknown as (
  a: Ajv2020,
) => Ajv2020;
const ajv = new Ajv2020({ allErrors: true, strict: false, multipleOfPrecision: 6 }); // price_eur: multipleOf 0.01
addFormats(ajv);
ajv.addKeyword({ keyword: 'x-enriched' });
for (const f of readdirSync(join(REPO_ROOT, 'schemas')).filter((f) => f.endsWith('.schema.json'))) {
  ajv.addSchema(JSON.parse(readFileSync(join(REPO_ROOT, 'schemas', f), 'utf8')));
}
const validate = (name: string, body: unknown): void => {
  const v = ajv.getSchema(`https://schemas.leads.ie/v1/${name}.schema.json`)!;
  assert.ok(v(body), `${name}: ${ajv.errorsText(v.errors)}`);
};
/** A list body: the page envelope (lead items, `_meta`). */
const validList = (res: TestResponse): void => {
  assert.is(res.status, 200, res.text.slice(0, 500));
  assert.match(res.headers.get('content-type') ?? '', /application\/json/);
  validate('leads-page', res.body);
};
/** A detail body: lead-detail plus `_meta`. */
const validDetail = (res: TestResponse): void => {
  assert.is(res.status, 200, res.text.slice(0, 500));
  const { _meta, ...detail } = res.body;
  validate('lead-detail', detail);
  validate('response-meta', _meta);
};

let api: TestApi;
let db: ApiDb;
let leadsFile: string;
const count = async (where: string): Promise<number> => {
  const [r] = await db.all<{ n: number }>(`SELECT count(*) AS n FROM ${leadsFile} WHERE ${where}`);
  return r!.n;
};
const get = (path: string, key?: string | null) => api.request(path, key === undefined ? {} : { key });

test.before(async () => {
  api = await startTestApi();
  db = await openApiDb({ connections: 1, threads: 1, memoryLimit: '128MB' });
  leadsFile = `read_parquet(${sqlString(join(api.dataDir, 'current', 'leads.parquet'))})`;
});
test.after(async () => {
  db.close();
  await api.close();
});

test('list: every scope gets the same shape; commonwealth has enriched fields null, masked and attributed', async () => {
  const bodies: Record<string, any> = {};
  for (const scope of SCOPES) {
    const res = await get(
      '/v1/leads?use_class=house,residential_multi,office,commercial&page_size=100',
      api.keys[scope],
    );
    validList(res);
    bodies[scope] = res.body;
    assert.is(res.body._meta.scope, scope);
    assert.is(res.body._meta.release, api.release());
  }
  const cw = bodies['commonwealth'];
  const ea = bodies['ent_api'];
  assert.equal(Object.keys(cw).sort(), Object.keys(ea).sort());
  assert.equal(
    cw.results.map((r: any) => r.id),
    ea.results.map((r: any) => r.id),
  );
  assert.equal(Object.keys(cw.results[0]), Object.keys(ea.results[0]));
  for (const r of cw.results)
    for (const f of [
      'applicant_org',
      'applicant_org_evidence',
      'applicant_company_number',
      'main_contractor',
      'main_contractor_evidence',
    ])
      assert.is(r[f], null, f);
  assert.ok(
    ea.results.some((r: any) => r.applicant_org !== null),
    'ent_api sees applicant organisations',
  );
  assert.ok(
    ea.results.every((r: any) => (r.applicant_org === null) === (r.applicant_org_evidence === null)),
    'ent_api sees the evidence beside each name',
  );
  assert.equal(cw._meta.masked.map((m: any) => m.field).sort(), [
    'applicant_company_number',
    'applicant_match_confidence',
    'applicant_org',
    'applicant_org_evidence',
    'main_contractor',
    'main_contractor_company_number',
    'main_contractor_evidence',
  ]);
  assert.match(
    cw._meta.masked[0].reason,
    /commonwealth does not include enriched data \(needs ent_api, ent_feed or custom\)/,
  );
  assert.is(cw._meta.attribution, ATTRIBUTION);
  for (const s of ['ent_api', 'ent_feed', 'custom']) {
    assert.equal(bodies[s]._meta.masked, [], s);
    assert.is(bodies[s]._meta.attribution, undefined, s);
  }
});

test('list: filters alone and combined match an independent count', async () => {
  const cases: [string, string][] = [
    ['vertical=solar,roofing', `('solar' = ANY(verticals) OR 'roofing' = ANY(verticals))`],
    ['authority=dun%20laoghaire-rathdown', `planning_authority = 'Dún Laoghaire-Rathdown'`],
    ['authority=DUN%20LAOGHAIRE-RATHDOWN,fingal', `planning_authority IN ('Dún Laoghaire-Rathdown', 'Fingal')`],
    ['county=cork', `county = 'Cork'`],
    ['readiness=commencing,under_construction', `lead_readiness IN ('commencing', 'under_construction')`],
    ['status=approved', `status = 'approved'`],
    ['use_class=house', `use_class = 'house'`],
    ['scale=major,large', `scale IN ('major', 'large')`],
    ['min_value=400000', 'est_value >= 400000'],
    ['min_units=2', 'num_units >= 2'],
    ['has_contact=false', 'NOT has_contact'],
    ['has_contact=1', 'has_contact'],
    ['demolition=1', 'demolition'],
    ['demolition=false', 'NOT demolition'],
    [
      'county=Dublin&status=planning,approved&min_value=100000',
      `county = 'Dublin' AND status IN ('planning', 'approved') AND est_value >= 100000`,
    ],
    [
      'vertical=electrical&demolition=0&has_contact=true&scale=minor',
      `'electrical' = ANY(verticals) AND NOT demolition AND has_contact AND scale = 'minor'`,
    ],
    ['application_type=retention', `application_type = 'RETENTION'`],
    ['application_type=Permission,OUTLINE%20permission', `application_type IN ('PERMISSION', 'OUTLINE PERMISSION')`],
    ['received_from=2025-06-01', `received_date >= DATE '2025-06-01'`],
    ['received_to=2025-06-01', `received_date <= DATE '2025-06-01'`],
    [
      'received_from=2025-05-01&received_to=2025-05-31',
      `received_date BETWEEN DATE '2025-05-01' AND DATE '2025-05-31'`,
    ],
    [
      'received_from=2025-03-01&received_to=2025-09-30&application_type=permission&county=cork',
      `received_date BETWEEN DATE '2025-03-01' AND DATE '2025-09-30' AND application_type = 'PERMISSION' AND county = 'Cork'`,
    ],
    ['works_kind=retention', `works_kind = 'retention' AND len(verticals) = 0`], // no work to sell: no verticals
    ['works_kind=new_works,outline', `works_kind IN ('new_works', 'outline')`],
    ['explicit_vertical=roofing', `'roofing' = ANY(explicit_verticals) AND 'roofing' = ANY(verticals)`],
    ['vertical=roofing&works_kind=retention', "FALSE OR (works_kind = 'retention' AND 'roofing' = ANY(verticals))"],
  ];
  for (const [qs, where] of cases) {
    const res = await get(`/v1/leads?${qs}&page_size=5`);
    validList(res);
    const n = await count(where);
    assert.is(res.body.total, n, qs);
    if (qs === 'vertical=roofing&works_kind=retention') assert.is(n, 0, 'a retention lead is in no trade feed');
    else assert.ok(n > 0, `${qs} matches something`);
  }
  // explicit_vertical=X is the part of vertical=X whose text names the trade
  const implied = await get('/v1/leads?vertical=roofing&page_size=1');
  const explicit = await get('/v1/leads?explicit_vertical=roofing&page_size=1');
  assert.ok(explicit.body.total < implied.body.total, `${explicit.body.total} < ${implied.body.total}`);
  // both date bounds are inclusive: from = to = the newest lead's day holds that lead
  const day = (await get('/v1/leads?page_size=1')).body.results[0].received_date as string;
  const one = await get(`/v1/leads?received_from=${day}&received_to=${day}&page_size=100`);
  validList(one);
  assert.ok(one.body.total > 0);
  assert.is(one.body.total, await count(`received_date = DATE '${day}'`));
  assert.ok(one.body.results.every((r: { received_date: string }) => r.received_date === day));
});

test('list: errors name each parameter, list allowed values, reject unknown parameters', async () => {
  let res = await get('/v1/leads?vertical=solar,moon&scale=huge');
  assertProblem(res, 400, 'invalid_parameter');
  const byName = Object.fromEntries(res.body.errors.map((e: any) => [e.name, e]));
  assert.ok(byName.vertical.allowed.includes('solar'));
  assert.equal(byName.scale.allowed, ['minor', 'medium', 'large', 'major']);
  res = await get('/v1/leads?colour=red');
  assertProblem(res, 400, 'unknown_parameter');
  assert.equal(res.body.errors, [{ name: 'colour', reason: 'unknown parameter' }]);
  res = await get('/v1/leads?county=Atlantis');
  assertProblem(res, 400, 'invalid_parameter');
  assert.ok(res.body.errors[0].allowed.includes('Cork'));
  for (const qs of [
    'min_value=-1',
    'min_value=abc',
    'min_units=1.5',
    'has_contact=maybe',
    'demolition=2',
    'page=0',
    'page_size=0',
    'page_size=101',
    'sort=relevance',
    'sort=random',
    'q=',
  ]) {
    res = await get(`/v1/leads?${qs}`);
    assertProblem(res, 400, 'invalid_parameter');
    assert.is(res.body.errors[0].name, qs.split('=')[0], qs);
  }
  // the received_date range and application_type
  for (const [qs, name, reason] of [
    ['received_from=2025-02-30', 'received_from', 'must be a date YYYY-MM-DD'],
    ['received_to=yesterday', 'received_to', 'must be a date YYYY-MM-DD'],
    ['received_from=2025-1-5', 'received_from', 'must be a date YYYY-MM-DD'],
    ['received_from=2025-06-02&received_to=2025-06-01', 'received_to', 'must not be before received_from'],
    ['received_from=2025-01-01&received_from=2025-02-01', 'received_from', 'given more than once'],
  ] as const) {
    res = await get(`/v1/leads?${qs}`);
    assertProblem(res, 400, 'invalid_parameter');
    assert.equal(res.body.errors, [{ name, reason }], qs);
  }
  res = await get('/v1/leads?application_type=permission,demolition%20notice');
  assertProblem(res, 400, 'invalid_parameter');
  assert.is(res.body.errors[0].name, 'application_type');
  assert.is(res.body.errors[0].reason, 'unknown application_type "demolition notice"');
  assert.ok(
    res.body.errors[0].allowed.includes('PERMISSION') && res.body.errors[0].allowed.includes('RETENTION'),
    "the release's values are listed",
  );
  res = await get('/v1/leads?page=101');
  assertProblem(res, 400, 'invalid_parameter');
  assert.is(res.body.errors[0].name, 'page');
  assert.match(res.body.errors[0].reason, /cursor/);
  res = await get('/v1/leads?page=2&cursor=abc');
  assertProblem(res, 400, 'invalid_parameter');
  res = await get('/v1/leads?cursor=not-a-cursor');
  assertProblem(res, 400, 'invalid_parameter');
  assert.is(res.body.errors[0].name, 'cursor');
  const first = await get('/v1/leads?county=Cork&page_size=2');
  res = await get(`/v1/leads?county=Dublin&page_size=2&cursor=${first.body.next_cursor}`);
  assertProblem(res, 400, 'invalid_parameter');
  assert.is(res.body.errors[0].name, 'cursor');
});

test('list: page bounds and defaults', async () => {
  let res = await get('/v1/leads');
  validList(res);
  assert.is(res.body.page, 1);
  assert.is(res.body.page_size, 25);
  assert.is(res.body.results.length, 25);
  res = await get('/v1/leads?page_size=100&page=100');
  validList(res);
  assert.is(res.body.page, 100);
  res = await get('/v1/leads?page_size=1');
  assert.is(res.body.results.length, 1);
  assert.type(res.body.next_cursor, 'string');
});

test('list: page walk and cursor walk give every lead once, in the same order, equal to total', async () => {
  const qs = 'county=Dublin,Cork&page_size=40';
  const pageIds: number[] = [];
  let total = 0;
  for (let page = 1; ; page++) {
    const res = await get(`/v1/leads?${qs}&page=${page}`);
    validList(res);
    total = res.body.total;
    pageIds.push(...res.body.results.map((r: any) => r.id));
    if (res.body.next_cursor === null) break;
  }
  const cursorIds: number[] = [];
  let cursor: string | null = null;
  do {
    const res: TestResponse = await get(`/v1/leads?${qs}${cursor ? `&cursor=${cursor}` : ''}`);
    validList(res);
    if (cursor) assert.is(res.body.page, null);
    cursorIds.push(...res.body.results.map((r: any) => r.id));
    cursor = res.body.next_cursor;
  } while (cursor);
  assert.ok(total > 80);
  assert.is(pageIds.length, total);
  assert.is(new Set(pageIds).size, total);
  assert.equal(cursorIds, pageIds);
  assert.is(total, await count(`county IN ('Dublin', 'Cork')`));
});

test('list: sort orders', async () => {
  const check = async (sort: string, key: (r: any) => string | number, desc: boolean) => {
    const res = await get(`/v1/leads?sort=${sort}&page_size=100&county=Dublin`);
    validList(res);
    const rs = res.body.results;
    for (let i = 1; i < rs.length; i++) {
      const [a, b] = [key(rs[i - 1]), key(rs[i])];
      assert.ok(
        desc ? a > b || (a === b && rs[i - 1].id > rs[i].id) : a < b || (a === b && rs[i - 1].id < rs[i].id),
        `${sort} row ${i}`,
      );
    }
  };
  await check('newest', (r) => r.received_date, true);
  await check('oldest', (r) => r.received_date, false);
  await check('value_desc', (r) => r.est_value, true);
  await check('value_asc', (r) => r.est_value, false);
  await check('last_changed', (r) => r.last_changed, true);
  await check('last_changed_asc', (r) => r.last_changed, false);
});

test('list: q ranks a lead holding the rare term first, counts with filters, and pages by cursor', async () => {
  // a term of the release's index held by one lead only
  const file = (f: string) => `read_parquet(${sqlString(join(api.dataDir, 'current', f))})`;
  const [lead] = await db.all<{ id: number; term: string; county: string }>(
    `SELECT p.lead_id AS id, t.term, l.county FROM ${file('search_terms.parquet')} t JOIN ${file('search_postings.parquet')} p USING (term)
     JOIN ${leadsFile} l ON l.id = p.lead_id WHERE t.df = 1 AND regexp_full_match(t.term, '[a-z]{5,}') ORDER BY t.term LIMIT 1`,
  );
  // OR: every word is required unless OR says otherwise (docs/search.md "Query syntax")
  let res = await get(`/v1/leads?q=${encodeURIComponent(`${lead!.term} OR extension`)}`);
  validList(res);
  assert.is(res.body.results[0].id, lead!.id);
  res = await get(`/v1/leads?q=extension&county=${lead!.county}&page_size=7`);
  validList(res);
  const total = res.body.total;
  assert.ok(total > 7);
  const ids: number[] = res.body.results.map((r: any) => r.id);
  let cursor = res.body.next_cursor;
  while (cursor) {
    const next = await get(`/v1/leads?q=extension&county=${lead!.county}&page_size=7&cursor=${cursor}`);
    validList(next);
    ids.push(...next.body.results.map((r: any) => r.id));
    cursor = next.body.next_cursor;
  }
  assert.is(ids.length, total);
  assert.is(new Set(ids).size, total);
  res = await get(`/v1/leads?q=extension&county=${lead!.county}&sort=newest&page_size=100`);
  assert.is(res.body.total, total);
});

test('list: pages from reused buffers stay intact while slow clients have not read them yet', async () => {
  // The route writes pages into pooled buffers and gives one back when its response has been
  // handed to the socket. A client that pipelines requests and does not read keeps the server's
  // writes pending once the socket buffers are full; meanwhile other requests take buffers from
  // the pool. A buffer given back too early would be overwritten, and the slow client would read
  // someone else's page.
  const key = api.keys.ent_feed; // no daily row budget: this test reads thousands of rows
  const big = ['value_desc', 'value_asc', 'newest', 'oldest'].map((sort) => `/v1/leads?sort=${sort}&page_size=100`);
  const want = await Promise.all(big.map(async (p) => (await get(p, key)).text));
  // The server's side of each connection (by client port) and how many of its responses are finished.
  const accepted = new Map<number, net.Socket>();
  const finished = new Map<number, number>();
  const onConnection = (s: net.Socket): void => void accepted.set(s.remotePort!, s);
  const onRequest = (req: http.IncomingMessage, res: http.ServerResponse): void => {
    const port = req.socket.remotePort!;
    res.once('finish', () => finished.set(port, (finished.get(port) ?? 0) + 1));
  };
  api.server.server.on('connection', onConnection).on('request', onRequest);
  const slow = await Promise.all(Array.from({ length: 3 }, () => rawPipeline(api.baseUrl, key)));
  try {
    // Each slow client pipelines pages until the server is stuck on it: the socket buffers are
    // full and the server's writes wait for the client to read (its side needs a drain). How many
    // that takes depends on the kernel's buffers, so it is awaited, not guessed.
    for (const s of slow) {
      const stuck = (): boolean => accepted.get(s.port)?.writableNeedDrain === true;
      for (let batch = 0; !stuck(); batch++) {
        assert.ok(
          batch < 80,
          `the server still had no writes pending after ${s.sent} pages to a client that does not read`,
        );
        s.send(big);
        await waitUntil(
          'the server has answered every page sent or is waiting for the client to read',
          () => stuck() || finished.get(s.port) === s.sent,
        );
      }
    }
  } finally {
    api.server.server.off('connection', onConnection).off('request', onRequest);
  }
  const paths = [
    '',
    'county=Cork',
    'q=extension',
    'status=approved&page=3',
    'sort=oldest&page_size=90',
    'vertical=solar,roofing&page_size=60',
  ].map((q) => `/v1/leads?${q}`);
  const alone = new Map<string, string>();
  for (const p of paths) alone.set(p, (await get(p, key)).text);
  for (let round = 0; round < 4; round++) {
    const got = await Promise.all(paths.map(async (p) => [p, (await get(p, key)).text] as const));
    for (const [p, text] of got) assert.is(text, alone.get(p), p);
  }
  for (const s of slow) {
    const bodies = await s.bodies();
    assert.is(bodies.length, s.sent);
    for (let i = 0; i < bodies.length; i++)
      assert.ok(bodies[i] === want[i % want.length], `a slow client reads its own pages (page ${i} of ${s.sent})`);
  }
});

test('detail: same keys for every scope, enriched sections null for commonwealth', async () => {
  const [rich] = await db.all<{ id: number }>(
    `SELECT id FROM ${leadsFile} WHERE applicant_company_number IS NOT NULL AND main_contractor IS NOT NULL ORDER BY id LIMIT 1`,
  );
  assert.ok(rich, 'a lead with an applicant company and a contractor');
  const bodies: Record<string, any> = {};
  for (const scope of SCOPES) {
    const res = await get(`/v1/leads/${rich!.id}`, api.keys[scope]);
    validDetail(res);
    bodies[scope] = res.body;
  }
  const cw = bodies['commonwealth'];
  const ea = bodies['ent_api'];
  assert.equal(Object.keys(cw), Object.keys(ea));
  for (const f of ['suppliers', 'registered_company', 'company_filings', 'main_contractor', 'applicant_org'])
    assert.is(cw[f], null, f);
  assert.ok(cw._meta.masked.some((m: any) => m.field === 'registered_company'));
  assert.is(cw._meta.attribution, ATTRIBUTION);
  assert.equal(cw.project, ea.project);
  assert.equal(cw.area_comparables, ea.area_comparables);
  assert.is(ea.registered_company.company_number, ea.applicant_company_number);
  assert.type(ea.registered_company.match_confidence, 'number');
  assert.is(ea.main_contractor.name.length > 0, true);
  assert.ok(Array.isArray(ea.suppliers) && Array.isArray(ea.company_filings));
  assert.equal(ea._meta.masked, []);
  const filings = ea.company_filings.map((f: any) => f.filing_date);
  assert.equal(filings, [...filings].sort().reverse(), 'filings newest first');
  assert.ok(ea.suppliers.length <= 10);
  assert.is(ea.area_comparables.window_months, 24);
});

test('detail: the body is exactly the reference (SQL builders, assembleLeadDetail, maskRecord), byte for byte, for every scope', async () => {
  const pq = (t: string): string => `read_parquet(${sqlString(join(api.dataDir, 'current', `${t}.parquet`))})`;
  const t = Object.fromEntries(
    ['leads', 'lead_neighbours', 'suppliers', 'companies', 'filings', 'sales'].map((n) => [n, pq(n)]),
  ) as unknown as Release['tables'];
  const q = (x: { sql: string; params: unknown[] }): Promise<Record<string, unknown>[]> => db.all(x.sql, x.params);
  // leads with a main contractor, an applicant company and neither
  const ids = (
    await db.all<{ id: number }>(
      `(SELECT id FROM ${t.leads} WHERE main_contractor IS NOT NULL ORDER BY id LIMIT 12)
       UNION (SELECT id FROM ${t.leads} WHERE applicant_company_number IS NOT NULL ORDER BY id LIMIT 12)
       UNION (SELECT id FROM ${t.leads} WHERE id % 29 = 0 ORDER BY id LIMIT 12)`,
    )
  ).map((r) => r.id);
  assert.ok(ids.length >= 24);
  for (const id of ids) {
    const [lead] = await q(leadByIdQuery(t, id));
    const l = lead as {
      county: string;
      eircode_routing_key: string | null;
      received_date: string;
      verticals: string[] | null;
      applicant_company_number: string | null;
      main_contractor_company_number: string | null;
    };
    const [summary] = await q(salesSummaryQuery(t, l));
    const base = {
      lead: lead!,
      salesSummary: summary,
      recentSales: await q(recentSalesQuery(t, l)),
      nearby: await q(nearbyLeadsQuery(t, id)),
    };
    const company = async (no: string | null): Promise<Record<string, unknown> | null> =>
      no ? ((await q(companyQuery(t, no)))[0] ?? null) : null;
    const enrichedRows = {
      suppliers: await q(suppliersQuery(t, l.county, l.verticals ?? [])),
      contractorCompany: await company(l.main_contractor_company_number),
      applicantCompany: await company(l.applicant_company_number),
      filings: l.applicant_company_number ? await q(filingsQuery(t, l.applicant_company_number)) : [],
    };
    for (const scope of ['commonwealth', 'ent_api', 'ent_feed', 'custom'] as const) {
      const res = await get(`/v1/leads/${id}`, api.keys[scope]);
      assert.is(res.status, 200, res.text.slice(0, 300));
      const detail = assembleLeadDetail(CAPABILITIES[scope].enriched ? { ...base, ...enrichedRows } : base);
      const { record, masked } = maskRecord('lead-detail', detail, scope);
      assert.is(
        res.text,
        JSON.stringify({ ...record, _meta: responseMeta(api.release(), scope, masked) }),
        `lead ${id} as ${scope}`,
      );
    }
  }
});

test('detail: area comparables and nearby leads', async () => {
  const [n] = await db.all<{ lead_id: number }>(
    `SELECT lead_id FROM read_parquet(${sqlString(join(api.dataDir, 'current', 'lead_neighbours.parquet'))}) ORDER BY lead_id LIMIT 1`,
  );
  const res = await get(`/v1/leads/${n!.lead_id}`);
  validDetail(res);
  const a = res.body.area_comparables;
  assert.ok(a.nearby_leads.length > 0);
  const d = a.nearby_leads.map((x: any) => x.distance_m);
  assert.equal(
    d,
    [...d].sort((x: number, y: number) => x - y),
  );
  assert.ok(a.recent_sales.length <= 5);
  assert.is(a.sales_count === 0, a.median_price_eur === null);
  assert.is(
    res.body.zoning_and_appeals.land_use_code === null ||
      typeof res.body.zoning_and_appeals.land_use_description === 'string',
    true,
  );
});

test('detail: 404 and 400 problems', async () => {
  assertProblem(await get('/v1/leads/99999999'), 404, 'not_found');
  for (const bad of ['abc', '0', '-1', '1.5']) {
    const res = await get(`/v1/leads/${bad}`);
    assertProblem(res, 400, 'invalid_parameter');
    assert.is(res.body.errors[0].name, 'id');
  }
  assertProblem(await get('/v1/leads/1?expand=all'), 400, 'unknown_parameter');
});

/**
 * A raw socket that pipelines GETs (`send`) and does not read them (the server's writes stay
 * pending once the socket buffers are full); `bodies()` reads the responses to every GET sent,
 * in order, then closes the socket.
 */
async function rawPipeline(
  baseUrl: string,
  key: string,
): Promise<{ port: number; readonly sent: number; send: (paths: string[]) => void; bodies: () => Promise<string[]> }> {
  const url = new URL(baseUrl);
  const socket = net.connect(Number(url.port), url.hostname);
  await new Promise((r) => socket.once('connect', r));
  socket.pause();
  let sent = 0;
  return {
    port: socket.localPort!,
    get sent() {
      return sent;
    },
    send(paths) {
      sent += paths.length;
      socket.write(
        paths.map((p) => `GET ${p} HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${key}\r\n\r\n`).join(''),
      );
    },
    bodies: () =>
      new Promise((resolve, reject) => {
        let all = Buffer.alloc(0);
        const out: string[] = [];
        socket.on('data', (c: Buffer) => {
          all = Buffer.concat([all, c]);
          for (;;) {
            const head = all.indexOf('\r\n\r\n');
            if (head < 0) break;
            const length = Number(/content-length: (\d+)/i.exec(all.subarray(0, head).toString('latin1'))![1]);
            if (all.length < head + 4 + length) break;
            out.push(all.subarray(head + 4, head + 4 + length).toString('utf8'));
            all = all.subarray(head + 4 + length);
          }
          if (out.length === sent) {
            socket.destroy();
            resolve(out);
          }
        });
        socket.on('error', reject);
        socket.on('close', () => reject(new Error(`the connection closed after ${out.length} of ${sent} responses`)));
        socket.resume();
      }),
  };
}

test.run();
