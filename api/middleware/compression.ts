/**
 * Compression of answers (issue 31.11): JSON, GeoJSON, JSON Lines, CSV, HTML, vector tiles and
 * other compressible types are sent gzip- or brotli-encoded when the client accepts it
 * (`Accept-Encoding`, q-values honoured; brotli when both are equally welcome) and the body is at
 * least `COMPRESS_MIN_BYTES` (config `compressMinBytes`) — smaller ones gain nothing worth the CPU.
 *
 * - Buffered bodies (a page of leads, a GeoJSON page, a tile) are compressed in one call on
 *   libuv's thread pool (node:zlib's async API), so the event loop goes on serving meanwhile;
 *   streamed bodies (exports) are compressed as streams. A body a route marks `unchangingBody`
 *   (the OpenAPI document, the docs' assets) is compressed once per coding.
 * - Brotli quality `BROTLI_QUALITY` (4) and gzip level `GZIP_LEVEL` (6): for dynamic answers,
 *   brotli 4 is about as fast as gzip 6 and smaller (the figures: docs/performance.md).
 * - `Vary: Accept-Encoding` on every answer of a compressible type (and on 304s), compressed or
 *   not, so a shared cache keeps one copy per encoding.
 * - ETags stay as they are: they are weak (`W/"…"`, api/middleware/conditional.ts) and name the
 *   content, not its bytes, so one tag serves identity, gzip and br alike and a 304 answers any of
 *   them — as nginx does when it compresses (it turns a strong ETag weak).
 * - Never compressed: `HEAD` (no body; the headers are the identity answer's), answers already
 *   encoded (`Content-Encoding` set: the exports' own gzip, api/render/lines.ts, and the
 *   pre-compressed /v1/reference), types that are compressed inside or not compressible
 *   (Parquet, images, archives), `Cache-Control: no-transform`, and problems (mounted inside the
 *   problem middleware: they are small, and the access log reads their code from the body).
 * - Not on the account area (`/app`): its pages carry CSRF tokens next to what the user typed and
 *   are sent with a session cookie — the mix BREACH needs. Bearer-key answers are not exposed to it
 *   (a foreign page cannot make the browser add the key).
 */
import type { Middleware } from 'koa';
import { pipeline, type Readable } from 'node:stream';
import { promisify } from 'node:util';
import { brotliCompress, constants, createBrotliCompress, createGzip, gzip } from 'node:zlib';
import type { ApiConfig } from '../config.ts';

/** A content coding this server produces. */
export type Coding = 'br' | 'gzip';

/** Brotli quality (0–11) of dynamic answers: past 5 the CPU grows much faster than the gain. */
const BROTLI_QUALITY = 4;
/** gzip level (1–9), zlib's default balance. */
const GZIP_LEVEL = 6;

const brotliAsync = promisify(brotliCompress);
const gzipAsync = promisify(gzip);

const brotliOptions = (sizeHint: number) => ({
  params: { [constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY, [constants.BROTLI_PARAM_SIZE_HINT]: sizeHint },
});

/** Compress `bytes` with `coding` (on the thread pool). */
function compress(coding: Coding, bytes: Buffer): Promise<Buffer> {
  return coding === 'br' ? brotliAsync(bytes, brotliOptions(bytes.length)) : gzipAsync(bytes, { level: GZIP_LEVEL });
}

/**
 * True for media types worth compressing: text, JSON and `+json` types (GeoJSON, problems,
 * quotes, OpenAPI), JSON Lines, XML, JavaScript, SVG and Mapbox vector tiles (served unencoded
 * by api/routes/tiles.ts). Not server-sent events (a compressor would hold events back).
 */
export function compressible(type: string): boolean {
  const t = (type.split(';')[0] ?? '').trim().toLowerCase();
  if (t === '' || t === 'text/event-stream') return false;
  if (t.startsWith('text/')) return true;
  if (/^application\/([a-z0-9.+-]+\+)?(json|xml)$/.test(t)) return true;
  return [
    'application/x-ndjson',
    'application/javascript',
    'application/vnd.mapbox-vector-tile',
    'image/svg+xml',
  ].includes(t);
}

/**
 * The coding to answer with for an `Accept-Encoding` header (RFC 9110 §12.5.3), or null for
 * identity: the higher q-value of `br` and `gzip` (`x-gzip` counts as gzip; `*` stands for any
 * coding not named; a malformed q-value counts as 0), brotli when they are equal, and identity
 * when neither is acceptable or the client names identity with a higher q-value than both.
 *
 * @example chooseEncoding('gzip, deflate, br')   // 'br'
 *          chooseEncoding('br;q=0.5, gzip')      // 'gzip'
 *          chooseEncoding('identity')            // null
 */
export function chooseEncoding(header: string | undefined): Coding | null {
  if (!header) return null;
  const q = new Map<string, number>();
  for (const part of header.split(',')) {
    const [name = '', ...params] = part.split(';');
    let coding = name.trim().toLowerCase();
    if (coding === '') continue;
    if (coding === 'x-gzip') coding = 'gzip';
    let weight = 1;
    for (const p of params) {
      const [k = '', v = ''] = p.split('=').map((s) => s.trim());
      if (k.toLowerCase() !== 'q') continue;
      weight = /^(0(\.\d{0,3})?|1(\.0{0,3})?)$/.test(v) ? Number(v) : 0;
    }
    if (!q.has(coding)) q.set(coding, weight);
  }
  const of = (c: string, otherwise: number): number => q.get(c) ?? q.get('*') ?? otherwise;
  const br = of('br', 0);
  const gz = of('gzip', 0);
  const identity = q.get('identity'); // when not named: acceptable, but below any coding the client lists
  const best = Math.max(br, gz);
  if (best <= 0 || (identity !== undefined && identity > best)) return null;
  return br >= gz ? 'br' : 'gzip';
}

/**
 * Bodies a route sends unchanged for the life of the process (the OpenAPI document, Swagger UI's
 * files): compressed once per coding and kept with the body, not again on every request (the
 * 770 KB OpenAPI document took ~10 ms of brotli each time).
 */
const unchanging = new WeakMap<Buffer, Partial<Record<Coding, Buffer>>>();

/** Mark `body` (a Buffer a route keeps and sends again) as unchanging: its compressed forms are kept. */
export function unchangingBody(body: Buffer): Buffer {
  if (!unchanging.has(body)) unchanging.set(body, {});
  return body;
}

const isStream = (body: unknown): body is Readable =>
  typeof body === 'object' &&
  body !== null &&
  typeof (body as { pipe?: unknown }).pipe === 'function' &&
  typeof (body as { on?: unknown }).on === 'function';

/**
 * The compression middleware (api/app.ts: inside the problem middleware, outside everything else).
 * `compressMinBytes` null switches compression off.
 */
export function compressionMiddleware(config: Pick<ApiConfig, 'compressMinBytes'>): Middleware {
  const minBytes = config.compressMinBytes;
  if (minBytes === null) return (_ctx, next) => next();
  return async (ctx, next) => {
    await next();
    if (ctx.path === '/app' || ctx.path.startsWith('/app/')) return; // BREACH: see above
    if (ctx.status === 304) {
      ctx.vary('Accept-Encoding'); // as the 200 it stands for
      return;
    }
    const body: unknown = ctx.body;
    if (body === null || body === undefined || ctx.response.get('Content-Encoding')) return;
    if (!compressible(ctx.response.type)) return;
    ctx.vary('Accept-Encoding');
    if (ctx.method === 'HEAD' || /\bno-transform\b/i.test(ctx.response.get('Cache-Control'))) return;
    const coding = chooseEncoding(ctx.get('Accept-Encoding'));
    if (coding === null) return;
    if (isStream(body)) {
      // unknown length: always compressed; destroying the response body (Koa, on close) ends the source too
      const encoder = coding === 'br' ? createBrotliCompress(brotliOptions(0)) : createGzip({ level: GZIP_LEVEL });
      ctx.set('Content-Encoding', coding);
      ctx.body = pipeline(body, encoder, () => {}) as unknown as Readable;
      return;
    }
    let bytes: Buffer;
    if (Buffer.isBuffer(body)) bytes = body;
    else if (typeof body === 'string') bytes = Buffer.from(body);
    else if (
      body instanceof Uint8Array ||
      body instanceof Blob ||
      body instanceof ReadableStream ||
      body instanceof Response
    )
      return;
    else bytes = Buffer.from(JSON.stringify(body)); // what Koa would send
    if (bytes.length < minBytes) return;
    const kept = unchanging.get(bytes);
    let encoded: Buffer;
    try {
      encoded = kept?.[coding] ?? (await compress(coding, bytes));
    } catch {
      return; // sent as it is
    }
    if (kept) kept[coding] = encoded;
    ctx.body = encoded; // Content-Length follows; Content-Type stays
    ctx.set('Content-Encoding', coding);
  };
}
