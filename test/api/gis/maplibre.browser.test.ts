/**
 * A real map client: MapLibre GL JS (the npm package's CSP build, served locally) renders the
 * leads tiles of the tiny release in Debian's headless Chromium (WebGL on SwiftShader), loading
 * the layer's TileJSON and its tiles with the key sent as an Authorization header from
 * `transformRequest` (no access_token in any URL). A test-only server serves the page and the
 * MapLibre files and passes /v1/* on to the API, keeping the Host (so the TileJSON's tile URLs
 * come back to it). The screenshot is kept for docs/gis.md (docs/images/maplibre-leads-tiles.png).
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { createServer, request as httpRequest, type Server } from 'node:http';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { chromiumMissing, launchMapChromium } from '../../helpers/browser.ts';
import { startTestApi, type TestApi } from '../../helpers/api.ts';

const ROOT = new URL('../../../', import.meta.url).pathname;
const DIST = join(ROOT, 'node_modules', 'maplibre-gl', 'dist');
const SCREENSHOT = join(ROOT, 'docs', 'images', 'maplibre-leads-tiles.png');

const page = (key: string): string => `<!doctype html>
<html><head><meta charset="utf-8"><link rel="stylesheet" href="/maplibre-gl.css"><script src="/maplibre-gl-csp.js"></script>
<style>body{margin:0}#map{width:900px;height:640px}</style></head>
<body><div id="map"></div><script>
maplibregl.setWorkerUrl('/maplibre-gl-csp-worker.js');
window.mapErrors = [];
const key = ${JSON.stringify(key)};
const map = new maplibregl.Map({
  container: 'map',
  center: [-7.7, 53.35],
  zoom: 6.2,
  fadeDuration: 0,
  attributionControl: { compact: false },
  style: {
    version: 8,
    sources: { leads: { type: 'vector', url: location.origin + '/v1/tiles/leads.json' } },
    layers: [
      { id: 'background', type: 'background', paint: { 'background-color': '#eef2f3' } },
      { id: 'clusters', type: 'circle', source: 'leads', 'source-layer': 'leads', filter: ['==', ['get', 'cluster'], true],
        paint: { 'circle-color': '#d9480f', 'circle-opacity': 0.75, 'circle-radius': ['interpolate', ['linear'], ['get', 'point_count'], 2, 5, 50, 14, 500, 26] } },
      { id: 'points', type: 'circle', source: 'leads', 'source-layer': 'leads', filter: ['==', ['get', 'cluster'], false],
        paint: { 'circle-color': '#1864ab', 'circle-radius': 4, 'circle-stroke-color': '#ffffff', 'circle-stroke-width': 1 } },
    ],
  },
  // the key as a header on every request to the API (TileJSON and tiles)
  transformRequest: (url) => (url.includes('/v1/') ? { url, headers: { Authorization: 'Bearer ' + key } } : { url }),
});
map.on('error', (e) => window.mapErrors.push(String((e.error && e.error.message) || e)));
map.on('idle', () => { window.mapIdle = true; });
window.map = map;
</script></body></html>`;

let api: TestApi;
let server: Server;
let origin = '';
let browser: Browser;

if (chromiumMissing('maplibre.browser.test.ts', test)) {
  // skipped, with the reason printed
} else {
  test.before(async () => {
    api = await startTestApi();
    const target = new URL(api.baseUrl);
    const files: Record<string, [string, string]> = {
      '/maplibre-gl-csp.js': ['maplibre-gl-csp.js', 'text/javascript'],
      '/maplibre-gl-csp-worker.js': ['maplibre-gl-csp-worker.js', 'text/javascript'],
      '/maplibre-gl.css': ['maplibre-gl.css', 'text/css'],
    };
    server = createServer((req, res) => {
      const url = req.url ?? '/';
      if (url === '/') return void res.writeHead(200, { 'Content-Type': 'text/html' }).end(page(api.keys.ent_feed));
      const f = files[url];
      if (f) return void res.writeHead(200, { 'Content-Type': f[1] }).end(readFileSync(join(DIST, f[0])));
      if (!url.startsWith('/v1/')) return void res.writeHead(404).end();
      const up = httpRequest(
        { host: target.hostname, port: target.port, path: url, method: req.method, headers: req.headers },
        (r) => {
          res.writeHead(r.statusCode ?? 502, r.headers);
          r.pipe(res);
        },
      );
      up.on('error', () => res.writeHead(502).end());
      req.pipe(up);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const a = server.address();
    origin = `http://127.0.0.1:${typeof a === 'object' && a ? a.port : 0}`;
    browser = await launchMapChromium();
  });
  test.after(async () => {
    await browser?.close();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    await api?.close();
  });

  test('MapLibre renders the leads tiles with the key sent as a header; screenshot for docs/gis.md', async () => {
    const ctx = await browser.newContext({ viewport: { width: 900, height: 640 } });
    const p = await ctx.newPage();
    const apiRequests: { url: string; auth: string | undefined; status?: number }[] = [];
    p.on('request', (r) => {
      if (r.url().includes('/v1/')) apiRequests.push({ url: r.url(), auth: r.headers()['authorization'] });
    });
    const statuses = new Map<string, number>();
    p.on('response', (r) => void statuses.set(r.url(), r.status()));
    await p.goto(origin + '/');
    await p.waitForFunction('window.mapIdle === true', undefined, { timeout: 60_000 });
    const errors = (await p.evaluate('window.mapErrors')) as string[];
    assert.equal(errors, []);
    const rendered = (await p.evaluate(`(() => {
      const fs = window.map.queryRenderedFeatures({ layers: ['clusters', 'points'] });
      return { features: fs.length, records: fs.reduce((n, f) => n + f.properties.point_count, 0) };
    })()`)) as { features: number; records: number };
    assert.ok(rendered.features > 0, 'features drawn');
    assert.ok(rendered.records > 0);
    const tiles = apiRequests.filter((r) => r.url.includes('.mvt'));
    assert.ok(tiles.length > 0, 'tiles were requested');
    assert.ok(
      apiRequests.some((r) => r.url.endsWith('/v1/tiles/leads.json')),
      'the TileJSON was read',
    );
    for (const r of apiRequests) {
      assert.is(r.auth, `Bearer ${api.keys.ent_feed}`, `the key as a header on ${r.url}`);
      assert.not.ok(r.url.includes('access_token'), r.url);
      assert.ok([200, 204].includes(statuses.get(r.url) ?? 0), `${r.url}: ${statuses.get(r.url)}`);
    }
    await p.locator('#map').screenshot({ path: SCREENSHOT });
    const png = readFileSync(SCREENSHOT);
    assert.ok(png.length > 10_000, 'a screenshot with something drawn in it');
    await ctx.close();
  });
}

test.run();
