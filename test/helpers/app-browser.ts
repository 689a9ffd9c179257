/**
 * A signed-in Chromium for browser tests of the account area: the real server (startTestApi on a
 * free port, so `PUBLIC_BASE_URL` names its own origin), an account signed in through the real
 * session layer (invitation → password → the `__Host-leads_app` cookie, by the HTTP agent of
 * test/api/app-area/agent.ts), and the cookie handed to a browser context.
 *
 * Chromium runs with SwiftShader's WebGL (as test/api/cors.browser.test.ts does) so MapLibre can
 * draw; nothing leaves the machine.
 */
import net from 'node:net';
import type { Browser, BrowserContext } from 'playwright-core';
import { issueInvitation } from '../../api/app-area/invitations.ts';
import type { Plan } from '../../api/access/scopes.ts';
import type { Account } from '../../api/state/store-interface.ts';
import { AppAgent } from '../api/app-area/agent.ts';
import { startTestApi, type TestApi, type TestApiOptions } from './api.ts';

/** The password the test accounts get. */
export const PASSWORD = 'correct horse battery staple';

/** A free port on the loopback address. */
export async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

/** The test API on `http://localhost:<port>` (a secure context for `__Host-` cookies and WebAuthn). */
export async function startAppServer(opts: TestApiOptions = {}): Promise<{ api: TestApi; origin: string }> {
  const port = await freePort();
  const origin = `http://localhost:${port}`;
  const api = await startTestApi({
    ...opts,
    config: { port, host: '127.0.0.1', publicBaseUrl: `${origin}/v1`, ...opts.config },
  });
  return { api, origin };
}

/** Create an account on `plan` and sign it in through the real session layer; returns its session cookie. */
export async function signedInCookie(
  api: TestApi,
  origin: string,
  name: string,
  plan: Plan,
): Promise<{ account: Account; cookie: { name: string; value: string } }> {
  const account = await api.store.createAccount(name, plan);
  const inv = await issueInvitation(api.store, api.config, account, { now: new Date() });
  const agent = new AppAgent(origin);
  const res = await agent.acceptWithPassword(inv.url, PASSWORD);
  if (res.status >= 400) throw new Error(`invitation refused: ${res.status} ${res.text}`);
  const value = agent.cookies.get('__Host-leads_app');
  if (!value) throw new Error('no session cookie after accepting the invitation');
  return { account, cookie: { name: '__Host-leads_app', value } };
}

/** A browser context signed in as a new account on `plan` (its password set by invitation, then the sign-in form). */
export async function signedInContext(
  browser: Browser,
  api: TestApi,
  origin: string,
  name: string,
  plan: Plan,
  viewport = { width: 1280, height: 800 },
): Promise<{ context: BrowserContext; account: Account }> {
  const { account } = await signedInCookie(api, origin, name, plan);
  const context = await browser.newContext({ viewport, acceptDownloads: true });
  const page = await context.newPage();
  await page.goto(`${origin}/app/sign-in`);
  await page.fill('#account', name);
  await page.fill('#password', PASSWORD);
  await Promise.all([page.waitForURL(/\/app\/keys$/), page.press('#password', 'Enter')]);
  await page.close();
  return { context, account };
}
