/**
 * bench/load.ts, the bench's load generator, against a real HTTP server on port 0: the requests
 * are driven round-robin (bodies included), the warm-up takes the list's tail and is not counted,
 * non-2xx answers are counted, `onMeasuring` comes before the result; and `settle` waits while
 * other processes keep the cores busy.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn } from 'node:child_process';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { availableParallelism } from 'node:os';
import { QUIET, runLoad, settle } from '../../bench/load.ts';

/** A server that records each request's method, path and body, and answers 500 to /fail. */
async function recordingServer(): Promise<{ url: string; seen: string[]; close: () => Promise<void> }> {
  const seen: string[] = [];
  const body = async (req: IncomingMessage): Promise<string> => {
    let s = '';
    for await (const c of req) s += c;
    return s;
  };
  const server = createServer((req, res) => {
    void body(req).then(
      (b) => {
        seen.push(`${req.method} ${req.url}${b ? ` ${b}` : ''}`);
        res.statusCode = req.url === '/fail' ? 500 : 200;
        res.end('{}');
      },
      () => {},
    ); // a request the generator gave up on when it stopped
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, seen, close: () => new Promise((r) => server.close(() => r())) };
}

test('runLoad drives the list round-robin, bodies included, and counts non-2xx', async () => {
  const s = await recordingServer();
  try {
    let measuring = 0;
    const requests = [
      { method: 'GET' as const, path: '/a' },
      { method: 'POST' as const, path: '/b', body: '{"x":1}' },
      { method: 'GET' as const, path: '/fail' },
    ];
    const r = await runLoad(
      { url: s.url, connections: 3, amount: 30, headers: { 'content-type': 'application/json' }, requests },
      () => measuring++,
    );
    assert.is(measuring, 1);
    assert.is(r.total, 30);
    assert.is(s.seen.length, 30);
    const counts = new Map<string, number>();
    for (const x of s.seen) counts.set(x, (counts.get(x) ?? 0) + 1);
    assert.equal([...counts.keys()].sort(), ['GET /a', 'GET /fail', 'POST /b {"x":1}']);
    // each request of the list is the next one, whichever connection sends it
    for (const n of counts.values()) assert.ok(n >= 10 - 3 && n <= 10 + 3, `counts ${JSON.stringify([...counts])}`);
    assert.is(r.non2xx, counts.get('GET /fail'));
    assert.is(r.errors, 0);
    assert.ok(r.p99 >= r.p50 && r.clientCpuMs > 0);
  } finally {
    await s.close();
  }
});

test("runLoad warms up on the list's last requests and does not count them", async () => {
  const s = await recordingServer();
  try {
    const requests = Array.from({ length: 50 }, (_, i) => ({ method: 'GET' as const, path: `/p${i}` }));
    const r = await runLoad({ url: s.url, connections: 2, amount: 20, warmup: 10, headers: {}, requests });
    assert.is(r.total, 20);
    assert.is(s.seen.length, 30);
    assert.equal(new Set(s.seen.slice(0, 10)), new Set(requests.slice(-10).map((q) => `GET ${q.path}`)));
    // the measured part starts again at the head of the list
    assert.equal(new Set(s.seen.slice(10)), new Set(requests.slice(0, 20).map((q) => `GET ${q.path}`)));
  } finally {
    await s.close();
  }
});

/** The message `p` rejects with (fails when it resolves). */
async function rejection(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error('expected a rejection');
}

test('runLoad rejects with the reason when there is nothing to drive or the generator fails', async () => {
  assert.match(
    await rejection(runLoad({ url: 'http://127.0.0.1:1', connections: 1, amount: 1, headers: {}, requests: [] })),
    /no requests/,
  );
  assert.match(
    await rejection(
      runLoad({ url: 'not a url', connections: 1, amount: 1, headers: {}, requests: [{ method: 'GET', path: '/' }] }),
    ),
    /the load generator exited with [1-9]/,
  );
});

test('settle waits while other processes keep the cores busy', async () => {
  const spinMs = 1_000; // four windows: a settle that does not wait returns after one
  // a quarter of the cores or more spinning (one of two here): well over QUIET.busyShare
  const spinners = Array.from({ length: Math.ceil(availableParallelism() / 4) }, () =>
    spawn(process.execPath, ['-e', `const end = Date.now() + ${spinMs}; while (Date.now() < end);`]),
  );
  try {
    await Promise.all(spinners.map((p) => new Promise((r) => p.once('spawn', r))));
    // at most twice the spin (not QUIET's 10 s): the test loop's other workers keep the cores busy after it
    const waited = await settle({ maxMs: 2 * spinMs });
    assert.ok(waited >= spinMs - 2 * QUIET.windowMs, `waited ${waited.toFixed(0)} ms`);
  } finally {
    for (const p of spinners) p.kill();
  }
});

test.run();
