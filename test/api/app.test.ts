/**
 * `routeOf` (api/app.ts): the route template a request is counted under, remembered per method
 * and path once matched — the same answers as matching afresh, for repeated paths, for more paths
 * than it remembers, for paths too long to remember, for HEAD (counted as itself, matched as GET).
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import Router from '@koa/router';
import { routeOf } from '../../api/app.ts';

function routers(): Router[] {
  const leads = new Router();
  leads.get('/leads', () => {});
  leads.get('/leads/:id', () => {});
  leads.post('/leads/search', () => {});
  const hooks = new Router();
  hooks.get('/webhooks/:id/deliveries', () => {});
  return [leads, hooks];
}

test('templates of every request, asked again and again, past the number of paths remembered', () => {
  const route = routeOf(routers() as never);
  const fresh = routeOf(routers() as never); // each answer below is also asked once of a new one
  const cases: [method: string, path: string, template: string][] = [
    ['GET', '/v1/leads', 'GET /v1/leads'],
    ['HEAD', '/v1/leads', 'HEAD /v1/leads'],
    ['POST', '/v1/leads', 'other'],
    ['POST', '/v1/leads/search', 'POST /v1/leads/search'],
    ['GET', '/v1/leads/search', 'GET /v1/leads/{id}'],
    ['GET', '/v1/webhooks/wh_1/deliveries', 'GET /v1/webhooks/{id}/deliveries'],
    ['GET', '/v1/nothing', 'other'],
    ['GET', '/healthz', 'other'],
    ['GET', `/v1/leads/${'9'.repeat(300)}`, 'GET /v1/leads/{id}'],
    ['GET', `/v1/nothing/${'x'.repeat(300)}`, 'other'],
  ];
  for (let round = 0; round < 3; round++) {
    for (const [method, path, template] of cases) assert.is(route(method, path), template, `${method} ${path}`);
    for (let id = 1; id <= 5000; id++) assert.is(route('GET', `/v1/leads/${id + round * 5000}`), 'GET /v1/leads/{id}');
  }
  for (const [method, path, template] of cases) assert.is(fresh(method, path), template, `fresh: ${method} ${path}`);
});

test.run();
