/** X-Request-Id on every response, success or error; a client's id is kept only when well-formed. */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { REQUEST_ID_PATTERN } from '../../../api/middleware/request-id.ts';
import { assertProblem, startTestApi, type TestApi } from '../../helpers/api.ts';

let api: TestApi;
test.before(async () => {
  api = await startTestApi();
});
test.after(async () => {
  await api.close();
});

test('generated when absent, unique per request, on success and on errors', async () => {
  const ok1 = await api.request('/v1/meta');
  const ok2 = await api.request('/v1/meta');
  assert.is(ok1.status, 200);
  const id1 = ok1.headers.get('x-request-id')!;
  assert.match(id1, REQUEST_ID_PATTERN);
  assert.is.not(id1, ok2.headers.get('x-request-id'));
  assertProblem(await api.request('/v1/meta', { key: null }), 401, 'missing_key');
  assertProblem(await api.request('/v1/nope'), 404, 'not_found');
  assertProblem(await api.request('/v1/meta?x=1'), 400, 'unknown_parameter');
});

test('a well-formed client id is echoed (also in problems); anything else is replaced', async () => {
  const ok = await api.request('/v1/meta', { headers: { 'X-Request-Id': 'client-42.a_b' } });
  assert.is(ok.headers.get('x-request-id'), 'client-42.a_b');
  const err = await api.request('/v1/meta', { key: null, headers: { 'X-Request-Id': 'client-43' } });
  assertProblem(err, 401, 'missing_key');
  assert.is(err.body.request_id, 'client-43');
  for (const bad of ['has space', 'x'.repeat(65), 'semi;colon', '<script>']) {
    const res = await api.request('/v1/meta', { headers: { 'X-Request-Id': bad } });
    const id = res.headers.get('x-request-id')!;
    assert.is.not(id, bad);
    assert.match(id, REQUEST_ID_PATTERN);
  }
});

test.run();
