/**
 * The price-index chart renders in a real browser: Debian's headless Chromium (playwright-core)
 * opens /v1/intel/analytics/price-index.svg with an enriched key, and the drawn series, bands and
 * axes are measured in the rendered document; a screenshot is taken. The example chart shown in
 * docs/intel.md renders the same way. Skipped, with a message, when /usr/bin/chromium is missing.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser } from 'playwright-core';
import { chromiumMissing, launchChromium } from '../../helpers/browser.ts';
import { startTestApi, type TestApi } from '../../helpers/api.ts';
import { REPO_ROOT, tempDir } from '../../helpers/tmp.ts';

if (chromiumMissing('intel.browser.test.ts', test)) {
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

  /** Measure what Chromium drew: the root element, each series' length and box, the bands. */
  async function measure(
    url: string,
    headers: Record<string, string> = {},
  ): Promise<{
    status: number | undefined;
    root: string;
    series: { area: string; length: number; width: number; height: number }[];
    bands: number;
    texts: string[];
    shot: number;
  }> {
    const page = await browser.newPage({ viewport: { width: 800, height: 420 } });
    await page.setExtraHTTPHeaders(headers);
    const res = await page.goto(url, { waitUntil: 'load', timeout: 30_000 });
    // evaluated in the page (a string: this project's TypeScript has no DOM library)
    const drawn = (await page.evaluate(`({
      root: document.documentElement.tagName,
      series: [...document.querySelectorAll('path.series')].map((p) => {
        const b = p.getBBox();
        return { area: p.getAttribute('data-area') ?? '', length: p.getTotalLength(), width: b.width, height: b.height };
      }),
      bands: document.querySelectorAll('polygon.band').length,
      texts: [...document.querySelectorAll('text')].map((t) => t.textContent ?? ''),
    })`)) as {
      root: string;
      series: { area: string; length: number; width: number; height: number }[];
      bands: number;
      texts: string[];
    };
    const shot = join(tempDir('leads-intel-shot-'), 'chart.png');
    await page.screenshot({ path: shot });
    await page.close();
    return { status: res?.status(), ...drawn, shot: statSync(shot).size };
  }

  test('price-index.svg renders in headless Chromium: two series with bands, axes and legend', async () => {
    const m = await measure(`${api.baseUrl}/v1/intel/analytics/price-index.svg?county=Dublin`, {
      Authorization: `Bearer ${api.keys.ent_api}`,
    });
    assert.is(m.status, 200);
    assert.is(m.root, 'svg');
    assert.equal(
      m.series.map((s) => s.area),
      ['Ireland', 'Dublin'],
    );
    for (const s of m.series) {
      assert.ok(s.length > 300, `${s.area} line drawn (${s.length.toFixed(0)} px long)`);
      assert.ok(
        s.width > 500 && s.height > 20,
        `${s.area} spans the plot (${s.width.toFixed(0)}×${s.height.toFixed(0)})`,
      );
    }
    assert.is(m.bands, 2);
    assert.ok(
      m.texts.some((t) => /^20(1|2)\d$/.test(t)),
      'year labels on the x axis',
    );
    assert.ok(m.texts.includes('Index (base = 100)'));
    assert.ok(m.shot > 5_000, 'screenshot written');
  });

  test('without an enriched key the chart is a 403 problem, not an image', async () => {
    const m = await measure(`${api.baseUrl}/v1/intel/analytics/price-index.svg`, {
      Authorization: `Bearer ${api.keys.commonwealth}`,
    });
    assert.is(m.status, 403);
    assert.equal(m.series, []);
  });

  test('the example chart in docs/intel.md renders', async () => {
    const file = join(REPO_ROOT, 'docs', 'images', 'price-index.svg');
    const m = await measure(pathToFileURL(file).href);
    assert.is(m.root, 'svg');
    assert.equal(
      m.series.map((s) => s.area),
      ['Ireland', 'Dublin'],
    );
    for (const s of m.series) assert.ok(s.length > 300, `${s.area} drawn`);
  });

  test.run();
}
