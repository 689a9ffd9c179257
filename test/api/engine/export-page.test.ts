/**
 * The cursor export's pages from the leads engine (`LeadsEngine.exportPage`, id order through the
 * lead index's id permutation) against the reference they replaced, DuckDB over the release's
 * Parquet (`exportRowsQuery` with `jsonLineSql`, the geometry filters as `areaIds`), on the tiny
 * release: for every scope and a spread of filters (text search, places, ranges, dates, flags,
 * every geometry), the same bytes a page answers — results, `count`, `_meta` — at the start,
 * after a cursor, and over a whole walk that visits every matching lead once, in id order.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { openApiDb, type ApiDb } from '../../../api/duckdb/db.ts';
import { keptRelease } from '../../../api/releases/kept-release.ts';
import { LeadsEngine } from '../../../api/engine/leads-engine.ts';
import { maskedFor, maskingFor, responseMeta } from '../../../api/access/masking.ts';
import { loadReleaseSources, type ReleaseSources } from '../../../api/releases/release-lookups.ts';
import { exportRowsQuery, jsonLineSql, parseExportQuery } from '../../../api/query/export-query.ts';
import { areaIds } from '../../../api/gis/geometry-ids.ts';
import type { LeadsFilters } from '../../../api/query/leads-query.ts';
import type { RawQuery } from '../../../api/query/leads-params.ts';
import { SCOPES, type Scope } from '../../../api/access/scopes.ts';
import { reuseEngine, tinyRelease } from '../../helpers/api.ts';
import { FILTER_KIND_QUERIES } from '../../helpers/filter-kind-queries.ts';

let db: ApiDb;
let engine: LeadsEngine;
let src: ReleaseSources;
let releaseId: string;
const SECRETS = { cursorSecret: 'export-page-test', cursorSecretsPrevious: [] };

test.before(async () => {
  const rel = await tinyRelease();
  releaseId = rel.id;
  db = await openApiDb({ connections: 1, threads: 1, memoryLimit: '256MB' });
  // the engine the test servers get (built by the index child once, test/helpers/api.ts)
  engine = await reuseEngine(rel.id, rel.dir);
  src = await loadReleaseSources(db, keptRelease(rel.dir.replace(/\/releases\/[^/]+$/, ''), rel.id)!);
});
test.after(() => db.close());

/** The filters of an export query string, parsed as the route parses them. */
const filtersOf = (qs: string): LeadsFilters =>
  parseExportQuery(Object.fromEntries(new URLSearchParams(qs)) as RawQuery, 'page', SECRETS, src.places).filters;

/** A page as the DuckDB path answered it (the route's body before this change, `JSON.stringify` as Koa sends it). */
async function sqlPage(filters: LeadsFilters, afterId: number | null, limit: number, scope: Scope) {
  const masked = maskedFor('lead', scope);
  const ids = await areaIds(db, src.leads.leads, filters);
  const q = exportRowsQuery(
    src.leads,
    { filters, afterId, limit: limit + 1, ...(ids ? { areaIds: ids } : {}) },
    `${jsonLineSql(new Set(masked.map((m) => m.field)))} AS j`,
  );
  const rows = await db.all<{ j: string }>(q.sql, q.params);
  const more = rows.length > limit;
  const results = (more ? rows.slice(0, limit) : rows).map((r) => JSON.parse(r.j) as Record<string, unknown>);
  const body = JSON.stringify({
    results,
    next_cursor: more ? 'NEXT' : null,
    count: results.length,
    _meta: responseMeta(releaseId, scope, masked),
  });
  return { body, lastId: (results.at(-1)?.['id'] as number | undefined) ?? null };
}

function enginePage(filters: LeadsFilters, afterId: number | null, limit: number, scope: Scope) {
  const page = engine.exportPage(filters, afterId, limit, maskingFor(scope));
  const out = page.json({ next_cursor: page.more ? 'NEXT' : null });
  const body = out.bytes.toString('utf8');
  out.done();
  return { body, lastId: page.lastId };
}

const QUERIES = FILTER_KIND_QUERIES;

test('first pages and pages after a cursor: the same bytes as DuckDB, for every scope', async () => {
  let compared = 0;
  for (const qs of QUERIES) {
    const filters = filtersOf(qs);
    for (const scope of SCOPES) {
      for (const [afterId, limit] of [
        [null, 7],
        [null, 1000],
        [120, 5],
        [1e9, 5],
      ] as const) {
        const want = await sqlPage(filters, afterId, limit, scope);
        const got = enginePage(filters, afterId, limit, scope);
        assert.is(got.body, want.body, `${qs || '(none)'} ${scope} after ${afterId} limit ${limit}`);
        assert.is(got.lastId, want.lastId);
        compared++;
      }
    }
  }
  assert.is(compared, QUERIES.length * SCOPES.length * 4);
});

test('a whole walk by cursor visits every matching lead once, in id order, page for page as DuckDB', async () => {
  for (const qs of ['', 'county=Cork', 'q=extension', 'bbox=-9.5,51.5,-8,52.5']) {
    const filters = filtersOf(qs);
    const n = JSON.parse((await sqlPage(filters, null, 1e6, 'commonwealth')).body).count as number;
    assert.ok(n > 0, `${qs}: matches leads`);
    let afterId: number | null = null;
    let seen = 0;
    let pages = 0;
    for (;;) {
      const want = await sqlPage(filters, afterId, 97, 'commonwealth');
      const got = enginePage(filters, afterId, 97, 'commonwealth');
      assert.is(got.body, want.body, `${qs} page ${pages}`);
      const ids = (JSON.parse(got.body).results as { id: number }[]).map((r) => r.id);
      assert.equal(
        ids,
        [...ids].sort((a, b) => a - b),
        'id order',
      );
      if (afterId !== null)
        assert.ok(
          ids.every((id) => id > afterId!),
          'after the cursor',
        );
      seen += ids.length;
      pages++;
      assert.ok(pages <= n / 97 + 1, `${qs}: the walk ends`);
      if (got.lastId === null || !JSON.parse(got.body).next_cursor) break;
      afterId = got.lastId;
    }
    assert.is(seen, n, `${qs}: every lead once`);
    assert.ok(pages >= 1);
  }
});

test.run();
