/**
 * The account area's way in, in Debian's headless Chromium (playwright-core, /usr/bin/chromium):
 *
 *   - passkey: open an invitation → create a passkey on a CDP virtual authenticator
 *     (WebAuthn.enable / WebAuthn.addVirtualAuthenticator) → signed in → sign out → sign in with
 *     the passkey;
 *   - password: the same walk with a password typed into the invitation and sign-in pages;
 *   - the session cookie as Chromium stored it: `__Host-leads_app`, HttpOnly, Secure (accepted
 *     from http://localhost, a secure context), SameSite=Strict;
 *   - no Content-Security-Policy violation on any page, the token gone from the address bar;
 *   - axe-core (node_modules/axe-core/axe.min.js, evaluated in the page) finds no serious or
 *     critical violation on the invitation, sign-in and signed-in layout pages, which are also
 *     usable at 375 px (no sideways scrolling). Screenshots of each page go to a temp folder, and
 *     to docs/images/ when APP_SCREENSHOTS=docs.
 *
 * The server listens on 127.0.0.1 and the browser opens it as http://localhost:<port>, the origin
 * PUBLIC_BASE_URL names (WebAuthn needs a host name as relying-party id, not an IP address).
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync, statSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { chromiumMissing, launchChromium } from '../../helpers/browser.ts';
import { startTestApi, type TestApi } from '../../helpers/api.ts';
import { REPO_ROOT, tempDir } from '../../helpers/tmp.ts';
import { issueInvitation } from '../../../api/app-area/invitations.ts';

/** A port free right now on 127.0.0.1 (so PUBLIC_BASE_URL can name it before the server starts). */
async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

const AXE = readFileSync(join(REPO_ROOT, 'node_modules/axe-core/axe.min.js'), 'utf8');
const SHOTS = process.env['APP_SCREENSHOTS'] === 'docs' ? join(REPO_ROOT, 'docs/images') : tempDir('leads-app-shots-');

if (chromiumMissing('auth.browser.test.ts', test)) {
  // skipped, with the message printed
} else {
  let api: TestApi;
  let browser: Browser;
  let base: string;

  test.before(async () => {
    const port = await freePort();
    base = `http://localhost:${port}`;
    api = await startTestApi({ config: { port, publicBaseUrl: `${base}/v1` } });
    browser = await launchChromium();
  });
  test.after(async () => {
    await browser?.close();
    await api?.close();
  });

  /** A fresh browser profile whose pages report CSP violations and script errors into `problems`. */
  async function profile(problems: string[]): Promise<BrowserContext> {
    const ctx = await browser.newContext({ viewport: { width: 1024, height: 900 } });
    ctx.on('page', (p) => watch(p, problems));
    return ctx;
  }
  function watch(page: Page, problems: string[]): void {
    page.on('console', (m) => {
      if (/Content Security Policy|Refused to/i.test(m.text())) problems.push(`console: ${m.text()}`);
    });
    page.on('pageerror', (e) => void problems.push(`pageerror: ${e.message}`));
  }

  /** axe-core on the page: the serious and critical violations (none expected). */
  async function axe(page: Page): Promise<string[]> {
    await page.evaluate(AXE); // evaluated by the debugger protocol: the page's CSP still applies to the page itself
    const r = (await page.evaluate(() =>
      (globalThis as any).axe.run((globalThis as any).document, { resultTypes: ['violations'] }),
    )) as { violations: { id: string; impact: string; nodes: { target: string[] }[] }[] };
    return r.violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
  }

  /** Accessibility, 375 px and a screenshot of the page as it is now. */
  async function inspect(page: Page, name: string): Promise<void> {
    assert.equal(await axe(page), [], `axe on ${name}`);
    const size = page.viewportSize()!;
    await page.setViewportSize({ width: 375, height: 800 });
    const wide = await page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth as number);
    assert.ok(wide <= 375, `${name} fits 375 px (scrollWidth ${wide})`);
    await page.screenshot({ path: join(SHOTS, `app-${name}.png`), fullPage: true });
    assert.ok(statSync(join(SHOTS, `app-${name}.png`)).size > 5_000);
    await page.setViewportSize(size);
  }

  async function sessionCookie(ctx: BrowserContext) {
    return (await ctx.cookies(base)).find((c) => c.name === '__Host-leads_app');
  }

  async function signOut(page: Page): Promise<void> {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(`${base}/app/sign-in?signed_out=1`);
    assert.match((await page.textContent('[role="status"]')) ?? '', 'You have signed out');
  }

  test('passkey: invitation → passkey on a virtual authenticator → signed in → sign out → sign in with the passkey', async () => {
    const problems: string[] = [];
    const account = await api.store.createAccount('atlantic-civil', 'pro');
    const { url } = await issueInvitation(api.store, api.config, account, { now: new Date() });
    const token = url.split('#')[1]!;
    const ctx = await profile(problems);
    const page = await ctx.newPage();
    const cdp = await ctx.newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: {
        protocol: 'ctap2',
        transport: 'internal',
        hasResidentKey: true,
        hasUserVerification: true,
        isUserVerified: true,
        automaticPresenceSimulation: true,
      },
    });
    const sent: string[] = [];
    page.on('request', (r) => void sent.push(r.url()));
    await page.goto(url);
    await page.waitForSelector('#invite-passkey-section:not([hidden])', { timeout: 20_000 });
    assert.is(page.url(), `${base}/app/invite`, 'the token left the address bar');
    assert.is(await page.textContent('#invite-account'), 'atlantic-civil');
    await inspect(page, 'invite');
    await page.click('#create-passkey');
    await page.waitForURL(`${base}/app/keys`, { timeout: 20_000 });
    assert.is(await page.textContent('#account-name'), 'atlantic-civil');
    const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
    assert.is(credentials.length, 1);
    assert.ok(credentials[0]!.isResidentCredential, 'a discoverable passkey');
    assert.ok(
      await api.store.app.passkeyCredential(
        credentials[0]!.credentialId.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, ''),
      ),
      'stored by its credential id',
    );
    // Chromium kept the session cookie with every flag (Secure accepted on http://localhost)
    const cookie = await sessionCookie(ctx);
    assert.ok(cookie, 'session cookie stored');
    assert.equal(
      [cookie!.httpOnly, cookie!.secure, cookie!.sameSite, cookie!.path, cookie!.domain],
      [true, true, 'Strict', '/', 'localhost'],
    );
    assert.is(await page.evaluate(() => (globalThis as any).document.cookie), '', 'no cookie is readable by scripts');
    await inspect(page, 'layout');
    await signOut(page);
    assert.is(await sessionCookie(ctx), undefined);
    await inspect(page, 'sign-in');
    await page.waitForSelector('#passkey-section:not([hidden])');
    await page.click('#passkey-sign-in');
    await page.waitForURL(`${base}/app/keys`, { timeout: 20_000 });
    assert.is(await page.textContent('#account-name'), 'atlantic-civil');
    const log = (await api.store.app.listActivity(account.id)).map((e) => `${e.event}:${e.details['method'] ?? ''}`);
    assert.equal(log, [
      'signed_in:passkey',
      'signed_out:',
      'signed_in:passkey',
      'credential_set:passkey',
      'invitation_issued:',
    ]);
    assert.not.ok(
      sent.some((u) => u.includes(token)),
      'the token was in no request URL',
    );
    assert.ok(
      sent.every((u) => u.startsWith(base)),
      `every request went to the server itself (no CDN): ${sent.filter((u) => !u.startsWith(base)).join(' ')}`,
    );
    assert.equal(problems, []);
    await ctx.close();
  });

  test('password: invitation → password → signed in → sign out → sign in with the password; a used link is refused on the page', async () => {
    const problems: string[] = [];
    const account = await api.store.createAccount('midlands-fitout', 'basic');
    const { url } = await issueInvitation(api.store, api.config, account, { now: new Date() });
    const ctx = await profile(problems);
    const page = await ctx.newPage();
    await page.goto(url);
    await page.waitForSelector('#invitation:not([hidden])', { timeout: 20_000 });
    assert.is(await page.inputValue('#invite-username'), 'midlands-fitout');
    await page.fill('#new-password', 'short one');
    await page.fill('#confirm-password', 'short one');
    await page.click('#password-form button[type="submit"]');
    await page.waitForSelector('#invite-error:not([hidden])');
    assert.match((await page.textContent('#invite-error')) ?? '', 'at least 12 characters');
    await page.fill('#new-password', 'granite quarry sunrise 42');
    await page.fill('#confirm-password', 'granite quarry sunrise 42');
    await page.click('#password-form button[type="submit"]');
    await page.waitForURL(`${base}/app/keys`, { timeout: 20_000 });
    assert.is(await page.textContent('#account-name'), 'midlands-fitout');
    const cookie = await sessionCookie(ctx);
    assert.equal([cookie?.httpOnly, cookie?.secure, cookie?.sameSite], [true, true, 'Strict']);
    await signOut(page);
    await page.fill('#account', 'midlands-fitout');
    await page.fill('#password', 'granite quarry sunrise');
    await page.click('form[action="/app/sign-in"] button[type="submit"]');
    await page.waitForSelector('#sign-in-error');
    assert.match((await page.textContent('#sign-in-error')) ?? '', 'not right');
    await inspect(page, 'sign-in-error');
    await page.fill('#password', 'granite quarry sunrise 42');
    await page.click('form[action="/app/sign-in"] button[type="submit"]');
    await page.waitForURL(`${base}/app/keys`, { timeout: 20_000 });
    // keyboard only: the skip link is the first stop and moves focus to the main content
    await page.keyboard.press('Tab');
    assert.is(
      await page.evaluate(() => (globalThis as any).document.activeElement?.textContent),
      'Skip to main content',
    );
    await page.keyboard.press('Enter');
    assert.is(await page.evaluate(() => (globalThis as any).location.hash), '#main');
    // the used invitation, opened again
    const again = await ctx.newPage();
    await again.goto(url);
    await again.waitForSelector('#invite-error:not([hidden])', { timeout: 20_000 });
    assert.match((await again.textContent('#invite-error')) ?? '', 'already been used');
    assert.equal(problems, []);
    await ctx.close();
  });

  test.run();
}
