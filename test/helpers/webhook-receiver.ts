/**
 * A real HTTP receiver on 127.0.0.1 for webhook tests: records every request (path, headers,
 * raw body bytes) and answers per path as the test scripts it (default 204).
 *
 * @example
 *   const rx = await startReceiver();
 *   rx.script('/gone', () => ({ status: 410 }));
 *   …create a webhook with url rx.url('/gone')…
 *   rx.requests('/gone')[0].body  // Buffer, exactly as received
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  at: number;
}

/** What to answer: a status and headers, or `'hang-up'` to destroy the socket without answering. */
export type Answer = { status: number; headers?: Record<string, string> } | 'hang-up';

export interface Receiver {
  url(path: string): string;
  requests(path?: string): Received[];
  script(path: string, answer: (r: Received, n: number) => Answer | Promise<Answer>): void;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const all: Received[] = [];
  const scripts = new Map<string, (r: Received, n: number) => Answer | Promise<Answer>>();
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const r: Received = { path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks), at: Date.now() };
    all.push(r);
    const n = all.filter((x) => x.path === r.path).length;
    const a = (await scripts.get(r.path)?.(r, n)) ?? { status: 204 };
    if (a === 'hang-up') {
      req.socket.destroy();
      return;
    }
    res.writeHead(a.status, a.headers ?? {});
    res.end();
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: (path) => `http://127.0.0.1:${port}${path}`,
    requests: (path) => (path === undefined ? [...all] : all.filter((r) => r.path === path)),
    script: (path, answer) => void scripts.set(path, answer),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
