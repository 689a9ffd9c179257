/**
 * Debian's headless Chromium for browser tests, driven by playwright-core (no downloaded
 * browser). `.ci/run` installs /usr/bin/chromium; where it is missing, a browser test file
 * prints why and registers no test.
 *
 * @example
 *   if (chromiumMissing('docs.browser.test.ts')) {} else { … browser = await launchChromium(); … }
 */
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/** True (after printing the skip message for `file`) when Chromium is not installed. */
export function chromiumMissing(file: string): boolean {
  if (existsSync(CHROMIUM)) return false;
  console.log(`SKIP ${file}: ${CHROMIUM} is missing (install it with: apt-get install -y chromium)`);
  return true;
}

/** Launch headless Chromium (no network beyond what the page asks of the test server). */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: ARGS, timeout: 60_000 });
}
