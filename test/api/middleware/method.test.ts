/** 405 with Allow for a known path and another method; 404 problem for unknown paths. */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { assertProblem, startTestApi, type TestApi } from '../../helpers/api.ts';

let api: TestApi;
test.before(async () => {
  api = await startTestApi();
});
test.after(async () => {
  await api.close();
});

test('405 with Allow for POST, PUT, DELETE, PATCH on GET routes', async () => {
  for (const path of ['/v1/meta', '/v1/infrastructure', '/v1/leads', '/v1/leads/1']) {
    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH']) {
      const res = await api.request(path, { method });
      assertProblem(res, 405, 'method_not_allowed');
      assert.is(res.headers.get('allow'), 'GET, HEAD, OPTIONS', `${method} ${path}`);
      assert.match(res.body.detail, method);
    }
  }
});

test('OPTIONS answers 204 with Allow; HEAD works where GET does', async () => {
  const opt = await api.request('/v1/meta', { method: 'OPTIONS' });
  assert.is(opt.status, 204);
  assert.is(opt.headers.get('allow'), 'GET, HEAD, OPTIONS');
  const head = await api.request('/v1/meta', { method: 'HEAD' });
  assert.is(head.status, 200);
  assert.is(head.text, '');
});

test('unknown paths are 404 problems, whatever the method', async () => {
  for (const [method, path] of [
    ['GET', '/v1/nope'],
    ['POST', '/v1/nope'],
    ['GET', '/'],
    ['GET', '/meta'],
    ['GET', '/v2/meta'],
  ]) {
    assertProblem(await api.request(path!, { method }), 404, 'not_found');
  }
});

test.run();
