/**
 * `GET /v1/openapi.json` (the generated OpenAPI 3.1 document) and its two renderings:
 * `GET /v1/docs`, interactive, rendered in the browser by Swagger UI, and `GET /v1/reference`,
 * read-only, rendered by the server as plain HTML without any script (api/render/reference-html.ts).
 * Swagger UI's files come from the `swagger-ui-dist` npm package and, with the reference's style
 * sheet, are served by this router under `/v1/docs/assets/` — no CDN, so both work offline and
 * behind a firewall. All of it is public (no key), like the document itself: it describes the
 * API, never its data.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { gzipSync } from 'node:zlib';
import Router from '@koa/router';
import type { ApiConfig } from '../config.ts';
import type { AppState } from '../http/context.ts';
import { notFound } from '../http/errors.ts';
import { buildOpenApi } from '../openapi/document.ts';
import { renderReference } from '../render/reference-html.ts';
import type { DeprecationTable } from '../access/service-terms.ts';

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

/** Style sheet of /v1/reference (a file, so the page's CSP allows styles from 'self' only). */
const REFERENCE_CSS = new URL('../render/reference.css', import.meta.url);

/** /v1/reference runs no script and loads only its style sheet and icon from this server. */
export const REFERENCE_CSP =
  "default-src 'none'; style-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

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
  <noscript><p>This interactive reference needs JavaScript. Read the same document without it in the <a href="reference">read-only reference</a>, or as <a href="openapi.json">openapi.json</a>.</p></noscript>
  <nav aria-label="Other renderings"><p>Also: the <a href="reference">read-only reference</a> (plain HTML, no JavaScript) and the machine-readable <a href="openapi.json">openapi.json</a>.</p></nav>
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

/** The reference router: the OpenAPI document, its two renderings and their assets; `deps.deprecations` as in createApp. */
export function docsRouter(
  config: Pick<ApiConfig, 'publicBaseUrl'>,
  deps: { deprecations?: DeprecationTable } = {},
): Router<AppState> {
  const router = new Router<AppState>();
  let built: Record<string, unknown> | null = null;
  let doc: string | null = null;
  let reference: string | null = null;
  let referenceGz: Buffer | null = null;
  const cache = new Map<string, Buffer>();
  const openapi = (): Record<string, unknown> =>
    (built ??= buildOpenApi(config, deps.deprecations ? { deprecations: deps.deprecations } : {}));
  router.get('/openapi.json', (ctx) => {
    doc ??= JSON.stringify(openapi());
    ctx.type = 'application/json; charset=utf-8';
    ctx.body = doc;
  });
  router.get('/reference', (ctx) => {
    // Relative links (openapi.json, docs, docs/assets/reference.css) resolve against /v1/reference.
    reference ??= renderReference(openapi());
    ctx.type = 'text/html; charset=utf-8';
    ctx.set('Content-Security-Policy', REFERENCE_CSP);
    ctx.vary('Accept-Encoding');
    // ~0.5 MB of HTML, ~45 kB gzipped: compressed once, on first request
    if (ctx.acceptsEncodings('gzip', 'identity') === 'gzip') {
      referenceGz ??= gzipSync(reference);
      ctx.set('Content-Encoding', 'gzip');
      ctx.body = referenceGz;
    } else {
      ctx.body = reference;
    }
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
    const type = file === 'reference.css' ? 'text/css; charset=utf-8' : ASSETS[file];
    if (!type) throw notFound(`asset ${file}`);
    let body = cache.get(file);
    if (!body) {
      body = readFileSync(file === 'reference.css' ? REFERENCE_CSS : join(swaggerUiDir(), file));
      cache.set(file, body);
    }
    ctx.type = type;
    ctx.set('Cache-Control', 'public, max-age=86400');
    ctx.body = body;
  });
  return router;
}
