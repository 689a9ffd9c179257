/**
 * Output helpers of the generator: a buffered synchronous file sink (UTF-8 with optional BOM, or
 * Windows-1252), day-number date arithmetic, and the date spellings publishers mix.
 */
import { closeSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';

/** Rows and bytes written to one file. */
export interface FileStats {
  path: string;
  rows: number;
  bytes: number;
}

export type SinkEncoding = 'utf-8' | 'windows-1252';

const NOT_CP1252 = /[^\x00-\x7f\xa0-\xff€]/;
const FLUSH_CHARS = 1 << 20;

/**
 * Encode text as Windows-1252. Only ASCII, Latin-1 letters and `€` (0x80) are allowed; any other
 * character throws, so the generator can never write a byte sequence the register would not.
 */
export function encodeCp1252(text: string): Buffer {
  const bad = NOT_CP1252.exec(text);
  if (bad) throw new Error(`character U+${bad[0].codePointAt(0)!.toString(16)} cannot be written as Windows-1252`);
  return Buffer.from(text.replace(/€/g, '\x80'), 'latin1');
}

/** A write-only CSV file: lines are buffered and flushed in ~1 MB chunks. */
export class FileSink {
  private readonly fd: number;
  private buf: string[] = [];
  private bufChars = 0;
  private bytes = 0;
  /** Data rows written (the header is not counted). */
  rows = 0;

  readonly path: string;
  private readonly opts: { encoding: SinkEncoding; bom?: boolean; eol: '\n' | '\r\n' };
  constructor(path: string, opts: { encoding: SinkEncoding; bom?: boolean; eol: '\n' | '\r\n' }) {
    this.path = path;
    this.opts = opts;
    mkdirSync(dirname(path), { recursive: true });
    this.fd = openSync(path, 'w');
    if (opts.bom) this.writeBytes(Buffer.from([0xef, 0xbb, 0xbf]));
  }

  /** Write the header line (not counted as a row). */
  header(line: string): void {
    this.push(line);
  }

  /** Write one data line (no newline). */
  row(line: string): void {
    this.rows++;
    this.push(line);
  }

  private push(line: string): void {
    this.buf.push(line, this.opts.eol);
    this.bufChars += line.length + 2;
    if (this.bufChars >= FLUSH_CHARS) this.flush();
  }

  private flush(): void {
    if (this.buf.length === 0) return;
    const text = this.buf.join('');
    this.buf = [];
    this.bufChars = 0;
    this.writeBytes(this.opts.encoding === 'windows-1252' ? encodeCp1252(text) : Buffer.from(text, 'utf8'));
  }

  private writeBytes(b: Buffer): void {
    let off = 0;
    while (off < b.length) off += writeSync(this.fd, b, off, b.length - off);
    this.bytes += b.length;
  }

  /** Flush and close; returns what was written. */
  close(): FileStats {
    this.flush();
    closeSync(this.fd);
    return { path: this.path, rows: this.rows, bytes: this.bytes };
  }
}

// ---------------------------------------------------------------------------------------------
// Dates as whole days since 1970-01-01 (UTC): cheap to add and compare.

const MS_DAY = 86_400_000;
const isoCache = new Map<number, string>();

/** Day number of an ISO date. */
export function isoToDay(iso: string): number {
  return Math.round(Date.parse(`${iso}T00:00:00Z`) / MS_DAY);
}

/** ISO date of a day number. */
export function dayToIso(day: number): string {
  let s = isoCache.get(day);
  if (s === undefined) {
    s = new Date(day * MS_DAY).toISOString().slice(0, 10);
    isoCache.set(day, s);
  }
  return s;
}

/** Day number of 1 January of a year. */
export function yearStart(year: number): number {
  return Math.round(Date.UTC(year, 0, 1) / MS_DAY);
}

/** The date spellings found in the planning export (all accepted by `parseDate`). */
export type DateStyle = 0 | 1 | 2 | 3;

/** Format a day as `2023-04-05` (0), `05/04/2023` (1), `2023/04/05 00:00:00` (2), `2023-04-05T00:00:00Z` (3). */
export function fmtDate(day: number | null, style: DateStyle): string {
  if (day === null) return '';
  const iso = dayToIso(day);
  switch (style) {
    case 0:
      return iso;
    case 1:
      return `${iso.slice(8, 10)}/${iso.slice(5, 7)}/${iso.slice(0, 4)}`;
    case 2:
      return `${iso.slice(0, 4)}/${iso.slice(5, 7)}/${iso.slice(8, 10)} 00:00:00`;
    default:
      return `${iso}T00:00:00Z`;
  }
}

/** `dd/mm/yyyy`, as the Property Price Register writes dates. */
export function fmtDmy(day: number): string {
  return fmtDate(day, 1);
}

/** Format euro amounts like the register: `€1,070,000.00`. */
export function fmtEuro(cents: number): string {
  const euros = Math.floor(cents / 100);
  const c = String(cents % 100).padStart(2, '0');
  return `€${group3(euros)}.${c}`;
}

/** Thousands separators: 1070000 → `1,070,000`. */
export function group3(n: number): string {
  const s = String(n);
  let out = '';
  for (let i = 0; i < s.length; i++) {
    if (i > 0 && (s.length - i) % 3 === 0) out += ',';
    out += s[i];
  }
  return out;
}
