/**
 * The account area's session layer over real HTTP (in-process server on port 0, real SQLite
 * state file): security headers, invitations, password sign-in, the session cookie's flags,
 * CSRF and origin checks, sign-out and expiry (injected clock), recovery by a new invitation, a
 * plan change applied on the next request, the asset route, and the API left as it was.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { issueInvitation } from '../../../api/app-area/invitations.ts';
import { APP_SECTIONS } from '../../../api/app-area/contract.ts';
import { assertProblem, startTestApi, TEST_PASSWORD_COST, type TestApi } from '../../helpers/api.ts';
import { AppAgent, csrfOf } from './agent.ts';
import Koa from 'koa';
import Router from '@koa/router';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { appArea, appCsp } from '../../../api/app-area/router.ts';
import type { AppPageFactory } from '../../../api/app-area/contract.ts';
import type { AppAreaState } from '../../../api/app-area/contract.ts';
import { html } from '../../../api/app-area/html.ts';
import { readForm } from '../../../api/app-area/body.ts';
import { problemMiddleware } from '../../../api/http/errors.ts';
import { requestIdMiddleware } from '../../../api/middleware/request-id.ts';

const T0 = Date.parse('2026-11-20T10:00:00Z');
let t = T0;
const clock = () => new Date(t);
const advance = (ms: number): void => void (t += ms);

let api: TestApi;
/** A server started as the command line starts it: new password hashes at the production cost (`api`'s at TEST_PASSWORD_COST). */
let prod: TestApi;
let n = 0;
const PASSWORD = 'correct horse battery staple';

test.before(async () => {
  api = await startTestApi({ clock, config: { keyCacheMs: 0 } });
  prod = await startTestApi({ clock, config: { keyCacheMs: 0 }, productionPasswordCost: true });
});
test.after(async () => {
  await api?.close();
  await prod?.close();
});

/** A new account with a password set through an invitation, and an agent signed in to it. */
async function signedIn(plan: 'basic' | 'pro' | 'premium' = 'pro') {
  const account = await api.store.createAccount(`acct-${++n}`, plan);
  const inv = await issueInvitation(api.store, api.config, account, { now: clock() });
  const agent = new AppAgent(api.baseUrl);
  const res = await agent.acceptWithPassword(inv.url, PASSWORD);
  assert.is(res.status, 200, res.text);
  return { account, agent, inv };
}

function dumpTables(dataDir: string): string {
  const db = new Database(join(dataDir, 'state.sqlite'), { readonly: true });
  try {
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[];
    return JSON.stringify(
      Object.fromEntries(tables.map((x) => [x.name, db.prepare(`SELECT * FROM "${x.name}"`).all()])),
    );
  } finally {
    db.close();
  }
}

test('every /app response carries the strict CSP, no framing, no-store and same-origin referrers', async () => {
  const agent = new AppAgent(api.baseUrl);
  for (const path of ['/app', '/app/sign-in', '/app/invite', '/app/keys', '/app/assets/app.css', '/app/nowhere']) {
    const res = await agent.get(path);
    const csp = res.headers.get('content-security-policy') ?? '';
    const nonce = /'nonce-([^']+)'/.exec(csp)?.[1] ?? '';
    assert.is(csp, appCsp(nonce), path);
    assert.ok(nonce.length >= 22, path);
    assert.not.match(csp, 'unsafe-inline');
    assert.not.match(csp, 'unsafe-eval');
    assert.not.match(csp, 'blob:', 'the map worker is a file of /app/assets, not a blob: URL');
    assert.is(res.headers.get('x-frame-options'), 'DENY', path);
    assert.is(res.headers.get('referrer-policy'), 'same-origin', path);
    assert.is(res.headers.get('cache-control'), path.startsWith('/app/assets/') ? 'no-cache' : 'no-store', path);
    if (res.headers.get('content-type')?.startsWith('text/html') && res.status === 200) {
      for (const tag of res.text.match(/<(script|link)\b[^>]*>/g) ?? [])
        assert.match(tag, `nonce="${nonce}"`, `${path}: ${tag}`);
    }
  }
  // a fresh nonce per response
  const a = (await agent.get('/app/sign-in')).headers.get('content-security-policy');
  assert.is.not(a, (await agent.get('/app/sign-in')).headers.get('content-security-policy'));
  // pages need a session: GET redirects to the sign-in page, keeping where it was going
  const r = await agent.get('/app/usage?x=1');
  assert.is(r.status, 303);
  assert.is(r.headers.get('location'), '/app/sign-in?next=%2Fapp%2Fusage');
  assert.is((await agent.get('/app')).headers.get('location'), '/app/sign-in?next=%2Fapp');
});

test('an invitation sets a password and signs in: cookie flags, the layout, nothing secret stored', async () => {
  const api = prod; // the stored hash is checked for the production parameters
  const account = await api.store.createAccount('harbour-build', 'pro');
  const inv = await issueInvitation(api.store, api.config, account, { now: clock() });
  assert.match(inv.url, /^http:\/\/localhost\/app\/invite#[A-Za-z0-9_-]{43}$/);
  assert.is(inv.expires_at, new Date(T0 + 72 * 3_600_000).toISOString(), 'INVITE_TTL_HOURS default 72');
  const token = inv.url.split('#')[1]!;
  const agent = new AppAgent(api.baseUrl);
  const page = await agent.get('/app/invite');
  assert.is(page.status, 200);
  assert.not.match(page.text, token);
  const csrf = csrfOf(page.text);
  const lookup = await agent.post('/app/invite/lookup', { json: { token }, headers: { 'X-CSRF-Token': csrf } });
  assert.equal(lookup.body, { account: 'harbour-build', expires_at: inv.expires_at });
  const short = await agent.post('/app/invite/password', {
    json: { token, password: 'too short' },
    headers: { 'X-CSRF-Token': csrf },
  });
  assertProblem(short as never, 400, 'invalid_parameter');
  const set = await agent.post('/app/invite/password', {
    json: { token, password: PASSWORD },
    headers: { 'X-CSRF-Token': csrf },
  });
  assert.is(set.status, 200, set.text);
  assert.equal(set.body, { redirect: '/app' });
  const cookie = agent.setCookies.find((c) => c.startsWith('__Host-leads_app='))!;
  assert.match(cookie, /^__Host-leads_app=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; Secure; SameSite=Strict$/);
  const pre = agent.setCookies.find((c) => c.startsWith('__Host-leads_app_pre='))!;
  assert.match(pre, /; Path=\/; HttpOnly; Secure; SameSite=Strict$/);
  // signed in: /app → /app/keys, in the layout with the account, its plan, the nav and a sign-out form
  assert.is((await agent.get('/app')).headers.get('location'), '/app/keys');
  const home = await agent.get('/app/keys');
  assert.match(home.text, '<span id="account-name">harbour-build</span>');
  assert.match(home.text, 'pro plan');
  for (const s of APP_SECTIONS) assert.match(home.text, `href="/app/${s}"`);
  assert.match(home.text, `<input type="hidden" name="_csrf" value="${csrfOf(home.text)}">`);
  assert.match(home.text, '<a class="skip-link" href="#main">');
  assert.match(home.text, '<main id="main"');
  // the invitation worked once
  const again = await new AppAgent(api.baseUrl).acceptWithPassword(inv.url, PASSWORD + '!');
  assertProblem(again as never, 410, 'invitation_used');
  // stored: hashes only — no cookie value, no invitation token, no password
  const stored = dumpTables(api.dataDir);
  const secret = agent.cookies.get('__Host-leads_app')!;
  for (const s of [secret, token, PASSWORD]) assert.not.ok(stored.includes(s), 'a secret was stored');
  assert.match(stored, /scrypt\$17\$8\$1\$/);
  assert.not.ok(api.logs.join('\n').includes(token) || api.logs.join('\n').includes(PASSWORD), 'a secret was logged');
  const events = (await api.store.app.listActivity(account.id)).map((e) => [e.event, e.details['method'] ?? null]);
  assert.equal(events, [
    ['signed_in', 'password'],
    ['credential_set', 'password'],
    ['invitation_issued', null],
  ]);
});

test('password sign-in: wrong password and unknown account get the same answer; right one starts a session at `next`', async () => {
  const { account } = await signedIn();
  const agent = new AppAgent(api.baseUrl);
  const wrong = await agent.signIn(account.name, 'not the password at all');
  const unknown = await agent.signIn('no-such-account', 'not the password at all');
  for (const r of [wrong, unknown]) {
    assert.is(r.status, 401);
    assert.match(r.text, 'The account name or password is not right.');
    assert.not.ok(agent.cookies.has('__Host-leads_app'));
  }
  const ok = await agent.signIn(account.name, PASSWORD, '/app/usage');
  assert.is(ok.status, 303);
  assert.is(ok.headers.get('location'), '/app/usage');
  assert.ok(agent.cookies.has('__Host-leads_app'));
  // an outside `next` is ignored
  const elsewhere = await new AppAgent(api.baseUrl).signIn(account.name, PASSWORD, 'https://evil.example/');
  assert.is(elsewhere.headers.get('location'), '/app');
  const failed = (await api.store.app.listActivity(account.id)).filter((e) => e.event === 'sign_in_failed');
  assert.equal(
    failed.map((e) => e.details),
    [{ method: 'password', reason: 'wrong_password' }],
  );
  assert.is(failed[0]!.address, '127.0.0.1');
  assert.not.ok(
    JSON.stringify(await api.store.app.listActivity(account.id)).includes('not the password'),
    'no password in the log',
  );
});

test('CSRF: a form post without the token, with a stale one, from another origin or site is refused', async () => {
  const { agent } = await signedIn();
  const token = csrfOf((await agent.get('/app/keys')).text);
  const noToken = await agent.post('/app/sign-out', { form: {} });
  assert.is(noToken.status, 403);
  assert.match(noToken.headers.get('content-type') ?? '', /^text\/html/, 'a form post gets an HTML page');
  assert.match(noToken.text, 'form token is missing or out of date');
  assert.is((await agent.post('/app/sign-out', { form: { _csrf: token.slice(0, -2) + 'xx' } })).status, 403);
  assert.is(
    (await agent.post('/app/sign-out', { form: { _csrf: token }, origin: 'https://evil.example' })).status,
    403,
    'foreign Origin',
  );
  assert.is(
    (await agent.post('/app/sign-out', { form: { _csrf: token }, site: 'cross-site' })).status,
    403,
    'Sec-Fetch-Site cross-site',
  );
  assert.is(
    (await agent.post('/app/sign-out', { form: { _csrf: token }, site: 'same-site' })).status,
    403,
    'Sec-Fetch-Site same-site',
  );
  // a script's request (JSON) gets the problem
  assertProblem((await agent.post('/app/sign-out', { json: {} })) as never, 403, 'csrf_refused');
  // another session's token does not work either
  const other = await signedIn();
  const otherToken = csrfOf((await other.agent.get('/app/keys')).text);
  assert.is((await agent.post('/app/sign-out', { form: { _csrf: otherToken } })).status, 403);
  // every PUT, PATCH and DELETE too
  for (const method of ['PUT', 'PATCH', 'DELETE'])
    assert.is((await agent.request('/app/keys', { method })).status, 403, method);
  // the session survived all of it
  assert.is((await agent.get('/app/keys')).status, 200, 'still signed in (the keys page)');
  // sign-in itself needs the pre-session token
  const login = await new AppAgent(api.baseUrl).post('/app/sign-in', { form: { account: 'x', password: 'y' } });
  assert.is(login.status, 403);
  // and the right token passes
  const out = await agent.post('/app/sign-out', { form: { _csrf: token } });
  assert.is(out.status, 303);
});

test('sign-out ends the session on the server: the old cookie no longer works', async () => {
  const { agent, account } = await signedIn();
  const cookie = agent.cookies.get('__Host-leads_app')!;
  const out = await agent.post('/app/sign-out', { form: { _csrf: csrfOf((await agent.get('/app/keys')).text) } });
  assert.is(out.headers.get('location'), '/app/sign-in?signed_out=1');
  assert.ok(
    agent.setCookies.some((c) => /^__Host-leads_app=; .*Max-Age=0$/.test(c)),
    'cookie cleared',
  );
  assert.not.ok(agent.cookies.has('__Host-leads_app'));
  const replay = new AppAgent(api.baseUrl);
  replay.cookies.set('__Host-leads_app', cookie);
  assert.is((await replay.get('/app/keys')).status, 303, 'the stolen old cookie is dead');
  assert.ok((await api.store.app.listActivity(account.id)).some((e) => e.event === 'signed_out'));
});

test('sessions end after APP_SESSION_IDLE_MINUTES without a request, and APP_SESSION_MAX_HOURS after sign-in', async () => {
  const idle = await signedIn();
  advance(29 * 60_000);
  assert.is((await idle.agent.get('/app/keys')).status, 200, 'active at 29 min');
  advance(29 * 60_000);
  assert.is((await idle.agent.get('/app/keys')).status, 200, 'the request moved the idle clock');
  advance(30 * 60_000 + 1);
  const gone = await idle.agent.get('/app/keys');
  assert.is(gone.status, 303, 'idle for 30 minutes');
  assert.not.ok(idle.agent.cookies.has('__Host-leads_app'), 'the dead cookie is cleared');
  const busy = await signedIn();
  for (let i = 0; i < 35; i++) {
    advance(20 * 60_000);
    assert.is((await busy.agent.get('/app/keys')).status, 200);
  }
  advance(19 * 60_000);
  assert.is((await busy.agent.get('/app/keys')).status, 200, '11 h 59 min after sign-in');
  advance(2 * 60_000); // 12 h 01 min after sign-in, 2 min idle
  assert.is((await busy.agent.get('/app/keys')).status, 303, 'the absolute end, however active');
});

test('invitations: unknown, malformed, expired, replaced and used links are refused; a new one recovers the account', async () => {
  const account = await api.store.createAccount('recover-me', 'basic');
  const first = await issueInvitation(api.store, api.config, account, { now: clock() });
  const agent = new AppAgent(api.baseUrl);
  const csrf = csrfOf((await agent.get('/app/invite')).text);
  const lookup = (token: string) =>
    agent.post('/app/invite/lookup', { json: { token }, headers: { 'X-CSRF-Token': csrf } });
  assertProblem((await lookup('A'.repeat(43))) as never, 404, 'invitation_unknown');
  assertProblem((await lookup('short')) as never, 400, 'invalid_parameter');
  advance(72 * 3_600_000);
  assertProblem((await lookup(first.url.split('#')[1]!)) as never, 410, 'invitation_expired');
  const second = await issueInvitation(api.store, api.config, account, { now: clock() });
  const third = await issueInvitation(api.store, api.config, account, { now: clock() });
  assertProblem((await lookup(second.url.split('#')[1]!)) as never, 410, 'invitation_replaced');
  const owner = new AppAgent(api.baseUrl);
  assert.is((await owner.acceptWithPassword(third.url, PASSWORD)).status, 200);
  assertProblem((await lookup(third.url.split('#')[1]!)) as never, 410, 'invitation_used');
  // recovery: a new invitation sets a new password; the old password and every old session stop working
  const thief = new AppAgent(api.baseUrl);
  assert.is((await thief.signIn(account.name, PASSWORD)).status, 303);
  const fourth = await issueInvitation(api.store, api.config, account, { now: clock() });
  const fresh = new AppAgent(api.baseUrl);
  assert.is((await fresh.acceptWithPassword(fourth.url, 'a brand new passphrase')).status, 200);
  assert.is((await thief.get('/app/keys')).status, 303, "the thief's session ended");
  assert.is((await owner.get('/app/keys')).status, 303, 'every old session ended');
  assert.is((await fresh.get('/app/keys')).status, 200, 'the new session works');
  assert.is((await new AppAgent(api.baseUrl).signIn(account.name, PASSWORD)).status, 401, 'the old password is gone');
  assert.is((await new AppAgent(api.baseUrl).signIn(account.name, 'a brand new passphrase')).status, 303);
});

test('a plan change applies on the next request of a signed-in session', async () => {
  const { agent, account } = await signedIn('premium');
  assert.match((await agent.get('/app/keys')).text, 'premium plan');
  await api.store.setAccountPlan(account.id, 'basic');
  assert.match((await agent.get('/app/keys')).text, 'basic plan');
});

test('unknown pages: a 404 page inside the layout; errors of scripts are problems', async () => {
  const { agent } = await signedIn();
  const res = await agent.get('/app/no/such/page');
  assert.is(res.status, 404);
  assert.match(res.text, '<h1>Page not found</h1>');
  assert.match(res.text, 'id="account-name"');
  assert.not.match(res.text, 'aria-current');
  const csrf = csrfOf(res.text);
  assertProblem(
    (await agent.post('/app/invite/lookup', { json: { token: 'x' }, headers: { 'X-CSRF-Token': csrf } })) as never,
    400,
    'invalid_parameter',
  );
  // a POST without a session (e.g. after expiry) → 401
  const anon = new AppAgent(api.baseUrl);
  const pre = csrfOf((await anon.get('/app/sign-in')).text);
  assert.is((await anon.post('/app/keys', { form: { _csrf: pre } })).status, 401);
});

test('assets: the stylesheet, page scripts and the WebAuthn browser bundle from node_modules; nothing else', async () => {
  const agent = new AppAgent(api.baseUrl);
  const css = await agent.get('/app/assets/app.css');
  assert.equal([css.status, css.headers.get('content-type')], [200, 'text/css; charset=utf-8']);
  const wa = await agent.get('/app/assets/webauthn-browser.js');
  assert.equal([wa.status, wa.headers.get('content-type')], [200, 'text/javascript; charset=utf-8']);
  assert.match(wa.text, 'SimpleWebAuthnBrowser');
  const etag = css.headers.get('etag')!;
  assert.is((await agent.request('/app/assets/app.css', { headers: { 'If-None-Match': etag } })).status, 304);
  for (const p of [
    '/app/assets/..%2fsession.ts',
    '/app/assets/%2e%2e/router.ts',
    '/app/assets/..%2F..%2Fconfig.ts',
    '/app/assets/',
    '/app/assets/missing.js',
  ]) {
    const r = await agent.get(p);
    assert.is.not(r.status, 200, p);
    assert.not.match(r.text, 'import ', p);
  }
});

test('pages mounted through appArea: rendered in the layout with aria-current, behind the session and CSRF checks, logging activity', async () => {
  const page: AppPageFactory = (tools) =>
    new Router<AppAreaState>()
      .get('/app/activity', async (ctx) => {
        const entries = await tools.deps.store.app.listActivity(ctx.state.app.account.id);
        tools.renderPage(ctx, {
          section: 'activity',
          title: 'Activity',
          body: html`<ul>${entries.map((e) => html`<li>${e.event} ${JSON.stringify(e.details)}</li>`)}</ul>`,
        });
      })
      .post('/app/activity/note', async (ctx) => {
        const form = await readForm(ctx);
        await tools.recordActivity(ctx, 'note_added', { label: form.get('label') });
        ctx.redirect('/app/activity');
        ctx.status = 303;
      });
  const s = api.server;
  const app = new Koa();
  app.use(problemMiddleware(() => {}));
  app.use(requestIdMiddleware());
  app.use(
    appArea(
      api.config,
      {
        db: s.db,
        releases: s.releases,
        store: s.store,
        clock,
        log: () => {},
        ledger: s.ledger,
        passwordCost: TEST_PASSWORD_COST,
      },
      [page],
    ),
  );
  const server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  try {
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const account = await api.store.createAccount(`paged-${++n}`, 'pro');
    const inv = await issueInvitation(api.store, api.config, account, { now: clock() });
    const agent = new AppAgent(base);
    assert.is((await agent.acceptWithPassword(inv.url, PASSWORD)).status, 200);
    const res = await agent.get('/app/activity');
    assert.is(res.status, 200);
    assert.match(res.text, /<a href="\/app\/activity" aria-current="page">Activity<\/a>/);
    assert.is((res.text.match(/aria-current/g) ?? []).length, 1);
    assert.match(res.text, '<h1>Activity</h1>');
    assert.match(res.text, 'signed_in');
    // the page's POST: refused without the token (the page never ran), accepted with it
    assert.is((await agent.post('/app/activity/note', { form: { label: 'x' } })).status, 403);
    const label = '<script>alert(1)</script>';
    assert.is((await agent.post('/app/activity/note', { form: { label, _csrf: csrfOf(res.text) } })).status, 303);
    const after = await agent.get('/app/activity');
    assert.not.match(after.text, label);
    assert.match(after.text, '&lt;script&gt;alert(1)&lt;/script&gt;');
    const [note] = await api.store.app.listActivity(account.id, { limit: 1 });
    assert.equal(
      [note!.event, note!.details, note!.address, note!.session_id?.startsWith('ses_')],
      ['note_added', { label }, '127.0.0.1', true],
    );
    // without a session the page is not reached
    assert.is((await new AppAgent(base).get('/app/activity')).status, 303);
  } finally {
    server.close();
  }
});

test('the API is unchanged for clients that never open the app', async () => {
  const meta = await api.request('/v1/meta');
  assert.is(meta.status, 200);
  assert.is(meta.headers.get('content-security-policy'), null);
  assertProblem(await api.request('/v1/meta', { key: null }), 401, 'missing_key');
  assertProblem(await api.request('/application', { key: null }), 404, 'not_found');
});

test.run();
