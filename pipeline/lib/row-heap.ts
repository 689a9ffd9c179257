/**
 * A heap file of JSON rows: rows appended one per line, each located by its byte offset and
 * length, and read back one at a time in any order. The refresh keeps the lead build's large rows
 * (applications, notices) here, out of DuckDB and out of the JavaScript heap, while DuckDB sorts
 * and joins only their small index columns (pipeline/normalise/lead-staging.ts).
 */
import { closeSync, openSync, readSync, writeSync } from 'node:fs';

/** Where a row lies in its heap file. */
export interface HeapRef {
  offset: number;
  bytes: number;
}

/** Appends JSON rows to a heap file in ~1 MB writes. */
export class RowHeapWriter {
  readonly path: string;
  private readonly fd: number;
  private pending: string[] = [];
  private pendingBytes = 0;
  private offset = 0;

  constructor(path: string) {
    this.path = path;
    this.fd = openSync(path, 'w');
  }

  /** Append one row; returns where it lies. */
  append(row: unknown): HeapRef {
    const text = JSON.stringify(row);
    const bytes = Buffer.byteLength(text, 'utf8');
    const ref = { offset: this.offset, bytes };
    this.pending.push(text);
    this.offset += bytes + 1;
    this.pendingBytes += bytes + 1;
    if (this.pendingBytes > 1 << 20) this.flush();
    return ref;
  }

  close(): void {
    this.flush();
    closeSync(this.fd);
  }

  private flush(): void {
    if (this.pending.length) writeSync(this.fd, this.pending.join('\n') + '\n');
    this.pending = [];
    this.pendingBytes = 0;
  }
}

/** Reads rows of a heap file by their `HeapRef`. */
export class RowHeapReader {
  private readonly fd: number;
  private buf = Buffer.alloc(64 * 1024);

  constructor(path: string) {
    this.fd = openSync(path, 'r');
  }

  read<T>(offset: number, bytes: number): T {
    if (bytes > this.buf.length) this.buf = Buffer.alloc(Math.max(bytes, this.buf.length * 2));
    let got = 0;
    while (got < bytes) {
      const n = readSync(this.fd, this.buf, got, bytes - got, offset + got);
      if (n === 0) throw new Error(`row heap: ${bytes} bytes at ${offset} run past the end of the file`);
      got += n;
    }
    return JSON.parse(this.buf.toString('utf8', 0, bytes)) as T;
  }

  close(): void {
    closeSync(this.fd);
  }
}
