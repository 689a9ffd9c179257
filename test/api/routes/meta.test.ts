/** GET /v1/meta: release, counts, freshness and enums, checked against an independent read of the release. */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildOpenApi } from '../../../api/openapi/document.ts';
import { readCurrentLink } from '../../../api/releases/release.ts';
import { ATTRIBUTION, SCOPES } from '../../../api/access/scopes.ts';
import { openDb } from '../../../pipeline/lib/duckdb.ts';
import { assertProblem, publishCopyOfRelease, startTestApi, type TestApi } from '../../helpers/api.ts';
import { validateResponse } from '../../helpers/openapi.ts';
import { REPO_ROOT } from '../../helpers/tmp.ts';

let api: TestApi;
let manifest: Record<string, any>;
let leadsFile: string;
test.before(async () => {
  api = await startTestApi();
  const dir = readCurrentLink(api.dataDir)!.dir;
  manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'));
  leadsFile = join(dir, 'leads.parquet');
});
test.after(async () => {
  await api.close();
});

const leadSchema = JSON.parse(readFileSync(join(REPO_ROOT, 'schemas/lead.schema.json'), 'utf8'));

test('release, counts and _meta come from the manifest; the body matches the OpenAPI document', async () => {
  const res = await api.request('/v1/meta');
  assert.is(res.status, 200);
  assert.match(res.headers.get('content-type')!, /^application\/json/);
  const b = res.body;
  assert.equal(Object.keys(b).sort(), [
    '_meta',
    'counts',
    'enums',
    'freshness',
    'freshness_by_source',
    'release',
    'release_status',
  ]);
  assert.equal(b.release_status, { serving: b.release.id, refused: null });
  assert.equal(b.release, {
    id: manifest.release_id,
    built_at: manifest.built_at,
    as_of: manifest.as_of,
    schema_version: manifest.schema_version,
  });
  assert.is(b.release.id, api.release());
  assert.equal(b.counts, { tables: manifest.counts.tables, records_total: manifest.counts.records_total });
  assert.equal(b._meta, { release: api.release(), scope: 'ent_api', masked: [] });
  assert.equal(validateResponse(buildOpenApi(api.config), 'get', '/meta', 200, b), []);
});

test('freshness and data-dependent enums equal an independent query of leads.parquet', async () => {
  const b = (await api.request('/v1/meta')).body;
  const db = await openDb();
  try {
    const src = `read_parquet('${leadsFile}')`;
    const fresh = await db.all(
      `SELECT planning_authority AS authority, min(county) AS county, count(*)::INTEGER AS leads, strftime(max(received_date), '%Y-%m-%d') AS latest_received
       FROM ${src} GROUP BY 1 ORDER BY 1`,
    );
    assert.equal(b.freshness, fresh);
    for (const f of b.freshness) assert.is(f.leads, manifest.counts.authorities[f.authority].leads, f.authority);
    const distinct = async (sql: string) => (await db.all<{ v: string }>(sql)).map((r) => r.v);
    assert.equal(b.enums.vertical, await distinct(`SELECT DISTINCT unnest(verticals) AS v FROM ${src} ORDER BY v`));
    assert.equal(b.enums.use_class, await distinct(`SELECT DISTINCT use_class AS v FROM ${src} ORDER BY v`));
    assert.equal(b.enums.county, await distinct(`SELECT DISTINCT county AS v FROM ${src} ORDER BY v`));
    assert.equal(b.enums.authority, await distinct(`SELECT DISTINCT planning_authority AS v FROM ${src} ORDER BY v`));
    assert.ok(b.enums.vertical.length > 3 && b.enums.authority.length > 20);
  } finally {
    db.close();
  }
});

test('fixed enums are the full lists of schemas/lead.schema.json', async () => {
  const e = (await api.request('/v1/meta')).body.enums;
  assert.equal(Object.keys(e).sort(), [
    'authority',
    'county',
    'explicit_vertical',
    'readiness',
    'scale',
    'status',
    'use_class',
    'vertical',
    'works_kind',
  ]);
  assert.equal(e.works_kind, leadSchema.properties.works_kind.enum);
  assert.equal(e.explicit_vertical, e.vertical);
  assert.equal(e.scale, leadSchema.properties.scale.enum);
  assert.equal(e.readiness, leadSchema.properties.lead_readiness.enum);
  assert.equal(e.status, leadSchema.properties.status.enum);
});

test('same shape for every scope; attribution only for commonwealth', async () => {
  const bodies = await Promise.all(
    SCOPES.map(async (scope) => [scope, (await api.request('/v1/meta', { key: api.keys[scope] })).body] as const),
  );
  const strip = (b: any) => ({ ...b, _meta: undefined });
  for (const [scope, b] of bodies) {
    assert.equal(strip(b), strip(bodies[0]![1]), scope);
    assert.is(b._meta.scope, scope);
    assert.equal(b._meta.masked, []);
    if (scope === 'commonwealth') assert.is(b._meta.attribution, ATTRIBUTION);
    else assert.not.ok('attribution' in b._meta, scope);
  }
});

test('sources_freshness: shown after freshness when the release manifest has it (from the fetch log), matching the OpenAPI document', async () => {
  const freshness = {
    origin: 'fetched',
    updated_at: '2026-11-09T05:10:00.000Z',
    downloads: [
      {
        source: 'planning',
        file: 'planning-applications.json',
        protocol: 'arcgis-featureserver',
        url: 'https://example.org/FeatureServer/0',
        status: 'fetched',
        checked_at: '2026-11-09T05:00:00.000Z',
        fetched_at: '2026-11-09T05:00:00.000Z',
        etag: null,
        last_modified: null,
        bytes: 1234,
        sha256: 'ab'.repeat(32),
        records: 10,
        window: { where: '1=1', incremental: false, until: '2026-11-09T05:00:00.000Z' },
        error: null,
      },
      {
        source: 'rents',
        file: 'RIQ02.csv',
        protocol: 'pxstat',
        url: 'https://example.org/RIQ02/CSV',
        status: 'failed',
        checked_at: '2026-11-09T05:01:00.000Z',
        fetched_at: null,
        etag: null,
        last_modified: null,
        bytes: null,
        sha256: null,
        error: 'rents: gave up on https://example.org/RIQ02/CSV after 5 attempts: HTTP 503',
      },
    ],
  };
  const own = await startTestApi({ seed: 7 });
  try {
    publishCopyOfRelease(own.dataDir, '20261116T060000Z');
    const file = join(own.dataDir, 'releases', '20261116T060000Z', 'manifest.json');
    writeFileSync(
      file,
      JSON.stringify({ ...JSON.parse(readFileSync(file, 'utf8')), sources_freshness: freshness }, null, 2),
    );
    assert.ok(await own.checkRelease());
    const b = (await own.request('/v1/meta')).body;
    assert.is(b.release.id, '20261116T060000Z');
    assert.equal(Object.keys(b), [
      'release',
      'counts',
      'freshness',
      'sources_freshness',
      'freshness_by_source',
      'enums',
      'release_status',
      '_meta',
    ]);
    assert.equal(b.sources_freshness, freshness);
    assert.equal(validateResponse(buildOpenApi(own.config), 'get', '/meta', 200, b), []);
    const broken = { ...b, sources_freshness: { ...freshness, origin: 'downloaded' } };
    assert.ok(
      validateResponse(buildOpenApi(own.config), 'get', '/meta', 200, broken).length > 0,
      'the OpenAPI document describes the member',
    );
  } finally {
    await own.close();
  }
});

test('unknown parameters → 400 unknown_parameter naming each', async () => {
  const res = await api.request('/v1/meta?foo=1&bar=2');
  assertProblem(res, 400, 'unknown_parameter');
  assert.equal(
    res.body.errors,
    [
      { name: 'foo', reason: 'unknown parameter' },
      { name: 'bar', reason: 'unknown parameter' },
    ],
    'in query order (no-query.schema.json)',
  );
  assert.equal(
    (await api.request('/v1/meta?b=1&a=2&b=3')).body.errors,
    [
      { name: 'b', reason: 'unknown parameter' },
      { name: 'a', reason: 'unknown parameter' },
    ],
    'each once, repeated or not',
  );
  assert.equal(validateResponse(buildOpenApi(api.config), 'get', '/meta', 400, res.body), []);
});

test.run();
