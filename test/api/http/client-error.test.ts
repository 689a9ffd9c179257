/**
 * Issue 14 point 4: what Node's HTTP parser refuses before the app sees it is answered as an
 * RFC 9457 problem too — raw TCP, since a fetch client cannot send these requests.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { connect } from 'node:net';
import { startTestApi, type TestApi } from '../../helpers/api.ts';
import { MAX_HEADER_BYTES } from '../../../api/http/client-error.ts';

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
  assert.is(res.body.type, `${api.config.publicBaseUrl}/problems/${code}`);
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
  const res = await rawRequest(
    `GET /v1/leads HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(MAX_HEADER_BYTES + 10)}\r\n\r\n`,
  );
  assertParserProblem(res, 431, 'headers_too_large');
});

test('a raw space or a control character in the URL: 400 malformed_request', async () => {
  assertParserProblem(
    await rawRequest('GET /v1/leads?q=roof extension HTTP/1.1\r\nHost: x\r\n\r\n'),
    400,
    'malformed_request',
  );
  assertParserProblem(
    await rawRequest('GET /v1/leads?q=roof\x01 HTTP/1.1\r\nHost: x\r\n\r\n'),
    400,
    'malformed_request',
  );
  assertParserProblem(
    await rawRequest('GET /v1/leads HTTP/1.1\r\nHost: x\r\nBad Header: y\r\n\r\n'),
    400,
    'malformed_request',
  );
});

test('an unknown method: 501 method_not_implemented', async () => {
  assertParserProblem(await rawRequest('FROB /v1/leads HTTP/1.1\r\nHost: x\r\n\r\n'), 501, 'method_not_implemented');
});

test('the server keeps answering afterwards', async () => {
  assert.is((await api.request('/v1/meta')).status, 200);
});

test('a parser error with more bytes behind it: the answer arrives whole, no connection reset (lingering close, issue 31)', async () => {
  // the bytes after the bad request are still unread when the server answers; closing then would reset the connection
  const res = await rawRequest(
    Buffer.concat([
      Buffer.from('GET /v1/leads HTTP/1.1\r\nHost: x\r\nBad Header Line\r\n\r\n'),
      Buffer.alloc(512 * 1024, 'x'),
    ]),
  );
  assertParserProblem(res, 400, 'malformed_request');
});

test('a body over the limit: 413 with Connection: close (the connection is not reused), and the next request is served (issue 31)', async () => {
  const { request, Agent } = await import('node:http');
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const send = (body: string | null): Promise<{ status: number; connection: string | undefined; text: string }> =>
    new Promise((resolve, reject) => {
      const req = request(
        `${api.baseUrl}/v1/leads/search`,
        {
          method: body === null ? 'GET' : 'POST',
          agent,
          headers: { Authorization: `Bearer ${api.keys.ent_api}`, 'Content-Type': 'application/json' },
        },
        (res) => {
          let text = '';
          res.on('data', (c) => (text += c));
          res.on('end', () => resolve({ status: res.statusCode!, connection: res.headers.connection, text }));
        },
      );
      req.on('error', reject);
      req.end(body ?? undefined);
    });
  try {
    const big = await send(`{"q":"${'a'.repeat(2 * 1_048_576)}"}`);
    assert.is(big.status, 413, big.text);
    assert.match(big.text, /body_too_large/);
    assert.is(big.connection, 'close', 'the client is told not to send its next request on it');
    const next = await send('{}');
    assert.is(next.status, 200, next.text);
  } finally {
    agent.destroy();
  }
});

test.run();
