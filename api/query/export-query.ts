/**
 * Pure SQL builders and parameter parsing for the bulk exports (`/v1/export/applications` and its
 * `.csv`, `.jsonl`, `.parquet` forms). The filters are those of `GET /v1/leads` (parsed by
 * `parseLeadsQuery`, so both endpoints accept and reject exactly the same values). Cursor pages
 * are in `id` order (a cursor is the last id served); one-shot files keep the release's order
 * (newest first): a sort of every wide row would hold them all in DuckDB's memory.
 *
 * Rows are rendered by DuckDB itself — a cursor page as one JSON object per row, files by
 * DuckDB's own CSV / JSON / Parquet writers — never as a JS object per row. Masking is decided by
 * `api/masking.ts` (`maskedFor`): the columns it names are selected as typed NULLs (kept, never
 * dropped), exactly what `maskRecord` does to a served record.
 */
import { readFileSync } from 'node:fs';
import { invalidParams, ApiError, type ParamError } from '../errors.ts';
import { REASONS } from './query-common.ts';
import { parseLeadsQuery, type PlaceNames, type RawQuery } from '../params.ts';
import type { ApiConfig } from '../config.ts';
import { leadsFrom, leadsWhere, LEAD_COLUMNS, normalisedFilters, type LeadsFilters, type LeadsSource, type SqlQuery } from './leads-query.ts';
import { decodeCursor, filtersHash, type CursorSecrets } from './paging.ts';

/** Default and maximum `limit` of `GET /v1/export/applications` (rows per page). */
export const EXPORT_LIMIT_DEFAULT = 1_000;
export const EXPORT_LIMIT_MAX = 10_000;

/** The export formats and their media types / file extensions. */
export const EXPORT_FORMATS = {
  csv: { type: 'text/csv; charset=utf-8; header=present', ext: 'csv' },
  jsonl: { type: 'application/x-ndjson; charset=utf-8', ext: 'jsonl' },
  parquet: { type: 'application/vnd.apache.parquet', ext: 'parquet' },
} as const;
export type ExportFormat = keyof typeof EXPORT_FORMATS;

/** How a column is written to CSV. */
type ColumnKind = 'text' | 'number' | 'boolean' | 'date' | 'list';

/** Kind of every lead column, read from `schemas/lead.schema.json` (types and `format: date`). */
export const LEAD_COLUMN_KINDS: Readonly<Record<string, ColumnKind>> = (() => {
  const schema = JSON.parse(readFileSync(new URL('../../schemas/lead.schema.json', import.meta.url), 'utf8')) as {
    properties: Record<string, { type?: string | string[]; format?: string }>;
  };
  const out: Record<string, ColumnKind> = {};
  for (const c of LEAD_COLUMNS) {
    const p = schema.properties[c] ?? {};
    const types = Array.isArray(p.type) ? p.type : [p.type];
    if (types.includes('array')) out[c] = 'list';
    else if (types.includes('boolean')) out[c] = 'boolean';
    else if (types.includes('integer') || types.includes('number')) out[c] = 'number';
    else if (p.format === 'date') out[c] = 'date';
    else out[c] = 'text';
  }
  return Object.freeze(out);
})();

/** The CSV header: every lead column, in schema order — the same for every scope. */
export const CSV_COLUMNS: readonly string[] = LEAD_COLUMNS;

/** SQL expression of one column: the column, or a NULL of its type when masked. */
function columnExpr(column: string, masked: ReadonlySet<string>): string {
  return masked.has(column) ? `CASE WHEN FALSE THEN l."${column}" END` : `l."${column}"`;
}

/**
 * The select list of the Parquet export: every lead column, masked ones as typed NULLs.
 *
 * @example exportColumnsSql(new Set(['applicant_org'])) // 'l."id" AS "id", …, CASE WHEN FALSE THEN l."applicant_org" END AS "applicant_org", …'
 */
export function exportColumnsSql(masked: ReadonlySet<string>): string {
  return LEAD_COLUMNS.map((c) => `${columnExpr(c, masked)} AS "${c}"`).join(', ');
}

/**
 * One JSON object per row, as VARCHAR: `{"id":…,"lead_key":…,…}` with the keys of a lead in schema
 * order — the same values as the `results` of `GET /v1/leads` (DATE → "YYYY-MM-DD").
 */
export function jsonLineSql(masked: ReadonlySet<string>): string {
  return `json_object(${LEAD_COLUMNS.map((c) => `'${c}', ${columnExpr(c, masked)}`).join(', ')})::VARCHAR`;
}

/**
 * The select list of the CSV export, for DuckDB's CSV writer: every lead column in schema order,
 * lists joined with ';' (`array_to_string`), masked columns as NULL (an empty field). Text and
 * list columns are written quoted (`csvForceQuote`), so an empty text is `""` and NULL is empty.
 */
export function csvColumnsSql(masked: ReadonlySet<string>): string {
  return LEAD_COLUMNS.map((c) => {
    if (masked.has(c)) return `CAST(NULL AS VARCHAR) AS "${c}"`;
    if (LEAD_COLUMN_KINDS[c] === 'list') return `array_to_string(l."${c}", ';') AS "${c}"`;
    return `l."${c}" AS "${c}"`;
  }).join(', ');
}

/** The columns DuckDB's CSV writer must always quote: the text and list columns. */
export function csvForceQuote(): string[] {
  return LEAD_COLUMNS.filter((c) => LEAD_COLUMN_KINDS[c] === 'text' || LEAD_COLUMN_KINDS[c] === 'list');
}

/** The CSV header line (no line end). */
export function csvHeader(): string {
  return CSV_COLUMNS.join(',');
}

export interface ExportRowsRequest {
  filters: LeadsFilters;
  /** Rows after this id (cursor paging); null from the start. */
  afterId: number | null;
  /** Row limit (cursor pages ask for limit + 1); null for the whole set. */
  limit: number | null;
  /** Id order (default: cursor pages); false keeps the release's order, newest first (no sort: the files). */
  ordered?: boolean;
}

/**
 * The filtered leads (in id order unless `ordered: false`) with `select` as the only output
 * (`jsonLineSql`, `csvColumnsSql`, `exportColumnsSql`, or `l.id`).
 *
 * @example exportRowsQuery(src, { filters: { county: ['Cork'] }, afterId: 120, limit: 1001 }, 'l.id')
 *   // SELECT l.id FROM … AS l WHERE l.county IN (?) AND l.id > ? ORDER BY l.id LIMIT ?
 */
export function exportRowsQuery(src: LeadsSource, req: ExportRowsRequest, select: string): SqlQuery {
  const from = leadsFrom(src, req.filters.q);
  const where = leadsWhere(req.filters);
  const conds = [where.sql];
  const params: unknown[] = [...from.params, ...where.params];
  if (req.afterId !== null) {
    conds.push('l.id > ?');
    params.push(req.afterId);
  }
  const parts = [`SELECT ${select} FROM ${from.sql}`, `WHERE ${conds.join(' AND ')}`];
  if (req.ordered !== false) parts.push('ORDER BY l.id');
  if (req.limit !== null) {
    parts.push('LIMIT ?');
    params.push(req.limit);
  }
  return { sql: parts.join('\n'), params };
}

/** Hash of an export's filters (cursors are bound to it; the order is always id). */
export function exportHash(filters: LeadsFilters): string {
  return filtersHash('export/applications', normalisedFilters(filters), 'id');
}

export interface ExportRequest {
  filters: LeadsFilters;
  /** Page size (cursor pages only). */
  limit: number;
  /** Decoded cursor: last id served and the release it was served from. */
  cursor: { afterId: number; release: string } | null;
}

const PAGING_ONLY = ['limit', 'cursor'] as const;
const NOT_FOR_EXPORTS = ['page', 'page_size', 'sort'] as const;

/**
 * Parse an export request: the `/v1/leads` filters plus `limit` and `cursor` (cursor pages;
 * `dry_run` is taken off the query by the access model before a route sees it). `page`, `page_size` and `sort` do not apply (exports are in id
 * order) and are rejected as unknown, like any other parameter. Throws one 400 naming every bad
 * parameter.
 */
export function parseExportQuery(
  raw: RawQuery,
  mode: 'page' | 'file',
  config: Pick<ApiConfig, 'pageSizeDefault' | 'pageSizeMax' | 'pageMax'> & CursorSecrets,
  places: PlaceNames,
  releaseId: string,
): ExportRequest {
  const errors: ParamError[] = [];
  const rest: RawQuery = {};
  const own: Record<string, string> = {};
  for (const [name, value] of Object.entries(raw)) {
    if (value === undefined) continue;
    const mine = mode === 'page' && (PAGING_ONLY as readonly string[]).includes(name);
    if ((NOT_FOR_EXPORTS as readonly string[]).includes(name) || (!mine && (name === 'cursor' || name === 'limit'))) {
      errors.push({ name, reason: REASONS.unknownParameter });
    } else if (mine) {
      if (Array.isArray(value)) errors.push({ name, reason: REASONS.repeated });
      else own[name] = value;
    } else rest[name] = value;
  }
  let filters: LeadsFilters = {};
  try {
    filters = parseLeadsQuery(rest, config, places, releaseId).filters;
  } catch (e) {
    if (!(e instanceof ApiError) || !e.errors) throw e;
    errors.push(...e.errors);
  }
  let limit = EXPORT_LIMIT_DEFAULT;
  if (own['limit'] !== undefined) {
    const n = /^\d{1,9}$/.test(own['limit']) ? Number(own['limit']) : NaN;
    if (!Number.isInteger(n) || n < 1 || n > EXPORT_LIMIT_MAX) errors.push({ name: 'limit', reason: `must be an integer from 1 to ${EXPORT_LIMIT_MAX}` });
    else limit = n;
  }
  if (errors.length > 0) throw invalidParams(errors);
  let cursor: ExportRequest['cursor'] = null;
  if (own['cursor'] !== undefined) {
    const c = decodeCursor(own['cursor'], exportHash(filters), config);
    if (c.key.length !== 1 || !Number.isSafeInteger(c.key[0]) || !/^[A-Za-z0-9_-]{1,64}$/.test(c.release)) {
      throw invalidParams([{ name: 'cursor', reason: 'not a valid cursor; pass next_cursor unchanged' }]);
    }
    cursor = { afterId: c.key[0] as number, release: c.release };
  }
  return { filters, limit, cursor };
}
