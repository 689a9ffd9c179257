/**
 * A Postman collection (format v2.1) generated from the API's OpenAPI document: one folder per
 * tag, one request per operation, the key as the collection variable `apiKey` (bearer auth on
 * the collection; public operations say `noauth`), the base URL as `baseUrl`, every query
 * parameter listed (disabled unless required, with its documentation) and every path parameter a
 * `:name` variable.
 *
 *   node --import tsx clients/postman/generate-collection.ts [openapi.json or URL]   # `make clients`
 *
 * writes clients/postman/leads.postman_collection.json (git-ignored: generated, never edited).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

type Json = Record<string, any>;

export const COLLECTION_FILE = join(dirname(fileURLToPath(import.meta.url)), 'leads.postman_collection.json');
const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

/** An example value of a parameter, as text (its first example, else empty). */
function exampleOf(p: Json): string {
  const ex = p.example ?? p.schema?.examples?.[0] ?? p.examples?.[Object.keys(p.examples ?? {})[0] ?? '']?.value;
  if (ex === undefined) return '';
  return Array.isArray(ex) ? ex.join(',') : String(ex);
}

/** One request item of the operation `method path`. */
function itemOf(doc: Json, path: string, method: string, op: Json): Json {
  const params: Json[] = [...(doc.paths[path].parameters ?? []), ...(op.parameters ?? [])];
  const query = params.filter((p) => p.in === 'query' && p.name !== 'access_token').map((p) => ({ key: p.name, value: exampleOf(p), disabled: !p.required, description: p.description ?? '' }));
  const header = params.filter((p) => p.in === 'header').map((p) => ({ key: p.name, value: exampleOf(p), disabled: !p.required, description: p.description ?? '' }));
  const origin = op.servers?.[0]?.url !== undefined; // operations served outside /v1 (health, metrics)
  const segments = path.split('/').filter(Boolean).map((s) => s.replace(/^\{(.+)\}$/, ':$1').replace(/\{(.+?)\}/g, ':$1'));
  const host = origin ? '{{origin}}' : '{{baseUrl}}';
  const enabled = query.filter((q) => !q.disabled);
  const raw = `${host}/${segments.join('/')}${enabled.length ? '?' + enabled.map((q) => `${q.key}=${q.value}`).join('&') : ''}`;
  const bodySchema = op.requestBody?.content?.['application/json']?.schema;
  const body = bodySchema
    ? { mode: 'raw', raw: JSON.stringify(exampleBody(doc, bodySchema), null, 2), options: { raw: { language: 'json' } } }
    : undefined;
  const isPublic = Array.isArray(op.security) && op.security.length === 0;
  return {
    name: op.summary ?? `${method.toUpperCase()} ${path}`,
    request: {
      method: method.toUpperCase(),
      ...(isPublic ? { auth: { type: 'noauth' } } : {}),
      header: body ? [...header, { key: 'Content-Type', value: 'application/json' }] : header,
      url: {
        raw,
        host: [host],
        path: segments,
        query,
        variable: params.filter((p) => p.in === 'path').map((p) => ({ key: p.name, value: exampleOf(p), description: p.description ?? '' })),
      },
      ...(body ? { body } : {}),
      description: `${op.description ?? ''}\n\nOpenAPI: \`${op.operationId ?? ''}\` (${method.toUpperCase()} ${path}).`.trim(),
    },
  };
}

/** A body made of each required property's first example or a placeholder of its type. */
function exampleBody(doc: Json, schema: Json): unknown {
  const s = schema.$ref ? schema.$ref.split('/').slice(1).reduce((o: Json, k: string) => o[k], doc) : schema;
  if (s.examples?.[0] !== undefined) return s.examples[0];
  if (s.type !== 'object') return s.type === 'integer' || s.type === 'number' ? 0 : s.type === 'boolean' ? false : '';
  return Object.fromEntries(Object.entries<Json>(s.properties ?? {}).filter(([k]) => (s.required ?? []).includes(k)).map(([k, v]) => [k, exampleBody(doc, v)]));
}

/** The collection of `doc` (an OpenAPI 3.1 document as served at /v1/openapi.json). */
export function collectionOf(doc: Json): Json {
  const folders = new Map<string, Json[]>();
  for (const t of doc.tags ?? []) folders.set(t.name, []);
  for (const [path, item] of Object.entries<Json>(doc.paths)) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      const tag = op.tags?.[0] ?? 'Other';
      if (!folders.has(tag)) folders.set(tag, []);
      folders.get(tag)!.push(itemOf(doc, path, method, op));
    }
  }
  const baseUrl: string = doc.servers?.[0]?.url ?? '';
  return {
    info: {
      name: doc.info.title,
      description: `${doc.info.description ?? ''}\n\nSet the collection variable \`apiKey\` to your key; \`baseUrl\` is the API with /v1.`.trim(),
      version: doc.info.version,
      schema: 'https://schema.getpostman.com/json/collection/v2.1.0/collection.json',
    },
    auth: { type: 'bearer', bearer: [{ key: 'token', value: '{{apiKey}}', type: 'string' }] },
    variable: [
      { key: 'baseUrl', value: baseUrl, type: 'string' },
      { key: 'origin', value: baseUrl.replace(/\/v1\/?$/, ''), type: 'string' },
      { key: 'apiKey', value: '', type: 'string' },
    ],
    item: [...folders].filter(([, items]) => items.length).map(([name, items]) => ({ name, description: doc.tags?.find((t: Json) => t.name === name)?.description ?? '', item: items })),
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const src = process.argv[2];
  let doc: Json;
  if (src && /^https?:\/\//.test(src)) doc = (await (await fetch(src)).json()) as Json;
  else if (src) doc = JSON.parse(readFileSync(src, 'utf8')) as Json;
  else {
    const { loadApiConfig } = await import('../../api/config.ts');
    const { buildOpenApi } = await import('../../api/openapi/document.ts');
    doc = buildOpenApi(loadApiConfig({}, {}), {});
  }
  writeFileSync(COLLECTION_FILE, JSON.stringify(collectionOf(doc), null, 2) + '\n');
  console.log(`wrote ${COLLECTION_FILE}`);
}
