/**
 * A capped row budget for route tests, installed on `ctx.state.budget` by a middleware placed
 * right after the problem middleware of an app built by `createApp` (the auth middleware keeps a
 * budget already set: `ctx.state.budget ??= UNLIMITED`). It follows the contract of
 * api/budget.ts: `charge(n)` with n above what remains throws the 429 `budget_exhausted`
 * problem and charges nothing. Every call is recorded.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Middleware } from 'koa';
import { createApp } from '../../api/app.ts';
import { ApiError } from '../../api/errors.ts';
import type { RowBudget } from '../../api/budget.ts';
import type { TestApi } from './api.ts';

export interface TestBudget extends RowBudget {
  /** Every charge asked for, refused ones included. */
  readonly calls: number[];
  /** Rows actually charged. */
  readonly charged: number;
}

export function testBudget(cap: number | null): TestBudget {
  const calls: number[] = [];
  let charged = 0;
  return {
    calls,
    get charged() {
      return charged;
    },
    get remaining() {
      return cap === null ? null : cap - charged;
    },
    charge(rows: number) {
      calls.push(rows);
      if (cap !== null && rows > cap - charged) {
        throw new ApiError(429, 'budget_exhausted', `this request needs ${rows} rows and the key's daily budget has ${cap - charged} left`);
      }
      charged += rows;
    },
  };
}

/**
 * Serve the test API's app a second time, with `budget()` installed on every request; returns
 * the origin and a close function.
 */
export async function serveWithBudget(api: TestApi, budget: () => RowBudget): Promise<{ url: string; close: () => Promise<void> }> {
  const app = createApp(api.config, { db: api.server.db, releases: api.server.releases, store: api.store, clock: () => new Date(), log: (l) => void api.logs.push(l) });
  const seam: Middleware = async (ctx, next) => {
    ctx.state['budget'] = budget();
    await next();
  };
  app.middleware.splice(1, 0, seam);
  const server = http.createServer(app.callback());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}
