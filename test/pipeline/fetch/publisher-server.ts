/**
 * A local stand-in for the publishers, for the fetch tests (real HTTP on 127.0.0.1, port 0; no
 * test reaches the internet). It serves:
 * - files (`http-file`, `pxstat`): ETag / Last-Modified, conditional requests (304), byte ranges
 *   with `If-Range` (206) when the file allows them;
 * - ArcGIS FeatureServer layers: `…/FeatureServer/0/query?f=json` with `where` (`1=1` or
 *   `<field> >= TIMESTAMP 'YYYY-MM-DD HH:MM:SS'`), `orderByFields`, `resultOffset` /
 *   `resultRecordCount` capped at the layer's `maxRecordCount`, and `exceededTransferLimit`.
 * Misbehaviour is scripted per path, one step per request: `{ status: 429, retryAfter: '7' }`,
 * `{ status: 500 }`, `{ drop: 1000 }` (send 1000 bytes of the body then destroy the socket),
 * `{ truncate: 1000 }` (declare the full length, send 1000 bytes, close cleanly),
 * `{ body: 'not json' }` (a malformed answer), `{ html: true }`. Every request is recorded.
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ServedFile {
  body: Buffer;
  contentType?: string;
  /** Advertise `Accept-Ranges: bytes` and answer ranges (default true). */
  ranges?: boolean;
  /** Send ETag (default: a hash of the body) — false for none. */
  etag?: string | false;
  lastModified?: string;
}

export interface ArcgisLayer {
  features: { attributes: Record<string, unknown>; geometry?: { x: number; y: number } }[];
  maxRecordCount: number;
  spatialReference?: { wkid: number; latestWkid?: number };
}

export type Step =
  { status: number; retryAfter?: string } | { drop: number } | { truncate: number } | { body: string } | { html: true };

export interface Recorded {
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
}

export class PublisherServer {
  readonly files = new Map<string, ServedFile>();
  readonly layers = new Map<string, ArcgisLayer>();
  readonly scripts = new Map<string, Step[]>();
  readonly requests: Recorded[] = [];
  private server: Server | null = null;
  base = '';

  /** Start on 127.0.0.1, port 0. */
  async start(): Promise<this> {
    this.server = createServer((req, res) => this.handle(req, res));
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', r));
    this.base = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async close(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((r) => this.server!.close(() => r()));
  }

  /** Misbehave on the next requests of `path`, one step per request. */
  script(path: string, ...steps: Step[]): void {
    this.scripts.set(path, [...(this.scripts.get(path) ?? []), ...steps]);
  }

  /** Requests of `path`. */
  to(path: string): Recorded[] {
    return this.requests.filter((r) => r.path === path);
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://x');
    this.requests.push({ path: url.pathname, query: url.searchParams, headers: req.headers });
    const step = this.scripts.get(url.pathname)?.shift();
    if (step && 'status' in step) {
      res.writeHead(step.status, step.retryAfter ? { 'retry-after': step.retryAfter } : {});
      res.end(`status ${step.status}`);
      return;
    }
    if (step && 'body' in step) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(step.body);
      return;
    }
    if (step && 'html' in step) {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end('<html><body>Maintenance</body></html>');
      return;
    }
    const layerPath = url.pathname.replace(/\/query$/, '');
    const layer = url.pathname.endsWith('/query') ? this.layers.get(layerPath) : undefined;
    if (layer) return this.query(layer, url.searchParams, res, step);
    const file = this.files.get(url.pathname);
    if (!file) {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('not found');
      return;
    }
    this.serveFile(file, req, res, step);
  }

  private serveFile(file: ServedFile, req: IncomingMessage, res: ServerResponse, step: Step | undefined): void {
    const etag =
      file.etag === false
        ? null
        : (file.etag ?? `"${createHash('sha256').update(file.body).digest('hex').slice(0, 16)}"`);
    const ranges = file.ranges !== false;
    const headers: Record<string, string> = { 'content-type': file.contentType ?? 'text/csv; charset=utf-8' };
    if (etag) headers.etag = etag;
    if (file.lastModified) headers['last-modified'] = file.lastModified;
    if (ranges) headers['accept-ranges'] = 'bytes';
    const inm = req.headers['if-none-match'];
    const ims = req.headers['if-modified-since'];
    if ((etag && inm === etag) || (!inm && file.lastModified && ims === file.lastModified)) {
      res.writeHead(304, headers);
      res.end();
      return;
    }
    let body = file.body;
    let status = 200;
    const range = /^bytes=(\d+)-$/.exec(req.headers.range ?? '');
    const ifRange = req.headers['if-range'];
    if (ranges && range && (!ifRange || ifRange === etag || ifRange === file.lastModified)) {
      const start = Number(range[1]);
      if (start >= file.body.length) {
        res.writeHead(416, { 'content-range': `bytes */${file.body.length}` });
        res.end();
        return;
      }
      status = 206;
      body = file.body.subarray(start);
      headers['content-range'] = `bytes ${start}-${file.body.length - 1}/${file.body.length}`;
    }
    headers['content-length'] = String(body.length);
    res.writeHead(status, headers);
    if (step && 'drop' in step) {
      res.write(body.subarray(0, step.drop), () => res.socket?.destroy());
      return;
    }
    if (step && 'truncate' in step) {
      res.write(body.subarray(0, step.truncate), () => res.socket?.end());
      return;
    }
    res.end(body);
  }

  private query(layer: ArcgisLayer, q: URLSearchParams, res: ServerResponse, step: Step | undefined): void {
    const json = (doc: unknown): void => {
      const text = JSON.stringify(doc);
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
      if (step && 'drop' in step) res.write(text.slice(0, step.drop), () => res.socket?.destroy());
      else res.end(text);
    };
    if (q.get('f') !== 'json') return json({ error: { code: 400, message: 'f must be json', details: [] } });
    const where = q.get('where') ?? '';
    let match: (a: Record<string, unknown>) => boolean;
    const m = /^(\w+) >= TIMESTAMP '(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)'$/.exec(where);
    if (where === '1=1') match = () => true;
    else if (m) {
      const since = Date.parse(m[2]!.replace(' ', 'T') + 'Z');
      match = (a) => typeof a[m[1]!] === 'number' && (a[m[1]!] as number) >= since;
    } else
      return json({
        error: { code: 400, message: 'Unable to perform query. Please check your parameters.', details: [] },
      });
    const orderBy = (q.get('orderByFields') ?? '').split(' ')[0]!;
    const rows = layer.features.filter((f) => match(f.attributes));
    if (orderBy) rows.sort((a, b) => Number(a.attributes[orderBy]) - Number(b.attributes[orderBy]));
    const offset = Number(q.get('resultOffset') ?? 0);
    const count = Math.min(Number(q.get('resultRecordCount') ?? layer.maxRecordCount), layer.maxRecordCount);
    const page = rows.slice(offset, offset + count);
    json({
      objectIdFieldName: 'OBJECTID',
      spatialReference: layer.spatialReference ?? { wkid: 2157, latestWkid: 2157 },
      features: page,
      ...(offset + page.length < rows.length ? { exceededTransferLimit: true } : {}),
    });
  }
}

/** A sleep that returns at once and remembers what was asked (no test waits real seconds). */
export function fakeDeps(start = new Date('2026-11-09T05:00:00Z')) {
  const sleeps: number[] = [];
  const lines: string[] = [];
  let t = start.getTime();
  return {
    sleeps,
    lines,
    deps: {
      now: () => new Date(t),
      sleep: async (ms: number) => {
        sleeps.push(ms);
        t += ms;
      },
      random: () => 0.5,
      log: (l: string) => void lines.push(l),
    },
  };
}
