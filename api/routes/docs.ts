/**
 * `GET /v1/openapi.json` (the generated OpenAPI 3.1 document) and `GET /v1/docs` (a readable
 * reference rendered from it by Swagger UI). The renderer's files come from the
 * `swagger-ui-dist` npm package and are served by this router under `/v1/docs/assets/` — no
 * CDN, so the reference works offline and behind a firewall. Both paths are public (no key).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import Router from '@koa/router';
import type { ApiConfig } from '../config.ts';
import type { AppState } from '../context.ts';
import { notFound } from '../errors.ts';
import { buildOpenApi } from '../openapi.ts';

const require = createRequire(import.meta.url);

/** Files of swagger-ui-dist the page needs, with their content types. */
const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'application/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
  'favicon-16x16.png': 'image/png',
};

/** Our own start-up script (kept out of the HTML so a strict CSP needs no 'unsafe-inline'). */
const INIT_JS = `window.addEventListener('load', function () {
  window.ui = SwaggerUIBundle({
    // The page is /v1/docs, so this resolves to /v1/openapi.json (also behind a path prefix).
    url: new URL('openapi.json', document.baseURI).href,
    dom_id: '#swagger-ui',
    deepLinking: true,
    docExpansion: 'list',
    defaultModelsExpandDepth: 0,
    layout: 'BaseLayout',
  });
});
`;

const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Irish Construction Leads API — reference</title>
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <link rel="icon" type="image/png" href="docs/assets/favicon-32x32.png" sizes="32x32">
  <link rel="stylesheet" href="docs/assets/swagger-ui.css">
</head>
<body>
  <noscript>This reference needs JavaScript. The machine-readable description is at <a href="openapi.json">openapi.json</a>.</noscript>
  <div id="swagger-ui"></div>
  <script src="docs/assets/swagger-ui-bundle.js"></script>
  <script src="docs/assets/init.js"></script>
</body>
</html>
`;

/** Folder of the installed swagger-ui-dist package. */
export function swaggerUiDir(): string {
  return dirname(require.resolve('swagger-ui-dist/package.json'));
}

/** The reference router: the OpenAPI document, the page and its assets. */
export function docsRouter(config: Pick<ApiConfig, 'publicBaseUrl'>, _deps?: unknown): Router<AppState> {
  const router = new Router<AppState>();
  let doc: string | null = null;
  const cache = new Map<string, Buffer>();
  router.get('/openapi.json', (ctx) => {
    doc ??= JSON.stringify(buildOpenApi(config));
    ctx.type = 'application/json; charset=utf-8';
    ctx.body = doc;
  });
  router.get('/docs', (ctx) => {
    // Relative asset URLs resolve against /v1/docs → /v1/docs/assets/…, also behind a path-prefixing proxy.
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = PAGE;
  });
  router.get('/docs/assets/:file', (ctx) => {
    const file = ctx.params['file']!;
    if (file === 'init.js') {
      ctx.type = 'application/javascript; charset=utf-8';
      ctx.body = INIT_JS;
      return;
    }
    const type = ASSETS[file];
    if (!type) throw notFound(`asset ${file}`);
    let body = cache.get(file);
    if (!body) {
      body = readFileSync(join(swaggerUiDir(), file));
      cache.set(file, body);
    }
    ctx.type = type;
    ctx.set('Cache-Control', 'public, max-age=86400');
    ctx.body = body;
  });
  return router;
}
