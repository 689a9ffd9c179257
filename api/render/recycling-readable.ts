/**
 * A Readable whose chunks come back when an HTTP response is done with them, so a long export
 * reuses a few buffers instead of allocating one per chunk (whose external memory sets V8 marking
 * the whole server heap again and again: docs/performance.md, "Where the export path's time
 * goes"). Used by the streams of DuckDB's writers (`copy-stream.ts`) and of the leads engine's
 * CSV and JSON Lines (`engine-lines.ts`).
 */
import { ServerResponse } from 'node:http';
import { Readable, type ReadableOptions } from 'node:stream';

/**
 * Piped into a `ServerResponse`, it writes each chunk with a callback (what `Readable.pipe` does,
 * plus the callback) and hands the chunk to `recycle` when the socket has written it. Piped
 * anywhere else it is a plain Readable.
 */
export class RecyclingReadable extends Readable {
  private readonly recycle: (chunk: Buffer) => void;

  constructor(options: ReadableOptions, recycle: (chunk: Buffer) => void) {
    super(options);
    this.recycle = recycle;
  }

  override pipe<T extends NodeJS.WritableStream>(dest: T, options?: { end?: boolean }): T {
    if (!(dest instanceof ServerResponse)) return super.pipe(dest, options);
    const res: ServerResponse = dest;
    const resume = (): void => void this.resume();
    const onData = (chunk: Buffer): void => {
      if (!res.write(chunk, (err) => err || this.recycle(chunk))) {
        this.pause();
        res.once('drain', resume);
      }
    };
    const stop = (): void => {
      this.off('data', onData);
      res.off('drain', resume);
    };
    this.on('data', onData);
    this.once('end', () => {
      stop();
      if (options?.end !== false) res.end();
    });
    res.once('close', stop);
    res.emit('pipe', this);
    this.resume();
    return dest;
  }
}
