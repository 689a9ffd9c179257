/**
 * The issue's end-to-end walk in Debian's Chromium (playwright-core), through the real session
 * layer and the real API on one server: open an invitation → set a passkey (CDP virtual
 * authenticator) or a password → create a commonwealth key → a real HTTP request with it
 * succeeds → it appears on the usage page → revoke → the next request is a 401 → (premium)
 * create a webhook with a filter → the test delivery reaches a local receiver and verifies with
 * standardwebhooks → the explorer shows the same total as GET /v1/leads for the same filters →
 * the CSV downloaded from the app reads back in DuckDB with the enriched columns blank on `pro`
 * and filled on `premium` → the search saved with a weekly alert (premium: turned into a webhook
 * form with its filter; week 2 published, the alert e-mail received at a local SMTP sink and its
 * lead link followed) and its unsubscribe link followed without a session. axe-core runs on every page (no serious or critical violation), each
 * page is checked at 375 px for horizontal overflow, and screenshots are taken (to docs/images/app-*.png
 * with APP_SCREENSHOTS=docs).
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import net from 'node:net';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { issueInvitation } from '../../../../api/app-area/invitations.ts';
import { APP_SECTIONS } from '../../../../api/app-area/contract.ts';
import { sendAlerts, unsubscribeUrl } from '../../../../api/alerts/sender.ts';
import { serverLeadReader } from '../../../../api/webhooks/lead-reader.ts';
import { startSmtpSink, type SmtpSink } from '../../../helpers/smtp-sink.ts';
import { weekTwoBeside, type TwoReleases } from '../../../helpers/two-releases.ts';
import type { Plan } from '../../../../api/access/scopes.ts';
import { serveRelease, startTestApi, type TestApi } from '../../../helpers/api.ts';
import { chromiumMissing, launchChromium } from '../../../helpers/browser.ts';
import { REPO_ROOT, tempDir } from '../../../helpers/tmp.ts';
import { startReceiver, type Receiver } from '../../../helpers/webhook-receiver.ts';

/** Where screenshots go: docs/images with APP_SCREENSHOTS=docs (to refresh the docs), else a temp folder. */
const SHOTS =
  process.env['APP_SCREENSHOTS'] === 'docs' ? join(REPO_ROOT, 'docs', 'images') : tempDir('leads-app-shots-');
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** A free port, so PUBLIC_BASE_URL (the WebAuthn origin) can name the server's own origin. */
async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

if (chromiumMissing('walk.browser.test.ts', test)) {
  // skipped, with the message printed
} else {
  let api: TestApi;
  let browser: Browser;
  let rx: Receiver;
  let sink: SmtpSink;
  let two: TwoReleases;
  let origin: string;
  const shots = new Set<string>();

  test.before(async () => {
    const port = await freePort();
    origin = `http://localhost:${port}`;
    api = await startTestApi({
      config: { port, host: '127.0.0.1', publicBaseUrl: `${origin}/v1`, webhookAllowHosts: ['127.0.0.1'] },
      resolveHost: async () => [{ address: '127.0.0.1', family: 4 }],
    });
    browser = await launchChromium();
    rx = await startReceiver();
    sink = await startSmtpSink();
    two = await weekTwoBeside(api); // the walk starts on week 1
  });
  test.after(async () => {
    await sink?.close();
    await browser?.close();
    await rx?.close();
    await api?.close();
  });

  /** Publish week 2 (the pipeline's atomic switch of `current`, then the server's check). */
  const serveWeek2 = (): Promise<void> => serveRelease(api, two.second);

  /** axe-core on the page as it is: no serious or critical violation. */
  async function axe(page: Page, what: string): Promise<void> {
    await page.evaluate(AXE); // through the DevTools protocol: not an inline script, the page's CSP stays as served
    const found = (await page.evaluate(
      `axe.run({ resultTypes: ['violations'] }).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, targets: v.nodes.slice(0, 3).map((n) => n.target.join(' ')) })))`,
    )) as { id: string; impact: string; targets: string[] }[];
    const bad = found.filter((v) => v.impact === 'serious' || v.impact === 'critical');
    assert.equal(bad, [], `axe on ${what}: ${JSON.stringify(bad)}`);
  }

  /** The page fits 375 px (no horizontal scrolling of the whole page), then back to the desktop width. */
  async function narrow(page: Page, what: string): Promise<void> {
    await page.setViewportSize({ width: 375, height: 800 });
    const over = (await page.evaluate(
      'document.documentElement.scrollWidth - document.documentElement.clientWidth',
    )) as number;
    const wide =
      over > 1
        ? await page.evaluate(
            `[...document.querySelectorAll('body *')].filter((e) => !e.closest('.table-wrap') && e.getBoundingClientRect().right > 376).slice(0, 5).map((e) => e.tagName + '.' + e.className + '#' + e.id + ' ' + getComputedStyle(e.parentElement).overflowX + ' ' + e.parentElement.className + ' ' + e.parentElement.getBoundingClientRect().width)`,
          )
        : [];
    assert.ok(over <= 1, `${what} overflows 375 px by ${over} px: ${JSON.stringify(wide)}`);
    await page.setViewportSize({ width: 1100, height: 900 });
  }

  async function shoot(page: Page, section: string): Promise<void> {
    if (shots.has(section)) return;
    const file = join(SHOTS, `app-${section}.png`);
    await page.screenshot({ path: file, fullPage: true });
    assert.ok(statSync(file).size > 5_000);
    shots.add(section);
  }

  /** Check a page: axe, 375 px, a screenshot. */
  async function check(page: Page, section: string): Promise<void> {
    await axe(page, section);
    await narrow(page, section);
    await shoot(page, section);
  }

  async function walk(name: string, plan: Plan, credential: 'passkey' | 'password'): Promise<void> {
    const account = await api.store.createAccount(name, plan);
    const inv = await issueInvitation(api.store, api.config, account, { now: new Date() });
    const context = await browser.newContext({ viewport: { width: 1100, height: 900 }, acceptDownloads: true });
    const page = await context.newPage();
    const failed: string[] = [];
    page.on('requestfailed', (r) => {
      // the map's worker, tiles and land and the page's static assets (the favicon) still loading when
      // the walk moves on are cancelled by the navigation, not failed: a server that fails answers
      // 5xx (the listener below) or drops the connection (ERR_EMPTY_RESPONSE, ERR_CONNECTION_RESET)
      if (r.failure()?.errorText === 'net::ERR_ABORTED' && /\/app\/(map\/|assets\/)/.test(r.url())) return;
      failed.push(`${r.url()} ${r.failure()?.errorText ?? ''}`);
    });
    page.on('response', (r) => {
      if (r.status() >= 500) failed.push(`${r.url()} answered ${r.status()}`);
    });
    page.on('request', (r) => {
      if (!r.url().startsWith(origin) && !r.url().startsWith('data:')) failed.push(`left the server: ${r.url()}`);
    });
    try {
      // 1. the invitation → a credential → signed in
      await page.goto(inv.url.replace(/^https?:\/\/[^/]+/, origin));
      await page.waitForSelector('#invitation:not([hidden])');
      if (credential === 'passkey') {
        const cdp = await context.newCDPSession(page);
        await cdp.send('WebAuthn.enable');
        await cdp.send('WebAuthn.addVirtualAuthenticator', {
          options: {
            protocol: 'ctap2',
            transport: 'internal',
            hasResidentKey: true,
            hasUserVerification: true,
            isUserVerified: true,
            automaticPresenceSimulation: true,
          },
        });
        await page.click('#create-passkey');
      } else {
        await page.fill('#new-password', 'correct horse battery staple');
        await page.fill('#confirm-password', 'correct horse battery staple');
        await page.click('#password-form button[type=submit]');
      }
      await page.waitForURL(/\/app\/keys$/);

      // 2. a commonwealth key, shown once; a real request with it
      await page.fill('#key-label', `walk ${credential}`);
      await page.check('#scope-commonwealth');
      await page.click('form[action="/app/keys"] button[type=submit]');
      await page.waitForSelector('#new-key');
      // the element is there while the page is still parsing: focus moves when its deferred script runs
      await page.waitForLoadState('load');
      assert.is(
        await page.evaluate('document.activeElement && document.activeElement.id'),
        'key-created',
        'focus on the new key',
      );
      const raw = await page.inputValue('#new-key');
      assert.match(raw, /^lk_cw_[A-Za-z0-9_-]{43}$/);
      await check(page, 'keys');
      const ok = await fetch(`${origin}/v1/leads?page_size=3`, { headers: { Authorization: `Bearer ${raw}` } });
      assert.is(ok.status, 200);

      // 3. the request is on the usage page
      await page.goto(`${origin}/app/usage`);
      assert.match((await page.textContent('main')) ?? '', /GET \/v1\/leads/);
      await check(page, 'usage');

      // 4. revoke → the next request is refused
      await page.goto(`${origin}/app/keys`);
      await page.click(`button:has-text("Revoke ${raw.slice(0, 10)}")`);
      await page.waitForSelector('text=the API refuses it from the next request');
      assert.match(page.url(), /\/app\/keys\?revoked=key_/, 'redirected (303) after the POST');
      const refused = await fetch(`${origin}/v1/leads?page_size=3`, { headers: { Authorization: `Bearer ${raw}` } });
      assert.is(refused.status, 401);

      // 5. premium: an enriched key, then a webhook with a filter; the test delivery verifies
      const county = ((await api.request('/v1/leads?page_size=1')).body.results[0].county as string) ?? '';
      if (plan === 'premium') {
        await page.check('#scope-ent_api');
        await page.click('form[action="/app/keys"] button[type=submit]');
        await page.waitForSelector('#new-key');
        await page.goto(`${origin}/app/webhooks`);
        await page.fill('#wh-url', rx.url(`/${name}`));
        await page.fill('#wh-desc', '<script>alert(1)</script>');
        await page.click('.wh-filters summary:has-text("Place")');
        await page.fill('#wh-county', county);
        await page.click('form[action="/app/webhooks"] button[type=submit]');
        await page.waitForSelector('#wh-secret');
        const secret = await page.inputValue('#wh-secret');
        await page.click('button:has-text("Send a test delivery")');
        await page.waitForSelector('text=delivered (your endpoint answered 204)');
        const got = rx.requests(`/${name}`)[0]!;
        const ev = new StandardWebhook(secret).verify(
          got.body.toString('utf8'),
          got.headers as Record<string, string>,
        ) as { type: string };
        assert.is(ev.type, 'webhook.test');
        assert.ok(
          ((await page.textContent('main')) ?? '').includes('<script>alert(1)</script>'),
          'the description shows as text',
        );
        await check(page, 'webhooks');
      } else {
        await page.goto(`${origin}/app/webhooks`);
        await axe(page, 'webhooks (no webhooks on the plan)');
      }

      // 6. the explorer: the same total as GET /v1/leads for the same filter
      await page.goto(`${origin}/app/explorer`);
      await page.click('summary:has-text("Place")');
      await page.fill('#ex-county', county);
      await page.click('form.ex-form button[type=submit] >> nth=0');
      await page.waitForSelector('[data-total]');
      const shown = Number(await page.getAttribute('[data-total]', 'data-total'));
      const viaApi = (await api.request(`/v1/leads?county=${encodeURIComponent(county)}&page_size=1`)).body
        .total as number;
      assert.is(shown, viaApi);
      await check(page, 'explorer');

      // 7. the CSV from the app reads back in DuckDB: enriched columns blank on pro, filled on premium
      const [download] = await Promise.all([page.waitForEvent('download'), page.click('a:has-text("Download CSV")')]);
      const file = join(tempDir('leads-app-walk-'), `${name}.csv`);
      await download.saveAs(file);
      const [r] = await api.server.db.all<{ n: number; named: number }>(
        'SELECT count(*)::INTEGER AS n, count(applicant_org)::INTEGER AS named FROM read_csv(?, header = true, all_varchar = true)',
        [file],
      );
      assert.is(r!.n, viaApi);
      if (plan === 'premium') assert.ok(r!.named > 0, 'applicant filled on premium');
      else assert.is(r!.named, 0, 'applicant blank on pro');

      // 7b. save the search with a weekly alert (the explorer's "Save this search" link), then its
      // e-mail's unsubscribe link, which works without the session (public layout)
      await page.goto(`${origin}/app/searches/new?query=${encodeURIComponent(`county=${county}`)}`);
      await axe(page, 'save a search');
      await narrow(page, 'save a search');
      await page.fill('#ns-name', `${county} leads`);
      await page.check('#ns-freq-weekly');
      await page.fill('#ns-email', 'buyer@walk.example');
      await page.click('form[action="/app/searches"] button[type=submit]');
      await page.waitForURL(/\/app\/searches\?focus=ss_[0-9a-f]{24}&done=saved#search-ss_/);
      assert.match((await page.textContent('main')) ?? '', /Weekly e-mail of new leads to buyer@walk\.example/);
      await check(page, 'searches');
      if (plan === 'premium') {
        await page.click('a:has-text("Turn into a webhook")');
        await page.waitForURL(/\/app\/webhooks\?/);
        // the explorer's filter panel, prefilled (the Place group open because a filter of it is set)
        assert.is(await page.inputValue('#wh-county'), county);
      }
      const [saved] = await api.store.searches.listSearches(account.id);
      let unsubscribe = unsubscribeUrl(api.config.publicBaseUrl, saved!);
      if (plan === 'premium') {
        // week 2 is published; the weekly alert reaches the SMTP sink; its first lead link opens the lead's page
        await serveWeek2();
        const summary = await sendAlerts({
          store: api.store,
          leads: serverLeadReader(api.server.db, api.server.releases),
          config: { ...api.config, smtpUrl: sink.url },
          now: new Date(),
        });
        const mail = sink.messages.find((m) => m.to.includes('buyer@walk.example'));
        assert.ok(mail?.text && mail.html, `the alert e-mail arrived: ${JSON.stringify(summary)}`);
        assert.is(mail.headers['list-unsubscribe'], `<${unsubscribe}>`);
        const link = new RegExp(`${origin}/app/explorer/(\\d+)`).exec(mail.text)!;
        assert.ok(link, mail.text);
        await page.goto(link[0]);
        assert.is(new URL(page.url()).pathname, `/app/explorer/${link[1]}`, 'signed in, the link opens the lead');
        const ref = mail.text
          .split('\n')
          .find((l) => / — /.test(l))!
          .split(' — ')[0]!;
        assert.ok(((await page.textContent('main')) ?? '').includes(ref), `the lead page shows ${ref}`);
        unsubscribe = /^<(.+)>$/.exec(mail.headers['list-unsubscribe']!)![1]!;
      }
      const anon = await browser.newContext({ viewport: { width: 1100, height: 900 } });
      try {
        const p2 = await anon.newPage();
        await p2.goto(unsubscribe);
        await axe(p2, 'unsubscribe: confirm');
        await narrow(p2, 'unsubscribe: confirm');
        await p2.click('button:has-text("Stop the alert")');
        await p2.waitForSelector('text=No more e-mails will be sent');
        await axe(p2, 'unsubscribe: done');
      } finally {
        await anon.close();
      }
      assert.is((await api.store.searches.getSearch(saved!.id))!.frequency, 'none');

      // 8. a lead's detail, licences and activity
      await page.goto(`${origin}/app/explorer?county=${encodeURIComponent(county)}`);
      await page.click('.ex-list h3 a');
      await page.waitForURL(/\/app\/explorer\/\d+$/);
      await axe(page, 'lead detail');
      await narrow(page, 'lead detail');
      for (const section of ['licences', 'activity']) {
        await page.goto(`${origin}/app/${section}`);
        await check(page, section);
      }
      assert.match((await page.textContent('main')) ?? '', /key revoked/);
      // keyboard only: the skip link, then the navigation, reach every section
      await page.goto(`${origin}/app/keys`);
      await page.keyboard.press('Tab');
      assert.is(
        await page.evaluate('document.activeElement && document.activeElement.textContent'),
        'Skip to main content',
      );
      assert.equal(failed, [], 'no request failed or left the server');
    } finally {
      await context.close();
    }
  }

  test('the walk with a passkey on a premium account', async () => {
    await walk('walk-premium', 'premium', 'passkey');
  });

  test('the walk with a password on a pro account', async () => {
    await walk('walk-pro', 'pro', 'password');
    assert.equal([...shots].sort(), [...APP_SECTIONS].sort(), 'a screenshot of every page');
  });
}

test.run();
