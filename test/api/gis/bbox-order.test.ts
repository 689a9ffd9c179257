/**
 * Issue 31, item 17c: a `bbox` whose min longitude exceeds its max longitude is a 400 naming
 * `bbox`, on every endpoint that takes one (they all parse it with `parseBBox`), not a box read as
 * crossing the antimeridian — the API serves Ireland.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { GEOMETRY_REASONS, parseBBox } from '../../../api/gis/geometry.ts';
import { assertProblem, startTestApi, type TestApi } from '../../helpers/api.ts';

const SWAPPED = '-6.10,53.25,-6.40,53.42'; // Dublin with its longitudes swapped
const DUBLIN = '-6.40,53.25,-6.10,53.42';
const REASON = 'minLon must not exceed maxLon: the API serves Ireland, no box crosses the antimeridian';

let api: TestApi;
test.before(async () => {
  api = await startTestApi({ config: { webhookAllowHosts: ['127.0.0.1'] } });
});
test.after(async () => {
  await api?.close();
});

test('parseBBox refuses minLon > maxLon, with 4 numbers and with 6; equal edges are a line and fine', () => {
  assert.is(GEOMETRY_REASONS.bboxLonOrder, REASON);
  assert.equal(parseBBox(SWAPPED), { name: 'bbox', reason: REASON });
  assert.equal(parseBBox('170,-10,-170,10'), { name: 'bbox', reason: REASON }, 'what used to cross the antimeridian');
  assert.equal(parseBBox('-6.10,53.25,0,-6.40,53.42,100', true), { name: 'bbox', reason: REASON });
  assert.equal(parseBBox(DUBLIN), [-6.4, 53.25, -6.1, 53.42]);
  assert.equal(parseBBox('-6.2,53.25,-6.2,53.42'), [-6.2, 53.25, -6.2, 53.42]);
});

const refused = (res: Awaited<ReturnType<TestApi['request']>>, where: string): void => {
  assertProblem(res, 400, 'invalid_parameter');
  assert.equal(res.body.errors, [{ name: 'bbox', reason: REASON }], where);
};

test('every endpoint that takes bbox answers 400 naming it', async () => {
  const key = api.keys.ent_feed;
  for (const path of [
    `/v1/leads?bbox=${SWAPPED}`,
    `/v1/export/applications?bbox=${SWAPPED}`,
    `/v1/export/applications.csv?bbox=${SWAPPED}`,
    `/v1/events?bbox=${SWAPPED}`,
    `/v1/feeds/leads.geojson?bbox=${SWAPPED}`,
    `/v1/feeds/infrastructure.geojson?bbox=${SWAPPED}`,
    `/v1/ogc/collections/leads/items?bbox=${SWAPPED}`,
    `/v1/ogc/collections/infrastructure/items?bbox=-6.10,53.25,0,-6.40,53.42,10`,
  ]) {
    refused(await api.request(path, { key }), path);
    const ok = await api.request(
      path.replace(SWAPPED, DUBLIN).replace('-6.10,53.25,0,-6.40,53.42,10', '-6.40,53.25,0,-6.10,53.42,10'),
      { key },
    );
    assert.is(ok.status, 200, `${path} the right way round: ${ok.text.slice(0, 200)}`);
  }
  refused(
    await api.request('/v1/leads/search', { key, method: 'POST', body: { bbox: [-6.1, 53.25, -6.4, 53.42] } }),
    'POST /v1/leads/search',
  );
  refused(
    await api.request('/v1/webhooks', {
      key,
      method: 'POST',
      body: { url: 'http://127.0.0.1:9/h', filter: `bbox=${SWAPPED}` },
    }),
    'a saved filter',
  );
});

test.run();
