/**
 * The read-only API reference (`GET /v1/reference`): the OpenAPI document rendered by the server
 * as one page of semantic HTML — every operation (method, path, summary, description, security,
 * parameters with their types, enumerations and defaults, request body, responses with status,
 * headers and body schema), the webhook events, the response headers, every schema and the
 * service terms. No script at all, so it reads the same with JavaScript off, in a text browser
 * or printed; its one style sheet is `reference.css` next to this file (served under
 * `/v1/docs/assets/`, so the page needs no inline style under its CSP).
 *
 * Every string of the document is HTML-escaped before anything is added to it; the small
 * Markdown subset of the descriptions (`code`, **strong**, [links](…) to http(s) or relative
 * URLs, bare http(s) URLs, paragraphs) is applied to the escaped text, so no description can
 * inject markup.
 *
 * @example ctx.body = renderReference(buildOpenApi(config));
 */

type Json = Record<string, any>;

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/** Escape text for HTML content and (double-quoted) attribute values. */
export function escapeHtml(s: unknown): string {
  return String(s).replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!,
  );
}
const esc = escapeHtml;

/** `1 item`, `40 items`. */
const count = (n: unknown, noun: string): string => `${esc(n)} ${noun}${Number(n) === 1 ? '' : 's'}`;

/** An id / fragment made of safe characters only. */
const anchor = (prefix: string, name: string): string => `${prefix}-${name.replace(/[^A-Za-z0-9_.-]/g, '_')}`;

/** Inline Markdown of one escaped line: **strong**, [text](url), bare URLs. */
function inline(escaped: string): string {
  return escaped
    .replace(/\*\*([^*]+)\*\*/g, '<strong>$1</strong>')
    .replace(/\[([^\]]+)\]\(([^)\s]+)\)/g, (m, text: string, url: string) =>
      /^(https?:\/\/|[^:]*$)/.test(url) ? `<a href="${url}">${text}</a>` : m,
    )
    .replace(/(^|\s)(https?:\/\/[^\s<]+?)(?=[.,;:)]?(\s|$))/g, '$1<a href="$2">$2</a>');
}

/** A description as HTML: paragraphs, `code` spans, the inline subset; everything escaped first. */
export function markdown(text: unknown): string {
  if (text === undefined || text === null || text === '') return '';
  return String(text)
    .split(/\n\s*\n/)
    .map((para) => {
      const parts = para.trim().split(/`([^`]+)`/);
      return `<p>${parts.map((p, i) => (i % 2 ? `<code>${esc(p)}</code>` : inline(esc(p)))).join('')}</p>`;
    })
    .join('\n');
}

/** The reference renderer over one document (resolves `$ref`s into it). */
class Renderer {
  readonly basePath: string;

  readonly doc: Json;
  constructor(doc: Json) {
    this.doc = doc;
    let base = '';
    try {
      base = new URL(doc.servers?.[0]?.url ?? '').pathname.replace(/\/+$/, '');
    } catch {
      // a relative or missing server URL: paths are shown as in the document
    }
    this.basePath = base;
  }

  /** The path prefix an operation's path is shown with: its own server's (an operation at the origin) or the document's. */
  pathBase(op: Json): string {
    if (!Array.isArray(op.servers) || !op.servers[0]) return this.basePath;
    try {
      return new URL(op.servers[0].url).pathname.replace(/\/+$/, '');
    } catch {
      return '';
    }
  }

  /** The value a local `$ref` points at, or undefined. */
  resolve(ref: string): Json | undefined {
    if (!ref.startsWith('#/')) return undefined;
    let node: any = this.doc;
    for (const seg of ref.slice(2).split('/')) {
      node = node?.[decodeURIComponent(seg).replace(/~1/g, '/').replace(/~0/g, '~')];
    }
    return node && typeof node === 'object' ? node : undefined;
  }

  /** A `$ref` into the schemas as a link: to the component (or its `$defs` entry) it names. */
  refLink(ref: string, depth: number): string {
    const m = /^#\/components\/schemas\/([^/]+)((?:\/.*)?)$/.exec(ref);
    if (!m) return `<code>${esc(ref)}</code>`;
    const [, name, rest] = m as unknown as [string, string, string];
    const defs = /^\/\$defs\/([^/]+)$/.exec(rest);
    if (!rest) return `<a href="#${anchor('schema', name)}">${esc(name)}</a>`;
    if (defs) return `<a href="#${anchor('schema', `${name}.${defs[1]}`)}">${esc(`${name}.${defs[1]}`)}</a>`;
    // a property of another schema: show what it is, and where it comes from
    const target = this.resolve(ref);
    const from = `<a href="#${anchor('schema', name)}">${esc(name)}</a>${esc(rest.replace(/\/properties\//g, '.').replace(/^\//, '.'))}`;
    return target && depth < 6 ? `${this.type(target, depth + 1)} <span class="from">(as ${from})</span>` : from;
  }

  /** One schema as an inline description of its type and constraints. */
  type(s: Json | undefined, depth = 0): string {
    if (!s || typeof s !== 'object') return '<span class="type">any</span>';
    if (typeof s.$ref === 'string') return this.refLink(s.$ref, depth);
    const out: string[] = [];
    if (Array.isArray(s.oneOf))
      out.push(s.oneOf.map((x: Json) => this.type(x, depth + 1)).join(' <span class="or">or</span> '));
    if (Array.isArray(s.anyOf))
      out.push(s.anyOf.map((x: Json) => this.type(x, depth + 1)).join(' <span class="or">or</span> '));
    if (Array.isArray(s.allOf))
      out.push(s.allOf.map((x: Json) => this.type(x, depth + 1)).join(' <span class="or">and</span> '));
    const types = Array.isArray(s.type) ? s.type : s.type !== undefined ? [s.type] : [];
    const typed = types.map((t: string) => {
      if (t === 'array') return `array of ${s.items ? this.type(s.items, depth + 1) : 'any'}`;
      if (t === 'object' && !s.properties && s.additionalProperties && typeof s.additionalProperties === 'object')
        return `object of ${this.type(s.additionalProperties, depth + 1)}`;
      return `<span class="type">${esc(t)}</span>`;
    });
    if (typed.length) out.push(typed.join(' <span class="or">or</span> '));
    if (s.format) out.push(`<span class="format">(${esc(s.format)})</span>`);
    if (!out.length && !('const' in s) && !s.enum) out.push('<span class="type">any</span>');
    const notes: string[] = [];
    if ('const' in s) notes.push(`always <code>${esc(JSON.stringify(s.const))}</code>`);
    if (Array.isArray(s.enum))
      notes.push(`one of ${s.enum.map((v: unknown) => `<code>${esc(JSON.stringify(v))}</code>`).join(', ')}`);
    if (s.minimum !== undefined) notes.push(`≥ ${esc(s.minimum)}`);
    if (s.exclusiveMinimum !== undefined) notes.push(`&gt; ${esc(s.exclusiveMinimum)}`);
    if (s.maximum !== undefined) notes.push(`≤ ${esc(s.maximum)}`);
    if (s.exclusiveMaximum !== undefined) notes.push(`&lt; ${esc(s.exclusiveMaximum)}`);
    if (s.multipleOf !== undefined) notes.push(`multiple of ${esc(s.multipleOf)}`);
    if (s.minLength !== undefined) notes.push(`at least ${count(s.minLength, 'character')}`);
    if (s.maxLength !== undefined) notes.push(`at most ${count(s.maxLength, 'character')}`);
    if (s.minItems !== undefined) notes.push(`at least ${count(s.minItems, 'item')}`);
    if (s.maxItems !== undefined) notes.push(`at most ${count(s.maxItems, 'item')}`);
    if (s.uniqueItems) notes.push('unique items');
    if (s.pattern !== undefined) notes.push(`pattern <code>${esc(s.pattern)}</code>`);
    if (s.default !== undefined) notes.push(`default <code>${esc(JSON.stringify(s.default))}</code>`);
    if (Array.isArray(s.examples) && s.examples.length)
      notes.push(
        `e.g. ${s.examples
          .slice(0, 3)
          .map((v: unknown) => `<code>${esc(JSON.stringify(v))}</code>`)
          .join(', ')}`,
      );
    if (s['x-enriched'] === true) notes.push('<span class="badge">enriched</span>');
    if (s.deprecated === true) notes.push('<span class="badge deprecated">deprecated</span>');
    return out.join(' ') + (notes.length ? ` <span class="notes">— ${notes.join('; ')}</span>` : '');
  }

  /** A schema's description, or that of the schema its `$ref` points at. */
  describe(s: Json | undefined): string | undefined {
    if (!s) return undefined;
    if (s.description ?? s.title) return s.description ?? s.title;
    return typeof s.$ref === 'string' ? this.resolve(s.$ref)?.description : undefined;
  }

  /** The properties of an object schema as a table (nested inline objects as nested tables). */
  properties(s: Json | undefined, depth = 0): string {
    const items = s?.type === 'array' || (Array.isArray(s?.type) && s.type.includes('array')) ? s?.items : undefined;
    const obj = items && !items.$ref && items.properties ? items : s;
    if (!obj || typeof obj.properties !== 'object' || depth > 4) return '';
    const required = new Set<string>(Array.isArray(obj.required) ? obj.required : []);
    const rows = Object.entries<Json>(obj.properties).map(
      ([name, p]) =>
        `<tr><th scope="row"><code>${esc(name)}</code>${required.has(name) ? ' <span class="required">required</span>' : ''}</th>` +
        `<td>${this.type(p)}</td><td>${markdown(this.describe(p))}${p && !p.$ref ? this.properties(p, depth + 1) : ''}</td></tr>`,
    );
    const extra = obj.additionalProperties === false ? '<p class="note">No other properties.</p>' : '';
    return `<table class="properties"><thead><tr><th scope="col">Property</th><th scope="col">Type</th><th scope="col">Description</th></tr></thead><tbody>${rows.join('')}</tbody></table>${extra}`;
  }

  /** Who may call an operation. */
  security(op: Json): string {
    const reqs: Json[] = op.security ?? this.doc.security ?? [];
    if (!reqs.length || reqs.every((r) => Object.keys(r).length === 0)) return 'None: public, no key needed.';
    return reqs
      .map((r) =>
        Object.entries<string[]>(r)
          .map(
            ([scheme, scopes]) =>
              `<a href="#${anchor('auth', scheme)}">${esc(scheme)}</a>${scopes.length ? ` (scopes ${scopes.map((x) => `<code>${esc(x)}</code>`).join(', ')})` : ''}`,
          )
          .join(' and '),
      )
      .join(' <span class="or">or</span> ');
  }

  parameters(op: Json): string {
    const params: Json[] = (op.parameters ?? []).map((p: Json) => (p.$ref ? (this.resolve(p.$ref) ?? p) : p));
    if (!params.length) return '';
    const rows = params.map(
      (p) =>
        `<tr><th scope="row"><code>${esc(p.name)}</code></th><td>${esc(p.in)}</td><td>${this.type(p.schema)}${p.style === 'form' && p.explode === false ? ' <span class="notes">(comma-separated)</span>' : ''}</td>` +
        `<td>${p.required ? 'yes' : 'no'}</td><td>${markdown(p.description)}${p.deprecated ? '<p><span class="badge deprecated">deprecated</span></p>' : ''}</td></tr>`,
    );
    return `<h4>Parameters</h4><table class="parameters"><thead><tr><th scope="col">Name</th><th scope="col">In</th><th scope="col">Type</th><th scope="col">Required</th><th scope="col">Description</th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
  }

  content(content: Json | undefined): string {
    if (!content) return '<span class="none">no body</span>';
    return Object.entries<Json>(content)
      .map(
        ([type, media]) =>
          `<div class="media"><code class="media-type">${esc(type)}</code>: ${this.type(media?.schema)}${media?.schema && !media.schema.$ref ? this.properties(media.schema, 1) : ''}</div>`,
      )
      .join('');
  }

  requestBody(op: Json): string {
    const body: Json | undefined = op.requestBody?.$ref ? this.resolve(op.requestBody.$ref) : op.requestBody;
    if (!body) return '';
    return `<h4>Request body${body.required ? ' <span class="required">required</span>' : ''}</h4>${markdown(body.description)}${this.content(body.content)}`;
  }

  /** A response header: a link to the list of response headers, or inline with its description. */
  header(name: string, h: Json): string {
    if (typeof h.$ref === 'string')
      return `<a href="#${anchor('header', h.$ref.split('/').pop()!)}"><code>${esc(name)}</code></a>`;
    const value = h.schema && 'const' in h.schema ? `: <code>${esc(h.schema.const)}</code>` : '';
    const about = h.description
      ? ` <span class="notes">(${markdown(String(h.description).replace(/\.\s*$/, '')).replace(/^<p>|<\/p>$/g, '')})</span>`
      : '';
    return `<code>${esc(name)}</code>${value}${about}`;
  }

  /** The responses as a table; headers every response carries are listed once, above it. */
  responses(op: Json): string {
    const responses = Object.entries<Json>(op.responses ?? {}).map(
      ([status, r]) => [status, r.$ref ? (this.resolve(r.$ref) ?? r) : r] as const,
    );
    const key = (name: string, h: Json): string => `${name} ${JSON.stringify(h)}`;
    const common =
      responses.length > 1
        ? new Map(Object.entries<Json>(responses[0]![1].headers ?? {}).map(([n, h]) => [key(n, h), [n, h] as const]))
        : new Map<string, readonly [string, Json]>();
    for (const [, r] of responses.slice(1)) {
      const here = new Set(Object.entries<Json>(r.headers ?? {}).map(([n, h]) => key(n, h)));
      for (const k of [...common.keys()]) if (!here.has(k)) common.delete(k);
    }
    const rows = responses.map(([status, r]) => {
      const headers = Object.entries<Json>(r.headers ?? {})
        .filter(([n, h]) => !common.has(key(n, h)))
        .map(([n, h]) => this.header(n, h))
        .join(', ');
      return (
        `<tr id="${anchor('response', `${op.operationId ?? ''}-${status}`)}"><th scope="row">${esc(status)}</th><td>${markdown(r.description)}</td>` +
        `<td>${headers}</td><td>${this.content(r.content)}</td></tr>`
      );
    });
    const every = common.size
      ? `<p class="every">Every response carries ${[...common.values()].map(([n, h]) => this.header(n, h)).join(', ')}.</p>`
      : '';
    return `<h4>Responses</h4>${every}<table class="responses"><thead><tr><th scope="col">Status</th><th scope="col">Description</th><th scope="col">Headers</th><th scope="col">Body</th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
  }

  /** One operation (of `paths`) or webhook event (of `webhooks`). */
  operation(method: string, path: string, op: Json, webhook: boolean): string {
    const id = op.operationId ? anchor('op', op.operationId) : anchor(webhook ? 'webhook' : 'op', `${method}-${path}`);
    const shown = webhook ? path : this.pathBase(op) + path;
    const dep = op['x-deprecation'] as Json | undefined;
    return (
      `<article class="operation${op.deprecated ? ' deprecated' : ''}" id="${id}" data-method="${esc(method.toUpperCase())}" data-${webhook ? 'webhook' : 'path'}="${esc(path)}"${op.operationId ? ` data-operation-id="${esc(op.operationId)}"` : ''}>\n` +
      `<h3><span class="method method-${esc(method)}">${esc(method.toUpperCase())}</span> <code class="path">${esc(shown)}</code></h3>\n` +
      (op.summary ? `<p class="summary">${esc(op.summary)}</p>\n` : '') +
      (op.deprecated
        ? `<p class="deprecation"><strong>Deprecated</strong>${dep ? ` since <time datetime="${esc(dep.deprecated_at)}">${esc(dep.deprecated_at)}</time>; stops being served at <time datetime="${esc(dep.sunset)}">${esc(dep.sunset)}</time>` : ''}.</p>\n`
        : '') +
      `<dl class="facts">${op.operationId ? `<dt>Operation id</dt><dd><code>${esc(op.operationId)}</code></dd>` : ''}` +
      `${webhook ? '<dt>Sent by</dt><dd>the service, to the URL of a webhook</dd>' : `<dt>Authentication</dt><dd>${this.security(op)}</dd>`}` +
      `${op.tags?.length ? `<dt>Tags</dt><dd>${op.tags.map((t: string) => esc(t)).join(', ')}</dd>` : ''}</dl>\n` +
      markdown(op.description) +
      this.parameters(op) +
      this.requestBody(op) +
      this.responses(op) +
      '\n</article>'
    );
  }

  /** Operations of `paths` grouped by their first tag, in the document's tag order. */
  groups(): { tag: string; description: string; ops: { method: string; path: string; op: Json }[] }[] {
    const groups = new Map<string, { method: string; path: string; op: Json }[]>();
    for (const t of this.doc.tags ?? []) groups.set(t.name, []);
    for (const [path, item] of Object.entries<Json>(this.doc.paths ?? {})) {
      for (const method of METHODS) {
        const op = item[method];
        if (!op) continue;
        const tag = op.tags?.[0] ?? 'Other';
        if (!groups.has(tag)) groups.set(tag, []);
        groups.get(tag)!.push({ method, path, op });
      }
    }
    const described = new Map<string, string>((this.doc.tags ?? []).map((t: Json) => [t.name, t.description ?? '']));
    return [...groups]
      .filter(([, ops]) => ops.length)
      .map(([tag, ops]) => ({ tag, description: described.get(tag) ?? '', ops }));
  }

  webhooks(): { name: string; method: string; op: Json }[] {
    return Object.entries<Json>(this.doc.webhooks ?? {}).flatMap(([name, item]) =>
      METHODS.filter((m) => item[m]).map((method) => ({ name, method, op: item[method] })),
    );
  }

  serviceTerms(): string {
    const t = this.doc.info?.['x-service-terms'] as Json | undefined;
    if (!t) return '';
    const deprecated = this.groups().flatMap((g) => g.ops.filter((o) => o.op.deprecated));
    const list = deprecated.length
      ? `<ul>${deprecated.map((o) => `<li><a href="#${anchor('op', o.op.operationId ?? `${o.method}-${o.path}`)}">${esc(o.method.toUpperCase())} ${esc(this.pathBase(o.op) + o.path)}</a>${o.op['x-deprecation'] ? `: sunset ${esc(o.op['x-deprecation'].sunset)}` : ''}</li>`).join('')}</ul>`
      : '<p>No operation is deprecated.</p>';
    return (
      '<section id="service-terms"><h2>Service terms</h2><dl class="facts">' +
      `<dt>Availability target</dt><dd>${esc(t.availability_target_percent)}%${t.availability_period ? ` per ${esc(t.availability_period)}` : ''}</dd>` +
      `<dt>Deprecation notice</dt><dd>at least ${esc(t.deprecation_notice_days)} days between an operation's deprecation and its sunset</dd>` +
      (Array.isArray(t.deprecation_signals)
        ? `<dt>How a deprecation is announced</dt><dd><ul>${t.deprecation_signals.map((x: string) => `<li>${markdown(x).replace(/^<p>|<\/p>$/g, '')}</li>`).join('')}</ul></dd>`
        : '') +
      `</dl><h3>Deprecated operations</h3>${list}</section>`
    );
  }

  overview(): string {
    const info: Json = this.doc.info ?? {};
    const servers = (this.doc.servers ?? [])
      .map((s: Json) => `<li><code>${esc(s.url)}</code>${s.description ? ` — ${esc(s.description)}` : ''}</li>`)
      .join('');
    const schemes = Object.entries<Json>(this.doc.components?.securitySchemes ?? {})
      .map(
        ([name, s]) =>
          `<dt id="${anchor('auth', name)}"><code>${esc(name)}</code></dt><dd>${esc(s.type)}${s.scheme ? ` ${esc(s.scheme)}` : ''}${s.in ? ` in ${esc(s.in)} <code>${esc(s.name)}</code>` : ''}${markdown(s.description)}</dd>`,
      )
      .join('');
    const headers = Object.entries<Json>(this.doc.components?.headers ?? {})
      .map(
        ([name, h]) =>
          `<dt id="${anchor('header', name)}"><code>${esc(name)}</code></dt><dd>${this.type(h.schema)}${markdown(h.description)}</dd>`,
      )
      .join('');
    return (
      `<section id="overview"><h2>Overview</h2>${markdown(info.description)}` +
      (servers ? `<h3>Servers</h3><ul>${servers}</ul><p>Paths below include the server's path.</p>` : '') +
      (schemes ? `<h3>Authentication</h3><dl class="schemes">${schemes}</dl>` : '') +
      `</section>${this.serviceTerms()}` +
      (headers
        ? `<section id="headers"><h2>Response headers</h2><dl class="header-list">${headers}</dl></section>`
        : '')
    );
  }

  schemas(): string {
    const out: string[] = [];
    const one = (id: string, title: string, s: Json): string =>
      `<article class="schema" id="${anchor('schema', id)}"><h3><code>${esc(title)}</code></h3>${s.title && s.title !== title ? `<p class="summary">${esc(s.title)}</p>` : ''}${markdown(s.description)}<p>${this.type(s)}</p>${this.properties(s)}</article>`;
    for (const [name, s] of Object.entries<Json>(this.doc.components?.schemas ?? {})) {
      out.push(one(name, name, s));
      for (const [def, d] of Object.entries<Json>(s.$defs ?? {})) out.push(one(`${name}.${def}`, `${name}.${def}`, d));
    }
    return out.length ? `<section id="schemas"><h2>Schemas</h2>${out.join('\n')}</section>` : '';
  }

  nav(): string {
    const groups = this.groups()
      .map(
        (g) =>
          `<li><a href="#${anchor('tag', g.tag)}">${esc(g.tag)}</a><ul>${g.ops
            .map(
              (o) =>
                `<li><a href="#${o.op.operationId ? anchor('op', o.op.operationId) : anchor('op', `${o.method}-${o.path}`)}"><span class="method method-${esc(o.method)}">${esc(o.method.toUpperCase())}</span> ${esc(this.pathBase(o.op) + o.path)}</a></li>`,
            )
            .join('')}</ul></li>`,
      )
      .join('');
    const hooks = this.webhooks().length ? '<li><a href="#webhooks">Webhook events</a></li>' : '';
    return `<nav aria-label="Contents"><h2>Contents</h2><ul><li><a href="#overview">Overview</a></li><li><a href="#service-terms">Service terms</a></li>${groups}${hooks}<li><a href="#schemas">Schemas</a></li></ul></nav>`;
  }

  page(): string {
    const info: Json = this.doc.info ?? {};
    const title = `${info.title ?? 'API'} ${info.version ?? ''}`.trim();
    const sections = this.groups()
      .map(
        (g) =>
          `<section id="${anchor('tag', g.tag)}"><h2>${esc(g.tag)}</h2>${markdown(g.description)}${g.ops.map((o) => this.operation(o.method, o.path, o.op, false)).join('\n')}</section>`,
      )
      .join('\n');
    const hooks = this.webhooks();
    const webhooks = hooks.length
      ? `<section id="webhooks"><h2>Webhook events</h2><p>Requests the service sends to the URL of a webhook.</p>${hooks.map((h) => this.operation(h.method, h.name, h.op, true)).join('\n')}</section>`
      : '';
    return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>${esc(title)} — read-only reference</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="docs/assets/reference.css">
<link rel="icon" type="image/png" href="docs/assets/favicon-32x32.png" sizes="32x32">
</head>
<body>
<header><h1>${esc(info.title ?? 'API')} <span class="version">${esc(info.version ?? '')}</span></h1>
<p>Read-only reference of OpenAPI ${esc(this.doc.openapi ?? '')} document <a href="openapi.json">openapi.json</a>, rendered by the server. Interactive reference (JavaScript): <a href="docs">docs</a>.</p></header>
${this.nav()}
<main>
${this.overview()}
${sections}
${webhooks}
${this.schemas()}
</main>
</body>
</html>
`;
  }
}

/**
 * The whole reference page for an OpenAPI 3.x document. Links are relative to the page
 * (`openapi.json`, `docs`, `docs/assets/reference.css`), so it is served as `/v1/reference`.
 */
export function renderReference(doc: Json): string {
  return new Renderer(doc).page();
}
