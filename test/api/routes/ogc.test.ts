/**
 * OGC API – Features (Part 1 core) over real HTTP: landing page, conformance, collections,
 * items (bbox, limit, datetime, next links; `near` / `polygon` in WGS 84 whatever `crs` and
 * `bbox-crs` say, against a reference computed without the API) and single features; and the GIS `access_token`:
 * carried into every link, redacted from problem bodies, never logged, one way of
 * authenticating at a time, revocation honoured.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { join } from 'node:path';
import { openApiDb, sqlString, type ApiDb } from '../../../api/duckdb/db.ts';
import { assertProblem, startTestApi, type TestApi } from '../../helpers/api.ts';
import { featureErrors, rfc7946Errors } from '../../helpers/geojson.ts';
import { referenceNear, referencePolygon, squareWithHole } from '../../helpers/geo-reference.ts';
import { EPSG_2157, toItm } from '../../../api/gis/crs.ts';

let api: TestApi;
let db: ApiDb;
let leads: string;
/** The server's clock runs ahead of the wall clock by this much (moved on to expire the key cache). */
let ahead = 0;
test.before(async () => {
  api = await startTestApi({ clock: () => new Date(Date.now() + ahead) });
  db = await openApiDb({ connections: 1, threads: 1, memoryLimit: '256MB' });
  leads = `read_parquet(${sqlString(join(api.dataDir, 'current', 'leads.parquet'))})`;
});
test.after(async () => {
  db.close();
  await api.close();
});
const feed = (path: string, headers?: Record<string, string>) =>
  api.request(path, { key: api.keys.ent_feed, ...(headers ? { headers } : {}) });
const rel = (links: any[], r: string): string | undefined => links.find((l) => l.rel === r)?.href;

test('landing page, conformance and collections', async () => {
  const landing = await feed('/v1/ogc');
  assert.is(landing.status, 200);
  for (const r of ['self', 'service-desc', 'service-doc', 'conformance', 'data'])
    assert.ok(rel(landing.body.links, r), `link ${r}`);
  assert.is(rel(landing.body.links, 'data'), `${api.baseUrl}/v1/ogc/collections`);
  const conf = await feed('/v1/ogc/conformance?f=json');
  assert.ok(conf.body.conformsTo.includes('http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/core'));
  assert.ok(conf.body.conformsTo.includes('http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/geojson'));
  const cols = await feed('/v1/ogc/collections');
  assert.equal(
    cols.body.collections.map((c: any) => c.id),
    ['leads', 'infrastructure'],
  );
  const [l] = cols.body.collections;
  assert.is(l.extent.spatial.bbox[0].length, 4);
  assert.is(rel(l.links, 'items'), `${api.baseUrl}/v1/ogc/collections/leads/items`);
  const [[lo, hi]] = l.extent.temporal.interval;
  const [r] = await db.all<{ lo: string; hi: string }>(
    `SELECT min(received_date) AS lo, max(received_date) AS hi FROM ${leads}`,
  );
  assert.equal([lo, hi], [`${r!.lo}T00:00:00Z`, `${r!.hi}T23:59:59Z`]);
  assert.is((await feed('/v1/ogc/collections/infrastructure')).body.id, 'infrastructure');
  assertProblem(await feed('/v1/ogc/collections/roads'), 404, 'not_found');
  assertProblem(await feed('/v1/ogc/collections/roads/items'), 404, 'not_found');
  assertProblem(await feed('/v1/ogc?f=html'), 400, 'invalid_parameter');
});

test('items: limit and next links walk the layer; bbox and datetime match independent counts', async () => {
  let url: string | null = '/v1/ogc/collections/leads/items?limit=250';
  const seen: number[] = [];
  while (url) {
    const res = await feed(url);
    assert.is(res.status, 200);
    assert.match(res.headers.get('content-type')!, /^application\/geo\+json/);
    assert.equal(rfc7946Errors(res.body), []);
    assert.ok(res.body.numberReturned <= 250);
    seen.push(...res.body.features.map((f: any) => f.id));
    const next = rel(res.body.links, 'next');
    url = next ? next.slice(api.baseUrl.length) : null;
  }
  const [{ n } = { n: 0 }] = await db.all<{ n: number }>(`SELECT count(*) AS n FROM ${leads} WHERE lat IS NOT NULL`);
  assert.is(seen.length, n);
  assert.is(new Set(seen).size, n);

  const q = '/v1/ogc/collections/leads/items?bbox=-9,51.5,-8,52.2&datetime=2024-01-01/..&limit=10000';
  const res = await feed(q);
  const expected = (
    await db.all<{ id: number }>(
      `SELECT id FROM ${leads} WHERE lat IS NOT NULL AND round(lon, 6) BETWEEN -9 AND -8 AND round(lat, 6) BETWEEN 51.5 AND 52.2 AND received_date >= DATE '2024-01-01' ORDER BY id`,
    )
  ).map((r) => r.id);
  assert.ok(expected.length > 0);
  assert.equal(
    res.body.features.map((f: any) => f.id),
    expected,
  );
  assert.is(res.body.numberMatched, expected.length);
  const instant = await feed('/v1/ogc/collections/leads/items?datetime=2024-03-05T10:00:00Z');
  for (const f of instant.body.features) assert.is(f.properties.received_date, '2024-03-05');
  const closed = await feed('/v1/ogc/collections/leads/items?datetime=../2020-12-31&bbox=-11,51,0,-5,56,100'); // minLon,minLat,minZ,maxLon,maxLat,maxZ
  assert.is(closed.status, 200);
  assert.ok(closed.body.features.length > 0);
  for (const f of closed.body.features) assert.ok(f.properties.received_date <= '2020-12-31');
  for (const bad of [
    'datetime=2024-13-01',
    'datetime=2025-01-01/2024-01-01',
    'datetime=../..',
    'limit=0',
    'bbox=1,2,3',
    'sort=id',
  ]) {
    assertProblem(
      await feed(`/v1/ogc/collections/leads/items?${bad}`),
      400,
      bad.startsWith('sort') ? 'unknown_parameter' : 'invalid_parameter',
    );
  }
});

test('items: near + radius_m and polygon as on /v1/leads, always WGS 84 (with crs and bbox-crs EPSG:2157 too); the same 400s', async () => {
  const [p] = await db.all<{ id: number; lat: number; lon: number }>(
    `SELECT id, lat, lon FROM ${leads} WHERE lat BETWEEN 53.3 AND 53.4 AND lon BETWEEN -6.35 AND -6.2 ORDER BY id LIMIT 1`,
  );
  assert.ok(p, 'a Dublin lead');
  const near = { lat: p!.lat, lon: p!.lon, radius_m: 15_000 };
  const g = squareWithHole(p!.lon + 0.01, p!.lat + 0.01, 0.15, { lon: p!.lon, lat: p!.lat, size: 0.02 });
  const polygon = encodeURIComponent(JSON.stringify(g));
  const wantNear = await referenceNear(db, leads, near);
  const wantPoly = await referencePolygon(db, leads, g);
  assert.ok(wantNear.length > 10 && wantPoly.includes(p!.id));
  const items = async (q: string): Promise<any> => {
    const res = await feed(`/v1/ogc/collections/leads/items?limit=10000&${q}`);
    assert.is(res.status, 200, res.text.slice(0, 300));
    assert.is(res.body.numberMatched, res.body.features.length);
    return res;
  };
  const nearQ = `near=${near.lat},${near.lon}&radius_m=${near.radius_m}`;
  assert.equal(
    (await items(nearQ)).body.features.map((f: any) => f.id),
    wantNear,
  );
  assert.equal(
    (await items(`polygon=${polygon}`)).body.features.map((f: any) => f.id),
    wantPoly,
  );
  // answered in ITM, the area still read as WGS 84
  const itm = await items(`${nearQ}&crs=${encodeURIComponent(EPSG_2157)}`);
  assert.equal(
    itm.body.features.map((f: any) => f.id),
    wantNear,
  );
  assert.is(itm.headers.get('content-crs'), `<${EPSG_2157}>`);
  const f0 = itm.body.features[0];
  assert.equal(f0.geometry.coordinates, toItm(f0.properties.lon, f0.properties.lat));
  // bbox in ITM (a box around the point), near and polygon in WGS 84
  const [e, n] = toItm(near.lon, near.lat);
  const itmBox = [e - 5000, n - 5000, e + 5000, n + 5000].join(',');
  const boxed = await items(
    `${nearQ}&polygon=${polygon}&bbox=${itmBox}&bbox-crs=${encodeURIComponent(EPSG_2157)}&crs=${encodeURIComponent(EPSG_2157)}`,
  );
  const inPoly = new Set(wantPoly);
  const ids = boxed.body.features.map((f: any) => f.id);
  assert.ok(ids.length > 0 && ids.includes(p!.id));
  for (const id of ids) assert.ok(inPoly.has(id) && wantNear.includes(id), `${id} in both areas`);
  for (const f of boxed.body.features) {
    const [x, y] = f.geometry.coordinates;
    // the box is read as its CRS84 envelope, which is turned by the grid convergence (~1.4° at
    // Dublin) against the ITM axes: it reaches up to ~5,000 × (1 + 2 sin 1.4°) ≈ 5,245 m out
    assert.ok(Math.abs(x - e) < 5300 && Math.abs(y - n) < 5300, `${x},${y} inside the ITM box (to its CRS84 envelope)`);
  }
  // paging by next link with an area
  let url: string | null = `/v1/ogc/collections/leads/items?limit=7&${nearQ}`;
  const walked: number[] = [];
  while (url) {
    const res = await feed(url);
    walked.push(...res.body.features.map((f: any) => f.id));
    const next = rel(res.body.links, 'next');
    url = next ? next.slice(api.baseUrl.length) : null;
  }
  assert.equal(walked, wantNear);
  for (const [q, name] of [
    ['near=-6.26,53.35', 'near'],
    ['radius_m=100', 'radius_m'],
    ['near=53.35,-6.26&radius_m=0', 'radius_m'],
    ['polygon=%5B1,2%5D', 'polygon'],
  ]) {
    const res = await feed(`/v1/ogc/collections/infrastructure/items?${q}`);
    assertProblem(res, 400, 'invalid_parameter');
    assert.equal(
      res.body.errors.map((x: any) => x.name),
      [name],
      q,
    );
    assert.equal(res.body.errors, (await feed(`/v1/leads?${q}`)).body.errors, `${q}: as /v1/leads`);
  }
});

test('one feature by id, with self and collection links; 404 for an unknown id', async () => {
  const list = await feed('/v1/feeds/leads.geojson?page_size=3');
  const f = list.body.features[2];
  const one = await feed(`/v1/ogc/collections/leads/items/${f.id}`);
  assert.is(one.status, 200);
  assert.equal(featureErrors(one.body), []);
  const { links, ...feature } = one.body;
  assert.equal(feature, f);
  assert.is(rel(links, 'self'), `${api.baseUrl}/v1/ogc/collections/leads/items/${f.id}`);
  assertProblem(await feed('/v1/ogc/collections/leads/items/99999999'), 404, 'not_found');
  assertProblem(await feed('/v1/ogc/collections/leads/items/abc'), 404, 'not_found');
});

test('access_token: minted with the Bearer header, carried into every link, never logged, redacted, one way only, revocation honoured', async () => {
  const minted = await feed('/v1/feeds/token?ttl=3600');
  assert.is(minted.status, 200);
  assert.is(minted.headers.get('cache-control'), 'no-store');
  const token: string = minted.body.access_token;
  assert.match(token, /^gt_/);
  assert.not.ok(token.includes(api.keys.ent_feed.slice(6)), 'the key is not readable in the token');
  const page = await api.request(`/v1/ogc/collections/leads/items?limit=5&access_token=${token}`, { key: null });
  assert.is(page.status, 200);
  for (const l of page.body.links)
    assert.ok(new URL(l.href).searchParams.get('access_token') === token, `${l.rel} link carries the token`);
  const next = await api.request(rel(page.body.links, 'next')!.slice(api.baseUrl.length), { key: null });
  assert.is(next.status, 200);
  const landing = await api.request(`/v1/ogc?access_token=${token}`, { key: null });
  for (const r of ['self', 'conformance', 'data'])
    assert.is(new URL(rel(landing.body.links, r)!).searchParams.get('access_token'), token);
  const feedPage = await api.request(`/v1/feeds/leads.geojson?page_size=2&access_token=${token}`, { key: null });
  assert.is(new URL(rel(feedPage.body.links, 'next')!).searchParams.get('access_token'), token);

  const bad = await api.request(`/v1/ogc/collections/leads/items?limit=abc&access_token=${token}`, { key: null });
  assertProblem(bad, 400, 'invalid_parameter');
  assert.not.ok(bad.body.instance.includes(token), 'the token is redacted from instance');
  assert.match(bad.body.instance, /access_token=REDACTED/);
  assertProblem(await api.request(`/v1/ogc?access_token=${token}`), 400, 'invalid_parameter'); // header and token
  const forged = await api.request(`/v1/ogc?access_token=${token.slice(0, -4)}AAAA`, { key: null });
  assertProblem(forged, 401, 'invalid_token');
  assert.match(forged.headers.get('www-authenticate')!, /invalid_token/);
  assertProblem(await api.request(`/v1/leads?access_token=${token}`, { key: null }), 401, 'missing_key'); // not a GIS path
  assertProblem(await api.request(`/v1/feeds/token?access_token=${token}`, { key: null }), 401, 'missing_key'); // a token cannot mint tokens
  for (const line of api.logs) {
    assert.not.ok(line.includes(token), 'no token in the log');
    assert.not.ok(line.includes(api.keys.ent_feed), 'no key in the log');
  }

  // a token dies with its key
  const k = await api.store.createAccount('gis', 'premium').then(async (acc) => {
    const { generateKey } = await import('../../../api/access/keys.ts');
    const g = generateKey('custom');
    await api.store.insertKey({
      id: g.id,
      account_id: acc.id,
      scope: 'custom',
      name: 'gis',
      display_prefix: g.displayPrefix,
      hash: g.hash,
    });
    return g;
  });
  const t2 = (await api.request('/v1/feeds/token', { key: k.raw })).body.access_token;
  assert.is((await api.request(`/v1/ogc?access_token=${t2}`, { key: null })).status, 200);
  await api.store.revokeKey(k.id);
  ahead += api.config.keyCacheMs + 1; // the cached lookup is now stale on the server's clock
  assertProblem(await api.request(`/v1/ogc?access_token=${t2}`, { key: null }), 401, 'revoked_key');
});

test.run();
