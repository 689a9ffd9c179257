/**
 * The lead explorer in Debian's Chromium (issue 32, item 1), signed in through the real session
 * layer on the real server and release:
 *   - results first: at 1280 × 800 the count ("1–25 of …") and the first results are in the first
 *     screen; the same totals as `GET /v1/leads` for the same filters (several filter sets, by
 *     URL and through the panel);
 *   - the map: MapLibre draws (canvas rendered, no map error, no CSP violation), the app's tiles are
 *     requested and answered 200, the land layer is drawn, and selecting a point opens its lead;
 *   - every point the tiles carry for the generated release lies on the land layer (the same
 *     cells, common/land.ts), and so does every record feature the browser loaded.
 * Screenshots go to docs/images with APP_SCREENSHOTS=docs.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { landAuthorityAt, landGeoJson } from '../../../../common/land.ts';
import { releaseTiles } from '../../../../api/gis/tile-cache.ts';
import type { TestApi } from '../../../helpers/api.ts';
import { chromiumMissing, launchMapChromium } from '../../../helpers/browser.ts';
import { signedInContext, startAppServer } from '../../../helpers/app-browser.ts';
import { REPO_ROOT, tempDir } from '../../../helpers/tmp.ts';

const SHOTS =
  process.env['APP_SCREENSHOTS'] === 'docs' ? join(REPO_ROOT, 'docs', 'images') : tempDir('leads-explorer-shots-');

if (chromiumMissing('explorer.browser.test.ts', test)) {
  // skipped, with the reason printed
} else {
  let api: TestApi;
  let origin: string;
  let browser: Browser;

  test.before(async () => {
    ({ api, origin } = await startAppServer());
    browser = await launchMapChromium();
  });
  test.after(async () => {
    await browser?.close();
    await api?.close();
  });

  /** The explorer's total for a query string, and the API's. */
  async function totals(page: Page, qs: string): Promise<{ shown: number; viaApi: number; line: string }> {
    await page.goto(`${origin}/app/explorer${qs ? `?${qs}` : ''}`);
    const shown = Number(await page.getAttribute('[data-total]', 'data-total'));
    const line = (await page.textContent('[data-total]')) ?? '';
    const viaApi = (await api.request(`/v1/leads?${qs}${qs ? '&' : ''}page_size=1`)).body.total as number;
    return { shown, viaApi, line };
  }

  test('results first at 1280 × 800, with the same totals as GET /v1/leads', async () => {
    const { context } = await signedInContext(browser, api, origin, 'explorer-counts', 'premium');
    const page = await context.newPage();
    try {
      const first = (await api.request('/v1/leads?page_size=1')).body.results[0] as Record<string, any>;
      const sets = [
        '',
        `county=${encodeURIComponent(first['county'])}`,
        `vertical=roofing&readiness=commencing,under_construction`,
        `authority=${encodeURIComponent(first['planning_authority'])}&min_value=100000`,
        `status=active&sort=value_desc`,
        `q=extension`,
        `received_from=2026-01-01&works_kind=new_works&scale=minor,medium`,
      ];
      for (const qs of sets) {
        const t = await totals(page, qs);
        assert.is(t.shown, t.viaApi, `explorer vs /v1/leads for "${qs}"`);
        if (t.viaApi > 25) assert.match(t.line, new RegExp(`^1–25 of ${t.viaApi.toLocaleString('en-IE')} leads$`));
      }
      // the first screen: the count and the first results are visible without scrolling
      await page.goto(`${origin}/app/explorer`);
      const seen = (await page.evaluate(`(() => {
        const r = (s) => { const e = document.querySelector(s); if (!e) return null; const b = e.getBoundingClientRect(); return { top: b.top, bottom: b.bottom, left: b.left, right: b.right }; };
        return { count: r('[data-total]'), first: r('.ex-list li:first-child'), second: r('.ex-list li:nth-child(2)'), map: r('#ex-map'), sort: r('#ex-sort') };
      })()`)) as Record<string, { top: number; bottom: number; left: number; right: number } | null>;
      for (const k of ['count', 'first', 'second', 'map', 'sort'])
        assert.ok(
          seen[k] && seen[k]!.bottom <= 800 && seen[k]!.right <= 1280,
          `${k} in the first screen: ${JSON.stringify(seen[k])}`,
        );
      await page.waitForSelector('#ex-map[data-map="idle"]', { timeout: 60_000 });
      await page.screenshot({ path: join(SHOTS, 'app-explorer-first-screen.png') });

      // through the panel: a county by type-ahead, a trade and a stage by check box
      const county = String(first['county']);
      await page.click('summary:has-text("Place")');
      await page.fill('#ex-county', county);
      await page.click('summary:has-text("Stage")');
      await page.check(`#ex-readiness-${String(first['lead_readiness'])}`);
      await page.click('form.ex-form button[type=submit] >> nth=0');
      await page.waitForSelector('[data-total]');
      const url = new URL(page.url());
      assert.is(url.searchParams.get('county'), county);
      const shown = Number(await page.getAttribute('[data-total]', 'data-total'));
      const viaApi = (
        await api.request(
          `/v1/leads?county=${encodeURIComponent(county)}&readiness=${String(first['lead_readiness'])}&page_size=1`,
        )
      ).body.total as number;
      assert.is(shown, viaApi);
      assert.ok(shown >= 1);
      // focus moved to the result of the search
      assert.is(await page.evaluate('document.activeElement && document.activeElement.id'), 'ex-results-h');
      // "Save this search" carries the filters, without the page
      const save = await page.getAttribute('a:has-text("Save this search")', 'href');
      const saved = new URLSearchParams(new URL(save!, origin).searchParams.get('query')!);
      assert.is(saved.get('county'), county);
      assert.is(saved.get('readiness'), String(first['lead_readiness']));
      assert.is(saved.get('page'), null);
      // a refused filter is said in the panel's words
      await page.goto(`${origin}/app/explorer?received_from=2026-13-40`);
      const err = (await page.textContent('.error')) ?? '';
      assert.match(err, /Received on or after/);
      assert.not.match(err, /received_from/);
    } finally {
      await context.close();
    }
  });

  test('the map draws the land and the tiles, answered 200 from /app, and a point opens its lead', async () => {
    const { context } = await signedInContext(browser, api, origin, 'explorer-map', 'pro');
    const page = await context.newPage();
    const statuses = new Map<string, number>();
    const csp: string[] = [];
    const left: string[] = [];
    page.on('response', (r) => void statuses.set(r.url(), r.status()));
    page.on('console', (m) => void (/Content.Security.Policy|Refused to/i.test(m.text()) && csp.push(m.text())));
    page.on('request', (r) => {
      if (!r.url().startsWith(origin) && !r.url().startsWith('data:') && !r.url().startsWith('blob:'))
        left.push(r.url());
    });
    try {
      await page.goto(`${origin}/app/explorer`);
      await page.waitForSelector('#ex-map[data-map="idle"]', { timeout: 60_000 });
      assert.equal(await page.evaluate('window.leadsMapErrors'), []);
      const drawn = (await page.evaluate(`(() => {
        const m = window.leadsMap;
        return {
          tiles: window.leadsMapTiles,
          canvas: !!document.querySelector('#ex-map canvas.maplibregl-canvas'),
          land: m.queryRenderedFeatures({ layers: ['land'] }).length,
          points: m.queryRenderedFeatures({ layers: ['clusters', 'leads'] }).length,
          page: m.queryRenderedFeatures({ layers: ['page'] }).length,
          records: m.querySourceFeatures('leads', { sourceLayer: 'leads' }).filter((f) => f.properties.cluster !== true).map((f) => f.geometry.coordinates),
        };
      })()`)) as { tiles: number; canvas: boolean; land: number; points: number; page: number; records: number[][] };
      assert.ok(drawn.canvas, 'the MapLibre canvas is there');
      assert.ok(drawn.tiles > 0, `tiles loaded: ${JSON.stringify({ ...drawn, records: drawn.records.length })}`);
      assert.ok(drawn.land > 0, 'the land layer is drawn');
      assert.ok(drawn.points > 0, 'lead clusters or points are drawn');
      assert.ok(drawn.page > 0, "the page's leads are drawn");
      for (const [lon, lat] of drawn.records)
        assert.ok(landAuthorityAt(lat!, lon!) !== null, `a tile record at ${lat},${lon} is off the land layer`);
      const tileUrls = [...statuses.keys()].filter((u) => u.includes('/app/map/tiles/leads/'));
      assert.ok(tileUrls.length > 0, 'tiles were requested from /app');
      assert.ok(
        tileUrls.some((u) => statuses.get(u) === 200),
        'at least one tile answered 200',
      );
      for (const u of tileUrls) assert.ok([200, 204].includes(statuses.get(u)!), `${u}: ${statuses.get(u)}`);
      assert.is(statuses.get(`${origin}/app/map/land.geojson`), 200);
      assert.equal(csp, [], 'no CSP violation');
      assert.equal(left, [], 'nothing requested outside the server');
      await page.screenshot({ path: join(SHOTS, 'app-explorer-map.png') });
      assert.ok(statSync(join(SHOTS, 'app-explorer-map.png')).size > 10_000);

      // select a red point (a lead of this page): its page opens
      const target = (await page.evaluate(`(() => {
        const f = window.leadsMap.queryRenderedFeatures({ layers: ['page'] })[0];
        const p = window.leadsMap.project(f.geometry.coordinates);
        const b = document.querySelector('#ex-map').getBoundingClientRect();
        return { x: b.left + p.x, y: b.top + p.y, id: f.properties.id };
      })()`)) as { x: number; y: number; id: number };
      await page.mouse.click(target.x, target.y);
      await page.waitForURL(/\/app\/explorer\/\d+$/, { timeout: 15_000 });
      // the lead page's map centres on the lead
      await page.waitForSelector('#ex-map[data-map="idle"]', { timeout: 60_000 });
      assert.equal(await page.evaluate('window.leadsMapErrors'), []);
      assert.ok(
        ((await page.evaluate(`window.leadsMap.queryRenderedFeatures({ layers: ['page'] }).length`)) as number) === 1,
      );
      await page.screenshot({ path: join(SHOTS, 'app-lead-map.png') });
      assert.equal(csp, [], 'no CSP violation on the lead page');
    } finally {
      await context.close();
    }
  });

  test('every point the tiles carry for the generated release lies on the land layer', async () => {
    const release = api.server.releases.acquire();
    try {
      const source = await releaseTiles(api.server.db)(release.release).source('leads');
      assert.ok(source.ids.length > 100, `points: ${source.ids.length}`);
      const off: string[] = [];
      for (let i = 0; i < source.ids.length; i++)
        if (landAuthorityAt(source.lat[i]!, source.lon[i]!) === null)
          off.push(`${source.ids[i]}@${source.lat[i]},${source.lon[i]}`);
      assert.equal(off.slice(0, 10), [], `${off.length} of ${source.ids.length} points off the land`);
      // and the layer the map draws is those cells: each authority's rectangles cover exactly its cells
      const land = landGeoJson();
      assert.is(land.features.length, 31);
    } finally {
      release.done();
    }
  });
}

test.run();
