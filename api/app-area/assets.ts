/**
 * Static files of the account area, served at /app/assets/<name> — no CDN:
 *   - every file directly in api/app-area/assets/ (stylesheet, page scripts);
 *   - `webauthn-browser.js`: @simplewebauthn/browser's UMD bundle from node_modules (the global
 *     `SimpleWebAuthnBrowser`);
 *   - `maplibre-gl-csp.js`, `maplibre-gl-csp-worker.js`, `maplibre-gl.css`: MapLibre GL JS's CSP
 *     build, its worker and its stylesheet, from node_modules (the explorer's and lead page's map).
 * Files are read once at start into a table keyed by file name; a request is answered only when
 * its name is a key of that table, so no path (`..`, `%2e%2e`, `/`) can reach any other file.
 * Served with a strong ETag and `Cache-Control: no-cache` (revalidated, so a deploy shows at once).
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AppAreaContext } from './contract.ts';

export const ASSET_DIR = fileURLToPath(new URL('./assets/', import.meta.url));

const TYPES: Record<string, string> = {
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
};

/** The root folder of an installed package (its package.json's folder). */
function packageRoot(name: string): string {
  let dir = dirname(createRequire(import.meta.url).resolve(name));
  for (;;) {
    try {
      if (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).name === name) return dir;
    } catch {
      // not this folder
    }
    const up = dirname(dir);
    if (up === dir) throw new Error(`cannot find the folder of package ${name}`);
    dir = up;
  }
}

/** MapLibre GL's dist folder (the folder of its main file). */
const maplibreDist = (): string => dirname(createRequire(import.meta.url).resolve('maplibre-gl'));

/** Files from node_modules, by the name they are served under. */
export const VENDOR_ASSETS: Record<string, () => string> = {
  'webauthn-browser.js': () => join(packageRoot('@simplewebauthn/browser'), 'dist/bundle/index.umd.min.js'),
  // MapLibre GL's CSP build: the worker is a file of its own (no blob: worker), so the CSP stays 'self'
  // (its main file is dist/maplibre-gl.js, and dist/ holds a package.json of its own)
  'maplibre-gl-csp.js': () => join(maplibreDist(), 'maplibre-gl-csp.js'),
  'maplibre-gl-csp-worker.js': () => join(maplibreDist(), 'maplibre-gl-csp-worker.js'),
  'maplibre-gl.css': () => join(maplibreDist(), 'maplibre-gl.css'),
};

interface Asset {
  body: Buffer;
  type: string;
  etag: string;
}

/** Read the asset table: the asset folder's files and the vendor files. */
export function loadAssets(dir: string = ASSET_DIR): ReadonlyMap<string, Asset> {
  const files: [string, string][] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (TYPES[extname(name)] && /^[a-z0-9][a-z0-9.-]*$/.test(name) && statSync(path).isFile()) files.push([name, path]);
  }
  for (const [name, path] of Object.entries(VENDOR_ASSETS)) files.push([name, path()]);
  return new Map(
    files.map(([name, path]) => {
      const body = readFileSync(path);
      return [
        name,
        {
          body,
          type: TYPES[extname(name)]!,
          etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`,
        },
      ];
    }),
  );
}

/** Answer GET/HEAD /app/assets/<name> from `assets`; false when the request is not for an asset path. */
export function serveAsset(ctx: AppAreaContext, assets: ReadonlyMap<string, Asset>): boolean {
  if (!ctx.path.startsWith('/app/assets/') || (ctx.method !== 'GET' && ctx.method !== 'HEAD')) return false;
  const a = assets.get(ctx.path.slice('/app/assets/'.length));
  if (!a) return false;
  ctx.set('Cache-Control', 'no-cache');
  ctx.set('ETag', a.etag);
  if (ctx.get('If-None-Match') === a.etag) {
    ctx.status = 304;
    return true;
  }
  ctx.type = a.type;
  ctx.body = a.body;
  return true;
}
