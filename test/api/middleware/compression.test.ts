/**
 * Compression (api/middleware/compression.ts), over raw HTTP (fetch would decode for us): a page
 * of 100 leads and a GeoJSON page gzip- and brotli-encoded decode to exactly the identity bytes;
 * answers under COMPRESS_MIN_BYTES, HEAD, `identity` and `q=0`, Parquet, problems and the account
 * area are sent as they are; `Vary: Accept-Encoding` and one weak ETag for every encoding; an
 * export already gzipped by its route is not compressed twice, one the client wants in brotli is
 * compressed as a stream.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import http from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { ApiConfigError, loadApiConfig } from '../../../api/config.ts';
import Koa from 'koa';
import type { AddressInfo } from 'node:net';
import {
  chooseEncoding,
  compressible,
  compressionMiddleware,
  unchangingBody,
} from '../../../api/middleware/compression.ts';
import { startTestApi, type TestApi } from '../../helpers/api.ts';

let api: TestApi;
const NOW = new Date('2026-11-20T10:00:00Z'); // GeoJSON pages carry the clock's timeStamp: fixed, so two answers are the same bytes

interface Raw {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** A request over node:http, which does not decode: the bytes on the wire. */
function raw(path: string, headers: Record<string, string>, method = 'GET'): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = http.request(api.baseUrl + path, { method, headers }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (d: Buffer) => parts.push(d));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(parts) }));
    });
    req.on('error', reject);
    req.end();
  });
}

const keyed = (key: string, encoding: string): Record<string, string> => ({
  Authorization: `Bearer ${key}`,
  'Accept-Encoding': encoding,
});
const vary = (r: Raw): string[] =>
  String(r.headers['vary'] ?? '')
    .split(',')
    .map((s) => s.trim().toLowerCase());
const decode = (r: Raw): Buffer =>
  r.headers['content-encoding'] === 'br'
    ? brotliDecompressSync(r.body)
    : r.headers['content-encoding'] === 'gzip'
      ? gunzipSync(r.body)
      : r.body;

test.before(async () => {
  api = await startTestApi({ clock: () => NOW });
});
test.after(() => api.close());

test('Accept-Encoding is negotiated by q-value; brotli wins a tie; identity and q=0 are respected', () => {
  const cases: [string | undefined, string | null][] = [
    [undefined, null],
    ['', null],
    ['identity', null],
    ['gzip', 'gzip'],
    ['br', 'br'],
    ['gzip, deflate, br', 'br'],
    ['deflate, gzip, br, zstd', 'br'],
    ['br;q=0.5, gzip', 'gzip'],
    ['br;q=0, gzip', 'gzip'],
    ['gzip;q=0, br;q=0', null],
    ['gzip;q=0', null],
    ['*', 'br'],
    ['*;q=0.5, br;q=0', 'gzip'],
    ['x-gzip', 'gzip'],
    ['GZIP;Q=0.8, BR;Q=0.9', 'br'],
    ['identity;q=1, gzip;q=0.5', null],
    ['gzip;q=foo', null],
    ['deflate', null],
    ['x'.repeat(3000), null],
  ];
  for (const [header, want] of cases) assert.is(chooseEncoding(header), want, String(header));
  for (const t of [
    'application/json; charset=utf-8',
    'application/geo+json',
    'application/problem+json',
    'text/csv; charset=utf-8',
    'application/x-ndjson',
    'application/vnd.mapbox-vector-tile',
    'text/html',
  ]) {
    assert.ok(compressible(t), t);
  }
  for (const t of [
    'application/vnd.apache.parquet',
    'image/png',
    'application/zip',
    'application/gzip',
    'text/event-stream',
    '',
  ])
    assert.not.ok(compressible(t), t);
});

test('a page of 100 leads: gzip and br decode to exactly the identity bytes, with Vary and one ETag', async () => {
  const path = '/v1/leads?page_size=100';
  const plain = await raw(path, keyed(api.keys.ent_feed, 'identity'));
  assert.is(plain.status, 200);
  assert.is(plain.headers['content-encoding'], undefined);
  assert.ok(vary(plain).includes('accept-encoding'), 'Vary on the identity answer too');
  assert.ok(plain.body.length > 50_000, `a big page: ${plain.body.length} bytes`);
  assert.is(JSON.parse(plain.body.toString()).results.length, 100);
  for (const coding of ['gzip', 'br']) {
    const enc = await raw(path, keyed(api.keys.ent_feed, coding === 'br' ? 'gzip, deflate, br' : 'gzip'));
    assert.is(enc.status, 200);
    assert.is(enc.headers['content-encoding'], coding);
    assert.ok(vary(enc).includes('accept-encoding'));
    assert.is(Number(enc.headers['content-length']), enc.body.length, 'Content-Length is the encoded length');
    assert.ok(enc.body.length * 4 < plain.body.length, `${coding}: ${enc.body.length} of ${plain.body.length} bytes`);
    assert.ok(decode(enc).equals(plain.body), `${coding} decodes to the identity bytes`);
    assert.match(String(enc.headers['content-type']), /^application\/json/);
    assert.is(enc.headers['etag'], plain.headers['etag'], 'one weak ETag for every encoding');
    assert.match(String(enc.headers['etag']), /^W\//);
  }
  // the tag of a compressed answer revalidates any encoding: 304 (with Vary), no body
  const again = await raw(path, {
    ...keyed(api.keys.ent_feed, 'identity'),
    'If-None-Match': String(plain.headers['etag']),
  });
  assert.is(again.status, 304);
  assert.is(again.body.length, 0);
  assert.ok(vary(again).includes('accept-encoding'));
});

test('a GeoJSON page (page_size=1000, the whole tiny release) is compressed and decodes to the same bytes', async () => {
  const path = '/v1/feeds/leads.geojson?page_size=1000';
  const plain = await raw(path, keyed(api.keys.ent_feed, 'identity'));
  assert.is(plain.status, 200);
  assert.is(plain.headers['content-type'], 'application/geo+json');
  assert.is(plain.headers['content-encoding'], undefined);
  const doc = JSON.parse(plain.body.toString());
  assert.ok(doc.features.length > 900, `${doc.features.length} features (every lead with a position)`);
  for (const coding of ['br', 'gzip']) {
    const enc = await raw(path, keyed(api.keys.ent_feed, coding));
    assert.is(enc.headers['content-encoding'], coding);
    assert.ok(vary(enc).includes('accept-encoding'));
    assert.ok(enc.body.length * 5 < plain.body.length, `${coding}: ${enc.body.length} of ${plain.body.length} bytes`);
    assert.ok(decode(enc).equals(plain.body), `${coding} decodes to the identity bytes`);
  }
});

test('not compressed: under COMPRESS_MIN_BYTES, identity / q=0, HEAD, problems, /app', async () => {
  const small = await raw('/v1/leads?page_size=1&bbox=-10.5,51.4,-10.49,51.41', keyed(api.keys.ent_feed, 'br, gzip'));
  assert.is(small.status, 200);
  assert.ok(small.body.length < api.config.compressMinBytes!, `${small.body.length} bytes`);
  assert.is(small.headers['content-encoding'], undefined);
  assert.ok(vary(small).includes('accept-encoding'), 'it varies all the same');
  for (const encoding of ['identity', 'gzip;q=0, br;q=0', 'deflate']) {
    const r = await raw('/v1/leads?page_size=100', keyed(api.keys.ent_feed, encoding));
    assert.is(r.status, 200);
    assert.is(r.headers['content-encoding'], undefined, encoding);
  }
  const onlyGzip = await raw('/v1/leads?page_size=100', keyed(api.keys.ent_feed, 'br;q=0, gzip'));
  assert.is(onlyGzip.headers['content-encoding'], 'gzip');
  const head = await raw('/v1/leads?page_size=100', keyed(api.keys.ent_feed, 'br, gzip'), 'HEAD');
  assert.is(head.headers['content-encoding'], undefined, 'HEAD is never compressed');
  assert.is(head.body.length, 0);
  const problem = await raw(
    `/v1/leads?page_size=100&${'x'.repeat(40)}=1&${'y'.repeat(40)}=2&${'z'.repeat(40)}=3`,
    keyed(api.keys.ent_feed, 'br, gzip'),
  );
  assert.is(problem.status, 400);
  assert.is(problem.headers['content-encoding'], undefined, 'problems are sent as they are');
  assert.is(JSON.parse(problem.body.toString()).code, 'unknown_parameter');
  const page = await raw('/app/sign-in', { 'Accept-Encoding': 'br, gzip' });
  assert.is(page.status, 200);
  assert.ok(page.body.length >= api.config.compressMinBytes!, `a sign-in page of ${page.body.length} bytes`);
  assert.is(page.headers['content-encoding'], undefined, 'the account area is never compressed (BREACH)');
});

test('exports: a gzipped export is not compressed twice; br is applied to the stream; Parquet is sent as it is', async () => {
  const path = '/v1/export/applications.csv';
  const plain = await raw(path, keyed(api.keys.ent_api, 'identity'));
  assert.is(plain.status, 200);
  assert.is(plain.headers['content-encoding'], undefined);
  const gz = await raw(path, keyed(api.keys.ent_api, 'gzip'));
  assert.is(gz.headers['content-encoding'], 'gzip', 'the export route gzips itself');
  assert.ok(gunzipSync(gz.body).equals(plain.body), 'one gunzip gives the CSV: gzipped once');
  const br = await raw(path, keyed(api.keys.ent_api, 'br'));
  assert.is(br.headers['content-encoding'], 'br');
  assert.is(br.headers['content-length'], undefined, 'still streamed');
  assert.ok(brotliDecompressSync(br.body).equals(plain.body));
  const parquet = await raw('/v1/export/applications.parquet', keyed(api.keys.ent_api, 'br, gzip'));
  assert.is(parquet.status, 200);
  assert.is(parquet.headers['content-encoding'], undefined);
  assert.is(parquet.body.subarray(0, 4).toString(), 'PAR1');
});

test('a body marked unchanging is compressed once per coding; a fresh body every time', async () => {
  const kept = unchangingBody(Buffer.from(JSON.stringify({ text: 'lead '.repeat(2000) })));
  const sent: unknown[] = [];
  const app = new Koa();
  app.use(async (ctx, next) => {
    await next();
    sent.push(ctx.body); // what the compression middleware left to send
  });
  app.use(compressionMiddleware({ compressMinBytes: 1024 }));
  app.use((ctx) => {
    ctx.type = 'application/json';
    ctx.body = ctx.path === '/kept' ? kept : Buffer.from(kept); // a copy: the same bytes, a new body
  });
  const server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    for (const path of ['/kept', '/kept', '/fresh', '/fresh', '/kept']) {
      const res = await fetch(origin + path, {
        headers: { 'Accept-Encoding': path === '/kept' && sent.length === 4 ? 'gzip' : 'br' },
      });
      assert.equal(Buffer.from(await res.arrayBuffer()).length > 0, true);
    }
  } finally {
    server.close();
  }
  assert.ok(sent[0] === sent[1], 'the second answer is the kept brotli bytes');
  assert.ok(sent[2] !== sent[3], 'a fresh body is compressed each time');
  assert.equal(sent[2], sent[0], 'and gives the same bytes');
  assert.ok(sent[4] !== sent[0] && Buffer.isBuffer(sent[4]), 'gzip is kept apart from br');
  assert.equal(gunzipSync(sent[4] as Buffer), kept);
  assert.equal(brotliDecompressSync(sent[0] as Buffer), kept);
});

test('COMPRESS_MIN_BYTES: default 1024, `off`, bounds checked', () => {
  assert.is(loadApiConfig({}).compressMinBytes, 1024);
  assert.is(loadApiConfig({ COMPRESS_MIN_BYTES: '0' }).compressMinBytes, 0);
  assert.is(loadApiConfig({ COMPRESS_MIN_BYTES: 'off' }).compressMinBytes, null);
  for (const bad of ['-1', 'many', '1.5'])
    assert.throws(
      () => loadApiConfig({ COMPRESS_MIN_BYTES: bad }),
      (e: unknown) => e instanceof ApiConfigError && /COMPRESS_MIN_BYTES/.test((e as Error).message),
    );
});

test.run();
