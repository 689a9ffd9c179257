/**
 * Writing release tables as Parquet with DuckDB. Rows are staged as newline-delimited JSON,
 * then DuckDB reads them with column types derived from the record's JSON Schema in
 * `schemas/` (so the schema stays the single source of truth for names, order and types) and
 * writes ZSTD Parquet sorted and row-grouped for the API's access paths.
 */
import { closeSync, openSync, readFileSync, writeSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { sqlIdent, sqlString, type Db } from '../lib/duckdb.ts';

const SCHEMA_DIR = new URL('../../schemas/', import.meta.url);

interface JsonSchema {
  type?: string | string[];
  format?: string;
  multipleOf?: number;
  items?: JsonSchema;
  properties?: Record<string, JsonSchema>;
  enum?: unknown[];
}

/** Map one JSON Schema property to a DuckDB column type. */
export function duckdbType(s: JsonSchema): string {
  const types = (Array.isArray(s.type) ? s.type : [s.type]).filter((t) => t && t !== 'null');
  const t = types[0];
  if (t === 'integer') return 'BIGINT';
  if (t === 'number') return s.multipleOf === 0.01 ? 'DECIMAL(14,2)' : 'DOUBLE';
  if (t === 'boolean') return 'BOOLEAN';
  if (t === 'string') return s.format === 'date' ? 'DATE' : s.format === 'date-time' ? 'TIMESTAMP' : 'VARCHAR';
  if (t === 'array') return `${duckdbType(s.items ?? { type: 'string' })}[]`;
  if (t === 'object') return 'JSON';
  if (s.enum && s.enum.every((e) => typeof e === 'string' || e === null)) return 'VARCHAR';
  throw new Error(`no DuckDB type for schema ${JSON.stringify(s)}`);
}

/** Ordered column name → DuckDB type, read from `schemas/<name>.schema.json`. */
export function columnsFromSchema(schemaName: string, schemaDir: URL | string = SCHEMA_DIR): [string, string][] {
  const path =
    typeof schemaDir === 'string'
      ? join(schemaDir, `${schemaName}.schema.json`)
      : new URL(`${schemaName}.schema.json`, schemaDir);
  const schema = JSON.parse(readFileSync(path, 'utf8')) as JsonSchema;
  if (!schema.properties) throw new Error(`schema ${schemaName} has no properties`);
  return Object.entries(schema.properties).map(([name, s]) => [name, duckdbType(s)]);
}

export interface TableSpec {
  /** File name without extension, e.g. "leads". */
  name: string;
  /** Ordered columns with DuckDB types. */
  columns: [string, string][];
  /** ORDER BY clause contents, e.g. "received_date DESC, id DESC". */
  orderBy: string;
  rowGroupRows?: number;
}

/** Write rows as NDJSON through a sink (buffered writes). Returns the row count. */
export function writeNdjson(path: string, rows: Iterable<unknown>): number {
  const sink = openNdjsonSink(path);
  for (const r of rows) sink.write(r);
  return sink.close();
}

/**
 * How a staging file holds its rows: NDJSON (any value: lists, text with any character), CSV
 * for tables of scalars only (ids, numbers, dates, codes, text) — ~3× cheaper to write than
 * `JSON.stringify` and far quicker for DuckDB to read (the neighbours, registry, changes, sales) —
 * or TSV without quoting, '' for null (the lead build's index files, pipeline/normalise/lead-staging.ts,
 * whose fields hold no tab or newline).
 */
export type StagingFormat = 'ndjson' | 'csv' | 'tsv';

/** The relation DuckDB reads a staging file as, with the given columns. */
export function stagingSource(
  format: StagingFormat,
  path: string,
  columns: readonly (readonly [string, string])[],
): string {
  const cols = columns.map(([n, t]) => `${sqlString(n)}: ${sqlString(t)}`).join(', ');
  if (format === 'ndjson')
    return `read_json(${sqlString(path)}, format = 'newline_delimited', columns = {${cols}}, maximum_object_size = 16777216)`;
  if (format === 'tsv')
    return (
      `read_csv(${sqlString(path)}, delim = '\t', header = false, quote = '', escape = '', ` +
      `nullstr = '', auto_detect = false, columns = {${cols}})`
    );
  return (
    `read_csv(${sqlString(path)}, header = false, delim = ',', quote = '"', escape = '"', ` +
    `allow_quoted_nulls = false, auto_detect = false, columns = {${cols}})`
  );
}

/**
 * Build the COPY statement that turns a staging file into the table's Parquet file, sorted by the
 * table's order — or, `inOrder`, as the staging file holds its rows (the writer staged them in the
 * table's order and checked it: DuckDB keeps a scan's order, and a million rows need not be sorted
 * again). Pure: returns SQL only (paths are literals because COPY takes no bound parameters).
 */
export function copyToParquetSql(
  spec: TableSpec,
  stagingPath: string,
  parquetPath: string,
  format: StagingFormat = 'ndjson',
  inOrder = false,
): string {
  const select = spec.columns.map(([n]) => sqlIdent(n)).join(', ');
  const order = inOrder ? '' : ` ORDER BY ${spec.orderBy}`;
  return (
    `COPY (SELECT ${select} FROM ${stagingSource(format, stagingPath, spec.columns)}${order}) ` +
    `TO ${sqlString(parquetPath)} (FORMAT PARQUET, COMPRESSION ZSTD, ROW_GROUP_SIZE ${spec.rowGroupRows ?? 100_000})`
  );
}

/** A push-style staging file, for rows produced inside synchronous callbacks. */
export interface NdjsonSink {
  write(row: unknown): void;
  /** Flush and close; returns the number of rows written. */
  close(): number;
  readonly path: string;
  readonly format?: StagingFormat;
}

/** Open `<dir>/.<name>.ndjson`, the staging file of table `name`. */
export function openTableSink(dir: string, name: string): NdjsonSink {
  return openNdjsonSink(join(dir, `.${name}.ndjson`));
}

/**
 * Open `<dir>/.<name>.csv`, a CSV staging file of rows of scalars, written as `columns` in order:
 * null → an empty field (DuckDB's NULL), a string quoted when it is empty or holds `"`, `,` or a
 * line break (`allow_quoted_nulls = false` keeps "" an empty string), true / false, numbers as JS
 * writes them. A list or object value throws: such a table is staged as NDJSON.
 */
export function openCsvTableSink(dir: string, name: string, columns: readonly string[]): NdjsonSink {
  const sink = openLineSink<Record<string, unknown>>(join(dir, `.${name}.csv`), (row) => {
    let line = '';
    for (let i = 0; i < columns.length; i++) {
      if (i > 0) line += ',';
      line += stagingField(row[columns[i]!]);
    }
    return line;
  });
  return {
    path: sink.path,
    format: 'csv',
    write: (row) => sink.write(row as Record<string, unknown>),
    close: sink.close,
  };
}

const NEEDS_CSV_QUOTES = /[",\r\n]/;

/** One CSV staging field (see `openCsvTableSink`). */
function stagingField(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'string') return v === '' || NEEDS_CSV_QUOTES.test(v) ? `"${v.replace(/"/g, '""')}"` : v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  throw new Error(`a CSV staging field must be a scalar, got ${JSON.stringify(v)?.slice(0, 60)}`);
}

/** Open an NDJSON file for pushing rows one at a time (buffered, synchronous writes). */
export function openNdjsonSink(path: string): NdjsonSink {
  return openLineSink<unknown>(path, (row) => JSON.stringify(row));
}

/** A file of one line per row (`toLine` must not return a newline), written in ~1 MB batches. */
export function openLineSink<T>(
  path: string,
  toLine: (row: T) => string,
): { readonly path: string; write(row: T): void; close(): number } {
  const fd = openSync(path, 'w');
  let buf: string[] = [];
  let size = 0;
  let n = 0;
  const flush = (): void => {
    if (buf.length) writeSync(fd, buf.join('\n') + '\n');
    buf = [];
    size = 0;
  };
  return {
    path,
    write(row) {
      const s = toLine(row);
      buf.push(s);
      size += s.length;
      n++;
      if (size > 1 << 20) flush();
    },
    close() {
      flush();
      closeSync(fd);
      return n;
    },
  };
}

/** Turn a closed staging sink into `<dir>/<name>.parquet` and remove the staging file (`inOrder`: see `copyToParquetSql`). */
export async function writeTableFromSink(
  db: Db,
  dir: string,
  spec: TableSpec,
  sink: NdjsonSink,
  inOrder = false,
): Promise<void> {
  await db.run(copyToParquetSql(spec, sink.path, join(dir, `${spec.name}.parquet`), sink.format ?? 'ndjson', inOrder));
  await rm(sink.path, { force: true });
}

/** Write rows to `<dir>/<name>.parquet` through an NDJSON staging file. Returns the row count. */
export async function writeTable(db: Db, dir: string, spec: TableSpec, rows: Iterable<unknown>): Promise<number> {
  const sink = openTableSink(dir, spec.name);
  for (const r of rows) sink.write(r);
  const n = sink.close();
  await writeTableFromSink(db, dir, spec, sink);
  return n;
}

/** Read every row of a Parquet file (small tables such as the registry). */
export async function readParquet<T>(db: Db, path: string): Promise<T[]> {
  return db.all(`SELECT * FROM read_parquet(${sqlString(path)})`) as Promise<T[]>;
}
