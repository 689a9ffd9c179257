/**
 * JSON Lines from the leads engine (api/render/jsonl.ts) against DuckDB's own JSON writer over
 * the release's Parquet — what wrote the export before: for every scope and for filters of each
 * kind (none, places and numbers, `q`, a radius, a polygon), the same leads in the same order with
 * the same values, masked fields null. And the stream's chunks: written through a real HTTP server
 * to a client that stalls and reads slowly, the bytes equal those of a client that reads at once
 * (a pooled chunk reused before the socket wrote it would corrupt them), identity and gzip.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import http from 'node:http';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { openApiDb, sqlString, type ApiDb } from '../../../api/duckdb/db.ts';
import { maskedFor } from '../../../api/access/masking.ts';
import { SCOPES } from '../../../api/access/scopes.ts';
import { areaIds } from '../../../api/gis/geometry-ids.ts';
import { exportColumnsSql, exportRowsQuery, parseExportQuery } from '../../../api/query/export-query.ts';
import { loadedReleaseSources } from '../../../api/releases/release-lookups.ts';
import { startTestApi, type TestApi } from '../../helpers/api.ts';
import { tempDir } from '../../helpers/tmp.ts';

let api: TestApi;
let db: ApiDb;
let tmp: string;

test.before(async () => {
  api = await startTestApi({ config: { accessLimits: false } });
  db = await openApiDb({ connections: 1, threads: 1, memoryLimit: '256MB' });
  tmp = tempDir('leads-jsonl-');
});
test.after(async () => {
  db.close();
  await api.close();
});

/** The lines DuckDB's JSON writer gives for `query` and `scope` (the export's SQL, `COPY … (FORMAT JSON)`). */
async function duckdbLines(query: string, scope: (typeof SCOPES)[number]): Promise<unknown[]> {
  const release = api.server.releases.current();
  const src = loadedReleaseSources(release);
  const raw = Object.fromEntries(new URLSearchParams(query));
  const req = parseExportQuery(raw, 'file', api.config, src.places);
  const ids = await areaIds(db, src.leads.leads, req.filters);
  const masked = new Set(maskedFor('lead', scope).map((m) => m.field));
  const q = exportRowsQuery(
    src.leads,
    { filters: req.filters, afterId: null, limit: null, ordered: false, ...(ids ? { areaIds: ids } : {}) },
    exportColumnsSql(masked),
  );
  const file = join(tmp, `duckdb-${scope}-${Math.random().toString(36).slice(2)}.jsonl`);
  const inline = q.params.reduce<string>(
    (sql, p) => sql.replace('?', typeof p === 'number' ? String(p) : sqlString(String(p))),
    q.sql,
  );
  await db.run(`COPY (${inline}) TO ${sqlString(file)} (FORMAT JSON)`);
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

const QUERIES = [
  '',
  'county=Cork,Galway&min_units=1',
  'q=extension',
  'vertical=roofing&received_from=2025-01-01',
  'near=53.35,-6.26&radius_m=15000',
  `polygon=${encodeURIComponent(
    JSON.stringify({
      type: 'Polygon',
      coordinates: [
        [
          [-6.5, 53.2],
          [-6.0, 53.2],
          [-6.0, 53.5],
          [-6.5, 53.5],
          [-6.5, 53.2],
        ],
      ],
    }),
  )}`,
];

for (const scope of SCOPES) {
  test(`${scope}: the engine's JSON Lines are DuckDB's JSON writer's leads, in order, value for value`, async () => {
    for (const query of QUERIES) {
      const res = await api.request(`/v1/export/applications.jsonl${query ? `?${query}` : ''}`, {
        key: api.keys[scope],
        headers: { 'Accept-Encoding': 'identity' },
      });
      assert.is(res.status, 200, `${query}: ${res.text.slice(0, 300)}`);
      assert.ok(res.text.endsWith('\n') || res.text === '', `${query}: every line ends with \\n`);
      const lines = res.text
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l));
      assert.is(lines.length, Number(res.headers.get('x-export-rows')), `${query}: X-Export-Rows`);
      const expected = await duckdbLines(query, scope);
      assert.ok(query === '' ? expected.length > 500 : expected.length > 0, `${query}: ${expected.length} leads`);
      assert.equal(lines, expected, `${scope} ${query}`);
    }
  });
}

/** GET `path` over node:http, reading slowly: a 300 ms stall, then 16 KB every 2 ms. */
function slowGet(path: string, headers: Record<string, string>): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    http
      .get(`${api.baseUrl}${path}`, { headers }, (res) => {
        const parts: Buffer[] = [];
        res.pause();
        const drip = (): void => {
          const chunk = res.read(16 * 1024) ?? res.read();
          if (chunk) parts.push(Buffer.from(chunk));
          if (res.readableEnded) return resolve(Buffer.concat(parts));
          setTimeout(drip, 2);
        };
        res.on('end', () => resolve(Buffer.concat(parts)));
        res.on('error', reject);
        setTimeout(drip, 300);
      })
      .on('error', reject);
  });
}

test('a slow reader gets the same bytes as a fast one (pooled chunks are reused only once written), identity and gzip', async () => {
  const headers = { Authorization: `Bearer ${api.keys.ent_api}` };
  const fast = await api.request('/v1/export/applications.jsonl', { key: api.keys.ent_api });
  assert.is(fast.status, 200);
  assert.ok(fast.text.length > 1_000_000, `${fast.text.length} bytes: more than a few chunks`);
  // several exports at once, so chunks of one are taken from the pool while others are in flight
  const slow = await Promise.all([
    slowGet('/v1/export/applications.jsonl', { ...headers, 'Accept-Encoding': 'identity' }),
    slowGet('/v1/export/applications.jsonl', { ...headers, 'Accept-Encoding': 'identity' }),
    slowGet('/v1/export/applications.jsonl', { ...headers, 'Accept-Encoding': 'gzip' }),
    api.request('/v1/leads?page_size=100', { key: api.keys.ent_api }),
  ]);
  assert.ok(slow[0].equals(Buffer.from(fast.text)), 'identity, slow reader 1');
  assert.ok(slow[1].equals(Buffer.from(fast.text)), 'identity, slow reader 2');
  assert.ok(gunzipSync(slow[2]).equals(Buffer.from(fast.text)), 'gzip, slow reader');
});

test.run();
