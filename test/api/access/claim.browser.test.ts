/**
 * The licence claim flow in Debian's headless Chromium (playwright-core, /usr/bin/chromium): the
 * page served by the API generates the key with WebCrypto, shows it once and sends only its hash.
 * Every request the browser makes is recorded: the raw key is in none of them (URL, headers,
 * body), nor in any server log line or any row of any table of the state file. The link is single
 * use, the token leaves the address bar, and a licence's seats bound the keys.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import type { Browser, Request } from 'playwright-core';
import { chromiumMissing, launchChromium } from '../../helpers/browser.ts';
import { issueClaimLink, licenceEnd } from '../../../api/access/licences.ts';
import { KEY_PATTERN } from '../../../api/access/keys.ts';
import { startTestApi, type TestApi } from '../../helpers/api.ts';

/** Every row of every table of the SQLite state file, as one string. */
function dumpTables(dataDir: string): string {
  const db = new Database(join(dataDir, 'state.sqlite'), { readonly: true });
  try {
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[];
    return JSON.stringify(
      Object.fromEntries(tables.map((t) => [t.name, db.prepare(`SELECT * FROM "${t.name}"`).all()])),
    );
  } finally {
    db.close();
  }
}

if (chromiumMissing('claim.browser.test.ts', test)) {
  // skipped, with the message printed
} else {
  let api: TestApi;
  let browser: Browser;
  test.before(async () => {
    api = await startTestApi({ config: { keyCacheMs: 0 } });
    browser = await launchChromium();
  });
  test.after(async () => {
    await browser?.close();
    await api?.close();
  });

  test('claim page: key made in the browser, shown once, only its hash sent; single use; seats', async () => {
    const org = await api.store.createAccount('harbour-gis', 'basic');
    const lic = await api.store.createLicence({
      id: 'lic_browser',
      account_id: org.id,
      scope: 'ent_feed',
      seats: 1,
      expires_at: licenceEnd('2099-12-31')!,
    });
    const { url } = await issueClaimLink(api.store, lic, api.baseUrl + '/v1', { now: new Date() });
    const token = url.split('#')[1]!;
    const sent: { url: string; headers: Record<string, string>; body: string | null }[] = [];
    const ctx = await browser.newContext();
    const page = await ctx.newPage();
    page.on('request', (r: Request) => void sent.push({ url: r.url(), headers: r.headers(), body: r.postData() }));
    const errors: string[] = [];
    page.on('pageerror', (e) => void errors.push(e.message));
    await page.goto(url);
    await page.waitForSelector('#licence:not([hidden])', { timeout: 20_000 });
    assert.not.match(page.url(), token, 'the token left the address bar');
    assert.match((await page.textContent('#org')) ?? '', 'harbour-gis');
    assert.is(await page.textContent('#scope'), 'ent_feed');
    await page.fill('#name', 'gis server');
    await page.click('#create');
    await page.waitForSelector('#done:not([hidden])', { timeout: 20_000 });
    const key = (await page.textContent('#key'))!.trim();
    const id = (await page.textContent('#keyid'))!.trim();
    assert.match(key, KEY_PATTERN);
    assert.ok(key.startsWith('lk_ef_'), key);
    assert.equal(errors, []);
    // the key works and is what the licence says
    const meta = await api.request('/v1/meta', { key });
    assert.is(meta.status, 200);
    assert.is(meta.body._meta.scope, 'ent_feed');
    const stored = (await api.store.listKeys(org.id))[0]!;
    assert.equal(
      [stored.id, stored.name, stored.licence_id, stored.expires_at],
      [id, 'gis server', 'lic_browser', '2100-01-01T00:00:00.000Z'],
    );
    // the raw key went nowhere: no request (URL, headers, body), no log line, no table row
    assert.ok(sent.length >= 3, `requests recorded: ${sent.map((s) => s.url).join(' ')}`);
    assert.ok(
      sent.some((s) => s.body?.includes('key_hash')),
      'the claim call was recorded',
    );
    for (const s of sent) {
      assert.not.ok(JSON.stringify(s).includes(key), `raw key sent in ${s.url}`);
      assert.not.ok(s.url.includes(token), `token in a request URL: ${s.url}`);
    }
    const tables = dumpTables(api.dataDir);
    assert.not.ok(tables.includes(key), 'raw key stored');
    assert.not.ok(tables.includes(token), 'claim token stored');
    assert.ok(tables.includes(stored.display_prefix));
    const logs = api.logs.join('\n');
    assert.not.ok(logs.includes(key) || logs.includes(token), 'key or token logged');
    // replay: the same link again is refused on the page
    const again = await ctx.newPage();
    await again.goto(url);
    await again.waitForFunction(
      () => /cannot be used/.test((globalThis as any).document.getElementById('status')?.textContent ?? ''),
      null,
      { timeout: 20_000 },
    );
    assert.match((await again.textContent('#status'))!, /already been used/);
    // a second link for a licence whose one seat is taken
    const second = await issueClaimLink(api.store, lic, api.baseUrl + '/v1', { now: new Date() });
    const full = await ctx.newPage();
    await full.goto(second.url);
    await full.waitForSelector('#licence:not([hidden])', { timeout: 20_000 });
    await full.click('#create');
    await full.waitForFunction(
      () => /cannot be used/.test((globalThis as any).document.getElementById('status')?.textContent ?? ''),
      null,
      { timeout: 20_000 },
    );
    assert.match((await full.textContent('#status'))!, /every seat/);
    assert.is((await api.store.listKeys(org.id)).length, 1);
    // the page is not framable and runs only its own nonce'd script
    const res = await fetch(api.baseUrl + '/v1/claim');
    assert.match(res.headers.get('content-security-policy')!, /frame-ancestors 'none'/);
    assert.match(res.headers.get('content-security-policy')!, /script-src 'nonce-/);
    assert.is(res.headers.get('cache-control'), 'no-store');
    await ctx.close();
  });

  test.run();
}
