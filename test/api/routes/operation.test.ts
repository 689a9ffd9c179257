/**
 * An operation declared once (api/routes/operation.ts) and the row budget charged in one place
 * (`charging`, api/access/budget.ts): a mounted operation answers over real HTTP on port 0, its
 * records are charged before `send` sets anything, a refused charge gives back what the handler
 * reserved, `dry_run=1` on a change is answered before it acts, and a route the OpenAPI document
 * does not describe cannot be mounted into the app.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import Koa from 'koa';
import Router from '@koa/router';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { checkDeclared, declarationOf, mount, routerPath, type Operation } from '../../../api/routes/operation.ts';
import { served, type RowBudget } from '../../../api/access/budget.ts';
import { ApiError, problemMiddleware } from '../../../api/http/errors.ts';
import type { AppState } from '../../../api/http/context.ts';
import { endpoints } from '../../../api/openapi/document.ts';
import { LEADS_OPERATIONS } from '../../../api/routes/leads.ts';
import { WEBHOOKS_OPERATIONS } from '../../../api/routes/webhooks.ts';

/** A budget of `limit` rows that records what it was asked to charge. */
function recordingBudget(limit: number, opts: { quoting?: boolean } = {}): RowBudget & { asked: number[] } {
  let used = 0;
  const asked: number[] = [];
  return {
    asked,
    get remaining() {
      return limit - used;
    },
    ...(opts.quoting ? { quoting: true } : {}),
    charge(rows: number) {
      asked.push(rows);
      // stands in for the access model's quote (api/access/enforce.ts): an error the route never catches
      if (opts.quoting) throw Object.assign(new Error(`quote ${rows}`), { status: 402, expose: true });
      if (used + rows > limit) throw new ApiError(429, 'budget_exhausted', `${rows} > ${limit - used}`);
      used += rows;
    },
  };
}

const declaration: Pick<Operation, 'tag' | 'summary' | 'description' | 'ok' | 'errors'> = {
  tag: 'Test',
  summary: 'A test operation',
  description: 'Serves `n` records.',
  ok: { schema: null, description: 'The records.' },
  errors: [],
};

/** Serve `routers` behind the problem middleware with `budget` installed; returns the base URL and a closer. */
async function serve(
  routers: Router<AppState>[],
  budget: RowBudget | undefined,
): Promise<{ url: string; close: () => Promise<void> }> {
  const app = new Koa<AppState>();
  app.silent = true;
  app.use(problemMiddleware(() => {}));
  app.use((ctx, next) => {
    if (budget) ctx.state.budget = budget;
    return next();
  });
  for (const r of routers) app.use(r.routes());
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

test('routerPath writes OpenAPI path templates as Koa router paths', () => {
  assert.is(routerPath('/leads/{id}/history'), '/leads/:id/history');
  assert.is(routerPath('/tiles/{layer}/{z}/{x}/{y}.mvt'), '/tiles/:layer/:z/:x/:y.mvt');
  assert.is(routerPath('/'), '/');
});

test('records are charged after the handler counted them and before send sets anything; a refused charge gives back what was reserved', async () => {
  const events: string[] = [];
  const ops: Operation<{ n: number }>[] = [
    {
      ...declaration,
      method: 'get',
      path: '/records/{n}',
      handler: (ctx) => {
        const n = Number(ctx.params['n']);
        events.push(`count ${n}`);
        return served(
          n,
          () => {
            events.push(`send ${n}`);
            ctx.set('Link', '</next>; rel="next"');
            ctx.body = { n };
          },
          () => events.push(`refused ${n}`),
        );
      },
    },
  ];
  const budget = recordingBudget(10);
  const { url, close } = await serve([mount(ops, { n: 0 })], budget);
  try {
    const ok = await fetch(`${url}/records/4`);
    assert.is(ok.status, 200);
    assert.equal(await ok.json(), { n: 4 });
    const refused = await fetch(`${url}/records/7`);
    assert.is(refused.status, 429);
    assert.is(refused.headers.get('link'), null, 'nothing of the answer is set when the charge is refused');
    assert.is(((await refused.json()) as { code: string }).code, 'budget_exhausted');
    assert.equal(budget.asked, [4, 7]);
    assert.equal(events, ['count 4', 'send 4', 'count 7', 'refused 7']);
  } finally {
    await close();
  }
});

test('dry_run on a change is answered before the change acts; a read POST runs to its charge', async () => {
  const acted: string[] = [];
  const ops: Operation<null>[] = [
    {
      ...declaration,
      method: 'post',
      path: '/things',
      handler: (ctx) => {
        acted.push('created');
        ctx.status = 201;
      },
    },
    {
      ...declaration,
      method: 'post',
      path: '/things/search',
      reads: true,
      handler: () => {
        acted.push('searched');
        return served(3, () => {});
      },
    },
  ];
  const budget = recordingBudget(10, { quoting: true });
  const { url, close } = await serve([mount(ops, null)], budget);
  try {
    const change = await fetch(`${url}/things`, { method: 'POST' });
    assert.is(change.status, 402);
    const read = await fetch(`${url}/things/search`, { method: 'POST' });
    assert.is(read.status, 402);
    assert.equal(budget.asked, [0, 3], 'the change is quoted 0 rows, the read what it would serve');
    assert.equal(acted, ['searched'], 'the change never ran');
  } finally {
    await close();
  }
});

test('a public operation (no budget) is not charged', async () => {
  const ops: Operation<null>[] = [
    { ...declaration, method: 'get', path: '/open', handler: (ctx) => served(2, () => void (ctx.body = 'ok')) },
  ];
  const { url, close } = await serve([mount(ops, null)], undefined);
  try {
    const res = await fetch(`${url}/open`);
    assert.is(res.status, 200);
    assert.is(await res.text(), 'ok');
  } finally {
    await close();
  }
});

test('a route the OpenAPI document does not describe cannot be mounted into the app', () => {
  const documented = endpoints();
  // the app's own routers: every route mounted from a documented operation
  const leads = mount(LEADS_OPERATIONS, { config: null as never });
  checkDeclared([leads], documented);
  assert.is(declarationOf(leads.stack[0]!), LEADS_OPERATIONS[0]);
  // an operation declared but left out of the document
  const undocumented = mount([{ ...declaration, method: 'get', path: '/secret', handler: () => {} }], null);
  assert.throws(() => checkDeclared([undocumented], documented), /GET \/secret is not in the OpenAPI document/);
  // a route added by hand, beside the declared ones
  const byHand = mount(LEADS_OPERATIONS, { config: null as never });
  byHand.get('/leads/extra', () => {});
  assert.throws(() => checkDeclared([byHand], documented), /\/leads\/extra was not mounted from an operation/);
  // router-level middleware (the webhooks' guard) is not a route
  checkDeclared([mount(WEBHOOKS_OPERATIONS, null as never, { use: (_ctx, next) => next() })], documented);
});

test('every documented operation is declared once: no method and path twice', () => {
  const seen = endpoints().map((e) => `${e.method.toUpperCase()} ${e.path}`);
  assert.equal(seen.length, new Set(seen).size);
  assert.ok(seen.length > 50, `${seen.length} operations`);
});

test.run();
