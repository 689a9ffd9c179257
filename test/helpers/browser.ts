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

const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * True when Chromium is not installed; then `file` is registered as one skipped test of `test`
 * with the reason printed, so the run counts it as a skip, never as a pass.
 */
export function chromiumMissing(file: string, test: Test<any>): boolean {
  if (existsSync(CHROMIUM)) return false;
  skipFile(test, file, `${CHROMIUM} is missing (install it with: apt-get install -y chromium)`);
  return true;
}

/** Launch headless Chromium (no network beyond what the page asks of the test server). */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: ARGS, timeout: 60_000 });
}
