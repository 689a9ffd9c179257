/**
 * Debian's headless Chromium for browser tests, driven by playwright-core (no downloaded
 * browser). `.ci/run` installs /usr/bin/chromium; where it is missing, a browser test file
 * registers one skipped test and prints why (test/helpers/skip.ts).
 *
 * @example
 *   if (chromiumMissing('docs.browser.test.ts')) {} else { … browser = await launchChromium(); … }
 */
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import type { Test } from 'uvu';
import { skipFile } from './skip.ts';

export const CHROMIUM = '/usr/bin/chromium';

/** What every test Chromium runs with: no sandbox (root in CI), nothing fetched beyond the test server. */
const QUIET_FLAGS = [
  '--no-sandbox',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
const ARGS = ['--headless', '--disable-gpu', ...QUIET_FLAGS];

/**
 * Chromium's flags for pages that draw with WebGL (MapLibre): a software GPU (SwiftShader) instead
 * of none. Without `--headless`, which each launcher adds in its own form (Playwright's
 * `--headless`, Lighthouse's chrome-launcher `--headless=new`).
 */
export const MAP_CHROMIUM_FLAGS = [
  '--use-angle=swiftshader',
  '--enable-unsafe-swiftshader',
  '--ignore-gpu-blocklist',
  ...QUIET_FLAGS,
];

/** Chromium with a software WebGL (MapLibre needs one), headless, no network beyond the test server. */
export function launchMapChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    timeout: 60_000,
    args: ['--headless', ...MAP_CHROMIUM_FLAGS],
  });
}

/**
 * True when Chromium is not installed; then `file` is registered as one skipped test of `test`
 * with the reason printed, so the run counts it as a skip, never as a pass.
 */
export function chromiumMissing(file: string, test: Test<any>): boolean {
  if (existsSync(CHROMIUM)) return false;
  skipFile(test, file, `${CHROMIUM} is missing (install it with: apt-get install -y chromium)`);
  return true;
}

/**
 * How long a page action or wait may take before it fails (Playwright's default is 30 s): the test
 * runner runs browser files beside others on two cores (test/runner/main.ts), where a screenshot
 * or Swagger UI's first render has taken over 30 s. A wait that is met returns at once.
 */
export const BROWSER_TIMEOUT_MS = 120_000;

/** Launch headless Chromium (no network beyond what the page asks of the test server). */
export async function launchChromium(): Promise<Browser> {
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ARGS, timeout: 60_000 });
  // every context and page it opens waits up to BROWSER_TIMEOUT_MS unless a call says otherwise
  const newContext = browser.newContext.bind(browser);
  browser.newContext = async (...args) => {
    const ctx = await newContext(...args);
    ctx.setDefaultTimeout(BROWSER_TIMEOUT_MS);
    return ctx;
  };
  const newPage = browser.newPage.bind(browser);
  browser.newPage = async (...args) => {
    const page = await newPage(...args);
    page.setDefaultTimeout(BROWSER_TIMEOUT_MS);
    return page;
  };
  return browser;
}
