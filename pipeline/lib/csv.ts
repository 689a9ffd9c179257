/**
 * A streaming CSV reader and a CSV line writer, sized for the publishers' files: RFC 4180
 * quoting, quoted fields that span lines, CRLF or LF, a UTF-8 BOM, and the Windows-1252
 * encoding of the Property Price Register. Lenient where real files are uneven (a quote inside
 * an unquoted field is kept as text) and strict where data would be lost (an unterminated
 * quote becomes a malformed record instead of swallowing the rest of the file).
 */
import { createReadStream } from 'node:fs';

export interface CsvRecord {
  fields: string[];
  /** 1-based physical line on which the record starts (the header is line 1). */
  line: number;
  /** Set when the record could not be parsed cleanly (e.g. an unterminated quote). */
  malformed?: string;
}

export type CsvEncoding = 'utf-8' | 'windows-1252';

const QUOTE = 34;
const COMMA = 44;
const LF = 10;
const CR = 13;

// the parser's states (plain numbers, not an enum: Node runs these files with their types stripped)
const FIELD_START = 0;
const UNQUOTED = 1;
const QUOTED = 2;
const QUOTE_IN_QUOTED = 3;
type State = typeof FIELD_START | typeof UNQUOTED | typeof QUOTED | typeof QUOTE_IN_QUOTED;

/** Incremental parser: feed decoded text with `push`, finish with `end`. */
export class CsvParser {
  private state: State = FIELD_START;
  private field = '';
  private fields: string[] = [];
  private line = 1;
  private recordLine = 1;
  private pendingCr = false;
  private first = true;

  /** Parse a chunk and return the records completed by it. */
  push(text: string): CsvRecord[] {
    const out: CsvRecord[] = [];
    const n = text.length;
    let i = 0;
    if (this.first && n > 0) {
      this.first = false;
      if (text.charCodeAt(0) === 0xfeff) i = 1;
    }
    let run = i; // start of the pending run of plain characters (Unquoted / Quoted states)
    for (; i < n; i++) {
      const c = text.charCodeAt(i);
      if (this.pendingCr) {
        this.pendingCr = false;
        if (c === LF) {
          run = i + 1;
          continue;
        }
      }
      switch (this.state) {
        case FIELD_START:
          if (c === QUOTE) {
            this.state = QUOTED;
            run = i + 1;
            break;
          }
          this.state = UNQUOTED;
          run = i;
        // falls through
        case UNQUOTED:
          if (c === COMMA) {
            this.field += text.slice(run, i);
            this.endField();
          } else if (c === LF || c === CR) {
            this.field += text.slice(run, i);
            this.endField();
            out.push(this.endRecord(c));
          }
          break;
        case QUOTED:
          if (c === QUOTE) {
            this.field += text.slice(run, i);
            this.state = QUOTE_IN_QUOTED;
          } else if (c === LF) {
            this.line++;
          }
          break;
        case QUOTE_IN_QUOTED:
          if (c === QUOTE) {
            this.field += '"';
            this.state = QUOTED;
            run = i + 1;
          } else if (c === COMMA) {
            this.endField();
          } else if (c === LF || c === CR) {
            this.endField();
            out.push(this.endRecord(c));
          } else {
            // text after a closing quote ("abc"def): keep it, as spreadsheet tools do
            this.state = UNQUOTED;
            run = i;
          }
          break;
      }
      if ((this.state as State) === FIELD_START) run = i + 1;
    }
    if (this.state === UNQUOTED || this.state === QUOTED) {
      this.field += text.slice(run, n);
    }
    return out;
  }

  /** Flush the last record (a file may end without a newline). */
  end(): CsvRecord[] {
    if (this.state === QUOTED) {
      const rec: CsvRecord = {
        fields: [...this.fields, this.field],
        line: this.recordLine,
        malformed: 'unterminated quoted field',
      };
      this.fields = [];
      this.field = '';
      this.state = FIELD_START;
      return [rec];
    }
    if (this.state === FIELD_START && this.fields.length === 0) return [];
    this.endField();
    const rec: CsvRecord = { fields: this.fields, line: this.recordLine };
    this.fields = [];
    return [rec];
  }

  private endField(): void {
    this.fields.push(this.field);
    this.field = '';
    this.state = FIELD_START;
  }

  private endRecord(c: number): CsvRecord {
    const rec: CsvRecord = { fields: this.fields, line: this.recordLine };
    this.fields = [];
    this.line++;
    this.recordLine = this.line;
    if (c === CR) this.pendingCr = true;
    return rec;
  }
}

/**
 * Read a CSV file as batches of records. Blank lines are skipped. The first record is the
 * header. Memory stays at one chunk plus one batch whatever the file size.
 */
export async function* readCsvBatches(path: string, encoding: CsvEncoding = 'utf-8'): AsyncGenerator<CsvRecord[]> {
  const decoder = new TextDecoder(encoding);
  const parser = new CsvParser();
  const stream = createReadStream(path, { highWaterMark: 1 << 20 });
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    // stream mode also matters for correctness: Node 20's one-shot (non-stream) windows-1252
    // decode drops bytes 0x80–0x9F, the euro sign among them
    const recs = parser.push(decoder.decode(chunk, { stream: true }));
    const kept = recs.filter(notBlank);
    if (kept.length) yield kept;
  }
  const tail = parser.push(decoder.decode());
  const last = [...tail, ...parser.end()].filter(notBlank);
  if (last.length) yield last;
}

function notBlank(r: CsvRecord): boolean {
  return !(r.fields.length === 1 && r.fields[0]!.trim() === '' && !r.malformed);
}

/** Parse a whole CSV string (tests and small files). */
export function parseCsv(text: string): CsvRecord[] {
  const p = new CsvParser();
  return [...p.push(text), ...p.end()].filter(notBlank);
}

/** Detect the encoding of a publisher file: UTF-8 if it decodes cleanly, else Windows-1252. */
export function sniffEncoding(head: Uint8Array): CsvEncoding {
  try {
    // stream: a multi-byte character cut at the end of the sample is not an error
    new TextDecoder('utf-8', { fatal: true }).decode(head, { stream: true });
    return 'utf-8';
  } catch {
    return 'windows-1252';
  }
}

const NEEDS_QUOTES = /[",\r\n]/;

/** Format one CSV field; `force` quotes it even when not needed. */
export function csvField(v: string | number | boolean | null | undefined, force = false): string {
  if (v === null || v === undefined) return force ? '""' : '';
  const s = String(v);
  if (force || NEEDS_QUOTES.test(s)) return `"${s.replace(/"/g, '""')}"`;
  return s;
}

/** Format one CSV line (no trailing newline). */
export function csvLine(values: readonly (string | number | boolean | null | undefined)[], force = false): string {
  return values.map((v) => csvField(v, force)).join(',');
}
