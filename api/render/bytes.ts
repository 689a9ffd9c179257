/**
 * A growable byte buffer for responses assembled from pre-rendered JSON fragments (the list
 * pages of `GET /v1/leads`: the row store writes each lead's JSON text straight into it, so a
 * page never becomes JS objects and is never `JSON.stringify`-ed).
 *
 * @example
 *   const out = new ByteWriter(64 * 1024);
 *   out.ascii('{"results":[');
 *   rows.writeJson(out, slot, none);
 *   out.ascii(']}');
 *   ctx.body = out.take();
 */
export class ByteWriter {
  buf: Buffer;
  len = 0;
  /** `dataView()`'s view and the buffer it is over. */
  private dv: DataView | null = null;
  private dvOf: Buffer | null = null;

  /** A writer over a buffer of `capacity` bytes, or over the buffer given (e.g. from a `BufferPool`). */
  constructor(capacity: number | Buffer = 16 * 1024) {
    this.buf = typeof capacity === 'number' ? Buffer.allocUnsafe(capacity) : capacity;
  }

  /** Make room for `n` more bytes. */
  ensure(n: number): void {
    if (this.len + n <= this.buf.length) return;
    const bigger = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.len + n));
    this.buf.copy(bigger, 0, 0, this.len);
    this.buf = bigger;
  }

  /**
   * A DataView over `buf` (made again after `buf` was replaced), for writers that copy several
   * bytes per step (`RowStore.writeJson`): they still keep `len` and call `ensure` themselves.
   */
  dataView(): DataView {
    const b = this.buf;
    if (this.dvOf !== b) {
      this.dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
      this.dvOf = b;
    }
    return this.dv!;
  }

  /** Append `src[start, end)`. Short runs are copied in JS (cheaper than a native call). */
  bytes(src: Uint8Array, start: number, end: number): void {
    const n = end - start;
    if (this.len + n > this.buf.length) this.ensure(n);
    const buf = this.buf;
    if (n <= 24) {
      let o = this.len;
      for (let i = start; i < end; i++) buf[o++] = src[i]!;
    } else buf.set(src.subarray(start, end), this.len);
    this.len += n;
  }

  /** Append a string known to be ASCII (JSON punctuation, numbers, base64url). */
  ascii(s: string): void {
    const n = s.length;
    if (this.len + n > this.buf.length) this.ensure(n);
    if (n <= 24) {
      const buf = this.buf;
      let o = this.len;
      for (let i = 0; i < n; i++) buf[o++] = s.charCodeAt(i);
      this.len = o;
    } else this.len += this.buf.write(s, this.len, 'latin1');
  }

  /** Append any string as UTF-8. */
  utf8(s: string): void {
    this.ensure(Buffer.byteLength(s));
    this.len += this.buf.write(s, this.len, 'utf8');
  }

  /** Append one byte. */
  byte(b: number): void {
    if (this.len === this.buf.length) this.ensure(1);
    this.buf[this.len++] = b;
  }

  /** The bytes written, as a buffer of their own (the writer can be reused after). */
  take(): Buffer {
    const out = Buffer.allocUnsafe(this.len);
    this.buf.copy(out, 0, 0, this.len);
    this.len = 0;
    return out;
  }

  /** The bytes written, without a copy (for a writer used once: it must not be written to after). */
  view(): Buffer {
    return this.buf.subarray(0, this.len);
  }

  /** The bytes written as a string (no copy kept). */
  toString(): string {
    return this.buf.toString('utf8', 0, this.len);
  }
}

/**
 * Reusable response buffers. A list page is ~40 KB; allocated fresh for every request, those
 * buffers are external memory V8 frees only at its next full GC, so at a few thousand requests a
 * second the process holds 100+ MB of dead pages. A buffer is taken for a response and given back
 * when the response has been handed to the socket (`finish`), never while it may still be read.
 * Larger answers (a 1,000-lead cursor export page is ~2 MB) get a buffer of a power-of-two size
 * up to `LARGE_MAX`, a few of each size kept: a cursor export's walk allocated 400 MB of them.
 */
export class BufferPool {
  private readonly free: Buffer[] = [];
  /** Free buffers larger than `size`, by their (power-of-two) size. */
  private readonly large = new Map<number, Buffer[]>();

  /** Buffers of this size are pooled; a larger request gets a buffer of its own. */
  private readonly size: number;
  /** Free buffers kept at most. */
  private readonly keep: number;
  constructor(size = 256 * 1024, keep = 64) {
    this.size = size;
    this.keep = keep;
  }

  /** A buffer of at least `min` bytes. */
  take(min: number): Buffer {
    if (min <= this.size) return this.free.pop() ?? Buffer.allocUnsafeSlow(this.size);
    if (min > LARGE_MAX) return Buffer.allocUnsafe(min);
    const cls = 2 ** Math.ceil(Math.log2(min));
    return this.large.get(cls)?.pop() ?? Buffer.allocUnsafeSlow(cls);
  }

  /** Give back a buffer taken from `take` that nothing reads any more (others are left to the GC). */
  give(buf: Buffer): void {
    if (buf.byteOffset !== 0 || buf.buffer.byteLength !== buf.length) return; // a view of a larger buffer
    if (buf.length === this.size) {
      if (this.free.length < this.keep) this.free.push(buf);
      return;
    }
    const n = buf.length;
    if (n < this.size || n > LARGE_MAX || (n & (n - 1)) !== 0) return;
    let list = this.large.get(n);
    if (!list) this.large.set(n, (list = []));
    if (list.length < LARGE_KEEP) list.push(buf);
  }

  /** Buffers waiting to be reused. */
  get idle(): number {
    let n = this.free.length;
    for (const list of this.large.values()) n += list.length;
    return n;
  }
}

/** The largest pooled buffer: answers above it get a buffer of their own. */
const LARGE_MAX = 8 * 1024 * 1024;
/** Free buffers kept of each size above the pool's own. */
const LARGE_KEEP = 4;
