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
import type { AppContext, AppState } from '../http/context.ts';
import { mount, type Operation } from './operation.ts';
import { notFound } from '../http/errors.ts';
import { renderReference } from '../render/reference-html.ts';
import { unchangingBody } from '../middleware/compression.ts';

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
function swaggerUiDir(): string {
  return dirname(require.resolve('swagger-ui-dist/package.json'));
}

/**
 * What the reference operations share: the document (built by the app, `openapi`, on first
 * request) and its renderings, each made once.
 */
interface DocsEnv {
  openapi: () => Record<string, unknown>;
  doc: Buffer | null;
  reference: string | null;
  referenceGz: Buffer | null;
  assets: Map<string, Buffer>;
}

/** `GET /v1/openapi.json`. */
function openapiJson(ctx: AppContext, env: DocsEnv): void {
  env.doc ??= unchangingBody(Buffer.from(JSON.stringify(env.openapi())));
  ctx.type = 'application/json; charset=utf-8';
  ctx.body = env.doc;
}

/** `GET /v1/reference`: the read-only rendering, gzipped once when the client takes it. */
function referencePage(ctx: AppContext, env: DocsEnv): void {
  // Relative links (openapi.json, docs, docs/assets/reference.css) resolve against /v1/reference.
  env.reference ??= renderReference(env.openapi());
  ctx.type = 'text/html; charset=utf-8';
  ctx.set('Content-Security-Policy', REFERENCE_CSP);
  ctx.vary('Accept-Encoding');
  // ~0.5 MB of HTML, ~45 kB gzipped: compressed once, on first request
  if (ctx.acceptsEncodings('gzip', 'identity') === 'gzip') {
    env.referenceGz ??= gzipSync(env.reference);
    ctx.set('Content-Encoding', 'gzip');
    ctx.body = env.referenceGz;
  } else {
    ctx.body = env.reference;
  }
}

/** `GET /v1/docs`: the Swagger UI page. */
function docsPage(ctx: AppContext): void {
  // Relative asset URLs resolve against /v1/docs → /v1/docs/assets/…, also behind a path-prefixing proxy.
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = PAGE;
}

/** `GET /v1/docs/assets/{file}`: Swagger UI's files, our start-up script and the reference's style sheet. */
function docsAsset(ctx: AppContext, env: DocsEnv): void {
  const file = ctx.params['file']!;
  if (file === 'init.js') {
    ctx.type = 'application/javascript; charset=utf-8';
    ctx.body = INIT_JS;
    return;
  }
  const type = file === 'reference.css' ? 'text/css; charset=utf-8' : ASSETS[file];
  if (!type) throw notFound(`asset ${file}`);
  let body = env.assets.get(file);
  if (!body) {
    body = unchangingBody(readFileSync(file === 'reference.css' ? REFERENCE_CSS : join(swaggerUiDir(), file)));
    env.assets.set(file, body);
  }
  ctx.type = type;
  ctx.set('Cache-Control', 'public, max-age=86400');
  ctx.body = body;
}

/** The reference operations (paths relative to the /v1 mount). */
export const DOCS_OPERATIONS: readonly Operation<DocsEnv>[] = [
  {
    method: 'get',
    path: '/openapi.json',
    tag: 'Reference',
    public: true,
    summary: 'This OpenAPI 3.1 document',
    description:
      'The machine-readable description of every endpoint, parameter, response, header and error. No key needed.',
    ok: { schema: { type: 'object', description: 'An OpenAPI 3.1 document.' }, description: 'The OpenAPI document.' },
    errors: [],
    handler: openapiJson,
  },
  {
    method: 'get',
    path: '/docs',
    tag: 'Reference',
    public: true,
    summary: 'Interactive API reference',
    description:
      'An interactive HTML reference rendered in the browser from /v1/openapi.json (Swagger UI, served locally; needs JavaScript). Links to the read-only /v1/reference. No key needed.',
    ok: { schema: { type: 'string' }, type: 'text/html', description: 'The reference page.' },
    errors: [],
    handler: docsPage,
  },
  {
    method: 'get',
    path: '/reference',
    tag: 'Reference',
    public: true,
    summary: 'Read-only API reference (no JavaScript)',
    description:
      'Every operation, parameter, response, header, schema and the service terms of this document, rendered as plain HTML by the server (no script; a style sheet from /v1/docs/assets/). No key needed.',
    ok: { schema: { type: 'string' }, type: 'text/html', description: 'The reference page.' },
    errors: [],
    handler: referencePage,
  },
  {
    method: 'get',
    path: '/docs/assets/{file}',
    tag: 'Reference',
    public: true,
    summary: 'Static assets of the reference pages',
    description:
      'Scripts and style sheets of the Swagger UI renderer (from the swagger-ui-dist package) and the style sheet of /v1/reference (`reference.css`). No key needed.',
    pathParams: [
      {
        name: 'file',
        in: 'path',
        required: true,
        description: 'Asset file name.',
        schema: { type: 'string', pattern: '^[A-Za-z0-9._-]+$' },
      },
    ],
    ok: {
      schema: { type: 'string' },
      type: 'application/octet-stream',
      description: 'The asset (JavaScript, CSS or image).',
    },
    errors: [404],
    handler: docsAsset,
  },
];

/**
 * The reference router: the OpenAPI document, its two renderings and their assets. `openapi`
 * builds the document (the app's `buildOpenApi`, api/openapi/document.ts, with its deprecations).
 */
export function docsRouter(openapi: () => Record<string, unknown>): Router<AppState> {
  let built: Record<string, unknown> | null = null;
  return mount(DOCS_OPERATIONS, {
    openapi: () => (built ??= openapi()),
    doc: null,
    reference: null,
    referenceGz: null,
    assets: new Map(),
  });
}
