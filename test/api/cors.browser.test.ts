/**
 * A page on another origin (issue 31.10): a second HTTP server on another port serves a page that
 * draws the API's vector tiles with MapLibre GL JS (the npm package's CSP build, served by that
 * server) and calls `GET /v1/leads` with the key as a Bearer header — straight to the API, no
 * proxy, so Debian's headless Chromium applies CORS: preflights, the allowed origin, exposed
 * headers. A problem (401) must be readable by the page too. With `CORS_ALLOW_ORIGINS` naming
 * another origin, the same page gets nothing (the browser refuses the answers).
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { chromiumMissing, launchMapChromium } from '../helpers/browser.ts';
import { startTestApi, type TestApi } from '../helpers/api.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
const DIST = join(ROOT, 'node_modules', 'maplibre-gl', 'dist');

const page = (apiOrigin: string, key: string): string => `<!doctype html>
<html><head><meta charset="utf-8"><link rel="stylesheet" href="/maplibre-gl.css"><script src="/maplibre-gl-csp.js"></script>
<style>body{margin:0}#map{width:640px;height:480px}</style></head>
<body><div id="map"></div><script>
const api = ${JSON.stringify(apiOrigin)};
const key = ${JSON.stringify(key)};
window.mapErrors = [];
window.tilesLoaded = 0;
maplibregl.setWorkerUrl('/maplibre-gl-csp-worker.js');
const map = new maplibregl.Map({
  container: 'map',
  center: [-7.7, 53.35],
  zoom: 6,
  fadeDuration: 0,
  style: {
    version: 8,
    sources: { leads: { type: 'vector', url: api + '/v1/tiles/leads.json' } },
    layers: [{ id: 'leads', type: 'circle', source: 'leads', 'source-layer': 'leads', paint: { 'circle-color': '#1864ab', 'circle-radius': 5 } }],
  },
  // the key as a header on the API's requests (TileJSON and tiles), fetched from the worker across origins
  transformRequest: (url) => (url.startsWith(api) ? { url, headers: { Authorization: 'Bearer ' + key } } : { url }),
});
map.on('error', (e) => window.mapErrors.push(String((e.error && e.error.message) || e)));
map.on('data', (e) => { if (e.dataType === 'source' && e.sourceId === 'leads' && e.tile) window.tilesLoaded++; });
map.on('idle', () => { window.mapIdle = true; });
window.map = map;
/** fetch across origins and report what the page could read (or the error the browser gave it). */
window.call = async (path, withKey) => {
  try {
    const res = await fetch(api + path, withKey ? { headers: { Authorization: 'Bearer ' + key } } : {});
    const body = await res.json();
    return { status: res.status, type: res.headers.get('content-type'), requestId: res.headers.get('x-request-id'), etag: res.headers.get('etag'),
      remaining: res.headers.get('x-ratelimit-remaining'), body };
  } catch (e) {
    return { error: String(e) };
  }
};
</script></body></html>`;

/** The page's own server (another origin than the API's). */
async function pageServer(apiOrigin: string, key: string): Promise<{ server: Server; origin: string }> {
  const files: Record<string, [string, string]> = {
    '/maplibre-gl-csp.js': ['maplibre-gl-csp.js', 'text/javascript'],
    '/maplibre-gl-csp-worker.js': ['maplibre-gl-csp-worker.js', 'text/javascript'],
    '/maplibre-gl.css': ['maplibre-gl.css', 'text/css'],
  };
  const server = createServer((req, res) => {
    const url = req.url ?? '/';
    if (url === '/') return void res.writeHead(200, { 'Content-Type': 'text/html' }).end(page(apiOrigin, key));
    const f = files[url];
    if (f) return void res.writeHead(200, { 'Content-Type': f[1] }).end(readFileSync(join(DIST, f[0])));
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const a = server.address();
  // localhost, not 127.0.0.1: another host as well as another port
  return { server, origin: `http://localhost:${typeof a === 'object' && a ? a.port : 0}` };
}

const closeServer = (s: Server | undefined): Promise<void> =>
  new Promise((resolve) => (s ? s.close(() => resolve()) : resolve()));

let browser: Browser;

if (chromiumMissing('cors.browser.test.ts', test)) {
  // skipped, with the reason printed
} else {
  test.before(async () => {
    browser = await launchMapChromium();
  });
  test.after(async () => {
    await browser?.close();
  });

  test('a page on another origin draws the tiles with MapLibre and reads /v1/leads and a 401 with a Bearer key', async () => {
    const api: TestApi = await startTestApi();
    let web: { server: Server; origin: string } | undefined;
    try {
      web = await pageServer(api.baseUrl, api.keys.ent_feed);
      assert.is.not(new URL(web.origin).origin, new URL(api.baseUrl).origin);
      const ctx = await browser.newContext({ viewport: { width: 640, height: 480 } });
      const p = await ctx.newPage();
      const statuses = new Map<string, number>();
      p.on('response', (r) => void (r.url().startsWith(api.baseUrl) && statuses.set(r.url(), r.status())));
      await p.goto(web.origin + '/');
      await p.waitForFunction('window.mapIdle === true', undefined, { timeout: 60_000 });
      assert.equal(await p.evaluate('window.mapErrors'), []);
      const drawn = (await p.evaluate(`(() => ({
        tiles: window.tilesLoaded,
        source: window.map.querySourceFeatures('leads', { sourceLayer: 'leads' }).length,
        rendered: window.map.queryRenderedFeatures({ layers: ['leads'] }).length,
      }))()`)) as { tiles: number; source: number; rendered: number };
      assert.ok(drawn.tiles > 0, `tiles loaded: ${JSON.stringify(drawn)}`);
      assert.ok(drawn.source > 0, `features in the loaded tiles: ${JSON.stringify(drawn)}`);
      assert.ok(drawn.rendered > 0, `features drawn: ${JSON.stringify(drawn)}`);
      const tileUrls = [...statuses.keys()].filter((u) => u.endsWith('.mvt'));
      assert.ok(tileUrls.length > 0, 'tiles were fetched from the API');
      for (const u of tileUrls) assert.ok([200, 204].includes(statuses.get(u)!), `${u}: ${statuses.get(u)}`);
      // (Chromium's preflights are not page requests: the API's access log shows them, answered 204 without a key)
      const preflights = api.logs.filter((l) => l.includes('"method":"OPTIONS"'));
      assert.ok(preflights.length > 0, 'the Authorization header made the browser send preflights');
      for (const l of preflights) assert.match(l, /"status":204/);

      const leads = (await p.evaluate(`window.call('/v1/leads?page_size=3', true)`)) as Record<string, any>;
      assert.is(leads['error'], undefined, String(leads['error']));
      assert.is(leads['status'], 200);
      assert.match(String(leads['type']), /^application\/json/);
      assert.is(leads['body'].results.length, 3);
      assert.ok(leads['requestId'], 'X-Request-Id is readable');
      assert.match(String(leads['etag']), /^W\//, 'ETag is readable');
      assert.match(String(leads['remaining']), /^\d+$/, 'X-RateLimit-Remaining is readable');

      const missing = (await p.evaluate(`window.call('/v1/leads', false)`)) as Record<string, any>;
      assert.is(missing['status'], 401, JSON.stringify(missing));
      assert.is(missing['body'].code, 'missing_key');
      assert.match(String(missing['type']), /^application\/problem\+json/);
      await ctx.close();
    } finally {
      await closeServer(web?.server);
      await api.close();
    }
  });

  test('with CORS_ALLOW_ORIGINS naming another origin, the browser keeps the answers from the page', async () => {
    const api = await startTestApi({ config: { corsAllowOrigins: ['https://someone-else.example'] } });
    let web: { server: Server; origin: string } | undefined;
    try {
      web = await pageServer(api.baseUrl, api.keys.ent_feed);
      const ctx = await browser.newContext();
      const p = await ctx.newPage();
      await p.goto(web.origin + '/');
      const leads = (await p.evaluate(`window.call('/v1/leads?page_size=3', true)`)) as Record<string, any>;
      assert.match(String(leads['error']), /TypeError|Failed to fetch/, JSON.stringify(leads));
      await p.waitForFunction('window.mapErrors.length > 0', undefined, { timeout: 30_000 });
      assert.is(await p.evaluate('window.tilesLoaded'), 0);
      await ctx.close();
    } finally {
      await closeServer(web?.server);
      await api.close();
    }
  });
}

test.run();
