/**
 * The read-only reference, GET /v1/reference: public, plain HTML without any script under a
 * strict CSP, rendered by the server from the document /v1/openapi.json serves — every
 * operation with its id, method, path, parameters and response statuses, every webhook event and
 * schema — and linked from /v1/docs. A hostile document cannot inject markup into it.
 * (test/api/reference.browser.test.ts reads it in Chromium with JavaScript off.)
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import http from 'node:http';
import { gunzipSync } from 'node:zlib';
import { REFERENCE_CSP } from '../../api/routes/docs.ts';
import { escapeHtml, markdown, renderReference } from '../../api/render/reference-html.ts';
import { startTestApi, assertProblem, type TestApi } from '../helpers/api.ts';

let api: TestApi;
test.before(async () => {
  api = await startTestApi();
});
test.after(async () => {
  await api?.close();
});

/** A raw GET (fetch would ask for and undo the compression itself). */
function rawGet(
  url: string,
  headers: Record<string, string>,
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
      })
      .on('error', reject);
  });
}

/** The `<article class="operation">` elements of a page: attributes and inner HTML. */
function articles(html: string): { attrs: Record<string, string>; inner: string }[] {
  return [...html.matchAll(/<article class="operation[^"]*"([^>]*)>([\s\S]*?)<\/article>/g)].map((m) => ({
    attrs: Object.fromEntries([...m[1]!.matchAll(/ (data-[a-z-]+)="([^"]*)"/g)].map((a) => [a[1]!, a[2]!])),
    inner: m[2]!,
  }));
}

const unescape = (s: string): string =>
  s
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&');

test('GET /v1/reference: public HTML, no script, strict CSP, every operation of the served document', async () => {
  const res = await api.request('/v1/reference', { key: null });
  assert.is(res.status, 200);
  assert.match(res.headers.get('content-type')!, /^text\/html; charset=utf-8/);
  assert.is(res.headers.get('content-security-policy'), REFERENCE_CSP);
  assert.match(REFERENCE_CSP, /default-src 'none'/);
  assert.not.match(REFERENCE_CSP, /script-src|unsafe-inline/);
  assert.is(res.headers.get('x-content-type-options'), 'nosniff');
  assert.ok(res.headers.get('x-request-id'));
  const html = res.text;
  assert.not.match(
    html,
    /<script|<style|\sstyle=|\son[a-z]+=|javascript:/i,
    'no script, inline style or event handler',
  );
  assert.not.match(html, /https?:\/\/(?!localhost\/v1)[^\s"<]*\.(js|css)\b/, 'no CDN');
  assert.match(html, /<link rel="stylesheet" href="docs\/assets\/reference\.css">/);
  assert.match(html, /href="openapi\.json"/);
  assert.match(html, /href="docs"/);

  const doc = (await api.request('/v1/openapi.json', { key: null })).body;
  const found = articles(html);
  const operations = Object.entries<any>(doc.paths).flatMap(([path, item]) =>
    Object.entries<any>(item).map(([method, op]) => ({ path, method, op })),
  );
  assert.ok(operations.length >= 30, `${operations.length} operations`);
  assert.equal(
    found
      .filter((a) => a.attrs['data-path'] !== undefined)
      .map((a) => `${a.attrs['data-method']} ${unescape(a.attrs['data-path']!)} ${a.attrs['data-operation-id']}`)
      .sort(),
    operations.map((o) => `${o.method.toUpperCase()} ${o.path} ${o.op.operationId}`).sort(),
    'one article per operation, with its method, path and operationId',
  );
  for (const { path, method, op } of operations) {
    const a = found.find((x) => x.attrs['data-operation-id'] === op.operationId)!;
    const where = `${method.toUpperCase()} ${path}`;
    // an operation at the origin (/healthz, /readyz, /metrics) names its own server: no /v1
    assert.ok(
      a.inner.includes(`<code class="path">${escapeHtml((op.servers ? '' : '/v1') + path)}</code>`),
      `${where}: its path, with its server's path`,
    );
    assert.ok(a.inner.includes(escapeHtml(op.summary)), `${where}: summary`);
    for (const p of op.parameters ?? [])
      assert.ok(a.inner.includes(`<code>${escapeHtml(p.name)}</code>`), `${where}: parameter ${p.name}`);
    for (const status of Object.keys(op.responses))
      assert.ok(a.inner.includes(`id="response-${op.operationId}-${status}"`), `${where}: response ${status}`);
    const scheme = Object.keys(op.security?.[0] ?? { bearer: [] })[0];
    assert.ok(
      a.inner.includes(
        op.security?.length === 0 ? 'None: public, no key needed.' : `<a href="#auth-${scheme}">${scheme}</a>`,
      ),
      `${where}: authentication`,
    );
  }
  // enumerations and defaults of the parameters are spelled out
  const leads = found.find((a) => a.attrs['data-operation-id'] === 'getLeads')!.inner;
  assert.match(
    leads,
    /<code>readiness<\/code>[\s\S]*?one of <code>&quot;application&quot;<\/code>, [^<]*<code>&quot;further_information&quot;<\/code>/,
  );
  assert.match(leads, /<code>page<\/code>[\s\S]*?≥ 1; e\.g\. <code>2<\/code>/);
  const infra = found.find((a) => a.attrs['data-operation-id'] === 'getInfrastructure')!.inner;
  assert.match(infra, /<code>sort<\/code>[\s\S]*?default <code>&quot;id&quot;<\/code>/);
  assert.equal(
    found.filter((a) => a.attrs['data-webhook'] !== undefined).map((a) => unescape(a.attrs['data-webhook']!)),
    Object.keys(doc.webhooks),
    'every webhook event',
  );
  for (const name of Object.keys(doc.components.schemas))
    assert.ok(html.includes(`id="schema-${name}"`), `schema ${name}`);
  for (const name of Object.keys(doc.components.headers))
    assert.ok(html.includes(`id="header-${name}"`), `header ${name}`);
  // every internal link lands on an id of the page
  const ids = new Set([...html.matchAll(/ id="([^"]+)"/g)].map((m) => m[1]));
  const dangling = [...new Set([...html.matchAll(/href="#([^"]+)"/g)].map((m) => m[1]!))].filter((id) => !ids.has(id));
  assert.equal(dangling, [], 'no dangling in-page link');
  assert.is([...html.matchAll(/<article/g)].length, [...html.matchAll(/<\/article>/g)].length);
});

test('/v1/reference is gzipped for clients that ask, identical otherwise; its style sheet is served', async () => {
  const url = `${api.baseUrl}/v1/reference`;
  const plain = await rawGet(url, {});
  const gz = await rawGet(url, { 'Accept-Encoding': 'gzip' });
  assert.is(plain.status, 200);
  assert.is(plain.headers['content-encoding'], undefined);
  assert.is(gz.headers['content-encoding'], 'gzip');
  assert.match(String(gz.headers['vary']), /Accept-Encoding/);
  assert.ok(gz.body.length * 5 < plain.body.length, `compressed ${gz.body.length} of ${plain.body.length} bytes`);
  assert.ok(gunzipSync(gz.body).equals(plain.body));
  const css = await api.request('/v1/docs/assets/reference.css', { key: null });
  assert.is(css.status, 200);
  assert.match(css.headers.get('content-type')!, /^text\/css/);
  assert.match(css.text, /\.method-get/);
  assertProblem(await api.request('/v1/reference', { key: null, method: 'POST' }), 405, 'method_not_allowed');
});

test('/v1/docs links to the read-only reference, also for a browser without JavaScript', async () => {
  const page = await api.request('/v1/docs', { key: null });
  assert.match(page.text, /<nav[^>]*>[\s\S]*href="reference"[\s\S]*<\/nav>/);
  assert.match(page.text, /<noscript>[\s\S]*href="reference"[\s\S]*<\/noscript>/);
});

test('nothing in the document can inject markup: every string is escaped, links only to http(s) or relative URLs', () => {
  const evil = '<script>alert(1)</script><img src=x onerror="alert(2)">';
  const doc = {
    openapi: '3.1.0',
    info: {
      title: `T ${evil}`,
      version: '1"><b>',
      description: `Intro ${evil} [ok](https://example.ie/a?b=1&c=2) [bad](javascript:alert(3)) \`<code>\` **bold**`,
    },
    servers: [{ url: 'https://api.example.ie/v1' }],
    tags: [{ name: `Tag ${evil}`, description: evil }],
    paths: {
      '/things/{id}': {
        get: {
          operationId: 'x" onmouseover="alert(4)',
          tags: [`Tag ${evil}`],
          summary: evil,
          description: `Desc ${evil}`,
          parameters: [
            {
              name: `p${evil}`,
              in: 'query',
              description: evil,
              schema: { type: 'string', enum: [evil], default: evil, pattern: evil },
            },
          ],
          responses: {
            '200': {
              description: evil,
              headers: { [`X-${evil}`]: { description: evil, schema: { type: 'string' } } },
              content: { 'text/html': { schema: { $ref: '#/components/schemas/Thing' } } },
            },
          },
        },
      },
    },
    components: {
      schemas: {
        Thing: {
          type: 'object',
          description: evil,
          properties: { [evil]: { type: 'string', description: evil, const: evil } },
        },
      },
    },
  };
  const html = renderReference(doc);
  assert.not.match(html, /<script|<img|<b>|\son[a-z]+="|href="javascript:/i);
  assert.ok(html.includes('&lt;script&gt;alert(1)&lt;/script&gt;'), 'escaped, still readable');
  assert.ok(html.includes('<a href="https://example.ie/a?b=1&amp;c=2">ok</a>'), 'a safe link is a link');
  assert.ok(html.includes('[bad](javascript:alert(3))'), 'an unsafe one stays text');
  assert.ok(html.includes('<code>&lt;code&gt;</code>') && html.includes('<strong>bold</strong>'));
  assert.match(html, /data-operation-id="x&quot; onmouseover=&quot;alert\(4\)"/);
  assert.is(markdown('a\n\nb `c`'), '<p>a</p>\n<p>b <code>c</code></p>');
});

test.run();
