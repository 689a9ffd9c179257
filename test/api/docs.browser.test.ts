/**
 * /v1/docs renders in a real browser: Debian's headless Chromium (driven by playwright-core, no
 * downloaded browser) loads the page and its locally served assets, a screenshot is taken, and
 * every endpoint of the OpenAPI document is listed on the page. No request leaves the test
 * server (no CDN). Skipped, with a message, when /usr/bin/chromium is not installed
 * (`.ci/run` installs it).
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { chromiumMissing, launchChromium } from '../helpers/browser.ts';
import { buildOpenApi } from '../../api/openapi/document.ts';
import { startTestApi, type TestApi } from '../helpers/api.ts';
import { tempDir } from '../helpers/tmp.ts';

if (chromiumMissing('docs.browser.test.ts', test)) {
  // skipped, with the message printed
} else {
  let api: TestApi;
  let browser: Browser;

  test.before(async () => {
    api = await startTestApi();
    browser = await launchChromium();
  });
  test.after(async () => {
    await browser?.close();
    await api?.close();
  });

  test('/v1/docs renders every endpoint in headless Chromium, from local assets only', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 2000 } });
    const requests: string[] = [];
    const failed: string[] = [];
    page.on('request', (r) => void requests.push(r.url()));
    page.on('requestfailed', (r) => void failed.push(r.url()));
    const res = await page.goto(`${api.baseUrl}/v1/docs`, { waitUntil: 'load', timeout: 30_000 });
    assert.is(res?.status(), 200);
    await page.waitForSelector('.opblock-summary-path', { timeout: 30_000 });
    const doc = buildOpenApi(api.config);
    // paths, and the events of the OpenAPI 3.1 `webhooks` member (Swagger UI lists them too)
    const documented = [...Object.keys(doc.paths), ...Object.keys(doc.webhooks ?? {})].sort();
    const listed = (
      await page.$$eval('.opblock-summary-path', (els) =>
        els.map((e) => e.getAttribute('data-path') ?? e.textContent ?? ''),
      )
    ).map((p) => p.replace(/\u200b/g, '').trim());
    assert.equal([...new Set(listed)].sort(), documented, 'every endpoint listed on the page');
    assert.match(await page.title(), /Leads API/);
    assert.is(
      await page.$('.errors-wrapper, .version-pragma__message'),
      null,
      'the renderer reports no error or warning about the document',
    );
    assert.match((await page.textContent('body')) ?? '', /Irish Construction Leads API/);
    const shot = join(tempDir('leads-docs-shot-'), 'docs.png');
    await page.screenshot({ path: shot, fullPage: true });
    assert.ok(statSync(shot).size > 10_000, `screenshot written (${shot})`);
    assert.equal(failed, [], 'no request failed');
    assert.equal(
      requests.filter((u) => !u.startsWith(api.baseUrl) && !u.startsWith('data:')),
      [],
      'no request leaves the server (no CDN)',
    );
    await page.close();
  });

  test.run();
}
