/**
 * The exports the leads engine writes (api/render/engine-lines.ts: JSON Lines, CSV) against
 * DuckDB's own writers over the release's Parquet — what wrote them before: for every scope and
 * for filters of each kind (`FILTER_KIND_QUERIES`), JSON Lines with
 * the same leads in the same order and the same values, CSV byte for byte what DuckDB's CSV writer
 * writes (`csvColumnsSql`, `FORCE_QUOTE`), masked fields null / empty. And the stream's chunks:
 * written through a real HTTP server to a client that stalls and reads slowly, the bytes equal
 * those of a client that reads at once (a pooled chunk reused before the socket wrote it would
 * corrupt them), identity and gzip.
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
import {
  csvColumnsSql,
  csvForceQuote,
  csvHeader,
  exportColumnsSql,
  exportRowsQuery,
  parseExportQuery,
} from '../../../api/query/export-query.ts';
import { loadedReleaseSources } from '../../../api/releases/release-lookups.ts';
import { startTestApi, type TestApi } from '../../helpers/api.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { FILTER_KIND_QUERIES } from '../../helpers/filter-kind-queries.ts';

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

/** What DuckDB's writer gives for `query` and `scope`: the export's SQL, `COPY … (FORMAT JSON)` or the CSV export's `COPY`. */
function duckdbExport(query: string, scope: (typeof SCOPES)[number], format: 'json' | 'csv'): Promise<string> {
  // scopes that mask the same columns get the same file: written once
  const key = `${format}\u0000${query}\u0000${maskedFor('lead', scope)
    .map((m) => m.field)
    .join(',')}`;
  let file = written.get(key);
  if (!file) written.set(key, (file = writeDuckdbExport(query, scope, format)));
  return file;
}
const written = new Map<string, Promise<string>>();

async function writeDuckdbExport(
  query: string,
  scope: (typeof SCOPES)[number],
  format: 'json' | 'csv',
): Promise<string> {
  const release = api.server.releases.current();
  const src = loadedReleaseSources(release);
  const raw = Object.fromEntries(new URLSearchParams(query));
  const req = parseExportQuery(raw, 'file', api.config, src.places);
  const ids = await areaIds(db, src.leads.leads, req.filters);
  const masked = new Set(maskedFor('lead', scope).map((m) => m.field));
  const q = exportRowsQuery(
    src.leads,
    { filters: req.filters, afterId: null, limit: null, ordered: false, ...(ids ? { areaIds: ids } : {}) },
    format === 'json' ? exportColumnsSql(masked) : csvColumnsSql(masked),
  );
  const file = join(tmp, `duckdb-${scope}-${Math.random().toString(36).slice(2)}.${format}`);
  const inline = q.params.reduce<string>(
    (sql, p) => sql.replace('?', typeof p === 'number' ? String(p) : sqlString(String(p))),
    q.sql,
  );
  const quote = csvForceQuote()
    .map((c) => `"${c}"`)
    .join(', ');
  const options =
    format === 'json' ? 'FORMAT JSON' : `FORMAT CSV, HEADER false, NEW_LINE '\r\n', FORCE_QUOTE (${quote})`;
  await db.run(`COPY (${inline}) TO ${sqlString(file)} (${options})`);
  return readFileSync(file, 'utf8');
}

const QUERIES = FILTER_KIND_QUERIES;

for (const scope of SCOPES) {
  test(`${scope}: JSON Lines are DuckDB's JSON writer's leads, in order, value for value; CSV is its CSV writer's, byte for byte`, async () => {
    for (const query of QUERIES) {
      const get = (ext: string) =>
        api.request(`/v1/export/applications.${ext}${query ? `?${query}` : ''}`, {
          key: api.keys[scope],
          headers: { 'Accept-Encoding': 'identity' },
        });
      const res = await get('jsonl');
      assert.is(res.status, 200, `${query}: ${res.text.slice(0, 300)}`);
      assert.ok(res.text.endsWith('\n') || res.text === '', `${query}: every line ends with \\n`);
      const lines = res.text
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l));
      assert.is(lines.length, Number(res.headers.get('x-export-rows')), `${query}: X-Export-Rows`);
      const expected = (await duckdbExport(query, scope, 'json'))
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l));
      assert.ok(query === '' ? expected.length > 500 : expected.length > 0, `${query}: ${expected.length} leads`);
      assert.equal(lines, expected, `${scope} ${query}`);

      const csv = await get('csv');
      assert.is(csv.status, 200, `${query}: ${csv.text.slice(0, 300)}`);
      const want = `${csvHeader()}\r\n${await duckdbExport(query, scope, 'csv')}`;
      if (csv.text !== want) {
        const got = csv.text.split('\r\n');
        const at = want.split('\r\n').findIndex((l, i) => l !== got[i]);
        assert.fixture(got[at] ?? '', want.split('\r\n')[at]!, `${scope} ${query}: CSV line ${at}`);
      }
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
