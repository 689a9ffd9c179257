/**
 * The polite client against a local publisher: conditional requests and 304, 429 with
 * Retry-After, 500 then success, a connection dropped mid-body (resumed with a range, or
 * restarted without one), a truncated file, fatal statuses, the User-Agent, and the pure
 * backoff / Retry-After helpers. Sleeps are injected: no test waits real seconds.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { rejects } from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { backoffMs, downloadFile, FetchError, parseRetryAfter, type HttpClient } from '../../../pipeline/fetch/http.ts';
import { loadSourcesFile } from '../../../pipeline/fetch/sources.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { fakeDeps, PublisherServer } from './publisher-server.ts';

const POLICY = { attempts: 4, baseDelayMs: 1000, maxDelayMs: 8000, maxRetryAfterMs: 60_000, timeoutMs: 30_000 };
const UA = loadSourcesFile().userAgent;

let server: PublisherServer;
test.before(async () => {
  server = await new PublisherServer().start();
});
test.after(async () => {
  await server.close();
});

/** A body large enough to arrive in several chunks. */
const BODY = Buffer.from(Array.from({ length: 20_000 }, (_, i) => `${i},row ${i},€${i}.00\n`).join(''), 'utf8');
const sha = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

function client(): { c: HttpClient; sleeps: number[]; lines: string[] } {
  const f = fakeDeps();
  return { c: { userAgent: UA, policy: POLICY, deps: f.deps }, sleeps: f.sleeps, lines: f.lines };
}

let n = 0;
/** A fresh path with `file` served there, and a destination in a fresh folder. */
function setup(file: Partial<Parameters<PublisherServer['files']['set']>[1]> = {}): {
  path: string;
  url: string;
  dest: string;
} {
  const path = `/files/f${++n}.csv`;
  server.files.set(path, { body: BODY, ...file });
  return { path, url: server.base + path, dest: join(tempDir('leads-fetch-http-'), 'f.csv') };
}

const noPartFiles = (dest: string): boolean => !readdirSync(join(dest, '..')).some((f) => f.endsWith('.part'));

test('200: the file is written whole, with its size, SHA-256 and validators; the User-Agent names the service', async () => {
  const { path, url, dest } = setup({ lastModified: 'Mon, 02 Nov 2026 10:00:00 GMT' });
  const { c } = client();
  const r = await downloadFile(c, url, dest, null);
  assert.is(r.status, 'fetched');
  assert.is(r.bytes, BODY.length);
  assert.is(r.sha256, sha(BODY));
  assert.ok(r.etag?.startsWith('"'));
  assert.is(r.lastModified, 'Mon, 02 Nov 2026 10:00:00 GMT');
  assert.equal(readFileSync(dest), BODY);
  const req = server.to(path)[0]!;
  assert.is(req.headers['user-agent'], UA);
  assert.match(UA, /irish-construction-leads/);
  assert.is(req.headers['if-none-match'], undefined, 'no conditional request without a previous copy');
  assert.ok(noPartFiles(dest));
});

test('304: a conditional request with the previous ETag / Last-Modified keeps the previous file untouched', async () => {
  const { path, url, dest } = setup({ lastModified: 'Mon, 02 Nov 2026 10:00:00 GMT' });
  const { c } = client();
  const first = await downloadFile(c, url, dest, null);
  writeFileSync(dest, 'the copy in place'); // proves the 304 does not rewrite it
  const r = await downloadFile(c, url, dest, { etag: first.etag, lastModified: first.lastModified });
  assert.is(r.status, 'not_modified');
  assert.is(r.etag, first.etag);
  assert.is(readFileSync(dest, 'utf8'), 'the copy in place');
  const req = server.to(path)[1]!;
  assert.is(req.headers['if-none-match'], first.etag);
  assert.is(req.headers['if-modified-since'], 'Mon, 02 Nov 2026 10:00:00 GMT');
});

test('previous validators but no file in place: an unconditional request', async () => {
  const { path, url, dest } = setup();
  const { c } = client();
  const r = await downloadFile(c, url, dest, { etag: '"old"', lastModified: null });
  assert.is(r.status, 'fetched');
  assert.is(server.to(path)[0]!.headers['if-none-match'], undefined);
});

test('429 with Retry-After (seconds): waits exactly that long, then succeeds', async () => {
  const { path, url, dest } = setup();
  server.script(path, { status: 429, retryAfter: '7' });
  const { c, sleeps } = client();
  const r = await downloadFile(c, url, dest, null);
  assert.is(r.status, 'fetched');
  assert.is(r.attempts, 2);
  assert.equal(sleeps, [7000]);
  assert.equal(readFileSync(dest), BODY);
});

test('503 with Retry-After as an HTTP date: waits until then by the injected clock', async () => {
  const { path, url, dest } = setup();
  server.script(path, { status: 503, retryAfter: 'Mon, 09 Nov 2026 05:00:30 GMT' }); // fakeDeps starts at 05:00:00
  const { c, sleeps } = client();
  await downloadFile(c, url, dest, null);
  assert.equal(sleeps, [30_000]);
});

test('500 then success: one jittered backoff, then the file', async () => {
  const { path, url, dest } = setup();
  server.script(path, { status: 500 }, { status: 502 });
  const { c, sleeps } = client();
  const r = await downloadFile(c, url, dest, null);
  assert.is(r.attempts, 3);
  // random() = 0.5: half of each step fixed, a quarter from the jitter
  assert.equal(sleeps, [750, 1500]);
  assert.equal(readFileSync(dest), BODY);
});

test('connection dropped mid-body, server with ranges: resumed with Range + If-Range, the file is whole', async () => {
  const { path, url, dest } = setup();
  server.script(path, { drop: 50_000 });
  const { c } = client();
  const r = await downloadFile(c, url, dest, null);
  assert.is(r.status, 'fetched');
  assert.ok(r.resumed);
  assert.is(r.sha256, sha(BODY));
  assert.equal(readFileSync(dest), BODY);
  const [first, second] = server.to(path);
  assert.is(first!.headers.range, undefined);
  assert.match(second!.headers.range!, /^bytes=\d+-$/);
  const from = Number(/\d+/.exec(second!.headers.range!)![0]);
  assert.ok(from > 0 && from <= 50_000, `resumed from ${from}`);
  assert.is(second!.headers['if-range'], r.etag);
  assert.ok(noPartFiles(dest));
});

test('connection dropped mid-body, server without ranges: the download restarts from the first byte', async () => {
  const { path, url, dest } = setup({ ranges: false });
  server.script(path, { drop: 50_000 });
  const { c } = client();
  const r = await downloadFile(c, url, dest, null);
  assert.not.ok(r.resumed);
  assert.equal(readFileSync(dest), BODY);
  assert.is(server.to(path)[1]!.headers.range, undefined);
});

test('a truncated body is never moved into place: resumed when possible, else the previous copy stays and the error names the URL', async () => {
  const resumable = setup();
  server.script(resumable.path, { truncate: 1000 });
  const a = await downloadFile(client().c, resumable.url, resumable.dest, null);
  assert.ok(a.resumed);
  assert.equal(readFileSync(resumable.dest), BODY);

  const { path, url, dest } = setup({ ranges: false });
  writeFileSync(dest, 'previous copy');
  server.script(path, ...Array.from({ length: POLICY.attempts }, () => ({ truncate: 1000 })));
  const { c, sleeps } = client();
  await rejects(
    () => downloadFile(c, url, dest, null),
    (e: unknown) => {
      assert.instance(e, FetchError);
      assert.match((e as Error).message, `gave up on ${url} after 4 attempts`);
      assert.match((e as Error).message, /truncated body: 1000 of \d+ bytes|connection dropped after 1000 bytes/);
      return true;
    },
  );
  assert.is(sleeps.length, 3);
  assert.is(readFileSync(dest, 'utf8'), 'previous copy');
  assert.ok(noPartFiles(dest));
});

test('404 and an HTML page are not retried; the error names the URL', async () => {
  const { c, sleeps } = client();
  const missing = server.base + '/files/none.csv';
  await rejects(
    () => downloadFile(c, missing, join(tempDir(), 'x.csv'), null),
    (e: unknown) => e instanceof FetchError && e.message.includes(`HTTP 404 Not Found from ${missing}`),
  );
  assert.is(server.to('/files/none.csv').length, 1);
  const { path, url, dest } = setup();
  server.script(path, { html: true });
  await rejects(() => downloadFile(c, url, dest, null), /answered an HTML page, not the data file/);
  assert.equal(sleeps, []);
  assert.not.ok(existsSync(dest));
});

test('a Retry-After beyond the limit gives up at once instead of waiting hours', async () => {
  const { path, url, dest } = setup();
  server.script(path, { status: 429, retryAfter: '86400' });
  const { c, sleeps } = client();
  await rejects(() => downloadFile(c, url, dest, null), /asked to retry after 86400 s \(more than the 60 s limit\)/);
  assert.equal(sleeps, []);
});

test('a refused connection is retried, then reported with the URL', async () => {
  const { c, sleeps } = client();
  const dead = 'http://127.0.0.1:1/file.csv';
  await rejects(
    () => downloadFile(c, dead, join(tempDir(), 'x.csv'), null),
    (e: unknown) =>
      e instanceof FetchError &&
      /gave up on http:\/\/127\.0\.0\.1:1\/file\.csv after 4 attempts: connection failed/.test(e.message),
  );
  assert.is(sleeps.length, 3);
});

test('backoffMs: exponential, capped, jitter between half and the whole step', () => {
  const p = { baseDelayMs: 1000, maxDelayMs: 5000 };
  assert.is(
    backoffMs(1, p, () => 0),
    500,
  );
  assert.is(
    backoffMs(1, p, () => 0.999999),
    1000,
  );
  assert.is(
    backoffMs(3, p, () => 0),
    2000,
  );
  assert.is(
    backoffMs(10, p, () => 0.999999),
    5000,
  );
});

test('parseRetryAfter: seconds, HTTP dates (never negative), absent or unreadable → null', () => {
  const now = new Date('2026-11-09T05:00:00Z');
  assert.is(parseRetryAfter('120', now), 120_000);
  assert.is(parseRetryAfter('Mon, 09 Nov 2026 05:01:00 GMT', now), 60_000);
  assert.is(parseRetryAfter('Mon, 09 Nov 2026 04:00:00 GMT', now), 0);
  assert.is(parseRetryAfter(null, now), null);
  assert.is(parseRetryAfter('soon', now), null);
});

test.run();
