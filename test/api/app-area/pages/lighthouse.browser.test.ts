/**
 * Lighthouse (npm `lighthouse`, pinned) on the explorer and a lead's page, signed in (issue 32):
 * accessibility and best practices at least 0.95 each. Driven against Debian's Chromium
 * (/usr/bin/chromium, launched by Lighthouse's own chrome-launcher, headless, SwiftShader WebGL so
 * the map draws) with the session cookie of an account signed in through the real session layer,
 * sent on every request of the page. Skipped, with the reason, where Chromium is absent.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import lighthouse from 'lighthouse';
import * as chromeLauncher from 'chrome-launcher';
import type { TestApi } from '../../../helpers/api.ts';
import { CHROMIUM, chromiumMissing, MAP_CHROMIUM_FLAGS } from '../../../helpers/browser.ts';
import { signedInCookie, startAppServer } from '../../../helpers/app-browser.ts';

/** The least score each category must reach. */
const MIN = 0.95;

if (chromiumMissing('lighthouse.browser.test.ts', test)) {
  // skipped, with the reason printed
} else {
  let api: TestApi;
  let origin: string;
  let cookie: string;

  test.before(async () => {
    ({ api, origin } = await startAppServer());
    const s = await signedInCookie(api, origin, 'lighthouse-premium', 'premium');
    cookie = `${s.cookie.name}=${s.cookie.value}`;
  });
  test.after(async () => {
    await api?.close();
  });

  /** A fresh Chromium per audit (a second Lighthouse run in the same browser no longer sent the cookie header). */
  const launch = (): Promise<chromeLauncher.LaunchedChrome> =>
    chromeLauncher.launch({
      chromePath: CHROMIUM,
      chromeFlags: ['--headless=new', ...MAP_CHROMIUM_FLAGS],
    });

  async function audit(path: string): Promise<void> {
    const chrome = await launch();
    const run = await lighthouse(origin + path, {
      port: chrome.port,
      output: 'json',
      logLevel: 'error',
      onlyCategories: ['accessibility', 'best-practices'],
      extraHeaders: { Cookie: cookie },
      // a desktop page on the loopback: no throttling, no mobile emulation
      formFactor: 'desktop',
      screenEmulation: { mobile: false, width: 1280, height: 800, deviceScaleFactor: 1, disabled: false },
      throttlingMethod: 'provided',
      disableStorageReset: true,
    }).finally(() => chrome.kill());
    assert.ok(run?.lhr, `no Lighthouse result for ${path}`);
    const lhr = run!.lhr;
    assert.is(lhr.runtimeError, undefined, JSON.stringify(lhr.runtimeError));
    assert.is(new URL(lhr.finalDisplayedUrl).pathname, path.split('?')[0], 'signed in: not sent to the sign-in page');
    for (const id of ['accessibility', 'best-practices'] as const) {
      const cat = lhr.categories[id]!;
      const failing = cat.auditRefs
        .filter((r) => r.weight > 0 && (lhr.audits[r.id]?.score ?? 1) < 1)
        .map(
          (r) =>
            `${r.id} (${lhr.audits[r.id]?.score}: ${JSON.stringify((lhr.audits[r.id]?.details as { items?: unknown[] })?.items?.slice(0, 3) ?? [])})`,
        );
      console.log(`lighthouse ${path}: ${id} ${cat.score}${failing.length ? ` — below 1: ${failing.join(', ')}` : ''}`);
      assert.ok((cat.score ?? 0) >= MIN, `${path}: ${id} ${cat.score} < ${MIN}: ${failing.join(', ')}`);
    }
  }

  test('the explorer: accessibility and best practices ≥ 0.95', async () => {
    await audit('/app/explorer');
  });

  test("a lead's page: accessibility and best practices ≥ 0.95", async () => {
    const lead = (await api.request('/v1/leads?page_size=1')).body.results[0] as { id: number };
    await audit(`/app/explorer/${lead.id}`);
  });
}

test.run();
