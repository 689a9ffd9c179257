/**
 * Text exports written by DuckDB's own writers and streamed while they write: `COPY (query) TO
 * '<temp file>'` runs on a connection of its own (`ApiDb.startAlone`), and the response reads
 * the file as it grows — whatever exists, then a short wait at the end of what is written so
 * far, until the COPY has finished and the rest is read. Node never renders a row.
 *
 * - Backpressure: the file is read only when the response wants more (Readable `read()`), one
 *   256 KB chunk at a time; the file on disk absorbs the difference, memory does not grow.
 * - Chunks are reused: piped straight into an HTTP response (identity coding, the usual case),
 *   each chunk is written with a callback (`res.write(chunk, cb)`), called once the socket has
 *   handed the bytes to the kernel, and the chunk's buffer is read into again. Without it a JSON
 *   Lines export allocated ~1,600 fresh 256 KB buffers, and their external memory set V8 marking
 *   the whole server heap again and again (docs/performance.md, "Where the export path's time
 *   goes"). Piped anywhere else (gzip), chunks are fresh each time, as Readable.pipe gives no
 *   word of when a chunk is let go.
 * - Reads are synchronous, from the page cache DuckDB has just written (tens of µs per chunk):
 *   a running COPY holds a thread of Node's libuv pool, so async file reads could wait behind
 *   the COPYs of other exports.
 * - The temp file (`0600`, in the server's private folder, see `api/exports/temp-space.ts`) is released
 *   — deleted, its space given back — when the stream closes (end, error or client gone); a client
 *   that goes away interrupts the COPY. A failed COPY destroys the stream with its error, which
 *   cuts the connection (the client sees a truncated chunked body, never a short file that looks
 *   whole).
 * - Bounded: while the COPY runs, the file's size is looked at every `LIMIT_CHECK_MS`; past the
 *   temp file's `limitBytes` (EXPORT_TEMP_MAX_MB) the COPY is cancelled and the stream fails as a
 *   failed COPY does, so one export never holds much more than the bound (a slow client no
 *   longer lets DuckDB fill the disk ahead of it).
 */
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import type { Readable } from 'node:stream';
import { sqlString, type ApiDb } from '../duckdb/db.ts';
import type { TempFile } from '../exports/temp-space.ts';
import { RecyclingReadable } from './recycling-readable.ts';

/** Bytes read per chunk. */
const CHUNK = 256 * 1024;
/** Wait at the end of what DuckDB has written so far before looking again. */
const TAIL_WAIT_MS = 10;
/** Bytes read in one synchronous run before the event loop gets a turn. */
const BURST_BYTES = 4 * CHUNK;
/** How often the size of a file being written is compared with its bound. */
const LIMIT_CHECK_MS = 5;

/** Chunk buffers of this module (their ArrayBuffers): only these go back to a stream's spares. */
const OWN_CHUNKS = new WeakSet<ArrayBufferLike>();
/** Chunk buffers this module has allocated since start (test/api/render/copy-stream.test.ts counts them). */
export const chunkBuffers = { allocated: 0 };
/** Spare chunks a stream keeps at most (more in flight are left to the collector). */
const MAX_SPARES = 8;

/** The error a stream fails with when its file passes the temp bound. */
export class ExportTempBoundError extends Error {
  readonly limitBytes: number;
  constructor(limitBytes: number) {
    super(`the export's temp file passed EXPORT_TEMP_MAX_MB (${limitBytes} bytes): its COPY was stopped`);
    this.limitBytes = limitBytes;
    this.name = 'ExportTempBoundError';
  }
}

export interface CopyStreamOptions {
  /** The query whose rows are written, and its parameters. */
  sql: string;
  params: readonly unknown[];
  /** COPY options, e.g. `FORMAT JSON` or `FORMAT CSV, FORCE_QUOTE (…)`. */
  options: string;
  /** Bytes sent before the file (a CSV header of our own). */
  head?: string;
  /** The temp file DuckDB writes into (it exists, empty, with its mode); released when the stream closes. */
  file: TempFile;
}

/**
 * One COPY's file read as it grows: the statement's state, how far the file has been read, the
 * timers, and the stream the response reads (`stream`).
 */
class CopyTail {
  readonly stream: Readable;
  private readonly job: { done: Promise<void>; cancel(): void };
  private readonly file: TempFile;
  private readonly path: string;
  private readonly finished: Promise<void>;
  private readonly watch: NodeJS.Timeout;
  private settled = false;
  private failure: unknown = null;
  private fd: number | null = null;
  private pos = 0;
  private timer: NodeJS.Timeout | null = null;
  private ended = false;
  /** Bytes pushed since the event loop last ran. */
  private burst = 0;
  /** Chunk buffers written out and handed back (`RecyclingReadable`), read into again. */
  private readonly spares: Buffer[] = [];

  constructor(job: { done: Promise<void>; cancel(): void }, file: TempFile) {
    this.job = job;
    this.file = file;
    this.path = file.path;
    this.finished = job.done.then(
      () => void (this.settled = true),
      (e: unknown) => {
        this.settled = true;
        this.failure = e;
      },
    );
    // the bound, watched while DuckDB writes (reading may lag behind a slow client)
    this.watch = setInterval(() => this.checkBound(), LIMIT_CHECK_MS);
    void this.finished.then(() => clearInterval(this.watch));
    this.stream = new RecyclingReadable(
      {
        highWaterMark: CHUNK,
        read: () => {
          if (this.timer === null) this.pump();
        },
        destroy: (err, cb) => this.destroy(err, cb),
      },
      (chunk) => this.recycle(chunk),
    );
  }

  /** A chunk buffer to read into: a spare one, or a new one of this module's. */
  private chunk(): Buffer {
    const spare = this.spares.pop();
    if (spare) return spare;
    const buf = Buffer.allocUnsafeSlow(CHUNK);
    OWN_CHUNKS.add(buf.buffer);
    chunkBuffers.allocated++;
    return buf;
  }

  /** A chunk the response has written: its whole buffer is read into again. */
  private recycle(chunk: Buffer): void {
    if (!OWN_CHUNKS.has(chunk.buffer) || this.spares.length >= MAX_SPARES) return;
    this.spares.push(Buffer.from(chunk.buffer, 0, CHUNK));
  }

  private checkBound(): void {
    let size = 0;
    try {
      size = statSync(this.path).size;
    } catch {
      return; // not created yet
    }
    if (size > this.file.limitBytes && !this.settled) this.overBound();
  }

  private overBound(): void {
    clearInterval(this.watch);
    this.failure = new ExportTempBoundError(this.file.limitBytes);
    this.job.cancel();
    this.stream.destroy(this.failure as Error);
  }

  private later(ms = TAIL_WAIT_MS): void {
    this.timer = setTimeout(() => {
      this.timer = null;
      this.burst = 0;
      this.pump();
    }, ms);
  }

  private pump(): void {
    const { stream } = this;
    if (this.ended || stream.destroyed) return;
    const wasSettled = this.settled; // read after this: everything written before it settled is seen
    const failure = this.failure;
    if (failure !== null) return void stream.destroy(failure instanceof Error ? failure : new Error(String(failure)));
    try {
      if (this.fd === null) {
        try {
          this.fd = openSync(this.path, 'r');
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code === 'ENOENT' && !wasSettled) return this.later(); // DuckDB has not created it yet
          throw e;
        }
      }
      for (;;) {
        // a reader that cannot catch up with DuckDB (a fast client on a busy box) would read on in
        // one synchronous run until the COPY ends: let the event loop (and the bound's watch) in
        if (this.burst >= BURST_BYTES) return this.later(0);
        const buf = this.chunk();
        const n = readSync(this.fd, buf, 0, CHUNK, this.pos);
        if (n > 0) {
          this.pos += n;
          this.burst += n;
          if (this.pos > this.file.limitBytes && !wasSettled) return this.overBound();
          if (!stream.push(n === CHUNK ? buf : buf.subarray(0, n))) return; // read() asks again
          continue;
        }
        this.spares.push(buf); // nothing read into it
        if (wasSettled) {
          this.ended = true;
          stream.push(null);
          return;
        }
        return this.later();
      }
    } catch (e) {
      stream.destroy(e as Error);
    }
  }

  private destroy(err: Error | null, cb: (error?: Error | null) => void): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    clearInterval(this.watch);
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
    if (!this.settled) this.job.cancel();
    // delete once DuckDB is done with it
    void this.finished.then(() => this.file.release());
    cb(err);
  }
}

/** Start `COPY (sql) TO <temp file> (options)` and return a stream of the file as it is written. */
export function copyStream(db: ApiDb, opts: CopyStreamOptions): Readable {
  // USE_TMP_FILE false: DuckDB writes into the file we created (keeping its 0600), never beside it
  const job = db.startAlone(
    `COPY (${opts.sql}) TO ${sqlString(opts.file.path)} (${opts.options}, USE_TMP_FILE false)`,
    opts.params,
  );
  const stream = new CopyTail(job, opts.file).stream;
  if (opts.head !== undefined) stream.push(Buffer.from(opts.head));
  return stream;
}
