/**
 * The OpenAPI document: generated from schemas/, valid OpenAPI 3.1 (checked by an independent
 * validator), served at /v1/openapi.json. Its operations are the declarations the app mounts
 * (api/routes/operation.ts): a route without one cannot be mounted (test/api/routes/operation.test.ts),
 * so what is left to check here is that the app mounts every one of them.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readdirSync } from 'node:fs';
import { validate, compileErrors } from '@readme/openapi-parser';
import type Koa from 'koa';
import type Router from '@koa/router';
import { buildOpenApi, componentName, endpoints, queryParameters, rewriteRefs } from '../../../api/openapi/document.ts';
import { createApp } from '../../../api/app.ts';
import { loadApiConfig } from '../../../api/config.ts';
import { startTestApi, assertProblem, type TestApi } from '../../helpers/api.ts';
import { validateResponse } from '../../helpers/openapi.ts';
import { documentedOperation } from '../../helpers/api.ts';
import { REPO_ROOT } from '../../helpers/tmp.ts';
import { leadsQuerySchema } from '../../../api/query/leads-params.ts';
import { derefProp, noQuerySchema } from '../../../api/query/parse-query.ts';
import { USAGE_QUERY_SCHEMA } from '../../../api/query/usage-query.ts';
import { DELIVERIES_QUERY_SCHEMA } from '../../../api/webhooks/service.ts';
import { DRY_RUN_SCHEMA } from '../../../api/access/enforce.ts';
import { exportQuerySchema } from '../../../api/query/export-query.ts';
import { gisOtherQuerySchema, gisQuerySchema } from '../../../api/query/feeds-query.ts';
import { FILTER_KEYS, infrastructureQuerySchema } from '../../../api/query/infrastructure-query.ts';
import { intelQuerySchema } from '../../../api/query/intel-query.ts';

const config = loadApiConfig({}, { publicBaseUrl: 'https://api.example.ie/v1' });
const doc = buildOpenApi(config);

test('passes an OpenAPI 3.1 validator', async () => {
  const result = await validate(structuredClone(doc) as never);
  assert.ok(result.valid, result.valid ? '' : compileErrors(result));
  assert.is(doc.openapi, '3.1.0');
  // …and the validator does reject a broken copy (a dangling header $ref, a parameter without `in`).
  const broken = structuredClone(doc);
  broken.paths['/meta'].get.parameters = [{ name: 'x' }];
  broken.paths['/meta'].get.responses['200'].headers['ETag'] = { $ref: '#/components/headers/Nope' };
  assert.not.ok((await validate(broken as never)).valid);
});

test('components are the record schemas of schemas/, refs rewritten into the document', () => {
  const files = readdirSync(`${REPO_ROOT}schemas`).filter(
    (f) => f.endsWith('.schema.json') && !f.endsWith('-query.schema.json'),
  );
  for (const f of files) assert.ok(doc.components.schemas[componentName(f)], `component for ${f}`);
  const text = JSON.stringify(doc);
  assert.not.match(text, /"\$ref":"(?!#\/components\/)/, 'every $ref points into the document');
  assert.not.match(text, /schemas\.leads\.ie\/v1\/[a-z-]+\.schema\.json/, 'no $id left in the components');
  assert.is(doc.components.schemas.InfrastructureProject.properties.applicant['x-enriched'], true);
  assert.equal(rewriteRefs({ $ref: 'lead.schema.json#/properties/id' }, 'lead-detail.schema.json'), {
    $ref: '#/components/schemas/Lead/properties/id',
  });
  assert.equal(rewriteRefs({ $ref: '#/$defs/project' }, 'lead-detail.schema.json'), {
    $ref: '#/components/schemas/LeadDetail/$defs/project',
  });
});

test('parameters come from the query schemas, with enums; problems and headers on every operation', () => {
  const params = (path: string) => new Map<string, any>(doc.paths[path].get.parameters.map((p: any) => [p.name, p]));
  const infra = params('/infrastructure');
  for (const name of [...FILTER_KEYS, 'sort', 'page', 'page_size', 'cursor']) {
    assert.ok(infra.has(name), `/infrastructure documents ${name}`);
  }
  assert.equal(infra.get('vertical').style, 'form');
  assert.equal(infra.get('vertical').explode, false);
  assert.equal(infra.get('vertical').schema.items, {
    $ref: '#/components/schemas/InfrastructureProject/properties/vertical',
  });
  assert.equal(params('/infrastructure/renewables').get('vertical').schema.items.enum, [
    'wind',
    'solar',
    'battery_storage',
  ]);
  assert.ok(params('/leads').has('q'));
  assert.ok(params('/leads/{id}').has('id'));
  for (const [path, item] of Object.entries<any>(doc.paths)) {
    for (const [method, op] of Object.entries<any>(item)) {
      const ok = op.responses['200'] ?? op.responses['201'] ?? op.responses['204'];
      assert.ok(ok.headers['X-Request-Id'], `${method} ${path}: X-Request-Id on success`);
      for (const s of ['405', '500', '503']) {
        assert.equal(
          op.responses[s].content['application/problem+json'].schema,
          { $ref: '#/components/schemas/Problem' },
          `${method} ${path} ${s}`,
        );
      }
      if (op.security) continue; // public reference paths
      assert.ok(op.responses['401'].headers['WWW-Authenticate'], `${method} ${path}: WWW-Authenticate on 401`);
      assert.ok(op.responses['403'], `${method} ${path}: 403`);
      // account state (the ledger, webhooks) is never answered from an ETag
      if (method !== 'get' || path.startsWith('/webhooks') || path === '/account/usage') continue;
      assert.ok(ok.headers['ETag'], `${path}: ETag`);
      assert.ok(op.responses['304'], `${path}: 304`);
    }
  }
  assert.equal(doc.components.securitySchemes.bearer, {
    ...doc.components.securitySchemes.bearer,
    type: 'http',
    scheme: 'bearer',
  });
});

test('every parsed query is documented by the schema its parser uses: the same parameters in the same order, the same types and bounds', () => {
  const parsed: [string, Record<string, any>, ('get' | 'post' | 'patch' | 'delete')?][] = [
    ['/leads', leadsQuerySchema()],
    ['/infrastructure', infrastructureQuerySchema(false)],
    ['/infrastructure/renewables', infrastructureQuerySchema(true)],
    ['/intel/analytics', intelQuerySchema()],
    ['/intel/analytics/price-index.svg', intelQuerySchema(true)],
    ['/export/applications', exportQuerySchema('page')],
    ...(['csv', 'jsonl', 'parquet'] as const).map((ext): [string, Record<string, any>] => [
      `/export/applications.${ext}`,
      exportQuerySchema('file'),
    ]),
    ['/feeds/leads.geojson', gisQuerySchema('feed', 'leads')],
    ['/feeds/infrastructure.geojson', gisQuerySchema('feed', 'infrastructure')],
    ['/ogc/collections/{collectionId}/items', gisQuerySchema('ogc')],
    ['/feeds/token', gisOtherQuerySchema('token')],
    ...[
      '/ogc',
      '/ogc/conformance',
      '/ogc/collections',
      '/ogc/collections/{collectionId}',
      '/ogc/collections/{collectionId}/items/{featureId}',
    ].map((p): [string, Record<string, any>] => [p, gisOtherQuerySchema('ogc-meta')]),
    ['/account/usage', USAGE_QUERY_SCHEMA],
    ['/webhooks/{id}/deliveries', DELIVERIES_QUERY_SCHEMA],
    // the endpoints that take no parameters (no-query.schema.json)
    ...(['/meta', '/webhooks', '/webhooks/{id}'] as const).map((p): [string, Record<string, any>] => [
      p,
      noQuerySchema(),
    ]),
    ...(
      [
        '/webhooks',
        '/webhooks/{id}/disable',
        '/webhooks/{id}/enable',
        '/webhooks/{id}/rotate-secret',
        '/webhooks/{id}/test',
        '/webhooks/{id}/replay',
      ] as const
    ).map((p): [string, Record<string, any>, 'post'] => [p, noQuerySchema(), 'post']),
    ['/webhooks/{id}', noQuerySchema(), 'patch'],
    ['/webhooks/{id}', noQuerySchema(), 'delete'],
  ];
  for (const [path, schema, method = 'get'] of parsed) {
    const query = (doc.paths[path][method].parameters ?? []).filter(
      (p: any) => p.in === 'query' && p.name !== 'dry_run',
    );
    assert.equal(
      query.map((p: any) => p.name),
      Object.keys(schema.properties),
      path,
    );
    for (const p of query) {
      const prop = schema.properties[p.name].$ref ? derefProp(schema.properties[p.name]) : schema.properties[p.name];
      for (const k of ['type', 'minimum', 'maximum', 'minItems', 'maxLength', 'format', 'pattern', 'enum', 'default'])
        assert.equal(p.schema[k], prop[k], `${path} ${p.name} ${k}`);
      assert.is(p.style === 'form' && p.explode === false, prop.type === 'array', `${path} ${p.name}: comma list`);
    }
  }
  assert.not.match(JSON.stringify(doc), /x-pattern-reason/, "the parser's own annotations stay out of the document");
});

test('dry_run on every keyed operation is the parameter of the schema the access middleware parses', () => {
  const [dryRun, ...none] = queryParameters(DRY_RUN_SCHEMA, 'dry-run-query.schema.json');
  assert.equal(none, []);
  let keyed = 0;
  for (const [path, item] of Object.entries<any>(doc.paths)) {
    for (const [method, op] of Object.entries<any>(item)) {
      const found = (op.parameters ?? []).filter((p: any) => p.name === 'dry_run');
      assert.equal(found, op.security ? [] : [dryRun], `${method} ${path}`);
      if (!op.security) keyed++;
    }
  }
  assert.ok(keyed > 30, `${keyed} keyed operations`);
});

/** Every (METHOD, path template) the app routes, read from the routers createApp mounts. */
function appRoutes(app: Koa<any>): string[] {
  const out = new Set<string>();
  for (const mw of app.middleware) {
    const router = (mw as { router?: Router }).router;
    if (!router) continue;
    for (const layer of router.stack) {
      for (const m of layer.methods) {
        if (m === 'HEAD') continue;
        const path =
          String(layer.path)
            .replace(/^\/v1/, '')
            .replace(/:([A-Za-z_]+)/g, '{$1}') || '/'; // GET /v1: the document's `/`
        out.add(`${m} ${path}`);
      }
    }
  }
  return [...out].sort();
}

let api: TestApi;
test.before(async () => {
  api = await startTestApi();
});
test.after(async () => {
  await api?.close();
});

test('the app mounts every documented operation, and nothing else', () => {
  // (the account area reads `store.app` when the app is built: a store with no account-area state is enough here)
  const app = createApp(api.config, {
    db: null as never,
    releases: null as never,
    store: { app: null } as never,
    clock: () => new Date(),
    log: () => {},
  });
  const routed = appRoutes(app);
  assert.ok(routed.length >= 6, `found the routes (${routed.join(', ')})`);
  const documented = Object.entries<any>(doc.paths)
    .flatMap(([path, item]) => Object.keys(item).map((m) => `${m.toUpperCase()} ${path}`))
    .sort();
  assert.equal(routed, documented);
  assert.equal(
    documented,
    endpoints()
      .map((e) => `${e.method.toUpperCase()} ${e.path}`)
      .sort(),
  );
});

test('GET /v1/openapi.json serves the document without a key; other methods are 405', async () => {
  const res = await api.request('/v1/openapi.json', { key: null });
  assert.is(res.status, 200);
  assert.match(res.headers.get('content-type')!, /^application\/json/);
  assert.ok(res.headers.get('x-request-id'));
  assert.equal(res.body, buildOpenApi(api.config));
  assert.equal(validateResponse(res.body, 'get', '/openapi.json', 200, res.body), []);
  const post = await api.request('/v1/openapi.json', { method: 'POST', key: null });
  assertProblem(post, 405, 'method_not_allowed');
  assert.match(post.headers.get('allow')!, /GET/);
  assert.equal(validateResponse(res.body, 'get', '/openapi.json', 405, post.body), []);
});

test('validateResponse catches bodies that break the document', () => {
  assert.equal(validateResponse(doc, 'get', '/nowhere', 200, {}), ['GET /nowhere is not in the OpenAPI document']);
  assert.equal(validateResponse(doc, 'get', '/infrastructure', 418, {}), [
    'status 418 is not documented for GET /infrastructure',
  ]);
  const errs = validateResponse(doc, 'get', '/infrastructure', 200, {
    total: -1,
    page: 1,
    page_size: 25,
    next_cursor: null,
    results: [],
    _meta: { release: 'r', scope: 'ent_api', masked: [] },
    extra: 1,
  });
  assert.ok(
    errs.some((e) => e.includes('>= 0')),
    errs.join('; '),
  );
  assert.ok(
    errs.some((e) => e.includes("'extra'")),
    errs.join('; '),
  );
  assert.equal(validateResponse(doc, 'get', '/infrastructure', 304, null), []);
});

test('GET /v1/docs and its assets are public; unknown assets are 404 problems', async () => {
  const page = await api.request('/v1/docs', { key: null });
  assert.is(page.status, 200);
  assert.match(page.headers.get('content-type')!, /^text\/html/);
  assert.match(page.text, /docs\/assets\/swagger-ui-bundle\.js/);
  assert.not.match(page.text, /https?:\/\/(?!www\.w3\.org)/, 'no CDN or other remote URL in the page');
  for (const f of ['swagger-ui-bundle.js', 'swagger-ui.css', 'init.js']) {
    const a = await api.request(`/v1/docs/assets/${f}`, { key: null });
    assert.is(a.status, 200, f);
    assert.ok(a.text.length > 10, f);
  }
  const missing = await api.request('/v1/docs/assets/..%2Fpackage.json', { key: null });
  assertProblem(missing, 404, 'not_found');
  assert.equal(validateResponse(doc, 'get', '/docs/assets/{file}', 404, missing.body), []);
});

test('the test helper maps request paths to documented operations, so every HTTP test validates its bodies', () => {
  assert.equal(documentedOperation(doc, 'GET', '/v1/leads/12?x=1'), { template: '/leads/{id}', method: 'get' });
  assert.equal(documentedOperation(doc, 'GET', '/v1/leads?county=Cork'), { template: '/leads', method: 'get' });
  assert.equal(documentedOperation(doc, 'POST', '/v1/leads'), null, 'undocumented method');
  assert.equal(documentedOperation(doc, 'GET', '/meta'), null, 'outside /v1');
  assert.equal(documentedOperation(doc, 'GET', '/v1/nope'), null, 'unknown path');
});

test.run();
