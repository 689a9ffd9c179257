/**
 * Compression of streamed text exports (`.csv`, `.jsonl`).
 */
import { Readable, pipeline } from 'node:stream';
import { createGzip } from 'node:zlib';
import type { AppContext } from '../http/context.ts';

/**
 * gzip the body when the client accepts it (`Accept-Encoding: gzip`), still streaming: sets
 * `Content-Encoding` and `Vary`. Level 1: most of the size gain at a fraction of the CPU, so a
 * compressed export is not slower than the network. The two streams are joined with
 * `pipeline`, so destroying the response body also ends the source (and its DuckDB COPY).
 */
export function maybeGzip(ctx: AppContext, body: Readable): Readable {
  ctx.vary('Accept-Encoding');
  if (ctx.acceptsEncodings('gzip', 'identity') !== 'gzip') return body;
  ctx.set('Content-Encoding', 'gzip');
  return pipeline(body, createGzip({ level: 1 }), () => {}) as unknown as Readable;
}
