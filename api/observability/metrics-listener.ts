/**
 * The METRICS_PORT listener: `GET /metrics` (the Prometheus text format, no token: it is bound to
 * METRICS_HOST, 127.0.0.1 by default, for a scraper on the host or a sidecar), 404 for anything
 * else. A single-process server runs it next to the API; with API_WORKERS > 1 the cluster primary
 * runs it, answering for every worker (api/startup/cluster.ts).
 */
import http from 'node:http';
import type https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Scrape } from './metrics.ts';

/** Listen on `port` / `host` and answer `GET /metrics` with what `scrape` returns. */
export async function listenMetrics(scrape: () => Promise<Scrape>, port: number, host: string): Promise<http.Server> {
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res
        .writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' })
        .end('not found: this listener serves GET /metrics only\n');
      return;
    }
    scrape().then(
      (m) =>
        res
          .writeHead(200, { 'Content-Type': m.contentType, 'Cache-Control': 'no-store' })
          .end(req.method === 'HEAD' ? undefined : m.body),
      (e: Error) =>
        res
          .writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' })
          .end(`metrics could not be collected: ${e.message}\n`),
    );
  });
  server.keepAliveTimeout = 5000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return server;
}

/** `http://host:port` of a listening server (`localhost` for the any-address). */
export function originOf(server: http.Server | https.Server, host: string, tls: boolean): string {
  const { port } = server.address() as AddressInfo;
  const h = host === '0.0.0.0' || host === '::' ? 'localhost' : host.includes(':') ? `[${host}]` : host;
  return `${tls ? 'https' : 'http'}://${h}:${port}`;
}
