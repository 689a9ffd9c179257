/**
 * Helpers every source adapter shares: header lookup, field cleaning, number parsing and rejects.
 * Whether a name may be published is decided once, on evidence, by normalise/name-evidence.ts.
 */
import { open } from 'node:fs/promises';
import { readCsvBatches, sniffEncoding } from '../lib/csv.ts';
import type { Reject, RejectReason } from '../types.ts';
import type { SourceName } from './formats.ts';

/** A run of whitespace, or a whitespace character other than a space. */
const NEEDS_FOLDING = /\s\s|[^\S ]/;

/** Trim and collapse internal whitespace; empty → null. */
export function clean(s: string | null | undefined): string | null {
  if (s === null || s === undefined) return null;
  const trimmed = s.trim();
  // most fields have nothing to fold: no run of whitespace, no whitespace but a space
  const t = NEEDS_FOLDING.test(trimmed) ? trimmed.replace(/\s+/g, ' ') : trimmed;
  return t === '' ? null : t;
}

/**
 * Parse a number as publishers write it: thousands separators, a leading currency sign,
 * `6202.0`. Returns null for empty, undefined when present but not a number.
 */
export function parseNumber(s: string | null | undefined): number | null | undefined {
  const t = clean(s);
  if (t === null) return null;
  const u = t.replace(/^[€$£]/, '').replace(/,/g, '');
  if (!/^-?(\d+\.?\d*|\.\d+)$/.test(u)) return undefined;
  return Number(u);
}

/** Like parseNumber but must be a whole number (a trailing `.0` is accepted). */
export function parseInteger(s: string | null | undefined): number | null | undefined {
  const n = parseNumber(s);
  if (n === null || n === undefined) return n;
  return Number.isInteger(n) ? n : undefined;
}

/** Yes/No/Y/N/true/false/1/0 → boolean; empty → false. */
export function parseFlag(s: string | null | undefined): boolean {
  const t = clean(s)?.toLowerCase();
  return t === 'yes' || t === 'y' || t === 'true' || t === '1' || t === 't';
}

/** First three characters of an Eircode (the routing key), upper-cased; null when not one. */
export function routingKey(eircode: string | null | undefined): string | null {
  const t = clean(eircode)?.toUpperCase().replace(/\s+/g, '');
  if (!t) return null;
  const m = /^([AC-FHKNPRTV-Y]\d{2}|D6W)/.exec(t);
  return m ? m[1]! : null;
}

/** Map header names to column indexes (trimmed, case-sensitive as published). */
function headerIndex(header: readonly string[]): Map<string, number> {
  const m = new Map<string, number>();
  header.forEach((h, i) => m.set(h.trim(), i));
  return m;
}

/** Turns a record's fields into a column-name → value object. */
type RecordReader = (fields: readonly string[]) => Record<string, string>;

/**
 * The reader of one file's records: an object literal naming each column of the header index,
 * compiled once per file, so every record of the file is one allocation of one shape (building
 * each object key by key cost ~1.5 s over the default planning file). Keys are computed
 * (`["name"]: …`), so a header such as `__proto__` is an own property like any other.
 */
function recordReader(idx: Map<string, number>): RecordReader {
  const members = [...idx].map(([name, i]) => `[${JSON.stringify(name)}]: f[${i}] ?? ''`).join(', ');
  return new Function('f', `return { ${members} };`) as RecordReader;
}

/** Build a reject. Never pass raw field values that could be personal data as `detail`. */
export function reject(
  source: SourceName,
  file: string,
  line: number,
  reason: RejectReason,
  detail: string | null = null,
  key: string | null = null,
): Reject {
  return { source, file, line, key, reason, detail };
}

/** Count rejects by reason, for `leads ingest` and the manifest. */
export function countReasons(rejects: readonly Reject[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of rejects) out[r.reason] = (out[r.reason] ?? 0) + 1;
  return out;
}

/** A file layout an adapter accepts: all `columns` are known names, `required` identify it. */
export interface Layout<K extends string> {
  kind: K;
  columns: readonly string[];
  required: readonly string[];
}

/**
 * Stream one publisher CSV file for an adapter's thin reader: sniff the encoding on the first
 * 64 KiB, recognise the file's layout by its header (names matched case-insensitively and in
 * any order, handed to `onRecord` under the layout's spelling), and hand every well-formed data
 * record to `onRecord` as a column → value object. A record whose field count differs from the
 * header's, or that the parser flagged malformed, becomes a `malformed_row` reject; a header
 * that matches no layout (or an empty file) becomes one `unknown_header` reject at line 1 and
 * the rest of the file is not read. Columns listed in `omit` (personal data) are never copied
 * out of the raw record. Returns the data lines accounted for (a refused file counts as one),
 * so that rows + rejects = lines holds for the caller, and the recognised kind.
 */
export async function scanCsv<K extends string>(
  file: string,
  source: SourceName,
  layouts: readonly Layout<K>[],
  onRecord: (kind: K, rec: Record<string, string>, line: number) => void,
  onReject: (r: Reject) => void,
  omit: readonly string[] = [],
): Promise<{ lines: number; kind: K | null }> {
  const encoding = sniffEncoding(await readHead(file, 64 * 1024));
  const canonical = new Map<string, string>();
  for (const l of layouts) for (const c of l.columns) canonical.set(c.toLowerCase(), c);
  let idx: Map<string, number> | null = null;
  let read: RecordReader | null = null;
  let width = 0;
  let kind: K | null = null;
  let lines = 0;
  for await (const batch of readCsvBatches(file, encoding)) {
    for (const rec of batch) {
      if (idx === null) {
        const names = rec.fields.map((h) => canonical.get(h.trim().toLowerCase()) ?? h.trim());
        const found = layouts.find((l) => l.required.every((c) => names.includes(c)));
        if (!found || rec.malformed) {
          onReject(reject(source, file, rec.line, 'unknown_header', 'header matches no known layout'));
          return { lines: 1, kind: null };
        }
        idx = headerIndex(names);
        for (const c of omit) idx.delete(c);
        read = recordReader(idx);
        width = names.length;
        kind = found.kind;
        continue;
      }
      lines++;
      if (rec.malformed || rec.fields.length !== width) {
        const detail = rec.malformed ?? `${rec.fields.length} fields, header has ${width}`;
        onReject(reject(source, file, rec.line, 'malformed_row', detail));
        continue;
      }
      onRecord(kind!, read!(rec.fields), rec.line);
    }
  }
  if (idx === null) {
    onReject(reject(source, file, 1, 'unknown_header', 'empty file'));
    return { lines: 1, kind: null };
  }
  return { lines, kind };
}

/** The first `bytes` of a file, cut before a UTF-8 character split by the window's end. */
async function readHead(file: string, bytes: number): Promise<Uint8Array> {
  const fh = await open(file, 'r');
  try {
    const buf = Buffer.alloc(bytes);
    const { bytesRead } = await fh.read(buf, 0, bytes, 0);
    let end = bytesRead;
    if (bytesRead === bytes) {
      let back = 0;
      while (back < 4 && end > 0 && (buf[end - 1]! & 0xc0) === 0x80) {
        end--;
        back++;
      }
      if (end > 0 && buf[end - 1]! >= 0xc0) end--;
    }
    return buf.subarray(0, end);
  } finally {
    await fh.close();
  }
}
