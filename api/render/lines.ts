/**
 * Text exports streamed from DuckDB: each DuckDB chunk (≤ 2,048 rows) of a one-column VARCHAR
 * result — one rendered row per value — becomes one Buffer of lines. The stream pulls the next
 * chunk only when the HTTP response has drained (Readable backpressure), so memory stays at a
 * few chunks whatever the size of the export; destroying it (client gone) ends the DuckDB query
 * and closes its connection.
 */
import { Readable, pipeline } from 'node:stream';
import { createGzip } from 'node:zlib';
import type { AppContext } from '../context.ts';

/**
 * A byte stream of `head` (if any) and every row of `batches` (column-major chunks as
 * `ApiDb.stream` yields them; the first column holds the rendered row), each followed by `eol`.
 */
export function linesStream(batches: AsyncGenerator<unknown[][], void, undefined>, opts: { head?: string; eol: string }): Readable {
  async function* bytes(): AsyncGenerator<Buffer> {
    if (opts.head !== undefined) yield Buffer.from(opts.head + opts.eol);
    for await (const columns of batches) {
      const rows = columns[0] as string[];
      if (rows.length > 0) yield Buffer.from(rows.join(opts.eol) + opts.eol);
    }
  }
  return Readable.from(bytes(), { objectMode: false, highWaterMark: 256 * 1024 });
}

/**
 * gzip the body when the client accepts it (`Accept-Encoding: gzip`), still streaming: sets
 * `Content-Encoding` and `Vary`. Level 1: most of the size gain at a fraction of the CPU, so a
 * compressed export is not slower than the network. The two streams are joined with
 * `pipeline`, so destroying the response body also ends the source (and its DuckDB query).
 */
export function maybeGzip(ctx: AppContext, body: Readable): Readable {
  ctx.vary('Accept-Encoding');
  if (ctx.acceptsEncodings('gzip', 'identity') !== 'gzip') return body;
  ctx.set('Content-Encoding', 'gzip');
  return pipeline(body, createGzip({ level: 1 }), () => {}) as unknown as Readable;
}
