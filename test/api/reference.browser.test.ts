/**
 * /v1/reference in a real browser with JavaScript switched off: Debian's headless Chromium
 * (playwright-core, no downloaded browser) renders every operation and webhook event of the
 * document, applies the page's style sheet under its CSP without a single violation, loads
 * nothing from elsewhere, and is reached from /v1/docs by its link. Skipped, with a message,
 * when /usr/bin/chromium is not installed (`.ci/run` installs it).
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext } from 'playwright-core';
import { chromiumMissing, launchChromium } from '../helpers/browser.ts';
import { startTestApi, type TestApi } from '../helpers/api.ts';
import { tempDir } from '../helpers/tmp.ts';

if (chromiumMissing('reference.browser.test.ts', test)) {
  // skipped, with the message printed
} else {
  let api: TestApi;
  let browser: Browser;
  let noJs: BrowserContext;

  test.before(async () => {
    api = await startTestApi();
    browser = await launchChromium();
    noJs = await browser.newContext({ javaScriptEnabled: false, viewport: { width: 1280, height: 2000 } });
  });
  test.after(async () => {
    await noJs?.close();
    await browser?.close();
    await api?.close();
  });

  test('/v1/reference renders every operation with JavaScript off, styled under its CSP, from this server only', async () => {
    const page = await noJs.newPage();
    const requests: string[] = [];
    const failed: string[] = [];
    const console: string[] = [];
    page.on('request', (r) => void requests.push(r.url()));
    page.on('requestfailed', (r) => void failed.push(r.url()));
    page.on('console', (m) => void console.push(`${m.type()}: ${m.text()}`));
    const res = await page.goto(`${api.baseUrl}/v1/reference`, { waitUntil: 'load', timeout: 30_000 });
    assert.is(res?.status(), 200);
    assert.match(await page.title(), /Irish Construction Leads API .*read-only reference/);

    const doc = (await api.request('/v1/openapi.json', { key: null })).body;
    const documented = Object.entries<any>(doc.paths)
      .flatMap(([path, item]) =>
        Object.entries<any>(item).map(
          ([method, op]) => `${method.toUpperCase()} ${path} ${op.operationId}: ${op.summary}`,
        ),
      )
      .sort();
    // what a reader sees: the heading and summary of each operation's article, as rendered text
    // (evaluated in the page, as a string: this project's TypeScript has no DOM library)
    const shown = (await page.evaluate(`[...document.querySelectorAll('article.operation[data-path]')].map((e) => {
      const box = e.getBoundingClientRect();
      return {
        key: e.dataset.method + ' ' + e.dataset.path + ' ' + e.dataset.operationId,
        heading: e.querySelector('h3').innerText,
        summary: e.querySelector('.summary')?.innerText ?? '',
        visible: box.width > 0 && box.height > 0,
      };
    })`)) as { key: string; heading: string; summary: string; visible: boolean }[];
    assert.equal(shown.map((s) => `${s.key}: ${s.summary}`).sort(), documented, 'every operation, with its summary');
    for (const s of shown) {
      assert.ok(s.visible, `${s.key} is visible`);
      const [method, path] = s.key.split(' ');
      // an operation at the origin (/healthz, /readyz, /metrics) has a server of its own: no /v1
      const base = doc.paths[path!][method!.toLowerCase()].servers ? '' : '/v1';
      assert.is(
        s.heading.replace(/\s+/g, ' ').trim(),
        `${method} ${base}${path}`,
        `${s.key}: heading shows method and path`,
      );
    }
    const events = await page.$$eval('article.operation[data-webhook]', (els) =>
      els.map((e) => e.getAttribute('data-webhook')),
    );
    assert.equal(events, Object.keys(doc.webhooks), 'every webhook event');

    // the style sheet applied (a GET badge is blue, the layout has its contents column), with no CSP report
    assert.is(
      await page.evaluate(`getComputedStyle(document.querySelector('article .method-get')).backgroundColor`),
      'rgb(9, 105, 218)',
    );
    assert.is(await page.evaluate(`getComputedStyle(document.body).display`), 'grid');
    assert.is(await page.locator('script').count(), 0, 'no script element');
    assert.equal(
      console.filter((l) => /Content Security Policy|Refused/i.test(l)),
      [],
      'no CSP violation',
    );

    const text = (await page.textContent('#service-terms')) ?? '';
    assert.match(text, /99\.5%/);
    assert.match(text, /at least 90 days/);
    // an in-page link works without a script
    await page.click('nav a[href="#op-getMeta"]');
    assert.match(page.url(), /#op-getMeta$/);
    assert.ok(
      await page.evaluate(
        `(() => { const r = document.getElementById('op-getMeta').getBoundingClientRect(); return r.top >= -1 && r.top < innerHeight; })()`,
      ),
      'the operation is scrolled into view',
    );

    const shot = join(tempDir('leads-reference-shot-'), 'reference.png');
    await page.screenshot({ path: shot, fullPage: false });
    assert.ok(statSync(shot).size > 10_000, `screenshot written (${shot})`);
    assert.equal(failed, [], 'no request failed');
    assert.equal(
      requests.filter((u) => !u.startsWith(api.baseUrl)),
      [],
      'no request leaves the server (no CDN)',
    );
    await page.close();
  });

  test('/v1/docs without JavaScript points to /v1/reference, and the link opens it', async () => {
    const page = await noJs.newPage();
    const res = await page.goto(`${api.baseUrl}/v1/docs`, { waitUntil: 'load', timeout: 30_000 });
    assert.is(res?.status(), 200);
    assert.match((await page.textContent('noscript')) ?? '', /read-only reference/);
    await Promise.all([page.waitForURL(/\/v1\/reference$/), page.click('nav a[href="reference"]')]);
    assert.ok(await page.$('article.operation[data-operation-id="getLeads"]'), 'landed on the reference');
    await page.close();
  });

  test.run();
}
