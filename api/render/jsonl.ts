/**
 * JSON Lines renderer (`GET /v1/export/applications.jsonl`): one lead object per line (`\n`)
 * with the keys (schema order) and values of a `GET /v1/leads` result, masked enriched fields
 * null; rows in the release's order (newest first).
 *
 * Written by the release's leads engine from its row store (`LeadsEngine.jsonLines`: each lead's
 * JSON text as a list page writes it), ~100 leads a chunk, one chunk each time the response wants
 * more, at most four in one run of the event loop — never the whole set in memory, never more than
 * ~2 ms of the event loop at a time. The chunks are the engine's pooled buffers, given back once the socket has
 * written them (`RecyclingReadable`). No temp file: the rows are in memory already. It was DuckDB's
 * JSON writer over the release's Parquet until 2026-12-06 (docs/performance.md, "JSON Lines from
 * the leads engine").
 */
import type { Readable } from 'node:stream';
import type { Masking } from '../access/masking.ts';
import type { JsonBody, LeadsEngine } from '../engine/leads-engine.ts';
import type { LeadsFilters } from '../query/leads-query.ts';
import { RecyclingReadable } from './recycling-readable.ts';

/** Chunks written in one run of the event loop (~200 KB and ~0.5 ms each). */
const BURST_CHUNKS = 4;

/** Stream the leads matching `filters` as JSON Lines, masked by `masking`. */
export function jsonlStream(engine: LeadsEngine, filters: LeadsFilters, masking: Masking): Readable {
  const next = engine.jsonLines(filters, masking);
  const written = new WeakMap<Buffer, JsonBody>();
  let burst = 0;
  const stream: Readable = new RecyclingReadable(
    {
      // At most BURST_CHUNKS in one run, then the next on a later turn (setImmediate, after the
      // event loop has polled for I/O): a socket that takes every chunk at once (loopback, a fast
      // client) would otherwise keep the stream flowing on nextTicks, the whole export in one run
      // with no other request served meanwhile (four exports held /v1/leads' p99 at 0.8 s).
      read() {
        if (burst++ < BURST_CHUNKS) return writeChunk();
        setImmediate(() => {
          burst = 1;
          writeChunk();
        });
      },
    },
    (bytes) => written.get(bytes)?.done(),
  );
  const writeChunk = (): void => {
    if (stream.destroyed) return;
    let chunk: JsonBody | null;
    try {
      chunk = next();
    } catch (e) {
      stream.destroy(e as Error); // cuts the response: the client never sees a short file that looks whole
      return;
    }
    if (chunk === null) {
      stream.push(null);
      return;
    }
    written.set(chunk.bytes, chunk);
    stream.push(chunk.bytes);
  };
  return stream;
}
