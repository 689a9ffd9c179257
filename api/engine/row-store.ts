/**
 * The full lead rows of a release, held in the Node process as JSON text, column by column, so a
 * list page is written byte for byte into the response (`writeJson` into a `ByteWriter`): no
 * decompression, no `JSON.parse`, no `JSON.stringify` per request.
 *
 * Every value is kept as the exact JSON text the API serves (`JSON.stringify` of the value
 * `ApiDb.all` reads from DuckDB), in one of two encodings chosen per column at build:
 *  - dictionary: the column's distinct texts, each stored once together with its key
 *    (`,"county":"Cork"`), and a 1- or 2-byte code per row. Columns with ≤ 65,535 distinct
 *    values and at most half as many as rows (dates, enumerations, descriptions, values, …);
 *  - raw: the text itself, per row (ids, addresses, coordinates, hashes), each prefixed with its
 *    length (LEB128) in one row-major buffer, so row `slot` starts at `rowStart[slot]`;
 *  - prefixed: a raw column whose texts mostly start with one of few prefixes — the text up to
 *    its first digit, e.g. a planning authority's URL (`"https://…/AppFileRefDetails/` of
 *    `…/25/0367/0"`) or a lead key's authority — is stored as a dictionary code for the prefix
 *    (kept once, with the key, like a dictionary entry) and the rest as raw text. Chosen per
 *    column when it saves at least `PREFIX_MIN_SAVING` bytes a row (`prefixPays`).
 * A row is written as, per column, one copy of a dictionary entry, or the key and the raw text:
 * spans longer than `LONG_SPAN` bytes by `TypedArray.set` (a native copy whose fixed cost pays
 * from there on), shorter ones four bytes at a time through DataViews (a span of four bytes or
 * more ends with one four-byte copy that may overlap the one before; a byte loop costs ~2 ns a
 * byte, these ~0.5).
 * Masked columns (`nulled`) are written as `,"key":null` from a fragment of their own, so every
 * scope gets the same keys in the same order (`LEAD_COLUMNS`). Which columns a scope may see is
 * decided by api/access/masking.ts, never here.
 *
 * At default scale (201,300 leads) the store holds ~55 MB (84 MB before prefixed columns: the
 * generated `description`, `public_url` and `lead_key` are prefixed, raw texts 61 → 28 MB) and
 * writes a 25-row page (~41 KB) in ~50 µs when its rows are in the CPU caches, ~90 µs when they
 * are not (a byte loop took 130 / 180).
 */
import { SEARCH_TEXT_COLUMNS, searchDocText } from '../../common/search-syntax.ts';
import { sqlIdent, type ApiDb } from '../duckdb/db.ts';
import type { CsvForm } from '../query/export-query.ts';
import { LEAD_COLUMNS } from '../query/leads-query.ts';
import { ByteWriter } from '../render/bytes.ts';

const RAW = 0;
const DICT8 = 1;
const DICT16 = 2;
/** Prefixed, with 2-byte codes (a prefix's count is DuckDB's, so its codes get the room). */
const PREFIXED = 3;

/** Kinds whose rows have a raw text (raw, prefixed). */
const hasRaw = (kind: number): boolean => kind === RAW || kind === PREFIXED;

/** The prefix of a value's JSON text that a prefixed column keeps in its dictionary: up to its first digit. */
const PREFIX = /^[^0-9]*/;

/** A prefixed column saves at least this many bytes a row over raw, or stays raw. */
export const PREFIX_MIN_SAVING = 4;

/** What a column's prefixes would cost (DuckDB's figures over the JSON texts, `loadRowStore`). */
export interface PrefixStats {
  /** Distinct prefixes. */
  distinct: number;
  /** Bytes of the prefixes over all rows. */
  bytes: number;
  /** Bytes of the distinct prefixes (what the dictionary keeps). */
  distinctBytes: number;
}

/**
 * Whether a raw column of `rows` rows with these prefixes is stored prefixed: it saves at least
 * `PREFIX_MIN_SAVING` bytes a row, and its prefixes fill at most half of the 2-byte codes (DuckDB
 * counted them over its own JSON texts, which may differ from ours in escapes).
 */
export function prefixPays(stats: PrefixStats, rows: number): boolean {
  if (stats.distinct + 1 > DICTIONARY_MAX / 2) return false;
  return stats.bytes - stats.distinctBytes - 2 * rows >= PREFIX_MIN_SAVING * rows;
}

/**
 * Spans longer than this are copied with `TypedArray.set(subarray)`, shorter ones in JS (the
 * native call and its view cost ~75 ns, a 4-byte step ~2 ns; measured on 25-row pages of the
 * default-scale release: 64 to 128 are alike, 256 and no native copy at all are slower).
 */
export const LONG_SPAN = 64;

/** Largest dictionary (2-byte codes). */
export const DICTIONARY_MAX = 65_535;

/** Everything a store is made of: typed arrays and the column names (a release loader can move them between processes). */
export interface RowStoreParts {
  columns: string[];
  ids: Int32Array;
  /** Per column: 0 raw, 1 dictionary with 1-byte codes, 2 with 2-byte codes, 3 prefixed (2-byte codes). */
  kinds: Uint8Array;
  /** Key, null and dictionary fragments (UTF-8). */
  frag: Uint8Array;
  /** Per column: [start, end) of `,"key":` (`{"key":` for the first) and of `,"key":null` in `frag`. */
  keySpan: Uint32Array;
  nullSpan: Uint32Array;
  /** Dictionary entry `code` of column c is `frag[dictOff[dictBase[c] + code], dictOff[dictBase[c] + code + 1])` (a prefixed column's: key and prefix). */
  dictBase: Int32Array;
  dictOff: Uint32Array;
  /** Codes, row-major: the 1-byte codes of row r are `codes8[r·w8 …]`, the 2-byte ones `codes16[r·w16 …]`. */
  codes8: Uint8Array;
  codes16: Uint16Array;
  /** Per column: its index within the row's 1- or 2-byte codes (-1 for raw columns). */
  codeIndex: Int32Array;
  /** The longest row written (bytes, unmasked). */
  maxRowBytes: number;
  /** Raw texts, row-major, each prefixed with its byte length (LEB128). */
  raw: Uint8Array;
  rowStart: Uint32Array;
}

const enc = new TextEncoder();

export class RowStore {
  readonly size: number;
  readonly columns: readonly string[];
  private readonly p: RowStoreParts;
  /** A slot (row number) per id (`positionsOf`). */
  private readonly slotOfId: (id: number) => number;
  private readonly columnIndex: Map<string, number>;
  /** Byte length of each column's key prefix (`,"name":`). */
  private readonly keyLen: Uint32Array;
  /** 1- and 2-byte codes per row. */
  private readonly w8: number;
  private readonly w16: number;
  private readonly scratch = new ByteWriter(8 * 1024);
  /** A prefixed column's value, prefix and rest joined (`writeCsv`). */
  private readonly joined = new ByteWriter(1024);
  /** `csvPlain`'s answer for the last forms asked. */
  private csvPlainOf: { forms: Uint8Array; plain: Uint8Array } | null = null;
  /** `frag` and `raw` as Buffers (for decoding one value without a view per call). */
  private readonly fragText: Buffer;
  private readonly rawText: Buffer;
  /** `frag` and `raw` as DataViews (`writeJson` copies four bytes per step). */
  private readonly fragView: DataView;
  private readonly rawView: DataView;

  constructor(parts: RowStoreParts) {
    this.p = parts;
    this.size = parts.ids.length;
    this.columns = parts.columns;
    this.columnIndex = new Map(parts.columns.map((c, i) => [c, i]));
    this.keyLen = Uint32Array.from(parts.columns, (_, c) => parts.keySpan[2 * c + 1]! - parts.keySpan[2 * c]!);
    this.fragText = Buffer.from(parts.frag.buffer, parts.frag.byteOffset, parts.frag.byteLength);
    this.rawText = Buffer.from(parts.raw.buffer, parts.raw.byteOffset, parts.raw.byteLength);
    this.fragView = new DataView(parts.frag.buffer, parts.frag.byteOffset, parts.frag.byteLength);
    this.rawView = new DataView(parts.raw.buffer, parts.raw.byteOffset, parts.raw.byteLength);
    this.w8 = parts.kinds.filter((k) => k === DICT8).length;
    this.w16 = parts.kinds.filter((k) => k === DICT16 || k === PREFIXED).length;
    this.slotOfId = positionsOf(parts.ids);
  }

  /** Bytes held (texts, codes and offsets). */
  get bytes(): number {
    const p = this.p;
    return (
      p.frag.length +
      p.raw.length +
      p.rowStart.byteLength +
      p.dictOff.byteLength +
      p.ids.byteLength +
      p.codes8.byteLength +
      p.codes16.byteLength
    );
  }

  /** The parts (to move the store to another process). */
  parts(): RowStoreParts {
    return this.p;
  }

  /** How a column is stored. */
  encodingOf(column: string): 'raw' | 'dictionary' | 'prefixed' {
    const c = this.columnIndex.get(column);
    if (c === undefined) throw new Error(`the row store has no column ${column}`);
    const kind = this.p.kinds[c];
    return kind === RAW ? 'raw' : kind === PREFIXED ? 'prefixed' : 'dictionary';
  }

  /** The row of a lead id, or -1 when the release has no such lead. */
  slotOf(id: number): number {
    return this.slotOfId(id);
  }

  /**
   * Append the JSON object of row `slot` to `out`: every column in order; a column whose entry
   * in `nulled` is 1 is written as null.
   */
  writeJson(out: ByteWriter, slot: number, nulled: Uint8Array | null): void {
    const { kinds, frag, keySpan, nullSpan, dictBase, dictOff, codes8, codes16, codeIndex, raw } = this.p;
    const { fragView, rawView } = this;
    out.ensure(this.p.maxRowBytes + 1);
    const buf = out.buf;
    const dst = out.dataView();
    let o = out.len;
    let rp = this.p.rowStart[slot]!;
    const base8 = slot * this.w8;
    const base16 = slot * this.w16;
    const n = kinds.length;
    for (let c = 0; c < n; c++) {
      const kind = kinds[c]!;
      let src: Uint8Array = frag;
      let view = fragView;
      let s: number;
      let e: number;
      if (kind === RAW || kind === PREFIXED) {
        let len = raw[rp++]!;
        if (len & 0x80) {
          len = (len & 0x7f) | (raw[rp++]! << 7);
          if (len & 0x4000) len = (len & 0x3fff) | (raw[rp++]! << 14);
        }
        if (nulled !== null && nulled[c] === 1) {
          s = nullSpan[2 * c]!;
          e = nullSpan[2 * c + 1]!;
        } else {
          if (kind === RAW) o = copySpan(buf, dst, o, frag, fragView, keySpan[2 * c]!, keySpan[2 * c + 1]!);
          else {
            // the key and the prefix, from the dictionary
            const at = dictBase[c]! + codes16[base16 + codeIndex[c]!]!;
            o = copySpan(buf, dst, o, frag, fragView, dictOff[at]!, dictOff[at + 1]!);
          }
          src = raw;
          view = rawView;
          s = rp;
          e = rp + len;
        }
        rp += len;
      } else if (nulled !== null && nulled[c] === 1) {
        s = nullSpan[2 * c]!;
        e = nullSpan[2 * c + 1]!;
      } else {
        const at = dictBase[c]! + (kind === DICT8 ? codes8[base8 + codeIndex[c]!]! : codes16[base16 + codeIndex[c]!]!);
        s = dictOff[at]!;
        e = dictOff[at + 1]!;
      }
      o = copySpan(buf, dst, o, src, view, s, e);
    }
    buf[o++] = 0x7d; // }
    out.len = o;
  }

  /**
   * Append row `slot` as one CSV record (no line end) to `out`, each column as `csv` says
   * (`CsvColumn`: DuckDB's CSV writer's forms, docs/exports.md) from its JSON text; a column whose
   * entry in `nulled` is 1, or whose value is null, is an empty field. A dictionary entry whose
   * CSV text is its JSON text (most: no escape, not a whole DOUBLE) is copied as `writeJson`
   * copies it (`csvPlain`, worked out at the first CSV export); the others are converted.
   */
  writeCsv(out: ByteWriter, slot: number, nulled: Uint8Array | null, csv: Uint8Array): void {
    const { kinds, frag, dictBase, dictOff, codes8, codes16, codeIndex, raw } = this.p;
    const { fragView, rawView } = this;
    const plain = this.csvPlain(csv);
    out.ensure(2 * this.p.maxRowBytes + 16);
    let buf = out.buf;
    let dst = out.dataView();
    let o = out.len;
    let rp = this.p.rowStart[slot]!;
    const base8 = slot * this.w8;
    const base16 = slot * this.w16;
    const n = kinds.length;
    for (let c = 0; c < n; c++) {
      if (c > 0) buf[o++] = 0x2c; // ,
      const kind = kinds[c]!;
      const form = csv[c]!;
      let src = frag;
      let view = fragView;
      let s: number;
      let e: number;
      if (kind === RAW || kind === PREFIXED) {
        let len = raw[rp++]!;
        if (len & 0x80) {
          len = (len & 0x7f) | (raw[rp++]! << 7);
          if (len & 0x4000) len = (len & 0x3fff) | (raw[rp++]! << 14);
        }
        s = rp;
        e = rp + len;
        rp += len;
        if (nulled !== null && nulled[c] === 1) continue;
        if (kind === RAW && len === 4 && raw[s] === 0x6e) continue; // null (no other JSON value starts with n)
        const fast = form === CsvColumn.plain || (form === CsvColumn.text && !holdsBackslash(rawView, s, e));
        if (kind === RAW && fast) {
          o = copySpan(buf, dst, o, raw, rawView, s, e);
          continue;
        }
        if (kind === PREFIXED) {
          // the prefix (from the dictionary, after the key) and the raw rest
          const at = dictBase[c]! + codes16[base16 + codeIndex[c]!]!;
          const p = plain[at]!;
          if (p === CSV_EMPTY && len === 0) continue;
          if (p === CSV_COPY && fast && form === CsvColumn.text) {
            o = copySpan(buf, dst, o, frag, fragView, dictOff[at]! + this.keyLen[c]!, dictOff[at + 1]!);
            o = copySpan(buf, dst, o, raw, rawView, s, e);
            continue;
          }
          const joined = this.joined;
          joined.len = 0;
          joined.bytes(frag, dictOff[at]! + this.keyLen[c]!, dictOff[at + 1]!);
          joined.bytes(raw, s, e);
          src = joined.buf;
          view = joined.dataView();
          s = 0;
          e = joined.len;
        } else {
          src = raw;
          view = rawView;
        }
      } else {
        if (nulled !== null && nulled[c] === 1) continue;
        const at = dictBase[c]! + (kind === DICT8 ? codes8[base8 + codeIndex[c]!]! : codes16[base16 + codeIndex[c]!]!);
        s = dictOff[at]! + this.keyLen[c]!;
        e = dictOff[at + 1]!;
        const p = plain[at]!;
        if (p === CSV_COPY) {
          o = copySpan(buf, dst, o, frag, fragView, s, e);
          continue;
        }
        if (p === CSV_UNQUOTE) {
          o = copySpan(buf, dst, o, frag, fragView, s + 1, e - 1);
          continue;
        }
        if (p === CSV_EMPTY) continue;
      }
      // a conversion (an escape, a whole DOUBLE, a list): through the writer, which may grow its buffer
      out.len = o;
      writeCsvField(out, form, src, view, s, e);
      o = out.len;
      buf = out.buf;
      dst = out.dataView();
    }
    out.len = o;
  }

  /**
   * Per dictionary entry: what its CSV text is for the forms `csv` (computed once per forms):
   * its JSON text (`CSV_COPY`), that without its quotes (`CSV_UNQUOTE`, a date), nothing
   * (`CSV_EMPTY`, null), or a conversion (`CSV_CONVERT`: an escape, a whole DOUBLE, a list).
   */
  private csvPlain(csv: Uint8Array): Uint8Array {
    if (this.csvPlainOf?.forms === csv) return this.csvPlainOf.plain;
    const { kinds, frag, dictOff } = this.p;
    const { fragView } = this;
    const plain = new Uint8Array(dictOff.length);
    const probe = new ByteWriter(1024);
    for (let c = 0; c < kinds.length; c++) {
      if (kinds[c] === RAW) continue;
      const [first, end] = this.dictEntries(c);
      for (let at = first; at < end; at++) {
        const s = dictOff[at]! + this.keyLen[c]!;
        const e = dictOff[at + 1]!;
        if (kinds[c] === PREFIXED) {
          // a prefix is the start of a value: copied when it holds no escape (`writeCsv` looks at the rest)
          const isNull = e - s === 4 && frag[s] === 0x6e;
          plain[at] = isNull ? CSV_EMPTY : holdsBackslash(fragView, s, e) ? CSV_CONVERT : CSV_COPY;
          continue;
        }
        probe.len = 0;
        writeCsvField(probe, csv[c]!, frag, fragView, s, e);
        const same = (from: number, to: number): boolean =>
          probe.len === to - from && probe.buf.subarray(0, probe.len).equals(frag.subarray(from, to));
        plain[at] =
          probe.len === 0 ? CSV_EMPTY : same(s, e) ? CSV_COPY : same(s + 1, e - 1) ? CSV_UNQUOTE : CSV_CONVERT;
      }
    }
    this.csvPlainOf = { forms: csv, plain };
    return plain;
  }

  /** The lead with this id as a fresh object (columns in order), or null. */
  get(id: number): Record<string, unknown> | null {
    const slot = this.slotOf(id);
    if (slot < 0) return null;
    this.writeJson(this.scratch, slot, null);
    const text = this.scratch.toString();
    this.scratch.len = 0;
    return JSON.parse(text) as Record<string, unknown>;
  }

  /** Several leads in the order given (repeats included); null for unknown ids. */
  getMany(ids: readonly number[]): (Record<string, unknown> | null)[] {
    return ids.map((id) => this.get(id));
  }

  /** The distinct values of a column (parsed, in no particular order; null included when present). */
  distinct(column: string): unknown[] {
    const c = this.columnIndex.get(column);
    if (c === undefined) throw new Error(`the row store has no column ${column}`);
    const { kinds, dictOff } = this.p;
    if (hasRaw(kinds[c]!)) {
      const seen = new Map<string, unknown>();
      for (let slot = 0; slot < this.size; slot++) {
        const v = this.value(slot, column);
        seen.set(JSON.stringify(v), v);
      }
      return [...seen.values()];
    }
    const [first, end] = this.dictEntries(c);
    const out: unknown[] = [];
    for (let at = first; at < end; at++)
      out.push(JSON.parse(this.fragText.toString('utf8', dictOff[at]! + this.keyLen[c]!, dictOff[at + 1]!)));
    return out;
  }

  /** One column's value of row `slot` (parsed from its JSON text). */
  value(slot: number, column: string): unknown {
    const c = this.columnIndex.get(column);
    if (c === undefined) throw new Error(`the row store has no column ${column}`);
    const { kinds, frag, dictBase, dictOff, raw } = this.p;
    let start: number;
    let end: number;
    let src: Uint8Array;
    let prefix = '';
    if (hasRaw(kinds[c]!)) {
      if (kinds[c] !== RAW) {
        const at = dictBase[c]! + this.code(slot, c);
        prefix = this.fragText.toString('utf8', dictOff[at]! + this.keyLen[c]!, dictOff[at + 1]!);
      }
      let rp = this.p.rowStart[slot]!;
      for (let k = 0; ; k++) {
        if (!hasRaw(kinds[k]!)) continue;
        let len = raw[rp++]!;
        if (len & 0x80) {
          len = (len & 0x7f) | (raw[rp++]! << 7);
          if (len & 0x4000) len = (len & 0x3fff) | (raw[rp++]! << 14);
        }
        if (k === c) {
          start = rp;
          end = rp + len;
          break;
        }
        rp += len;
      }
      src = raw;
    } else {
      const at = dictBase[c]! + this.code(slot, c);
      start = dictOff[at]! + this.keyLen[c]!;
      end = dictOff[at + 1]!;
      src = frag;
    }
    return JSON.parse(prefix + (src === raw ? this.rawText : this.fragText).toString('utf8', start, end));
  }

  /**
   * The entries `[first, end)` of the dictionary of column `c` (a dictionary or prefixed column):
   * they run from its base to the next dictionary's, each list ending with one end offset.
   */
  private dictEntries(c: number): [first: number, end: number] {
    const { kinds, dictBase, dictOff } = this.p;
    for (let d = c + 1; d < kinds.length; d++) if (dictBase[d]! >= 0) return [dictBase[c]!, dictBase[d]! - 1];
    return [dictBase[c]!, dictOff.length - 1];
  }

  /** The dictionary code of column `c` (a dictionary or prefixed column) in row `slot`. */
  private code(slot: number, c: number): number {
    const { kinds, codes8, codes16, codeIndex } = this.p;
    return kinds[c] === DICT8 ? codes8[slot * this.w8 + codeIndex[c]!]! : codes16[slot * this.w16 + codeIndex[c]!]!;
  }
}

/**
 * How a column's JSON text is written to CSV (`RowStore.writeCsv`), as DuckDB's CSV writer writes
 * the column, by the names of `LEAD_CSV_FORMS` (api/query/export-query.ts):
 * - `text`: quoted, quotes doubled (a JSON string without escapes is that already);
 * - `plain`: an integer or a boolean, its JSON text;
 * - `double`: its JSON text, `.0` added to a whole number (DuckDB writes `1.0`, JSON `1`);
 * - `date`: `YYYY-MM-DD`, unquoted;
 * - `list`: a list of texts, joined with `;`, quoted.
 */
export const CsvColumn = { text: 0, plain: 1, double: 2, date: 3, list: 4 } as const satisfies Record<CsvForm, number>;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** What a dictionary entry's CSV text is (`RowStore.csvPlain`). */
const CSV_CONVERT = 0;
const CSV_COPY = 1;
const CSV_UNQUOTE = 2;
const CSV_EMPTY = 3;

/** Whether `view`'s bytes [s, e) hold a backslash (four bytes a step: a zero byte of x ^ 0x5c5c5c5c). */
function holdsBackslash(view: DataView, s: number, e: number): boolean {
  let i = s;
  for (; i + 4 <= e; i += 4) {
    const v = view.getUint32(i) ^ 0x5c5c5c5c;
    if (((v - 0x01010101) & ~v & 0x80808080) !== 0) return true;
  }
  for (; i < e; i++) if (view.getUint8(i) === BACKSLASH) return true;
  return false;
}

/** A CSV field of DuckDB's quoted form: quotes doubled, within quotes. */
const quotedCsv = (text: string): string => `"${text.replaceAll('"', '""')}"`;

/** Write the JSON value `src[s, e)` (`view` over `src`) as a CSV field of column kind `kind` (`CsvColumn`). Null: nothing. */
function writeCsvField(out: ByteWriter, kind: number, src: Uint8Array, view: DataView, s: number, e: number): void {
  if (e - s === 4 && src[s] === 0x6e) return; // null
  if (kind === CsvColumn.plain) return out.bytes(src, s, e);
  if (kind === CsvColumn.date) return out.bytes(src, s + 1, e - 1);
  if (kind === CsvColumn.double) {
    out.bytes(src, s, e);
    for (let i = s; i < e; i++) {
      const b = src[i]!;
      if (b === 0x2e || b === 0x65 || b === 0x45 || b === 0x4e || b === 0x49) return; // . e E NaN Infinity
    }
    return out.ascii('.0');
  }
  const escaped = holdsBackslash(view, s, e);
  if (kind === CsvColumn.text) {
    if (!escaped) return out.bytes(src, s, e);
    return out.utf8(
      quotedCsv(JSON.parse(Buffer.from(src.buffer, src.byteOffset + s, e - s).toString('utf8')) as string),
    );
  }
  // a list: ["a","b"] → "a;b", items copied between their quotes; an escape or an item that is not
  // a string (null: DuckDB's array_to_string skips it) is parsed instead
  if (!escaped && src[s + 1] === QUOTE) {
    out.ensure(e - s);
    const buf = out.buf;
    let o = out.len;
    buf[o++] = QUOTE;
    let i = s + 2;
    for (; i < e - 2; i++) {
      const b = src[i]!;
      if (b !== QUOTE) buf[o++] = b;
      else if (src[i + 1] === 0x2c && src[i + 2] === QUOTE) {
        buf[o++] = 0x3b; // ;  (the `","` between two items)
        i += 2;
      } else break; // `",null` and the like
    }
    if (i === e - 2) {
      buf[o++] = QUOTE;
      out.len = o;
      return;
    }
  }
  const items = JSON.parse(Buffer.from(src.buffer, src.byteOffset + s, e - s).toString('utf8')) as (string | null)[];
  out.utf8(quotedCsv(items.filter((x) => x !== null).join(';')));
}

/**
 * Copy `src[s, e)` (`view` is a DataView over `src`) into `buf` (`dst` over it) at `o`; returns
 * the offset after it. The caller has made room.
 */
function copySpan(
  buf: Buffer,
  dst: DataView,
  o: number,
  src: Uint8Array,
  view: DataView,
  s: number,
  e: number,
): number {
  const len = e - s;
  if (len > LONG_SPAN) {
    buf.set(src.subarray(s, e), o);
    return o + len;
  }
  if (len < 4) {
    for (let i = s; i < e; i++) buf[o++] = src[i]!;
    return o;
  }
  let i = s;
  for (; i + 8 < e; i += 8, o += 8) {
    dst.setUint32(o, view.getUint32(i));
    dst.setUint32(o + 4, view.getUint32(i + 4));
  }
  if (i + 4 < e) {
    dst.setUint32(o, view.getUint32(i));
    i += 4;
    o += 4;
  }
  // the last four bytes (1 to 4 of them not yet copied): one step that may overlap the one before
  o += e - i;
  dst.setUint32(o - 4, view.getUint32(e - 4));
  return o;
}

/**
 * Builds a `RowStore` from rows given in order. `distinct[c]` bounds the distinct non-null values
 * of column c (e.g. DuckDB's `count(DISTINCT c)`); it decides the column's encoding, so it must
 * not be lower than the truth (the build fails if it is). `prefixes[c]`, where given, are the
 * figures of a column that would be raw, for `prefixPays` to choose it prefixed.
 */
export class RowStoreBuilder {
  private readonly kinds: Uint8Array;
  private readonly capacity: number[];
  private readonly dicts: (Map<string, number> | null)[];
  private readonly codes8: Uint8Array;
  private readonly codes16: Uint16Array;
  private readonly codeIndex: Int32Array;
  private readonly w8: number;
  private readonly w16: number;
  private rowBytes = 0;
  private maxRowBytes = 0;
  private readonly ids: Int32Array;
  private raw = Buffer.allocUnsafe(1 << 20);
  private rawLen = 0;
  private readonly rowStart: Uint32Array;
  private at = 0;

  private readonly columns: readonly string[];
  constructor(
    columns: readonly string[],
    rows: number,
    distinct: readonly number[],
    opts: { dictionaryMax?: number; prefixes?: readonly (PrefixStats | null)[] } = {},
  ) {
    this.columns = columns;
    const max = dictionaryLimit(opts);
    this.kinds = Uint8Array.from(columns, (_, c) => {
      if (isDictionary(distinct[c]!, rows, max)) return distinct[c]! + 1 <= 256 ? DICT8 : DICT16;
      const prefixes = opts.prefixes?.[c];
      // (a prefix dictionary is a dictionary too: none when dictionaries are off)
      return max > 0 && prefixes && prefixPays(prefixes, rows) ? PREFIXED : RAW;
    });
    // a prefixed column's codes may run to their width (DuckDB's JSON texts can differ from ours in escapes)
    this.capacity = distinct.map((d, c) => (this.kinds[c] === PREFIXED ? DICTIONARY_MAX + 1 : d + 1));
    this.dicts = columns.map((_, c) => (this.kinds[c] === RAW ? null : new Map()));
    let w8 = 0;
    let w16 = 0;
    this.codeIndex = Int32Array.from(this.kinds, (k) => (k === RAW ? -1 : k === DICT8 ? w8++ : w16++));
    this.w8 = w8;
    this.w16 = w16;
    this.codes8 = new Uint8Array(rows * w8);
    this.codes16 = new Uint16Array(rows * w16);
    this.ids = new Int32Array(rows);
    this.rowStart = new Uint32Array(rows + 1);
  }

  /** Add the next row: its id and its values in column order (as `JSON.parse` of DuckDB's JSON gives them). */
  add(id: number, values: readonly unknown[]): void {
    const r = this.at++;
    if (r >= this.ids.length) throw new Error('more rows than announced to the row store');
    this.ids[r] = id;
    this.rowStart[r] = this.rawLen;
    for (let c = 0; c < this.columns.length; c++) {
      const text = JSON.stringify(values[c] ?? null);
      const kind = this.kinds[c]!;
      if (kind === RAW) {
        this.rowBytes += this.pushRaw(text);
        continue;
      }
      // a dictionary column's whole text, or a prefixed column's prefix (its rest goes raw)
      const entry = kind === PREFIXED ? PREFIX.exec(text)![0] : text;
      const dict = this.dicts[c]!;
      let code = dict.get(entry);
      if (code === undefined) {
        code = dict.size;
        if (code >= this.capacity[c]!) {
          throw new Error(`column ${this.columns[c]} has more distinct values than counted`);
        }
        dict.set(entry, code);
      }
      if (kind === DICT8) this.codes8[r * this.w8 + this.codeIndex[c]!] = code;
      else this.codes16[r * this.w16 + this.codeIndex[c]!] = code;
      this.rowBytes += Buffer.byteLength(entry);
      if (kind === PREFIXED) this.rowBytes += this.pushRaw(text.slice(entry.length));
    }
    // keys and braces are the same for every row: counted once at finish
    if (this.rowBytes > this.maxRowBytes) this.maxRowBytes = this.rowBytes;
    this.rowBytes = 0;
  }

  /** Append a raw value; returns its byte length. */
  private pushRaw(text: string): number {
    const len = Buffer.byteLength(text);
    if (len >= 1 << 21) throw new Error('a raw value of 2 MB or more');
    if (this.rawLen + len + 3 > this.raw.length) {
      const bigger = Buffer.allocUnsafe(Math.max(this.raw.length * 2, this.rawLen + len + 3));
      this.raw.copy(bigger, 0, 0, this.rawLen);
      this.raw = bigger;
    }
    let v = len;
    while (v >= 0x80) {
      this.raw[this.rawLen++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    this.raw[this.rawLen++] = v;
    this.rawLen += this.raw.write(text, this.rawLen, 'utf8');
    return len;
  }

  finish(): RowStore {
    if (this.at !== this.ids.length)
      throw new Error(`the row store was told ${this.ids.length} rows and got ${this.at}`);
    this.rowStart[this.at] = this.rawLen;
    const parts: string[] = [];
    let len = 0;
    const span = (s: string): [number, number] => {
      const start = len;
      parts.push(s);
      len += Buffer.byteLength(s);
      return [start, len];
    };
    const n = this.columns.length;
    const keySpan = new Uint32Array(2 * n);
    const nullSpan = new Uint32Array(2 * n);
    const dictBase = new Int32Array(n).fill(-1);
    const dictOff: number[] = [];
    this.columns.forEach((name, c) => {
      const key = `${c === 0 ? '{' : ','}${JSON.stringify(name)}:`;
      keySpan.set(span(key), 2 * c);
      nullSpan.set(span(`${key}null`), 2 * c);
      const dict = this.dicts[c];
      if (!dict) return;
      dictBase[c] = dictOff.length;
      for (const text of dict.keys()) dictOff.push(span(key + text)[0]);
      dictOff.push(len);
    });
    return new RowStore({
      columns: [...this.columns],
      ids: this.ids,
      kinds: this.kinds,
      frag: enc.encode(parts.join('')),
      keySpan,
      nullSpan,
      dictBase,
      dictOff: Uint32Array.from(dictOff),
      codes8: this.codes8,
      codes16: this.codes16,
      codeIndex: this.codeIndex,
      maxRowBytes:
        this.maxRowBytes +
        this.columns.reduce((n, name, c) => n + Buffer.byteLength(`${c === 0 ? '{' : ','}${JSON.stringify(name)}:`), 1),
      raw: new Uint8Array(this.raw.subarray(0, this.rawLen)),
      rowStart: this.rowStart,
    });
  }
}

/**
 * Read every lead of `leadsTable` in file order (the pipeline writes leads newest first; an ORDER
 * BY would make DuckDB hold every wide row at once) and build its `RowStore`: one narrow query
 * for the distinct counts (the encodings), then the rows as DuckDB's `json_array`, whose values
 * `JSON.parse` reads back exactly as `ApiDb.all` would.
 */
export async function loadRowStore(
  db: ApiDb,
  leadsTable: string,
  opts: { dictionaryMax?: number } = {},
): Promise<RowStore> {
  const cols = LEAD_COLUMNS.map((c) => `l.${sqlIdent(c)}`);
  // One column at a time: 52 distinct counts in one query hold 52 hash tables at once.
  const [{ n } = { n: 0 }] = await db.all<{ n: number }>(`SELECT count(*) AS n FROM ${leadsTable}`);
  const distinct: number[] = [];
  for (const c of cols)
    distinct.push(
      Number((await db.all<{ d: number }>(`SELECT count(DISTINCT ${c}) AS d FROM ${leadsTable} AS l`))[0]!.d),
    );
  // a raw column's prefixes, counted only where the builder may use them (no dictionaries, no prefixes)
  const max = dictionaryLimit(opts);
  const prefixes: (PrefixStats | null)[] = [];
  for (const [i, c] of cols.entries())
    prefixes.push(
      max === 0 || isDictionary(distinct[i]!, Number(n), max) ? null : await prefixStats(db, leadsTable, c),
    );
  const builder = new RowStoreBuilder(LEAD_COLUMNS, Number(n), distinct, { ...opts, prefixes });
  await db.columns(
    `SELECT CAST(l.id AS INTEGER), json_array(${cols.join(', ')})::VARCHAR FROM ${leadsTable} AS l`,
    [],
    (c, n) => {
      for (let i = 0; i < n; i++) builder.add(c[0]![i] as number, JSON.parse(c[1]![i] as string) as unknown[]);
    },
  );
  return builder.finish();
}

/** The most entries a dictionary may have (`dictionaryMax`, at most `DICTIONARY_MAX`; 0: no dictionaries). */
function dictionaryLimit(opts: { dictionaryMax?: number }): number {
  return Math.min(opts.dictionaryMax ?? DICTIONARY_MAX, DICTIONARY_MAX);
}

/** Whether a column of `distinct` non-null values in `rows` rows is a dictionary (else raw, or prefixed). */
function isDictionary(distinct: number, rows: number, max: number): boolean {
  const entries = distinct + 1; // + null
  return entries <= max && entries <= Math.max(2, rows / 2);
}

/** A column's prefixes (its JSON texts up to their first digit, as `PREFIX` cuts them), counted by DuckDB. */
async function prefixStats(db: ApiDb, leadsTable: string, column: string): Promise<PrefixStats> {
  const [r] = await db.all<{ distinct: number; bytes: number | null; distinctBytes: number | null }>(
    `SELECT count(*)::BIGINT AS "distinct", sum(n * b)::BIGINT AS bytes, sum(b)::BIGINT AS "distinctBytes"
     FROM (SELECT p, count(*) AS n, strlen(p) AS b
           FROM (SELECT regexp_extract(to_json(${column})::VARCHAR, '^[^0-9]*') AS p FROM ${leadsTable} AS l)
           GROUP BY p)`,
  );
  return { distinct: Number(r!.distinct), bytes: Number(r!.bytes ?? 0), distinctBytes: Number(r!.distinctBytes ?? 0) };
}

/**
 * The position of each id in `ids` (-1 for any other value: an unknown id, a fraction, null): a
 * table indexed by id when the ids are dense (the registry numbers leads from 1), else a Map. The
 * row store's slots and the search index's postings (~40 million lookups at 5× the default data,
 * where a Map of a million entries misses the caches on most of them) both look leads up by it.
 */
export function positionsOf(ids: Int32Array): (id: number) => number {
  let max = -1;
  let dense = true;
  for (let i = 0; i < ids.length; i++) {
    if (ids[i]! < 0) dense = false;
    else if (ids[i]! > max) max = ids[i]!;
  }
  if (dense && max < 4 * ids.length + 1024) {
    const table = new Int32Array(max + 1).fill(-1);
    for (let pos = 0; pos < ids.length; pos++) table[ids[pos]!] = pos;
    return (id) => (id >= 0 && id <= max ? (table[id] ?? -1) : -1);
  }
  const map = new Map<number, number>();
  for (let pos = 0; pos < ids.length; pos++) map.set(ids[pos]!, pos);
  return (id) => map.get(id) ?? -1;
}

/**
 * A lead's search text by id, read from the row store (`SEARCH_TEXT_COLUMNS` joined as
 * `searchDocText` joins them: what the release's search index was built from), for `q`'s phrases
 * (api/engine/lead-index.ts `LeadIndexOptions.text`). Empty for an id the store does not hold.
 */
export function rowSearchText(rows: RowStore): (id: number) => string {
  return (id) => {
    const slot = rows.slotOf(id);
    return slot < 0 ? '' : searchDocText(SEARCH_TEXT_COLUMNS.map((c) => rows.value(slot, c) as string | null));
  };
}
