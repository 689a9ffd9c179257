/**
 * The stream of an export the leads engine writes from memory (`LeadsEngine.exportLines`: JSON
 * Lines, and CSV when masking allows): ~100 leads a chunk, one chunk each time the response wants
 * more, at most `BURST_CHUNKS` in one run of the event loop — never the whole set in memory, never
 * more than ~2 ms of the event loop at a time. The chunks are the engine's pooled buffers, given
 * back once the socket has written them (`RecyclingReadable`). No temp file: the rows are in
 * memory already.
 */
import type { Readable } from 'node:stream';
import type { JsonBody } from '../engine/leads-engine.ts';
import { RecyclingReadable } from './recycling-readable.ts';

/** Chunks written in one run of the event loop (~200 KB and ~0.5 ms each). */
const BURST_CHUNKS = 4;

/** A stream of `head` (if any), then each chunk `next` gives until it gives null. */
export function engineLinesStream(next: () => JsonBody | null, head = ''): Readable {
  const written = new WeakMap<Buffer, JsonBody>();
  let burst = 0;
  let headSent = head === '';
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
    if (!headSent) {
      headSent = true;
      stream.push(Buffer.from(head));
      return;
    }
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
