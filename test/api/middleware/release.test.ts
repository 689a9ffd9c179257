/** The release pin: held for the whole response (streaming included), released after; 503 without a release. */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import Koa from 'koa';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import { problemMiddleware } from '../../../api/http/errors.ts';
import { releaseMiddleware } from '../../../api/middleware/release.ts';
import { requestIdMiddleware } from '../../../api/middleware/request-id.ts';
import { NoReleaseError, type Release, type ReleaseManager } from '../../../api/releases/release.ts';
import { assertProblem } from '../../helpers/api.ts';
import { waitUntil } from '../../helpers/wait.ts';

function fakeReleases(present: boolean) {
  let holds = 0;
  const release = { id: 'r1' } as Release;
  const manager: Pick<ReleaseManager, 'acquire'> = {
    acquire() {
      if (!present) throw new NoReleaseError('none');
      holds++;
      let done = false;
      return {
        release,
        done: () => {
          if (!done) holds--;
          done = true;
        },
      };
    },
  };
  return { manager, holds: () => holds };
}

async function serve(app: Koa) {
  app.silent = true; // a client that hangs up mid-stream is expected here
  const server = http.createServer(app.callback());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const close = () =>
    new Promise<void>((r) => {
      server.close(() => r());
      server.closeAllConnections();
    });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close };
}

const tick = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('no release loaded → 503 no_release problem', async () => {
  const app = new Koa();
  app.use(problemMiddleware(() => {}));
  app.use(requestIdMiddleware());
  app.use(releaseMiddleware(fakeReleases(false).manager));
  const s = await serve(app);
  try {
    const res = await fetch(s.url + '/v1/meta');
    assertProblem({ status: res.status, headers: res.headers, body: await res.json() }, 503, 'no_release');
    assert.is(res.headers.get('retry-after'), '30');
  } finally {
    await s.close();
  }
});

test('the pin is held while a streamed body is still being sent and let go when it ends', async () => {
  const r = fakeReleases(true);
  const stream = new PassThrough();
  const app = new Koa();
  app.use(problemMiddleware(() => {}));
  app.use(releaseMiddleware(r.manager));
  app.use((ctx) => {
    assert.is((ctx.state['release'] as Release).id, 'r1');
    ctx.type = 'text/plain';
    ctx.body = stream;
  });
  const s = await serve(app);
  try {
    stream.write('part 1\n'); // the headers go out with the first chunk
    const res = await fetch(s.url + '/x');
    await tick(50);
    assert.is(r.holds(), 1, 'held mid-stream');
    stream.end('part 2\n');
    assert.is(await res.text(), 'part 1\npart 2\n');
    await waitUntil('the pin is let go after the stream', () => r.holds() === 0);
  } finally {
    await s.close();
  }
});

test('the pin is let go after errors and after a client disconnects mid-stream', async () => {
  const r = fakeReleases(true);
  const app = new Koa();
  app.use(problemMiddleware(() => {}));
  app.use(releaseMiddleware(r.manager));
  app.use((ctx) => {
    if (ctx.path === '/boom') throw new Error('boom');
    const never = new PassThrough(); // sends one chunk, never ends
    never.write('x');
    ctx.body = never;
  });
  const s = await serve(app);
  try {
    assert.is((await fetch(s.url + '/boom')).status, 500);
    await waitUntil('the pin is let go after the error', () => r.holds() === 0);
    const ac = new AbortController();
    await fetch(s.url + '/hang', { signal: ac.signal });
    assert.is(r.holds(), 1);
    ac.abort();
    await waitUntil('the pin is let go after the client left', () => r.holds() === 0);
  } finally {
    await s.close();
  }
});

test.run();
