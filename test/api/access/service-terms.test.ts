/**
 * The service terms (spec 8, 9.3) are published — OpenAPI `info`, /v1/reference, docs/api.md —
 * and deprecation has a mechanism: one declaration per operation from which both the OpenAPI
 * `deprecated: true` and the `Deprecation` (RFC 9745) / `Sunset` (RFC 8594) / `Link` headers
 * derive, held to the 90-day notice. Tested over real HTTP on a fixture table injected into the
 * server; with the project's own (empty) table no response carries the headers.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import http from 'node:http';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { validate, compileErrors } from '@readme/openapi-parser';
import { createApp } from '../../../api/app.ts';
import { loadApiConfig } from '../../../api/config.ts';
import { buildOpenApi, endpoints } from '../../../api/openapi/document.ts';
import { deprecationMiddleware } from '../../../api/middleware/deprecation.ts';
import {
  DEPRECATIONS,
  SERVICE_TERMS,
  checkDeprecations,
  deprecationHeaders,
  type DeprecationTable,
} from '../../../api/access/service-terms.ts';
import { startTestApi, assertProblem, type TestApi } from '../../helpers/api.ts';
import { REPO_ROOT } from '../../helpers/tmp.ts';

/** The fixture: GET /v1/meta deprecated on 1 Feb 2027, sunset 3 May 2027 (91 days later). */
const FIXTURE: DeprecationTable = {
  'GET /meta': { deprecated_at: '2027-02-01', sunset: '2027-05-03', link: 'https://docs.example.ie/v1/meta-migration' },
};
const HEADERS = {
  deprecation: `@${Date.UTC(2027, 1, 1) / 1000}`,
  sunset: 'Mon, 03 May 2027 00:00:00 GMT',
  link: '<https://docs.example.ie/v1/meta-migration>; rel="deprecation"; type="text/html"',
};
const OPERATIONS = endpoints().map((e) => `${e.method.toUpperCase()} ${e.path}`);

test("the terms are the spec's: 99.5% availability, 90 days' deprecation notice", () => {
  assert.is(SERVICE_TERMS.availabilityTargetPercent, 99.5);
  assert.is(SERVICE_TERMS.deprecationNoticeDays, 90);
});

test('a deprecation must give at least 90 days, name an operation, and link to an http(s) note', () => {
  const d = (deprecated_at: string, sunset: string, link = 'https://docs.example.ie/x'): DeprecationTable => ({
    'GET /meta': { deprecated_at, sunset, link },
  });
  checkDeprecations(d('2027-02-01', '2027-05-02'), OPERATIONS); // exactly 90 days
  checkDeprecations(d('2027-02-01T12:00:00Z', '2027-05-02T12:00:00+00:00'), OPERATIONS);
  assert.throws(
    () => checkDeprecations(d('2027-02-01', '2027-05-01'), OPERATIONS),
    /89 days after the deprecation; the service terms promise at least 90/,
  );
  assert.throws(() => checkDeprecations(d('2027-02-01T12:00:00Z', '2027-05-02T11:59:59Z'), OPERATIONS), /at least 90/);
  assert.throws(() => checkDeprecations(d('2027-05-02', '2027-02-01'), OPERATIONS), /at least 90/);
  assert.throws(
    () => checkDeprecations(d('1 Feb 2027', '2027-06-01'), OPERATIONS),
    /deprecated_at "1 Feb 2027" is not an ISO 8601 date/,
  );
  assert.throws(
    () => checkDeprecations(d('2027-02-01', '2027-02-30T00:00'), OPERATIONS),
    /sunset .* is not an ISO 8601 date/,
  );
  assert.throws(
    () => checkDeprecations(d('2027-02-01', '2027-06-01', 'javascript:alert(1)'), OPERATIONS),
    /must be an absolute http\(s\) URL/,
  );
  assert.throws(
    () => checkDeprecations(d('2027-02-01', '2027-06-01', '/docs/x'), OPERATIONS),
    /must be an absolute http\(s\) URL/,
  );
  assert.throws(
    () => checkDeprecations(d('2027-02-01', '2027-06-01', 'https://x.ie/a>; rel="next"'), OPERATIONS),
    /must be an absolute http\(s\) URL/,
  );
  assert.throws(
    () => checkDeprecations({ 'GET /nope': FIXTURE['GET /meta']! }, OPERATIONS),
    /GET \/nope: no such operation/,
  );
  assert.throws(() => checkDeprecations({ '/meta': FIXTURE['GET /meta']! }, OPERATIONS), /no such operation/);
  checkDeprecations(DEPRECATIONS, OPERATIONS);
});

test('one declaration, two consumers: the headers and the OpenAPI flag come from the same entry', async () => {
  assert.equal(deprecationHeaders(FIXTURE['GET /meta']!), {
    Deprecation: HEADERS.deprecation,
    Sunset: HEADERS.sunset,
    Link: HEADERS.link,
  });
  assert.match(
    HEADERS.sunset,
    /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d{2}:\d{2}:\d{2} GMT$/,
    'IMF-fixdate',
  );
  const doc = buildOpenApi({ publicBaseUrl: 'https://api.example.ie/v1' }, { deprecations: FIXTURE });
  const op = doc.paths['/meta'].get;
  assert.is(op.deprecated, true);
  assert.equal(op['x-deprecation'], FIXTURE['GET /meta']);
  for (const [status, res] of Object.entries<any>(op.responses)) {
    assert.is(res.headers.Deprecation.schema.const, HEADERS.deprecation, `${status}: Deprecation documented`);
    assert.is(res.headers.Sunset.schema.const, HEADERS.sunset, `${status}: Sunset documented`);
    assert.ok(res.headers.Link, `${status}: Link documented`);
  }
  const others = Object.entries<any>(doc.paths).flatMap(([p, item]) =>
    Object.entries<any>(item)
      .filter(([, o]) => o.deprecated)
      .map(([m]) => `${m} ${p}`),
  );
  assert.equal(others, ['get /meta']);
  const result = await validate(structuredClone(doc) as never);
  assert.ok(result.valid, result.valid ? '' : compileErrors(result));
  // a table that breaks the terms stops the app before it serves anything
  const config = loadApiConfig({}, { publicBaseUrl: 'https://api.example.ie/v1' });
  const deps = {
    db: null as never,
    releases: null as never,
    store: null as never,
    clock: () => new Date(),
    log: () => {},
  };
  assert.throws(
    () =>
      createApp(config, { ...deps, deprecations: { 'GET /meta': { ...FIXTURE['GET /meta']!, sunset: '2027-03-01' } } }),
    /promise at least 90/,
  );
  assert.throws(
    () => buildOpenApi(config, { deprecations: { 'POST /meta': FIXTURE['GET /meta']! } }),
    /no such operation/,
  );
});

test('a route that sets its own Link keeps it, and the deprecation link is added to it', async () => {
  const app = new Koa();
  app.use(deprecationMiddleware(FIXTURE, (method, path) => `${method} ${path}`));
  app.use((ctx) => {
    ctx.set('Link', '<https://api.example.ie/v1/meta?page=2>; rel="next"');
    ctx.body = { ok: true };
  });
  const server = http.createServer(app.callback()).listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  try {
    const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/meta`);
    assert.is(res.headers.get('link'), `<https://api.example.ie/v1/meta?page=2>; rel="next", ${HEADERS.link}`);
    assert.is(res.headers.get('deprecation'), HEADERS.deprecation);
  } finally {
    server.close();
  }
});

let fixture: TestApi;
let plain: TestApi;
test.before(async () => {
  fixture = await startTestApi({ deprecations: FIXTURE });
  plain = await startTestApi();
});
test.after(async () => {
  await fixture?.close();
  await plain?.close();
});

/** The deprecation headers of a response; `link` is the deprecation relation alone (paged answers also carry rel="next"). */
const carries = (res: {
  headers: Headers;
}): { deprecation: string | null; sunset: string | null; link: string | null } => ({
  deprecation: res.headers.get('deprecation'),
  sunset: res.headers.get('sunset'),
  link: (res.headers.get('link') ?? '').split(/,\s*(?=<)/).find((l) => /rel="deprecation"/.test(l)) ?? null,
});

test('over HTTP: every response of the deprecated fixture operation carries Deprecation, Sunset and Link; no other does', async () => {
  const ok = await fixture.request('/v1/meta');
  assert.is(ok.status, 200);
  assert.equal(carries(ok), HEADERS);
  const head = await fixture.request('/v1/meta', { method: 'HEAD' });
  assert.is(head.status, 200);
  assert.equal(carries(head), HEADERS);
  const notModified = await fixture.request('/v1/meta', { headers: { 'If-None-Match': ok.headers.get('etag')! } });
  assert.is(notModified.status, 304);
  assert.equal(carries(notModified), HEADERS);
  const noKey = await fixture.request('/v1/meta', { key: null });
  assertProblem(noKey, 401, 'missing_key');
  assert.equal(carries(noKey), HEADERS, 'errors too');
  const badParam = await fixture.request('/v1/meta?x=1');
  assertProblem(badParam, 400, 'unknown_parameter');
  assert.equal(carries(badParam), HEADERS);
  for (const path of ['/v1/leads', '/v1/infrastructure', '/v1/meta/nope', '/v1/openapi.json']) {
    const other = await fixture.request(path, { key: path === '/v1/openapi.json' ? null : undefined });
    assert.equal(carries(other), { deprecation: null, sunset: null, link: null }, path);
  }
  assert.equal(
    carries(await fixture.request('/v1/meta', { method: 'POST' })),
    { deprecation: null, sunset: null, link: null },
    'POST /v1/meta is no operation',
  );

  const doc = (await fixture.request('/v1/openapi.json', { key: null })).body;
  assert.is(doc.paths['/meta'].get.deprecated, true);
  assert.equal(doc.paths['/meta'].get['x-deprecation'], FIXTURE['GET /meta']);
  assert.is(doc.paths['/leads'].get.deprecated, undefined);
  const reference = (await fixture.request('/v1/reference', { key: null })).text;
  assert.match(reference, /<article class="operation deprecated" id="op-getMeta"/);
  assert.match(
    reference,
    /<h3>Deprecated operations<\/h3><ul><li><a href="#op-getMeta">GET \/v1\/meta<\/a>: sunset 2027-05-03<\/li><\/ul>/,
  );
});

test("with the project's table (none deprecated), no response carries the headers and no operation is deprecated", async () => {
  assert.equal(DEPRECATIONS, {});
  const paths = [
    '/v1/meta',
    '/v1/leads',
    '/v1/leads/1',
    '/v1/infrastructure',
    '/v1/account/usage',
    '/v1/openapi.json',
    '/v1/docs',
    '/v1/reference',
    '/v1/nope',
  ];
  for (const path of paths) {
    for (const key of [undefined, null]) {
      const res = await plain.request(path, { key });
      assert.equal(carries(res).deprecation, null, `${path} ${key === null ? 'without key' : ''}`);
      assert.equal(carries(res).sunset, null, path);
      assert.not.match(carries(res).link ?? '', /rel="deprecation"/, path);
    }
  }
  const doc = (await plain.request('/v1/openapi.json', { key: null })).body;
  assert.not.match(JSON.stringify(doc.paths), /"deprecated":true|x-deprecation/);
});

test('the terms are published: OpenAPI info, the read-only reference and docs/api.md', async () => {
  const doc = (await plain.request('/v1/openapi.json', { key: null })).body;
  assert.equal(doc.info['x-service-terms'].availability_target_percent, 99.5);
  assert.equal(doc.info['x-service-terms'].deprecation_notice_days, 90);
  assert.match(doc.info.description, /availability target 99\.5%/);
  assert.match(doc.info.description, /at least 90 days' notice/);
  assert.match(doc.info.description, /`Deprecation` \(RFC 9745[^)]*\), `Sunset` \(RFC 8594/);
  assert.is(doc.info.termsOfService, `${plain.config.publicBaseUrl}/reference#service-terms`);
  const reference = (await plain.request('/v1/reference', { key: null })).text;
  const terms = /<section id="service-terms">([\s\S]*?)<\/section>/.exec(reference)?.[1] ?? '';
  assert.match(terms, /<dt>Availability target<\/dt><dd>99\.5% per calendar month \(UTC\)<\/dd>/);
  assert.match(terms, /at least 90 days between an operation's deprecation and its sunset/);
  assert.match(terms, /No operation is deprecated/);
  const md = readFileSync(join(REPO_ROOT, 'docs/api.md'), 'utf8');
  const section = /^## Service terms and deprecation\n([\s\S]*?)(?=^## )/m.exec(md)?.[1] ?? '';
  assert.ok(section, 'docs/api.md has a "Service terms and deprecation" section');
  for (const s of [
    '99.5%',
    '90 days',
    '`Deprecation: @',
    '`Sunset: ',
    'rel="deprecation"',
    'RFC 9745',
    'RFC 8594',
    'api/access/service-terms.ts',
    '/v1/reference',
  ]) {
    assert.ok(section.includes(s), `the section says ${s}`);
  }
  assert.match(md, /GET \/v1\/reference/);
});

test.run();
