/**
 * Nearby and area search, the lookup by council reference and `POST /v1/leads/search` over real
 * HTTP on the tiny release (api/routes/leads.ts): the rules of docs/api.md "Nearby and area
 * search", every bad geometry answered with a 400 problem naming the parameter and the fault,
 * `sort=distance` paging by cursor, `distance_m` the same for every scope, and the POST answered
 * and charged exactly as the GET (413 / 415 problems). Every response is checked against the
 * OpenAPI document by the test client.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { join } from 'node:path';
import { openApiDb, sqlString, type ApiDb } from '../../../api/duckdb/db.ts';
import { parsePolygonText } from '../../../api/gis/geometry.ts';
import { haversineM, servedDistance } from '../../../api/gis/point-tests.ts';
import { SEARCH_BODY_CACHE, searchQueryOf } from '../../../api/routes/leads.ts';
import { assertProblem, startTestApi, type TestApi, type TestResponse } from '../../helpers/api.ts';

let api: TestApi;
let db: ApiDb;
let leadsFile: string;
/** A lead with coordinates in Dublin's area, the centre of the areas below. */
let centre: { id: number; lat: number; lon: number; application_number: string; planning_authority: string };

test.before(async () => {
  api = await startTestApi();
  db = await openApiDb({ connections: 1, threads: 1, memoryLimit: '256MB' });
  leadsFile = `read_parquet(${sqlString(join(api.dataDir, 'current', 'leads.parquet'))})`;
  const [c] = await db.all<typeof centre>(
    `SELECT CAST(id AS BIGINT) AS id, CAST(lat AS DOUBLE) AS lat, CAST(lon AS DOUBLE) AS lon, application_number, planning_authority FROM ${leadsFile}
     WHERE lat IS NOT NULL ORDER BY abs(lat - 53.35) + abs(lon + 6.26), id LIMIT 1`,
  );
  centre = { ...c!, id: Number(c!.id) };
});

test.after(async () => {
  db.close();
  await api.close();
});

const get = (query: string, key?: string): Promise<TestResponse> =>
  api.request(`/v1/leads?${query}`, key === undefined ? {} : { key });
const post = (body: unknown, opts: { key?: string; headers?: Record<string, string> } = {}): Promise<TestResponse> =>
  api.request('/v1/leads/search', { method: 'POST', body, ...opts });
const errorOf = (res: TestResponse, name: string): string => {
  const e = (res.body.errors as { name: string; reason: string }[]).find((x) => x.name === name);
  assert.ok(e, `an error names ${name}: ${res.text}`);
  return e!.reason;
};

test('near: every lead within radius_m (haversine), each with distance_m; default radius 1000', async () => {
  const near = `${centre.lat},${centre.lon}`;
  const res = await get(`near=${near}&radius_m=5000&page_size=100`);
  assert.is(res.status, 200, res.text);
  const rows = await db.all<{ id: number; lat: number; lon: number }>(
    `SELECT CAST(id AS BIGINT) AS id, CAST(lat AS DOUBLE) AS lat, CAST(lon AS DOUBLE) AS lon FROM ${leadsFile} WHERE lat IS NOT NULL`,
  );
  const want = rows.filter((r) => haversineM(centre.lat, centre.lon, r.lat, r.lon) <= 5000.001);
  assert.ok(want.length > 3, `${want.length} leads within 5 km`);
  assert.is(res.body.total, want.length);
  for (const r of res.body.results) {
    const w = rows.find((x) => Number(x.id) === r.id)!;
    assert.is(r.distance_m, servedDistance(haversineM(centre.lat, centre.lon, w.lat, w.lon)), `lead ${r.id}`);
  }
  const def = await get(`near=${near}`);
  assert.is(
    def.body.total,
    rows.filter((r) => haversineM(centre.lat, centre.lon, r.lat, r.lon) <= 1000.001).length,
    'default radius 1000 m',
  );
  // without near there is no distance_m
  const plain = await get('page_size=3');
  for (const r of plain.body.results) assert.not.ok('distance_m' in r);
});

test('sort=distance: ordered by (distance_m, id); the cursor walk gives every lead once; the same distance_m for every scope', async () => {
  const q = `near=${centre.lat},${centre.lon}&radius_m=20000&sort=distance&page_size=7`;
  const first = await get(q);
  const total = first.body.total as number;
  assert.ok(total > 14, `${total} leads within 20 km`);
  const seen: [number, number][] = [];
  let res = first;
  for (let i = 0; i < 200; i++) {
    for (const r of res.body.results) seen.push([r.distance_m, r.id]);
    if (!res.body.next_cursor) break;
    res = await get(`${q}&cursor=${res.body.next_cursor}`);
    assert.is(res.status, 200, res.text);
  }
  assert.is(seen.length, total);
  assert.is(new Set(seen.map((s) => s[1])).size, total, 'each lead once');
  for (let i = 1; i < seen.length; i++)
    assert.ok(
      seen[i - 1]![0] < seen[i]![0] || (seen[i - 1]![0] === seen[i]![0] && seen[i - 1]![1] < seen[i]![1]),
      `order at ${i}`,
    );
  const cw = await get(q, api.keys.commonwealth);
  assert.equal(
    cw.body.results.map((r: { id: number; distance_m: number }) => [r.id, r.distance_m]),
    first.body.results.map((r: { id: number; distance_m: number }) => [r.id, r.distance_m]),
  );
});

test('bbox and polygon: edges inclusive, a lead on the boundary is inside; combined with other filters', async () => {
  const { lat, lon } = centre;
  const box = await get(`bbox=${lon},${lat},${lon + 0.2},${lat + 0.1}&page_size=100`);
  assert.is(box.status, 200, box.text);
  assert.ok(
    box.body.results.some((r: { id: number }) => r.id === centre.id),
    'the lead on the corner is inside',
  );
  const n = Number(
    (
      await db.all<{ n: number }>(
        `SELECT count(*) AS n FROM ${leadsFile} WHERE CAST(lat AS DOUBLE) BETWEEN ? AND ? AND CAST(lon AS DOUBLE) BETWEEN ? AND ?`,
        [lat, lat + 0.1, lon, lon + 0.2],
      )
    )[0]!.n,
  );
  assert.is(box.body.total, n);
  const polygon = {
    type: 'Polygon',
    coordinates: [
      [
        [lon, lat],
        [lon + 0.2, lat],
        [lon + 0.2, lat + 0.1],
        [lon, lat + 0.1],
        [lon, lat],
      ],
    ],
  };
  const poly = await get(`polygon=${encodeURIComponent(JSON.stringify(polygon))}&page_size=100`);
  assert.is(poly.status, 200, poly.text);
  assert.is(poly.body.total, n, 'the same rectangle as a polygon');
  const both = await get(
    `polygon=${encodeURIComponent(JSON.stringify(polygon))}&authority=${encodeURIComponent(centre.planning_authority)}`,
  );
  assert.ok(both.body.total <= n && both.body.total > 0);
});

test('bad areas: a 400 problem naming the parameter and the fault', async () => {
  const sq = (x: number, y: number): number[][] => [
    [x, y],
    [x + 0.1, y],
    [x + 0.1, y + 0.1],
    [x, y + 0.1],
    [x, y],
  ];
  const bad: [string, string, RegExp][] = [
    ['near=-6.26,53.35', 'near', /latitude first/],
    ['near=53.35', 'near', /latitude,longitude/],
    ['near=53.35,-6.26&radius_m=50001', 'radius_m', /from 1 to 50000/],
    ['near=53.35,-6.26&radius_m=0', 'radius_m', /from 1 to 50000/],
    ['near=53.35,-6.26&radius_m=1.5', 'radius_m', /from 1 to 50000/],
    ['radius_m=500', 'radius_m', /only with near/],
    ['sort=distance', 'sort', /distance needs near/],
    ['bbox=-6.3,53.3,-6.2', 'bbox', /four comma-separated numbers/],
    ['bbox=-6.3,53.4,-6.2,53.3', 'bbox', /min latitude/],
    ['polygon=%7B%22type%22', 'polygon', /as JSON/],
    [
      `polygon=${encodeURIComponent(JSON.stringify({ type: 'LineString', coordinates: sq(-6.3, 53.3) }))}`,
      'polygon',
      /Polygon or MultiPolygon/,
    ],
    [
      `polygon=${encodeURIComponent(JSON.stringify({ type: 'Polygon', coordinates: [sq(-6.3, 53.3).slice(0, 4)] }))}`,
      'polygon',
      /not closed/,
    ],
    [
      `polygon=${encodeURIComponent(
        JSON.stringify({
          type: 'Polygon',
          coordinates: [
            [
              [-6.3, 53.3],
              [-6.2, 53.3],
              [-6.3, 53.3],
            ],
          ],
        }),
      )}`,
      'polygon',
      /fewer than 4 positions/,
    ],
    [
      `polygon=${encodeURIComponent(
        JSON.stringify({
          type: 'Polygon',
          coordinates: [
            [
              [-6.3, 53.3],
              [-6.2, 53.4],
              [-6.2, 53.3],
              [-6.3, 53.4],
              [-6.3, 53.3],
            ],
          ],
        }),
      )}`,
      'polygon',
      /self-intersecting/,
    ],
    [
      `polygon=${encodeURIComponent(JSON.stringify({ type: 'Polygon', coordinates: [sq(53.3, -6.3)] }))}`,
      'polygon',
      /looks like \[latitude, longitude\]/,
    ],
    [
      `polygon=${encodeURIComponent(JSON.stringify({ type: 'Polygon', coordinates: [sq(-200, 53.3)] }))}`,
      'polygon',
      /outside -180…180/,
    ],
    [
      `polygon=${encodeURIComponent(JSON.stringify({ type: 'Polygon', coordinates: [sq(2.3, 48.8)] }))}`,
      'polygon',
      /outside Ireland/,
    ],
  ];
  for (const [query, name, reason] of bad) {
    const res = await get(query);
    assertProblem(res, 400, 'invalid_parameter');
    assert.match(errorOf(res, name), reason, query);
  }
  // more than 10,000 positions: too long for a URL, so through the POST
  const ring = Array.from({ length: 10_001 }, (_, i) => [
    -7 + 0.5 * Math.cos((2 * Math.PI * i) / 10_001),
    53 + 0.3 * Math.sin((2 * Math.PI * i) / 10_001),
  ]);
  ring.push([...ring[0]!]);
  const many = await post({ polygon: { type: 'Polygon', coordinates: [ring] } });
  assertProblem(many, 400, 'invalid_parameter');
  assert.match(errorOf(many, 'polygon'), /has 10002 positions; at most 10000/);
});

test('exports take the same areas: the ids of the export page equal those of /v1/leads', async () => {
  const polygon = {
    type: 'Polygon',
    coordinates: [
      [
        [centre.lon - 0.08, centre.lat - 0.04],
        [centre.lon + 0.08, centre.lat - 0.04],
        [centre.lon + 0.08, centre.lat + 0.04],
        [centre.lon - 0.08, centre.lat + 0.04],
        [centre.lon - 0.08, centre.lat - 0.04],
      ],
    ],
  };
  const q = `polygon=${encodeURIComponent(JSON.stringify(polygon))}&near=${centre.lat},${centre.lon}&radius_m=15000`;
  const key = api.keys.ent_feed; // no daily row budget
  const leads = await get(`${q}&page_size=100`, key);
  const exp = await api.request(`/v1/export/applications?${q}&limit=1000`, { key });
  assert.is(exp.status, 200, exp.text);
  assert.ok(leads.body.total > 3 && leads.body.total <= 100, `${leads.body.total} leads`);
  assert.equal(
    exp.body.results.map((r: { id: number }) => r.id),
    leads.body.results.map((r: { id: number }) => r.id).sort((a: number, b: number) => a - b),
  );
  for (const r of exp.body.results) assert.not.ok('distance_m' in r, 'exports carry the lead columns only');
  const csv = await api.request(`/v1/export/applications.csv?${q}`, { key });
  assert.is(csv.status, 200);
  assert.is(csv.headers.get('X-Export-Rows'), String(leads.body.total));
  assert.is(csv.text.trim().split('\n').length, leads.body.total + 1, 'header + one line per lead');
  const bad = await api.request('/v1/export/applications?radius_m=10', { key });
  assertProblem(bad, 400, 'invalid_parameter');
});

test('application_number: the council reference, case and surrounding spaces ignored; with authority; unknown → none', async () => {
  const ref = centre.application_number;
  const res = await get(
    `application_number=${encodeURIComponent(`  ${ref.toLowerCase()} `)}&authority=${encodeURIComponent(centre.planning_authority)}`,
  );
  assert.is(res.status, 200, res.text);
  assert.ok(res.body.results.some((r: { id: number }) => r.id === centre.id));
  for (const r of res.body.results) assert.is(r.application_number.trim().toLowerCase(), ref.trim().toLowerCase());
  const n = Number(
    (
      await db.all<{ n: number }>(
        `SELECT count(*) AS n FROM ${leadsFile} WHERE lower(trim(application_number)) = lower(trim(?))`,
        [ref],
      )
    )[0]!.n,
  );
  assert.is((await get(`application_number=${encodeURIComponent(ref)}`)).body.total, n);
  const none = await get('application_number=NO%2FSUCH%2F0');
  assert.is(none.status, 200);
  assert.is(none.body.total, 0);
});

test('POST /v1/leads/search: the same answer as the GET, charged the same; cursor in the body; 413, 415 and 400 problems', async () => {
  const polygon = {
    type: 'Polygon',
    coordinates: [
      [
        [centre.lon - 0.3, centre.lat - 0.2],
        [centre.lon + 0.3, centre.lat - 0.2],
        [centre.lon + 0.3, centre.lat + 0.2],
        [centre.lon - 0.3, centre.lat + 0.2],
        [centre.lon - 0.3, centre.lat - 0.2],
      ],
    ],
  };
  const key = api.keys.commonwealth; // a daily row budget
  const g = await get(
    `polygon=${encodeURIComponent(JSON.stringify(polygon))}&near=${centre.lat},${centre.lon}&radius_m=30000&sort=distance&page_size=5`,
    key,
  );
  const p = await post(
    { polygon, near: { lat: centre.lat, lon: centre.lon }, radius_m: 30000, sort: 'distance', page_size: 5 },
    { key },
  );
  assert.is(p.status, 200, p.text);
  assert.equal(p.body, g.body, 'the same body, _meta and next_cursor');
  assert.ok(g.body.results.length === 5 && g.body.next_cursor);
  const used = (r: TestResponse): number => Number(r.headers.get('X-Budget-Remaining'));
  assert.is(used(g) - used(p), 5, 'each charged its 5 rows');
  assert.is(
    Number(g.headers.get('X-RateLimit-Remaining')) - Number(p.headers.get('X-RateLimit-Remaining')),
    1,
    'one request each',
  );
  assert.not.match(p.headers.get('Link') ?? '', /rel="next"/, 'no next link: the next page is the body with cursor');
  const next = await post(
    {
      polygon,
      near: `${centre.lat},${centre.lon}`,
      radius_m: '30000',
      sort: 'distance',
      page_size: 5,
      cursor: p.body.next_cursor,
    },
    { key },
  );
  const nextGet = await get(
    `polygon=${encodeURIComponent(JSON.stringify(polygon))}&near=${centre.lat},${centre.lon}&radius_m=30000&sort=distance&page_size=5&cursor=${g.body.next_cursor}`,
    key,
  );
  assert.equal(next.body.results, nextGet.body.results, 'the cursor continues in the POST as in the GET');
  // lists as arrays or comma text, and an empty body (every lead)
  const lists = await post({ county: ['Dublin', 'Cork'], status: 'planning' });
  assert.is(lists.body.total, (await get('county=Dublin,Cork&status=planning')).body.total);
  assert.is((await post({})).body.total, (await get('')).body.total);
  // mistakes, as the GET names them
  assert.match(errorOf(await post({ radius_m: 10 }), 'radius_m'), /only with near/);
  assert.match(
    errorOf(
      await post({
        polygon: {
          type: 'Polygon',
          coordinates: [
            [
              [-6.3, 53.3],
              [-6.2, 53.4],
              [-6.2, 53.3],
              [-6.3, 53.4],
              [-6.3, 53.3],
            ],
          ],
        },
      }),
      'polygon',
    ),
    /self-intersecting/,
  );
  assertProblem(await post({ nope: 1 }), 400, 'unknown_parameter');
  assertProblem(await post('{"county":', { headers: { 'Content-Type': 'application/json' } }), 400, 'invalid_body');
  assertProblem(await post('[1]', { headers: { 'Content-Type': 'application/json' } }), 400, 'invalid_body');
  assertProblem(
    await post('county=Cork', { headers: { 'Content-Type': 'application/x-www-form-urlencoded' } }),
    415,
    'unsupported_media_type',
  );
  assertProblem(await post({ q: 'x'.repeat(1_100_000) }), 413, 'body_too_large');
});

test('a search body sent again is read from its remembered query: the same object, frozen, its polygon text the key of the remembered geometry; long and bad bodies are not remembered', async () => {
  const polygon = {
    type: 'Polygon',
    coordinates: [
      [
        [centre.lon - 0.2, centre.lat - 0.1],
        [centre.lon + 0.2, centre.lat - 0.1],
        [centre.lon, centre.lat + 0.1],
        [centre.lon - 0.2, centre.lat - 0.1],
      ],
    ],
  };
  const text = JSON.stringify({ polygon, status: ['planning', 'approved'] });
  const q = searchQueryOf(text);
  assert.equal({ ...q }, { polygon: JSON.stringify(polygon), status: 'planning,approved' });
  assert.ok(Object.isFrozen(q));
  assert.is(searchQueryOf(` ${text}`.slice(1)), q, 'the same text (another string): the same query');
  assert.is.not(searchQueryOf(JSON.stringify({ polygon, status: ['planning'] })), q, 'another body: its own query');
  assert.is(
    parsePolygonText(q['polygon'] as string),
    parsePolygonText(searchQueryOf(text)['polygon'] as string),
    'one geometry object for the polygon',
  );
  const long = JSON.stringify({ polygon, q: 'x'.repeat(SEARCH_BODY_CACHE.maxChars) });
  assert.is.not(searchQueryOf(long), searchQueryOf(long), 'a body past maxChars is read every time');
  for (let i = 0; i < 2; i++)
    assert.throws(() => searchQueryOf('{"county":'), /not valid JSON/, 'a bad body is refused every time');
  // over HTTP: the same body twice, the same answer; another territory in between, its own
  const first = await post({ polygon });
  const other = await post({
    polygon: { ...polygon, coordinates: [polygon.coordinates[0]!.map(([x, y]) => [x! + 0.05, y!])] },
  });
  const again = await post({ polygon });
  assert.is(first.status, 200, first.text);
  assert.equal(again.body, first.body);
  assert.is.not(other.body.total, first.body.total);
});

test.run();
