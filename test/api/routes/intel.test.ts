/**
 * GET /v1/intel/analytics and /v1/intel/analytics/price-index.svg over real HTTP on the tiny
 * release: every section for every enriched scope (rows checked against the release's Parquet),
 * commonwealth refused with a 403 problem naming the scopes that may, parameters a section does
 * not take, bad periods, paging, and the chart. Every JSON body is validated against the OpenAPI
 * document by the test helper.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { join } from 'node:path';
import { openApiDb, sqlString } from '../../../api/duckdb/db.ts';
import { startTestApi, assertProblem, tinyRelease, type TestApi } from '../../helpers/api.ts';

let api: TestApi;
const table: Record<string, Record<string, any>[]> = {};

test.before(async () => {
  api = await startTestApi();
  const db = await openApiDb({ connections: 1, threads: 1, memoryLimit: '128MB' });
  try {
    for (const t of ['price_index', 'yields', 'emerging_zones', 'material_costs']) {
      table[t] = await db.all(
        `SELECT * FROM read_parquet(${sqlString(join((await tinyRelease()).dir, `${t}.parquet`))})`,
      );
    }
  } finally {
    db.close();
  }
});
test.after(async () => {
  await api?.close();
});

const ENRICHED = ['ent_api', 'ent_feed', 'custom'] as const;

/** Every row of a query, page by page (page_size 100, the maximum). */
async function getAll(qs: string): Promise<{ total: number; results: any[] }> {
  const results: any[] = [];
  let total = 0;
  for (let page = 1; ; page++) {
    const res = await api.request(`/v1/intel/analytics${qs}&page_size=100&page=${page}`);
    assert.is(res.status, 200, `${qs} page ${page}: ${res.text.slice(0, 300)}`);
    total = res.body.total;
    results.push(...res.body.results);
    if (res.body.next_page === null) return { total, results };
  }
}

test('every section answers every enriched scope; commonwealth gets 403 insufficient_scope', async () => {
  for (const section of ['price_index', 'yields', 'emerging_zones', 'material_costs']) {
    for (const scope of ENRICHED) {
      const res = await api.request(`/v1/intel/analytics?section=${section}`, { key: api.keys[scope] });
      assert.is(res.status, 200, `${section} ${scope}: ${res.text.slice(0, 300)}`);
      assert.is(res.body.section, section);
      assert.ok(res.body.results.length > 0, `${section} has rows`);
      assert.is(res.body._meta.scope, scope);
      assert.equal(res.body._meta.masked, []);
    }
    const cw = await api.request(`/v1/intel/analytics?section=${section}`, { key: api.keys.commonwealth });
    assertProblem(cw, 403, 'insufficient_scope');
    assert.match(cw.body.detail, /commonwealth .*needs ent_api, ent_feed or custom/);
  }
  assertProblem(
    await api.request('/v1/intel/analytics/price-index.svg', { key: api.keys.commonwealth }),
    403,
    'insufficient_scope',
  );
  assertProblem(await api.request('/v1/intel/analytics?section=yields', { key: null }), 401, 'missing_key');
});

test('price_index: the national series by default, national + counties with county=, range by from/to', async () => {
  const national = table.price_index!.filter((r) => r.area === 'Ireland');
  const res = await getAll('?section=price_index');
  assert.is(res.total, national.length);
  assert.ok(res.results.every((r: any) => r.area === 'Ireland' && r.county === null));
  assert.equal(
    res.results.map((r: any) => r.quarter),
    national.map((r) => r.quarter).sort(),
  );
  assert.is(res.results[0].index_value, 100, 'the base quarter is 100');

  const cork = table.price_index!.filter(
    (r) => r.area === 'Cork' && r.period_start >= '2015-01-01' && r.period_start <= '2019-12-31',
  );
  const nat = national.filter((r) => r.period_start >= '2015-01-01' && r.period_start <= '2019-12-31');
  const both = await getAll('?section=price_index&county=cork&from=2015&to=2019Q4');
  assert.is(both.total, cork.length + nat.length);
  assert.equal([...new Set(both.results.map((r: any) => r.area))], ['Ireland', 'Cork'], 'national first');
  for (const r of both.results) assert.ok(r.period_start >= '2015-01-01' && r.period_start <= '2019-12-31', r.quarter);
});

test('yields: latest quarter by default, county filter, every quarter of a range; yields = rent × 12 / price', async () => {
  const latest = table
    .yields!.map((r) => r.period_start)
    .sort()
    .at(-1);
  const res = await getAll('?section=yields');
  assert.is(res.total, table.yields!.filter((r) => r.period_start === latest).length);
  for (const r of res.results) {
    assert.is(r.period_start, latest);
    assert.ok(
      Math.abs(r.gross_yield_pct - (r.monthly_rent_eur * 12 * 100) / r.typical_price_eur) < 0.01,
      `${r.area} ${r.property_type}`,
    );
    assert.ok(r.sales >= 10);
  }
  const dub = await getAll('?section=yields&county=Dublin&from=2020-01&to=2020-12');
  assert.ok(dub.total > 0);
  assert.is(
    dub.total,
    table.yields!.filter(
      (r) => r.county === 'Dublin' && r.period_start >= '2020-01-01' && r.period_start <= '2020-12-31',
    ).length,
  );
  assert.ok(dub.results.every((r: any) => r.county === 'Dublin' && r.quarter.startsWith('2020')));
});

test('emerging_zones: ranked with components; material_costs: latest month per material, or a range', async () => {
  const z = await api.request('/v1/intel/analytics?section=emerging_zones&page_size=100');
  assert.is(z.body.total, table.emerging_zones!.length);
  assert.equal(
    z.body.results.map((r: any) => r.rank),
    z.body.results.map((_: unknown, i: number) => i + 1),
  );
  for (let i = 1; i < z.body.results.length; i++) assert.ok(z.body.results[i - 1].score >= z.body.results[i].score);
  const two = await api.request('/v1/intel/analytics?section=emerging_zones&county=Meath,Cork');
  assert.equal(two.body.results.map((r: any) => r.county).sort(), ['Cork', 'Meath']);

  const m = await api.request('/v1/intel/analytics?section=material_costs&page_size=100');
  const materials = new Set(table.material_costs!.map((r) => r.material));
  assert.is(m.body.total, materials.size);
  assert.is(m.body.results[0].material, 'All materials');
  assert.ok(m.body.results.every((r: any) => r.latest));
  const steel = table
    .material_costs!.filter((r) => r.material === 'Structural steel')
    .sort((a, b) => (a.month < b.month ? -1 : 1));
  const last = steel.at(-1)!;
  const yearAgo = steel.find((r) => r.month === `${Number(last.month.slice(0, 4)) - 1}${last.month.slice(4)}`)!;
  const served = m.body.results.find((r: any) => r.material === 'Structural steel');
  assert.is(served.yoy_pct, Math.round((last.index_value / yearAgo.index_value - 1) * 1000) / 10);
  const range = await getAll('?section=material_costs&from=2022-01&to=2022-12');
  assert.is(range.total, materials.size * 12);
  assert.is(range.results.length, range.total);
});

test('paging: page and page_size walk the rows once; next_page null at the end', async () => {
  const all = (await api.request('/v1/intel/analytics?section=yields&from=2010&page_size=1')).body;
  const seen: string[] = [];
  for (let page = 1; ; page++) {
    const res = await api.request(`/v1/intel/analytics?section=yields&from=2010&page_size=97&page=${page}`);
    for (const r of res.body.results) seen.push(`${r.area}|${r.property_type}|${r.quarter}`);
    if (res.body.next_page === null) break;
    assert.is(res.body.next_page, page + 1);
  }
  assert.is(seen.length, all.total);
  assert.is(new Set(seen).size, seen.length);
});

test('bad requests: 400 problems naming each parameter', async () => {
  const bad = async (qs: string, code: string, name: string): Promise<void> => {
    const res = await api.request(`/v1/intel/analytics${qs}`);
    assertProblem(res, 400, code);
    assert.ok(
      res.body.errors.some((e: any) => e.name === name),
      `${qs}: ${JSON.stringify(res.body.errors)}`,
    );
  };
  await bad('?county=Cork', 'invalid_parameter', 'section'); // (without any parameter: the summary, test/api/small-print.test.ts)
  await bad('?section=prices', 'invalid_parameter', 'section');
  await bad('?section=yields&colour=red', 'unknown_parameter', 'colour');
  await bad('?section=yields&county=Antrim', 'invalid_parameter', 'county');
  await bad('?section=material_costs&county=Cork', 'invalid_parameter', 'county');
  await bad('?section=emerging_zones&from=2020', 'invalid_parameter', 'from');
  await bad('?section=yields&from=2020-13', 'invalid_parameter', 'from');
  await bad('?section=yields&from=2021-02-30', 'invalid_parameter', 'from');
  await bad('?section=yields&from=2022&to=2021', 'invalid_parameter', 'to');
  await bad('?section=yields&page=0', 'invalid_parameter', 'page');
  await bad('?section=yields&page_size=100000', 'invalid_parameter', 'page_size');
  await bad('?section=yields&section=price_index', 'invalid_parameter', 'section');
  const svg = await api.request('/v1/intel/analytics/price-index.svg?county=Cork,Kerry');
  assertProblem(svg, 400, 'invalid_parameter');
});

test('price-index.svg: an SVG document of the national and county series', async () => {
  const res = await api.request('/v1/intel/analytics/price-index.svg?county=Galway');
  assert.is(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^image\/svg\+xml/);
  assert.match(res.text, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
  const paths = [...res.text.matchAll(/<path class="series" data-area="([^"]+)" data-points="(\d+)"/g)].map((m) => [
    m[1],
    Number(m[2]),
  ]);
  assert.equal(paths, [
    ['Ireland', table.price_index!.filter((r) => r.area === 'Ireland').length],
    ['Galway', table.price_index!.filter((r) => r.area === 'Galway').length],
  ]);
  const etag = res.headers.get('etag');
  assert.ok(etag);
  const again = await api.request('/v1/intel/analytics/price-index.svg?county=Galway', {
    headers: { 'If-None-Match': etag! },
  });
  assert.is(again.status, 304);
});

test.run();
