/**
 * The lead filters on the GIS leads layer (issue 31.12), over real HTTP on the tiny release: the
 * GeoJSON feed and the OGC items of `leads` take every filter of `/v1/leads` (the filter table's),
 * and for several of them — `vertical`, `status`, `use_class`, `min_value`, `county`, combined,
 * with the GIS's own `bbox` / `datetime`, and `q` — `numberMatched` equals an independent DuckDB
 * count over the release's leads.parquet of the leads with coordinates, and the `total` of
 * `/v1/leads` with the same filters restricted to Ireland's box (leads without coordinates never
 * match a `bbox`); every feature returned (walked by the `next` links) satisfies the filter. A bad
 * value is the 400 problem `/v1/leads` answers, naming the parameter; a lead filter on the
 * infrastructure collection is a 400 naming it. The collection's queryables (OGC API Features
 * Part 3) list the filters as JSON Schema. With GDAL's `ogrinfo` on the PATH, it reads the OGC
 * items URL with a filter and counts the same features.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFile, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { openApiDb, sqlString, type ApiDb } from '../../../api/duckdb/db.ts';
import { GIS_LEAD_PARAMS } from '../../../api/query/feeds-query.ts';
import { FILTER_BY_NAME } from '../../../api/query/lead-filters.ts';
import { assertProblem, startTestApi, type TestApi } from '../../helpers/api.ts';
import { rfc7946Errors } from '../../helpers/geojson.ts';
import { testIf } from '../../helpers/skip.ts';

let api: TestApi;
let db: ApiDb;
let leads = '';
const LOCATED = 'lat IS NOT NULL AND lon IS NOT NULL AND isfinite(lat) AND isfinite(lon)';
/** A box around the island of Ireland: on `/v1/leads` it keeps exactly the leads with coordinates. */
const IRELAND = '-11,51,-5,56';

test.before(async () => {
  api = await startTestApi();
  db = await openApiDb({ connections: 1, threads: 1, memoryLimit: '256MB' });
  leads = `read_parquet(${sqlString(join(api.dataDir, 'current', 'leads.parquet'))})`;
});
test.after(async () => {
  db?.close();
  await api?.close();
});

/** Every feature of a GIS URL, following `next` links; checks each page and that `numberMatched` holds on every page. */
async function walk(path: string): Promise<{ features: any[]; matched: number; pages: number }> {
  const features: any[] = [];
  let url: string | null = path;
  let matched = -1;
  let pages = 0;
  while (url) {
    const res = await api.request(url, { key: api.keys.ent_feed });
    assert.is(res.status, 200, `${url}: ${res.text.slice(0, 300)}`);
    assert.match(res.headers.get('content-type')!, /^application\/geo\+json/);
    assert.equal(rfc7946Errors(res.body), []);
    if (matched >= 0) assert.is(res.body.numberMatched, matched, 'numberMatched is the same on every page');
    matched = res.body.numberMatched;
    features.push(...res.body.features);
    const next = res.body.links.find((l: any) => l.rel === 'next');
    url = next ? next.href.slice(api.baseUrl.length) : null;
    pages++;
  }
  return { features, matched, pages };
}

async function sqlIds(where: string): Promise<number[]> {
  return (await db.all<{ id: number }>(`SELECT id FROM ${leads} WHERE ${LOCATED} AND ${where} ORDER BY id`)).map((r) =>
    Number(r.id),
  );
}

/** The most common value of a column among the located leads (so the cases select something at tiny scale). */
async function common(column: string): Promise<string> {
  const [r] = await db.all<{ v: string }>(
    `SELECT ${column} AS v FROM ${leads} WHERE ${LOCATED} AND ${column} IS NOT NULL GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1`,
  );
  return r!.v;
}

interface Case {
  name: string;
  query: string;
  /** The reference selection in SQL over leads.parquet, written here without the filter table. */
  where: string;
  /** What every returned feature's properties must satisfy. */
  holds: (p: Record<string, any>) => boolean;
}

async function cases(): Promise<Case[]> {
  const county = await common('county');
  const useClass = await common('use_class');
  return [
    {
      name: 'vertical=solar',
      query: 'vertical=solar',
      where: `list_contains(verticals, 'solar')`,
      holds: (p) => p.verticals.includes('solar'),
    },
    {
      name: 'status (groups)',
      query: 'status=approved,active',
      where: `status IN ('approved', 'active')`,
      holds: (p) => ['approved', 'active'].includes(p.status),
    },
    {
      name: 'status (a stage)',
      query: 'status=commencing',
      where: `lead_readiness = 'commencing'`,
      holds: (p) => p.lead_readiness === 'commencing',
    },
    {
      name: 'use_class',
      query: `use_class=${useClass},data_centre`,
      where: `use_class IN ('${useClass}', 'data_centre')`,
      holds: (p) => [useClass, 'data_centre'].includes(p.use_class),
    },
    {
      name: 'min_value',
      query: 'min_value=750000',
      where: 'est_value >= 750000',
      holds: (p) => p.est_value !== null && p.est_value >= 750000,
    },
    // county in another case and spelling: matched as /v1/leads matches it
    {
      name: 'county',
      query: `county=${encodeURIComponent(`co. ${county.toUpperCase()}`)}`,
      where: `county = '${county}'`,
      holds: (p) => p.county === county,
    },
    {
      name: 'combined',
      query: `county=${encodeURIComponent(county)}&min_value=100000&has_contact=true&works_kind=new_works`,
      where: `county = '${county}' AND est_value >= 100000 AND has_contact AND works_kind = 'new_works'`,
      holds: (p) =>
        p.county === county && p.est_value >= 100000 && p.has_contact === true && p.works_kind === 'new_works',
    },
    {
      name: 'with bbox and received dates',
      query: 'vertical=roofing,groundworks&bbox=-9.5,51.5,-6,53.5&received_from=2024-01-01',
      where: `(list_contains(verticals, 'roofing') OR list_contains(verticals, 'groundworks')) AND round(lon, 6) BETWEEN -9.5 AND -6 AND round(lat, 6) BETWEEN 51.5 AND 53.5 AND received_date >= DATE '2024-01-01'`,
      holds: (p) =>
        (p.verticals.includes('roofing') || p.verticals.includes('groundworks')) && p.received_date >= '2024-01-01',
    },
  ];
}

test('feed and OGC items: numberMatched = an independent DuckDB count of located leads = /v1/leads total in Ireland; every feature satisfies the filter', async () => {
  const all = await cases();
  let nonEmpty = 0;
  for (const c of all) {
    const expected = await sqlIds(c.where);
    if (expected.length > 0) nonEmpty++;
    const leadsTotal = (
      await api.request(`/v1/leads?${c.query.replace(/&bbox=[^&]*/, '')}&bbox=${IRELAND}&page_size=1`, {
        key: api.keys.ent_feed,
      })
    ).body.total;
    for (const base of ['/v1/feeds/leads.geojson?page_size=40&', '/v1/ogc/collections/leads/items?limit=40&']) {
      const { features, matched, pages } = await walk(`${base}${c.query}`);
      assert.is(matched, expected.length, `${c.name} ${base}: numberMatched`);
      if (!c.query.includes('bbox='))
        assert.is(matched, leadsTotal, `${c.name} ${base}: /v1/leads total restricted to located leads`);
      assert.equal(
        features.map((f) => f.id),
        expected,
        `${c.name} ${base}: the same features, id order`,
      );
      assert.is(
        pages,
        Math.max(1, Math.ceil(expected.length / 40)),
        `${c.name}: paged by next links that keep the filters`,
      );
      for (const f of features) assert.ok(c.holds(f.properties), `${c.name}: feature ${f.id} satisfies the filter`);
    }
  }
  assert.ok(nonEmpty >= all.length - 1, `${nonEmpty} of ${all.length} cases select features at tiny scale`);
});

test('q filters the layer (the leads holding its words, as /v1/leads), features in id order', async () => {
  const word = 'extension';
  const leadsTotal = (await api.request(`/v1/leads?q=${word}&bbox=${IRELAND}&page_size=1`, { key: api.keys.ent_feed }))
    .body.total;
  assert.ok(leadsTotal > 0, 'the word occurs');
  for (const base of ['/v1/feeds/leads.geojson?', '/v1/ogc/collections/leads/items?limit=10000&']) {
    const { features, matched } = await walk(`${base}q=${word}`);
    assert.is(matched, leadsTotal, base);
    assert.equal(
      features.map((f) => f.id),
      [...features.map((f) => f.id)].sort((a, b) => a - b),
      'id order, not relevance',
    );
    const described = features.filter((f) =>
      /extension/i.test(`${f.properties.description} ${f.properties.address}`),
    ).length;
    assert.ok(described >= features.length * 0.9, `${described} of ${features.length} mention the word`);
  }
});

test('the GIS parameters still select as before beside the lead filters; datetime is received_date', async () => {
  const expected = await sqlIds(
    `list_contains(verticals, 'groundworks') AND received_date BETWEEN DATE '2024-01-01' AND DATE '2025-06-30' AND first_seen >= DATE '2000-01-01'`,
  );
  const { matched, features } = await walk(
    '/v1/ogc/collections/leads/items?limit=10000&vertical=groundworks&datetime=2024-01-01/2025-06-30&since=2000-01-01',
  );
  assert.is(matched, expected.length);
  assert.equal(
    features.map((f) => f.id),
    expected,
  );
  const authority = await common('planning_authority');
  const inAuthority = await sqlIds(`planning_authority = '${authority}' AND list_contains(verticals, 'groundworks')`);
  assert.is(
    (await walk(`/v1/feeds/leads.geojson?authority=${encodeURIComponent(authority)}&vertical=groundworks`)).matched,
    inAuthority.length,
  );
});

test('a bad value is the 400 problem of /v1/leads naming the parameter; lead filters on the infrastructure layer are refused by name', async () => {
  for (const [query, name] of [
    ['vertical=wind', 'vertical'],
    ['status=someday', 'status'],
    ['use_class=castle', 'use_class'],
    ['min_value=lots', 'min_value'],
    ['county=Atlantis', 'county'],
  ] as const) {
    const leadsRes = await api.request(`/v1/leads?${query}`, { key: api.keys.ent_feed });
    assertProblem(leadsRes, 400, 'invalid_parameter');
    for (const path of ['/v1/feeds/leads.geojson', '/v1/ogc/collections/leads/items']) {
      const res = await api.request(`${path}?${query}`, { key: api.keys.ent_feed });
      assertProblem(res, 400, 'invalid_parameter');
      assert.equal(
        res.body.errors.map((e: any) => e.name),
        [name],
        `${path}?${query}`,
      );
      assert.equal(res.body.errors, leadsRes.body.errors, `${path}?${query}: the same problem as /v1/leads`);
    }
  }
  const infra = await api.request('/v1/ogc/collections/infrastructure/items?use_class=energy&min_value=1', {
    key: api.keys.ent_feed,
  });
  assertProblem(infra, 400, 'unknown_parameter');
  assert.equal(
    infra.body.errors.map((e: any) => e.name),
    ['use_class', 'min_value'],
  );
  const infraFeed = await api.request('/v1/feeds/infrastructure.geojson?status=active', { key: api.keys.ent_feed });
  assertProblem(infraFeed, 400, 'unknown_parameter');
  // `vertical` keeps its infrastructure meaning on the infrastructure feed
  assert.is(
    (await api.request('/v1/feeds/infrastructure.geojson?vertical=solar', { key: api.keys.ent_feed })).status,
    200,
  );
});

test('queryables: the leads collection lists every lead filter as JSON Schema from the filter table, linked from the collection', async () => {
  const coll = await api.request('/v1/ogc/collections/leads', { key: api.keys.ent_feed });
  const link = coll.body.links.find((l: any) => l.rel === 'http://www.opengis.net/def/rel/ogc/1.0/queryables');
  assert.ok(link, 'the collection links to its queryables');
  assert.is(link.type, 'application/schema+json');
  const res = await api.request(new URL(link.href).pathname, { key: api.keys.ent_feed });
  assert.is(res.status, 200);
  assert.match(res.headers.get('content-type')!, /^application\/schema\+json/);
  const q = JSON.parse(res.text);
  assert.is(q.$id, link.href);
  assert.is(q.type, 'object');
  for (const name of GIS_LEAD_PARAMS) assert.ok(q.properties[name], `queryable ${name}`);
  assert.equal(
    q.properties.vertical.items.enum,
    (FILTER_BY_NAME.get('vertical') as { values: readonly string[] }).values,
  );
  assert.is(q.properties.min_value.type, 'number');
  for (const p of Object.values(q.properties) as Record<string, unknown>[])
    assert.not.ok(
      Object.keys(p).some((k) => k.startsWith('x-') && k !== 'x-ogc-role'),
      'no parser annotations',
    );
  assert.ok(q.properties.changed_since && q.properties.created_since, 'the dates');
  assert.not.ok(
    q.properties.limit || q.properties.cursor || q.properties.bbox || q.properties.since,
    'paging, core parameters and aliases are not queryables',
  );
  const infra = JSON.parse(
    (await api.request('/v1/ogc/collections/infrastructure/queryables', { key: api.keys.ent_feed })).text,
  );
  assert.not.ok(
    infra.properties.vertical || infra.properties.min_value,
    'infrastructure takes none of the lead filters',
  );
  assertProblem(await api.request('/v1/ogc/collections/nope/queryables', { key: api.keys.ent_feed }), 404, 'not_found');
});

const HAVE_GDAL = spawnSync('ogrinfo', ['--version'], { encoding: 'utf8' }).status === 0;
const withGdal = testIf(test, HAVE_GDAL ? null : 'ogrinfo (Debian gdal-bin) is not installed');

withGdal("GDAL's ogrinfo reads the OGC items URL with a filter and counts the matching leads", async () => {
  const expected = await sqlIds(`list_contains(verticals, 'solar')`);
  assert.ok(expected.length > 0);
  const url = `${api.baseUrl}/v1/ogc/collections/leads/items?vertical=solar&limit=10000`;
  const out = await new Promise<{ code: number; text: string }>((resolve) => {
    execFile(
      'ogrinfo',
      ['-ro', '-so', '-al', url],
      {
        env: {
          ...process.env,
          GDAL_HTTP_TIMEOUT: '60',
          GDAL_HTTP_HEADERS: `Authorization: Bearer ${api.keys.ent_feed}`,
        },
        encoding: 'utf8',
      },
      (e, stdout, stderr) => resolve({ code: e ? 1 : 0, text: `${stdout}\n${stderr}` }),
    );
  });
  assert.is(out.code, 0, out.text);
  assert.match(out.text, new RegExp(`Feature Count: ${expected.length}\\b`));
});

test.run();
