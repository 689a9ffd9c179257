/**
 * The account area, served under /app by the same Koa server as the API (mounted by api/app.ts
 * BEFORE the release pin and the API-key middleware: the app runs on sessions, not keys, and a
 * client of the API never meets any of it).
 *
 * ┌─ WHERE PAGES ARE MOUNTED ───────────────────────────────────────────────────────────────┐
 * │ A page is a factory `(tools: AppTools) => Router<AppAreaState>` in api/app-area/pages/,   │
 * │ listed in `APP_PAGES` below. Its routes use full paths (`/app/keys`, `/app/keys/:id`…),   │
 * │ run only for a signed-in session (`ctx.state.app`, api/app-area/contract.ts), after the   │
 * │ CSRF check, and answer with `tools.renderPage(ctx, page)`; they log with                  │
 * │ `tools.recordActivity(ctx, event, details)` and read bodies with readForm / readJson      │
 * │ (api/app-area/body.ts). Pages that need the data release add                              │
 * │ `releaseMiddleware(tools.deps.releases)` to their own router.                             │
 * └─────────────────────────────────────────────────────────────────────────────────────────┘
 *
 * Every /app request, in order:
 *   headers (CSP with a fresh nonce, X-Frame-Options DENY, Cache-Control no-store,
 *   Referrer-Policy same-origin)  →  /app/assets/*  →  session (cookie → ctx.state.app)
 *   →  CSRF + origin check on POST/PUT/PATCH/DELETE (not for /app/alerts/unsubscribe/<token>)
 *   →  sign-in, sign-out and invitation routes  →  alert unsubscribe links (api/app-area/pages/searches.ts)
 *   →  a session is required from here on (GET: 303 to /app/sign-in?next=…; else 401)
 *   →  /app → /app/keys  →  the pages  →  a 404 page inside the layout.
 * Errors become an HTML page in the layout (status, what happened, the request id) — or, for a
 * request that sent or asked for JSON (the pages' scripts), the API's RFC 9457 problem.
 */
import Router from '@koa/router';
import type { Middleware } from 'koa';
import { randomBytes } from 'node:crypto';
import type { ApiConfig } from '../config.ts';
import { ApiError } from '../http/errors.ts';
import { activityRecorder } from './activity.ts';
import { loadAssets, serveAsset } from './assets.ts';
import { isForm, readForm } from './body.ts';
import type { AppAreaContext, AppAreaDeps, AppAreaState, AppPageFactory, AppTools } from './contract.ts';
import { html } from './html.ts';
import { renderPage, renderPublicPage, renderSignedIn } from './layout.ts';
import { checkCsrf, isUnsafe, loadSession, sessionTimes } from './session.ts';
import { sessionRouter } from './sign-in.ts';
import { PAGE_FACTORIES } from './pages/index.ts';
import { UNSUBSCRIBE_PATH, unsubscribeRouter } from './pages/searches.ts';
import { signinThrottle } from './throttle.ts';

/** The pages of the app, in APP_SECTIONS order (api/app-area/pages/*.ts). */
export const APP_PAGES: readonly AppPageFactory[] = PAGE_FACTORIES;

/**
 * The Content-Security-Policy of every /app response (no 'unsafe-inline': scripts and styles need
 * the nonce or come from /app/assets). `worker-src 'self'`: the map's MapLibre worker is the file
 * /app/assets/maplibre-gl-csp-worker.js (the CSP build: no blob: worker), and its tiles and land
 * are fetched from this origin (`connect-src 'self'`).
 */
export const appCsp = (nonce: string): string =>
  `default-src 'none'; script-src 'nonce-${nonce}' 'self'; style-src 'nonce-${nonce}' 'self'; img-src 'self' data:; connect-src 'self'; worker-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`;

/** Run middlewares in order, each reaching the next through `next()` (Koa's own composition, for a fixed list). */
// (any: a router's middleware also types ctx.params / ctx.router, which the router sets itself)
function chainOf(mws: readonly Middleware<AppAreaState, any>[]): (ctx: AppAreaContext) => Promise<void> {
  return (ctx) => {
    const step = async (i: number): Promise<void> => {
      if (i < mws.length) await mws[i]!(ctx as never, () => step(i + 1));
    };
    return step(0);
  };
}

const wantsJson = (ctx: AppAreaContext): boolean =>
  Boolean(ctx.is('application/json')) || ctx.accepts('html', 'json') === 'json';

/**
 * The /app middleware (requests outside /app pass through untouched).
 * `pages` defaults to APP_PAGES; tests may pass their own.
 */
export function appArea(
  config: ApiConfig,
  deps: AppAreaDeps,
  pages: readonly AppPageFactory[] = APP_PAGES,
): Middleware {
  const store = deps.store.app;
  const assets = loadAssets();
  const times = sessionTimes(config);
  const now = (): number => deps.clock().getTime();
  const throttle = signinThrottle(store, config, now);
  const tools: AppTools = { config, deps, renderPage, recordActivity: activityRecorder(store) };

  const requireSession: Middleware<AppAreaState> = async (ctx, next) => {
    if (ctx.state.app) return next();
    if (ctx.method === 'GET' || ctx.method === 'HEAD') {
      ctx.redirect(`/app/sign-in?next=${encodeURIComponent(ctx.path)}`);
      ctx.status = 303;
      return;
    }
    throw new ApiError(401, 'app_session_required', 'you are not signed in (or your session has ended); sign in again');
  };
  const home = new Router<AppAreaState>().get('/app', (ctx) => {
    ctx.redirect('/app/keys');
    ctx.status = 303;
  });
  const notFound: Middleware<AppAreaState> = (ctx) =>
    renderSignedIn(ctx, {
      section: null,
      title: 'Page not found',
      status: 404,
      body: html`<p>There is no page at <code>${ctx.path}</code>.</p><p><a href="/app">Go to the account home</a></p>`,
    });

  const chain = chainOf([
    sessionRouter(config, {
      store,
      accounts: deps.store,
      clock: deps.clock,
      throttle,
      ...(deps.passwordCost ? { passwordCost: deps.passwordCost } : {}),
    }).routes(),
    unsubscribeRouter({ store: deps.store }).routes(), // alert e-mails' links: no sign-in (the signed token is the credential)
    requireSession,
    home.routes(),
    ...pages.map((p) => p(tools).routes()),
    notFound,
  ]);

  return async (ctx, next) => {
    if (ctx.path !== '/app' && !ctx.path.startsWith('/app/')) return next();
    const c = ctx as unknown as AppAreaContext;
    const nonce = randomBytes(16).toString('base64');
    c.state.nonce = nonce;
    ctx.set('Content-Security-Policy', appCsp(nonce));
    ctx.set('X-Frame-Options', 'DENY');
    ctx.set('Cache-Control', 'no-store');
    ctx.set('Referrer-Policy', 'same-origin');
    ctx.set('Cross-Origin-Opener-Policy', 'same-origin');
    try {
      if (serveAsset(c, assets)) return;
      const session = await loadSession(c, store, now(), times, nonce);
      if (session) c.state.app = session;
      // (an unsubscribe link's signed token is its own credential: mail clients post it without a session, RFC 8058)
      if (isUnsafe(ctx.method) && !ctx.path.startsWith(UNSUBSCRIBE_PATH))
        checkCsrf(c, config, isForm(c) ? await readForm(c) : null);
      await chain(c);
    } catch (e) {
      if (wantsJson(c)) throw e; // the API's problem middleware answers
      const err = e instanceof ApiError ? e : null;
      if (!err) deps.log(`request ${c.state.requestId} failed: ${(e as Error)?.stack ?? String(e)}`);
      const status = err?.status ?? 500;
      for (const [k, v] of Object.entries(err?.headers ?? {})) ctx.set(k, v);
      const body = html`<p>${err?.expose ? err.message : 'Something went wrong on our side; it has been logged.'}</p>
<p>Request id <code>${c.state.requestId}</code> (quote it if you contact support).</p>
<p><a href="${c.state.app ? '/app' : '/app/sign-in'}">${c.state.app ? 'Go to the account home' : 'Go to the sign-in page'}</a></p>`;
      const title = err?.title ?? 'Something went wrong';
      if (c.state.app) renderSignedIn(c, { section: null, title, status, body });
      else renderPublicPage(c, { title, status, body });
    }
  };
}
