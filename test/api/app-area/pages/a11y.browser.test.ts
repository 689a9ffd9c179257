/**
 * Every page of the account area in Debian's Chromium at 1280 px and at 375 px (issue 32, item 6):
 * axe-core finds 0 violations (any impact), and at 375 px nothing scrolls sideways
 * (`document.documentElement.scrollWidth <= 375`). Signed in through the real session layer on the
 * real server and release, as a premium account holding a key and a webhook (so every section has
 * content), and as a pro account; the public sign-in page too. The map runs on SwiftShader's WebGL
 * (axe sees MapLibre's own controls) and is waited for before axe runs.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Browser, Page } from 'playwright-core';
import type { TestApi } from '../../../helpers/api.ts';
import { chromiumMissing, launchMapChromium } from '../../../helpers/browser.ts';
import { signedInContext, startAppServer } from '../../../helpers/app-browser.ts';

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

if (chromiumMissing('a11y.browser.test.ts', test)) {
  // skipped, with the reason printed
} else {
  let api: TestApi;
  let origin: string;
  let browser: Browser;

  test.before(async () => {
    ({ api, origin } = await startAppServer({
      config: { webhookAllowHosts: ['127.0.0.1'] },
      resolveHost: async () => [{ address: '127.0.0.1', family: 4 }],
    }));
    browser = await launchMapChromium();
  });
  test.after(async () => {
    await browser?.close();
    await api?.close();
  });

  /** axe-core on the page as it is: no violation of any impact. */
  async function axe(page: Page, what: string): Promise<void> {
    await page.evaluate(AXE); // through the DevTools protocol: not an inline script, the page's CSP stays as served
    const found = (await page.evaluate(
      `axe.run({ resultTypes: ['violations'] }).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, targets: v.nodes.slice(0, 3).map((n) => n.target.join(' ')) })))`,
    )) as { id: string; impact: string; targets: string[] }[];
    assert.equal(found, [], `axe on ${what}: ${JSON.stringify(found)}`);
  }

  /** Wait for the page's map, if it has one and can draw, to settle. */
  async function mapSettled(page: Page): Promise<void> {
    if (!(await page.$('#ex-map'))) return;
    // (a selector, not waitForFunction: the page's CSP has no 'unsafe-eval')
    await page.waitForSelector('#ex-map[data-map="idle"], #ex-map[data-map="no-webgl"], #ex-map[data-map="failed"]', {
      timeout: 60_000,
    });
  }

  /** Axe at 1280 × 800 and at 375 × 800, and no sideways scrolling at 375. */
  async function check(page: Page, path: string, what = path): Promise<void> {
    await page.setViewportSize({ width: 1280, height: 800 });
    const res = await page.goto(origin + path);
    assert.ok(res && res.status() < 500, `${what}: ${res?.status()}`);
    await mapSettled(page);
    await axe(page, `${what} at 1280 px`);
    await page.setViewportSize({ width: 375, height: 800 });
    await page.waitForTimeout(300); // the map resizes itself
    await mapSettled(page);
    const width = (await page.evaluate('document.documentElement.scrollWidth')) as number;
    const wide =
      width > 375
        ? await page.evaluate(
            `[...document.querySelectorAll('body *')].filter((e) => e.getBoundingClientRect().right > 376).slice(0, 5).map((e) => e.tagName + '.' + e.className + '#' + e.id)`,
          )
        : [];
    assert.ok(width <= 375, `${what} scrolls sideways at 375 px (scrollWidth ${width}): ${JSON.stringify(wide)}`);
    await axe(page, `${what} at 375 px`);
  }

  test('every page of a premium account: axe 0 violations at 1280 and 375 px, no sideways scroll at 375', async () => {
    const { context } = await signedInContext(browser, api, origin, 'a11y-premium', 'premium');
    const page = await context.newPage();
    try {
      // content on every page: a key (its one-time page too), a webhook with a test delivery
      await page.goto(`${origin}/app/keys`);
      await page.fill('#key-label', 'CRM sync');
      await page.click('form[action="/app/keys"] button[type=submit]');
      await page.waitForSelector('#new-key');
      await axe(page, 'the new key (1280)');
      await page.setViewportSize({ width: 375, height: 800 });
      assert.ok(((await page.evaluate('document.documentElement.scrollWidth')) as number) <= 375, 'new key at 375');
      await axe(page, 'the new key (375)');
      await page.setViewportSize({ width: 1280, height: 800 });
      await page.goto(`${origin}/app/webhooks`);
      await page.fill('#wh-url', 'http://127.0.0.1:9/hook');
      await page.fill('#wh-desc', 'Cork roofing to the CRM');
      await page.click('.wh-filters summary:has-text("Trade")');
      await page.check('#wh-vertical-roofing');
      await page.click('form[action="/app/webhooks"] button[type=submit]');
      await page.waitForSelector('#wh-secret');
      await axe(page, 'the new webhook (1280)');
      const hook = /\/app\/webhooks\/(wh_[0-9a-f]+)/.exec(
        (await page.getAttribute('form[action$="/test"]', 'action')) ?? '',
      )![1]!;
      await page.click('button:has-text("Send a test delivery")');
      await page.waitForSelector('.notice');
      const delivery = await page.getAttribute('a[href*="/deliveries/"]', 'href');
      const lead = (await api.request('/v1/leads?page_size=1')).body.results[0] as Record<string, any>;

      const paths = [
        '/app/keys',
        '/app/usage',
        '/app/webhooks',
        `/app/webhooks/${hook}`,
        ...(delivery ? [delivery] : []),
        '/app/explorer',
        `/app/explorer?county=${encodeURIComponent(lead['county'])}&vertical=roofing&sort=value_desc`,
        '/app/explorer?received_from=2026-13-40',
        `/app/explorer/${lead['id']}`,
        '/app/searches',
        `/app/searches/new?query=${encodeURIComponent(`county=${lead['county']}&vertical=roofing`)}`,
        '/app/licences',
        '/app/activity',
        '/app/no-such-page',
      ];
      for (const p of paths) await check(page, p);
    } finally {
      await context.close();
    }
  });

  test('a pro account (no webhooks, public leads) and the sign-in page: axe 0 violations, no sideways scroll', async () => {
    const { context } = await signedInContext(browser, api, origin, 'a11y-pro', 'pro');
    const page = await context.newPage();
    try {
      for (const p of ['/app/keys', '/app/webhooks', '/app/explorer', '/app/usage']) await check(page, p, `pro ${p}`);
    } finally {
      await context.close();
    }
    const anon = await browser.newContext();
    try {
      await check(await anon.newPage(), '/app/sign-in');
    } finally {
      await anon.close();
    }
  });
}

test.run();
