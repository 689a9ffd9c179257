/**
 * GET /v1/authorities on the tiny release: every authority, figures equal to a DuckDB count over
 * the release's leads, freshness per source from the pipeline (rows and newest date of the raw
 * source), the body valid against the OpenAPI document; /v1/meta carries the per-source figures.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { join } from 'node:path';
import { openApiDb, sqlString } from '../../../api/duckdb/db.ts';
import { buildOpenApi } from '../../../api/openapi/document.ts';
import { AUTHORITIES } from '../../../pipeline/reference/authorities.ts';
import { assertProblem, startTestApi, type TestApi } from '../../helpers/api.ts';
import { validateResponse } from '../../helpers/openapi.ts';

let api: TestApi;
const doc = buildOpenApi({ publicBaseUrl: 'http://localhost/v1' });
test.before(async () => {
  api = await startTestApi();
});
test.after(async () => {
  await api?.close();
});

test('every authority with its county, leads by status and bbox, equal to a count over the release', async () => {
  const res = await api.request('/v1/authorities', { key: api.keys.commonwealth });
  assert.is(res.status, 200);
  assert.equal(validateResponse(doc, 'get', '/authorities', 200, res.body), []);
  const list = res.body.authorities as any[];
  assert.equal(list.map((a) => a.authority).sort(), AUTHORITIES.map((a) => a.name).sort());
  const db = await openApiDb({ connections: 1, threads: 1, memoryLimit: '128MB' });
  try {
    const rows = await db.all<{ authority: string; status: string; n: number }>(
      `SELECT planning_authority AS authority, CAST(status AS VARCHAR) AS status, count(*)::INTEGER AS n FROM read_parquet(${sqlString(join(api.dataDir, 'current', 'leads.parquet'))}) GROUP BY ALL`,
    );
    const boxes = await db.all<{ authority: string; w: number; s: number; e: number; n: number }>(
      `SELECT planning_authority AS authority, min(round(lon, 6)) AS w, min(round(lat, 6)) AS s, max(round(lon, 6)) AS e, max(round(lat, 6)) AS n
       FROM read_parquet(${sqlString(join(api.dataDir, 'current', 'leads.parquet'))}) WHERE lat IS NOT NULL AND lon IS NOT NULL GROUP BY ALL`,
    );
    for (const a of list) {
      assert.is(a.county, AUTHORITIES.find((x) => x.name === a.authority)!.county);
      for (const s of ['planning', 'approved', 'active', 'closed']) {
        assert.is(
          a.leads_by_status[s],
          rows.find((r) => r.authority === a.authority && r.status === s)?.n ?? 0,
          `${a.authority} ${s}`,
        );
      }
      assert.is(
        a.leads,
        Object.values(a.leads_by_status as Record<string, number>).reduce((x, y) => x + y, 0),
      );
      const b = boxes.find((x) => x.authority === a.authority);
      assert.equal(a.bbox, b ? [b.w, b.s, b.e, b.n] : null, a.authority);
      for (const s of ['planning', 'commencements']) {
        const src = a.sources[s];
        assert.is(src.origin, 'unknown', 'the tiny release is built from a raw folder without a fetch log');
        assert.is(src.read_at, null);
      }
      assert.ok(a.sources.planning.records >= a.leads, 'every lead comes from a planning row');
      assert.ok(a.sources.planning.newest_date >= a.latest_received, 'the source held at least the newest lead');
    }
  } finally {
    db.close();
  }
});

test('/v1/meta has the same freshness per source; parameters are refused; 503 for a release without the figures', async () => {
  const meta = await api.request('/v1/meta');
  assert.equal(Object.keys(meta.body.freshness_by_source), ['planning', 'commencements']);
  const list = (await api.request('/v1/authorities')).body.authorities as any[];
  for (const s of ['planning', 'commencements']) {
    assert.is(
      meta.body.freshness_by_source[s].records,
      list.reduce((n, a) => n + a.sources[s].records, 0),
      s,
    );
  }
  assertProblem(await api.request('/v1/authorities?county=Cork'), 400, 'unknown_parameter');
  assertProblem(await api.request('/v1/authorities', { key: null }), 401, 'missing_key');
});

test.run();
