/**
 * ArcGIS FeatureServer paging against a local layer: `resultOffset` / `resultRecordCount` in
 * OBJECTID order until `exceededTransferLimit` is gone (the server capping pages below the asked
 * size), a malformed page retried, errors that stop; and the pure query builder, window and merge.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { rejects } from 'node:assert/strict';
import {
  arcgisQueryUrl,
  checkPage,
  featureKey,
  fetchArcgisLayer,
  mergeFeatures,
  windowWhere,
} from '../../../pipeline/fetch/arcgis.ts';
import { FetchError, RetryableError, type HttpClient } from '../../../pipeline/fetch/http.ts';
import type { ArcgisSpec } from '../../../pipeline/fetch/sources.ts';
import { fakeDeps, PublisherServer } from './publisher-server.ts';

const SPEC: ArcgisSpec = {
  orderBy: 'OBJECTID',
  pageSize: 5,
  outSr: 2157,
  keyFields: ['PlanningAuthority', 'ApplicationNumber'],
  incremental: { where: "ETL_DATE >= TIMESTAMP '{since}'", overlapDays: 7 },
};
const POLICY = { attempts: 3, baseDelayMs: 1000, maxDelayMs: 8000, maxRetryAfterMs: 60_000, timeoutMs: 30_000 };

const feature = (id: number, number = `24/${id}`, etl = Date.UTC(2026, 10, 1)) => ({
  attributes: {
    OBJECTID: id,
    PlanningAuthority: 'Cork County Council',
    ApplicationNumber: number,
    ReceivedDate: Date.UTC(2026, 0, id),
    ETL_DATE: etl,
  },
  geometry: { x: 560_000 + id, y: 570_000 + id },
});

let server: PublisherServer;
test.before(async () => {
  server = await new PublisherServer().start();
});
test.after(async () => {
  await server.close();
});

function client(): { c: HttpClient; sleeps: number[] } {
  const f = fakeDeps();
  return { c: { userAgent: 'test', policy: POLICY, deps: f.deps }, sleeps: f.sleeps };
}

let n = 0;
/** A layer of `count` features (shuffled, so ordering is the server's job) capped at `max` per page. */
function layer(count: number, max: number): { path: string; url: string } {
  const path = `/arcgis/rest/services/L${++n}/FeatureServer/0`;
  const features = Array.from({ length: count }, (_, i) => feature(i + 1)).reverse();
  server.layers.set(path, { features, maxRecordCount: max });
  return { path, url: server.base + path };
}

test('pages follow exceededTransferLimit in OBJECTID order; the offset moves by the features received when the server caps the page', async () => {
  const { path, url } = layer(8, 3); // asks 5 per page, the server gives 3
  const r = await fetchArcgisLayer(client().c, url, SPEC, '1=1');
  assert.equal(
    r.features.map((f) => (f as ReturnType<typeof feature>).attributes.OBJECTID),
    [1, 2, 3, 4, 5, 6, 7, 8],
  );
  assert.is(r.pages, 3);
  assert.equal(r.spatialReference, { wkid: 2157, latestWkid: 2157 });
  const reqs = server.to(`${path}/query`);
  assert.equal(
    reqs.map((q) => q.query.get('resultOffset')),
    ['0', '3', '6'],
  );
  for (const q of reqs) {
    assert.is(q.query.get('f'), 'json');
    assert.is(q.query.get('where'), '1=1');
    assert.is(q.query.get('orderByFields'), 'OBJECTID ASC');
    assert.is(q.query.get('resultRecordCount'), '5');
    assert.is(q.query.get('outFields'), '*');
    assert.is(q.query.get('outSR'), '2157');
  }
});

test('the incremental where-clause selects the window on the server', async () => {
  const { path, url } = layer(0, 10);
  server.layers
    .get(path)!
    .features.push(feature(1, '24/1', Date.UTC(2026, 9, 1)), feature(2, '24/2', Date.UTC(2026, 10, 5)));
  const where = windowWhere(SPEC.incremental!.where, new Date(Date.UTC(2026, 10, 2, 6, 30)));
  assert.is(where, "ETL_DATE >= TIMESTAMP '2026-11-02 06:30:00'");
  const r = await fetchArcgisLayer(client().c, url, SPEC, where);
  assert.equal(
    r.features.map((f) => (f as ReturnType<typeof feature>).attributes.ApplicationNumber),
    ['24/2'],
  );
});

test('a malformed page (invalid JSON, or no features) is asked again; a 500 then success too', async () => {
  const { path, url } = layer(4, 2);
  server.script(
    `${path}/query`,
    { body: '{"features": [ {"attributes": ' },
    { status: 500 },
    { body: '{"objectIdFieldName":"OBJECTID"}' },
  );
  const { c, sleeps } = client();
  const r = await fetchArcgisLayer({ ...c, policy: { ...POLICY, attempts: 4 } }, url, { ...SPEC, pageSize: 2 }, '1=1');
  assert.is(r.features.length, 4);
  assert.is(sleeps.length, 3, 'three failed attempts, each followed by a backoff');
  assert.is(r.attempts, 5, 'three failed + two good pages');
});

test('a connection dropped mid-page is retried', async () => {
  const { path, url } = layer(3, 10);
  server.script(`${path}/query`, { drop: 40 });
  const r = await fetchArcgisLayer(client().c, url, SPEC, '1=1');
  assert.is(r.features.length, 3);
});

test('a page that stays malformed makes the layer fail, naming the URL', async () => {
  const { path, url } = layer(4, 2);
  server.script(`${path}/query`, { body: 'not json' }, { body: 'not json' }, { body: 'not json' });
  await rejects(
    () => fetchArcgisLayer(client().c, url, SPEC, '1=1'),
    (e: unknown) => {
      assert.instance(e, FetchError);
      assert.match((e as Error).message, `gave up on ${url}/query?f=json`);
      assert.match((e as Error).message, 'after 3 attempts: malformed JSON');
      return true;
    },
  );
});

test('an ArcGIS error body (400: a bad where-clause) stops at once', async () => {
  const { path, url } = layer(2, 2);
  const { c, sleeps } = client();
  await rejects(() => fetchArcgisLayer(c, url, SPEC, 'NOPE'), /ArcGIS error 400: Unable to perform query/);
  assert.is(server.to(`${path}/query`).length, 1);
  assert.equal(sleeps, []);
});

test('exceededTransferLimit on an empty page is an error, not an endless loop', async () => {
  const { path, url } = layer(0, 2);
  server.script(`${path}/query`, { body: '{"features":[],"exceededTransferLimit":true}' });
  await rejects(() => fetchArcgisLayer(client().c, url, SPEC, '1=1'), /exceededTransferLimit with no features/);
});

test("arcgisQueryUrl: the layer URL's own query (a token) is kept, the paging parameters added", () => {
  const u = new URL(
    arcgisQueryUrl('https://example.org/arcgis/rest/services/P/FeatureServer/0/?token=abc', SPEC, '1=1', 2000, 1000),
  );
  assert.is(u.pathname, '/arcgis/rest/services/P/FeatureServer/0/query');
  assert.is(u.searchParams.get('token'), 'abc');
  assert.is(u.searchParams.get('resultOffset'), '2000');
  assert.is(u.searchParams.get('resultRecordCount'), '1000');
  assert.is(u.searchParams.get('orderByFields'), 'OBJECTID ASC');
});

test('checkPage: 429 / 5xx error bodies are retryable, other errors are not', () => {
  assert.throws(
    () => checkPage({ error: { code: 503, message: 'busy' } }),
    (e: unknown) => e instanceof RetryableError,
  );
  assert.throws(
    () => checkPage({ error: { code: 400, message: 'bad' } }),
    (e: unknown) => !(e instanceof RetryableError) && /ArcGIS error 400: bad/.test((e as Error).message),
  );
  assert.throws(
    () => checkPage([]),
    (e: unknown) => e instanceof RetryableError,
  );
  assert.equal(checkPage({ features: [], spatialReference: { wkid: 2157 } }), {
    features: [],
    exceededTransferLimit: false,
    spatialReference: { wkid: 2157 },
  });
});

test('mergeFeatures: a window record replaces the stored one in place (key trimmed, case-folded), new ones are appended, window duplicates kept', () => {
  const stored = [feature(1, '24/1'), feature(2, '24/2'), feature(3, '24/3')];
  const updated = feature(20, ' 24/2 ');
  const fresh = [updated, feature(4, '24/4'), feature(5, '24/4')];
  const merged = mergeFeatures(stored, fresh, SPEC.keyFields) as ReturnType<typeof feature>[];
  assert.equal(
    merged.map((f) => f.attributes.OBJECTID),
    [1, 20, 3, 4, 5],
  );
  assert.is(featureKey(feature(9, '24/x'), SPEC.keyFields), 'CORK COUNTY COUNCIL\u000024/X');
  assert.is(featureKey({ geometry: {} }, SPEC.keyFields), null);
  assert.equal(mergeFeatures(stored, [], SPEC.keyFields), stored);
});

test.run();
