/**
 * TEST FIXTURE for the account area's pages without a browser: the pages of
 * api/app-area/pages (`appPages`) served over real HTTP on port 0 next to a real test API
 * (startTestApi: real release, real SQLite state, real usage ledger), with a test-only
 * middleware that signs a request in as the account named by its `X-Test-Account` header.
 *
 * It stands in for the session layer (api/app-area/router.ts: cookies, CSRF, CSP, layout) only
 * so the pages' own behaviour can be driven directly; the real sign-in path is exercised by
 * test/api/app-area/pages/walk.browser.test.ts. `renderPage` here wraps the body in a minimal
 * document; `recordActivity` writes the real activity log (store.app).
 *
 * @example
 *   const h = await startAppHarness();
 *   const acme = await h.account('acme', 'pro');
 *   const res = await h.get(acme, '/app/keys');
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import Router from '@koa/router';
import type { Account } from '../../api/state/store-interface.ts';
import type { Plan } from '../../api/access/scopes.ts';
import type { AppAreaContext, AppAreaState, RecordActivity, RenderPage } from '../../api/app-area/contract.ts';
import { appPages } from '../../api/app-area/pages/index.ts';
import { escapeHtml } from '../../api/app-area/html.ts';
import { startTestApi, type TestApi, type TestApiOptions } from './api.ts';

export interface HarnessResponse {
  status: number;
  headers: Headers;
  text: string;
}

export interface AppHarness {
  api: TestApi;
  /** Origin of the pages' server. */
  url: string;
  account(name: string, plan: Plan): Promise<Account>;
  get(as: Account, path: string): Promise<HarnessResponse>;
  /** Post a form (urlencoded) as `as`. */
  post(as: Account, path: string, form?: Record<string, string | string[]>): Promise<HarnessResponse>;
  close(): Promise<void>;
}

/** The minimal layout of the fixture: the page in a document (status, title, body). */
const renderPage: RenderPage = (ctx, p) => {
  ctx.status = p.status ?? 200;
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = `<!doctype html><html lang="en"><head><title>${escapeHtml(p.title)}</title></head><body data-section="${p.section}"><main><h1>${escapeHtml(p.title)}</h1>${p.body.__html}</main></body></html>`;
};

export async function startAppHarness(opts: TestApiOptions = {}): Promise<AppHarness> {
  const api = await startTestApi(opts);
  const clock = opts.clock ?? (() => new Date());
  const recordActivity: RecordActivity = (ctx, event, details = {}) =>
    api.store.app.recordActivity({
      account_id: ctx.state.app.account.id,
      event,
      session_id: ctx.state.app.id,
      address: ctx.ip,
      details,
    });
  const app = new Koa<AppAreaState>();
  app.use(async (ctx, next) => {
    const id = Number(ctx.get('X-Test-Account'));
    const account = await api.store.getAccountById(id);
    if (!account) {
      ctx.status = 401;
      ctx.body = 'the fixture needs X-Test-Account';
      return;
    }
    (ctx as unknown as AppAreaContext).state.app = {
      id: `test-session-${id}`,
      account: { id: account.id, name: account.name, plan: account.plan },
      csrfToken: 'fixture-csrf',
      nonce: 'fixture-nonce',
      expiresAt: new Date(clock().getTime() + 3_600_000).toISOString(),
    };
    await next();
  });
  const pages = appPages(api.config, {
    store: api.store,
    db: api.server.db,
    releases: api.server.releases,
    clock,
    log: () => {},
    ledger: api.server.ledger,
    exportTemp: api.server.exportTemp,
    ...(opts.resolveHost ? { resolveHost: opts.resolveHost } : {}),
    renderPage,
    recordActivity,
  });
  const root = new Router<AppAreaState>();
  for (const r of pages) root.use(r.routes());
  app.use(root.routes());
  const server = http.createServer(app.callback());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const send = async (as: Account, path: string, init: RequestInit = {}): Promise<HarnessResponse> => {
    const res = await fetch(url + path, {
      ...init,
      redirect: 'manual',
      headers: { ...(init.headers as Record<string, string>), 'X-Test-Account': String(as.id) },
    });
    return { status: res.status, headers: res.headers, text: await res.text() };
  };
  return {
    api,
    url,
    account: (name, plan) => api.store.createAccount(name, plan),
    get: (as, path) => send(as, path),
    post: (as, path, form = {}) => {
      const body = new URLSearchParams();
      body.set('_csrf', 'fixture-csrf');
      for (const [k, v] of Object.entries(form)) for (const x of Array.isArray(v) ? v : [v]) body.append(k, x);
      return send(as, path, {
        method: 'POST',
        body: body.toString(),
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      });
    },
    async close() {
      await new Promise<void>((r) => server.close(() => r()));
      await api.close();
    },
  };
}
