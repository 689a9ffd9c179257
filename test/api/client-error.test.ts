/**
 * Issue 14 point 4: what Node's HTTP parser refuses before the app sees it is answered as an
 * RFC 9457 problem too — raw TCP, since a fetch client cannot send these requests.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { connect } from 'node:net';
import { startTestApi, type TestApi } from '../helpers/api.ts';
import { MAX_HEADER_BYTES } from '../../api/client-error.ts';
import { PROBLEM_BASE } from '../../api/errors.ts';

let api: TestApi;
test.before(async () => {
  api = await startTestApi();
});
test.after(async () => {
  await api?.close();
});

/** Send `raw` bytes and read the whole answer (the server closes the connection after a parser error). */
function rawRequest(raw: string | Buffer): Promise<{ status: number; headers: Record<string, string>; body: any }> {
  const { hostname, port } = new URL(api.baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(raw));
    const chunks: Buffer[] = [];
    socket.on('data', (c) => chunks.push(c));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const [head = '', body = ''] = text.split('\r\n\r\n');
      const [statusLine = '', ...lines] = head.split('\r\n');
      const headers: Record<string, string> = {};
      for (const l of lines) headers[l.slice(0, l.indexOf(':')).toLowerCase()] = l.slice(l.indexOf(':') + 1).trim();
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body: body ? JSON.parse(body) : null });
    });
  });
}

function assertParserProblem(res: Awaited<ReturnType<typeof rawRequest>>, status: number, code: string): void {
  assert.is(res.status, status, JSON.stringify(res));
  assert.is(res.headers['content-type'], 'application/problem+json');
  assert.is(res.headers['connection'], 'close');
  assert.is(res.headers['x-content-type-options'], 'nosniff');
  assert.is(res.body.status, status);
  assert.is(res.body.code, code);
  assert.is(res.body.type, PROBLEM_BASE + code);
  assert.type(res.body.title, 'string');
  assert.ok(res.body.detail.length > 20, res.body.detail);
  assert.is(res.body.request_id, res.headers['x-request-id']);
}

test('a URL over the 16 KiB limit: 414 uri_too_long naming the limit', async () => {
  const res = await rawRequest(`GET /v1/leads?q=${'a'.repeat(MAX_HEADER_BYTES + 10)} HTTP/1.1\r\nHost: x\r\n\r\n`);
  assertParserProblem(res, 414, 'uri_too_long');
  assert.match(res.body.detail, String(MAX_HEADER_BYTES));
});

test('headers over the limit: 431 headers_too_large', async () => {
  const res = await rawRequest(`GET /v1/leads HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(MAX_HEADER_BYTES + 10)}\r\n\r\n`);
  assertParserProblem(res, 431, 'headers_too_large');
});

test('a raw space or a control character in the URL: 400 malformed_request', async () => {
  assertParserProblem(await rawRequest('GET /v1/leads?q=roof extension HTTP/1.1\r\nHost: x\r\n\r\n'), 400, 'malformed_request');
  assertParserProblem(await rawRequest('GET /v1/leads?q=roof\x01 HTTP/1.1\r\nHost: x\r\n\r\n'), 400, 'malformed_request');
  assertParserProblem(await rawRequest('GET /v1/leads HTTP/1.1\r\nHost: x\r\nBad Header: y\r\n\r\n'), 400, 'malformed_request');
});

test('an unknown method: 501 method_not_implemented', async () => {
  assertParserProblem(await rawRequest('FROB /v1/leads HTTP/1.1\r\nHost: x\r\n\r\n'), 501, 'method_not_implemented');
});

test('the server keeps answering afterwards', async () => {
  assert.is((await api.request('/v1/meta')).status, 200);
});

test.run();
