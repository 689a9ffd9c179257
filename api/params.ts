/**
 * Query-parameter parsing and validation for the leads endpoints. The raw query string is shaped
 * (comma lists → arrays, integers and booleans parsed) and validated with ajv against
 * `schemas/leads-query.schema.json`; every problem becomes one `{name, reason, allowed?}` entry of
 * a single 400 (`invalidParams`): unknown parameters → `unknown_parameter`, anything else →
 * `invalid_parameter`, enumerations list their allowed values.
 */
import { readFileSync } from 'node:fs';
import type { ErrorObject, ValidateFunction } from 'ajv';
import type { ApiConfig } from './config.ts';
import { invalidParams, type ParamError } from './errors.ts';
import { normalisedFilters, sortKeyValid, type LeadsFilters, type LeadsSort, type SortKey } from './query/leads-query.ts';
import { datePairs, FILTERS, filtersOfKind, STATUS_GROUP_OF, type FilterFold } from './query/lead-filters.ts';
import { foldPlace, foldText, queryAjv, REASONS } from './query/query-common.ts';
import { decodeCursor, filtersHash, type CursorSecrets } from './query/paging.ts';

/** A raw query as Koa parses it. */
export type RawQuery = Record<string, string | string[] | undefined>;

type JsonSchema = Record<string, any>;

/** Comma-list parameters: the `enum` and `multi` filters of the table. */
const LIST_PARAMS: readonly string[] = filtersOfKind('enum', 'multi').map((f) => f.name);
/** Numeric parameters: parsed when they look like a number (negative and decimal too), so the schema names the real problem (type, minimum). */
const NUMBER_PARAMS: readonly string[] = [...filtersOfKind('range').map((f) => f.name), 'page', 'page_size'];
const NUMBER_TEXT = /^-?\d{1,15}(\.\d{1,9})?$/;
const BOOL_PARAMS: readonly string[] = filtersOfKind('flag').map((f) => f.name);
const BOOLS: Record<string, boolean> = { true: true, '1': true, false: false, '0': false };

let leadsSchema: JsonSchema | null = null;
let leadsValidator: ValidateFunction | null = null;

/** The leads query schema (read once). */
export function leadsQuerySchema(): JsonSchema {
  leadsSchema ??= JSON.parse(readFileSync(new URL('../schemas/leads-query.schema.json', import.meta.url), 'utf8')) as JsonSchema;
  return leadsSchema;
}

function validator(): ValidateFunction {
  if (!leadsValidator) {
    leadsValidator = queryAjv().compile(leadsQuerySchema());
  }
  return leadsValidator;
}

/**
 * Shape a raw query for the schema: a repeated scalar parameter is an error (reported here);
 * list parameters are split on commas (repeats are joined); integers and booleans are parsed
 * when well-formed and otherwise left as strings for ajv to reject with a type error.
 */
export function shapeQuery(raw: RawQuery): { shaped: Record<string, unknown>; errors: ParamError[] } {
  const shaped: Record<string, unknown> = {};
  const errors: ParamError[] = [];
  for (const [name, value] of Object.entries(raw)) {
    if (value === undefined) continue;
    const values = Array.isArray(value) ? value : [value];
    if (LIST_PARAMS.includes(name)) {
      shaped[name] = values.flatMap((v) => v.split(',')).map((v) => v.trim()).filter((v) => v !== '');
      continue;
    }
    if (values.length > 1) {
      errors.push({ name, reason: REASONS.repeated });
      continue;
    }
    const v = values[0]!;
    if (NUMBER_PARAMS.includes(name)) shaped[name] = NUMBER_TEXT.test(v) ? Number(v) : v;
    else if (BOOL_PARAMS.includes(name)) shaped[name] = v.toLowerCase() in BOOLS ? BOOLS[v.toLowerCase()] : v;
    else shaped[name] = v;
  }
  return { shaped, errors };
}

/** One ajv error as a parameter error naming the parameter (and its allowed values for enums). */
function paramError(e: ErrorObject, schema: JsonSchema): ParamError {
  if (e.keyword === 'additionalProperties') {
    return { name: String((e.params as { additionalProperty: string }).additionalProperty), reason: REASONS.unknownParameter };
  }
  const name = e.instancePath.split('/')[1] ?? '';
  const prop = schema.properties[name] ?? {};
  switch (e.keyword) {
    case 'enum': {
      const allowed = (prop.items?.enum ?? prop.enum) as string[];
      return { name, reason: REASONS.notAllowed, allowed };
    }
    case 'type':
      return { name, reason: `must be ${prop.type === 'integer' ? 'a whole number' : prop.type === 'boolean' ? 'true, false, 1 or 0' : `a ${prop.type}`}` };
    case 'minimum':
      return { name, reason: prop.minimum === 0 ? 'must not be negative' : `must be at least ${prop.minimum}` };
    case 'minItems':
      return { name, reason: REASONS.empty };
    case 'format':
      return { name, reason: REASONS.notADate };
    default:
      return { name, reason: e.message ?? 'invalid' };
  }
}

/** Validate a shaped query; the errors (one per parameter, in query order). */
function validate(shaped: Record<string, unknown>): ParamError[] {
  const v = validator();
  if (v(shaped)) return [];
  const schema = leadsQuerySchema();
  const out = new Map<string, ParamError>();
  for (const e of v.errors ?? []) {
    const pe = paramError(e, schema);
    if (!out.has(pe.name)) out.set(pe.name, pe);
  }
  return [...out.values()];
}

/**
 * Canonical values of a release's `multi` filters (authority, county, …), each keyed by its
 * folded form. `authorities` / `counties` are the maps of `authority` / `county`.
 */
export interface PlaceNames {
  authorities: Map<string, string>;
  counties: Map<string, string>;
  /** Every `multi` filter's map, by parameter name. */
  values: ReadonlyMap<string, Map<string, string>>;
}

/** Build the folded-value maps from the release's distinct values (rows of `leadsPlacesQuery`; nulls skipped). */
export function placeNames(rows: readonly Record<string, unknown>[]): PlaceNames {
  return placeNamesOf((column) => rows.map((r) => r[column]));
}

/** The folded-value maps from each `multi` filter column's values (`valuesOf(column)`; non-strings skipped). */
export function placeNamesOf(valuesOf: (column: string) => Iterable<unknown>): PlaceNames {
  const values = new Map<string, Map<string, string>>();
  for (const f of filtersOfKind('multi')) {
    const m = new Map<string, string>();
    for (const v of valuesOf(f.column)) if (typeof v === 'string') m.set(foldValue(v, f.fold), v);
    values.set(f.name, m);
  }
  return { authorities: values.get('authority')!, counties: values.get('county')!, values };
}

/** Fold a place name (the API's one place-name folder, api/query/query-common.ts): "Co. Cork" = "cork". */
export const foldName = foldPlace;

/** Fold a `multi` filter's value as its declaration says. */
function foldValue(s: string, fold: FilterFold): string {
  return fold === 'place' ? foldPlace(s) : foldText(s);
}

/** The status group of each lifecycle stage (`x-status-of` of the query schema's `status`). */
function statusOf(): Record<string, string> {
  return STATUS_GROUP_OF as Record<string, string>;
}

/**
 * `status` takes the four groups and every lifecycle stage (spec 4.1 names `commencing` as a
 * `status` example). A stage in `status` matches exactly that stage, so a `status` list holding
 * any stage is rewritten as the `readiness` list it means (the stages of its groups plus its
 * stages), intersected with a `readiness` filter given beside it. When nothing is left, the
 * filter keeps one `readiness` value with a status group it is not in: it matches no lead.
 */
function statusAsStages(filters: LeadsFilters): void {
  const of = statusOf();
  const given = filters.status!;
  if (!given.some((v) => v in of)) return;
  const stages = Object.keys(of).filter((r) => given.includes(r) || given.includes(of[r]!));
  delete filters.status;
  const wanted = filters.readiness ? filters.readiness.filter((r) => stages.includes(r)) : stages;
  if (wanted.length > 0) {
    filters.readiness = wanted;
    return;
  }
  const r = filters.readiness![0]!;
  filters.readiness = [r];
  filters.status = [['planning', 'approved', 'active', 'closed'].find((g) => g !== of[r])!];
}

export type LeadsPaging =
  | { mode: 'page'; page: number; pageSize: number; offset: number }
  | { mode: 'cursor'; pageSize: number; after: SortKey; cursorRelease: string };

export interface LeadsRequest {
  filters: LeadsFilters;
  sort: LeadsSort;
  paging: LeadsPaging;
  /** Hash of filters + sort, carried by cursors. */
  hash: string;
}

/**
 * Parse and validate the query of `GET /leads`. Throws one `invalidParams` ApiError naming every
 * bad parameter. Authority and county values are mapped to canonical names through `places`.
 */
export function parseLeadsQuery(
  raw: RawQuery,
  config: Pick<ApiConfig, 'pageSizeDefault' | 'pageSizeMax' | 'pageMax'> & CursorSecrets,
  places: PlaceNames,
  releaseId: string,
): LeadsRequest {
  const { shaped, errors } = shapeQuery(raw);
  const schemaErrors = validate(shaped);
  const bad = new Set([...errors, ...schemaErrors].map((e) => e.name));
  const all = [...errors, ...schemaErrors];
  const filters: Record<string, unknown> = {};
  const s = shaped as Record<string, any>;
  for (const f of FILTERS) {
    const k = f.name;
    if (bad.has(k) || s[k] === undefined) continue;
    if (f.kind === 'enum') filters[k] = [...new Set(s[k] as string[])];
    else if (f.kind !== 'multi') filters[k] = s[k];
    else {
      const map = places.values.get(k) ?? new Map<string, string>();
      const names: string[] = [];
      const unknown: string[] = [];
      for (const v of s[k] as string[]) {
        const canonical = map.get(foldValue(v, f.fold));
        if (canonical === undefined) unknown.push(v);
        else if (!names.includes(canonical)) names.push(canonical);
      }
      if (unknown.length > 0) {
        all.push({ name: k, reason: `unknown ${k} ${unknown.map((u) => JSON.stringify(u)).join(', ')}`, allowed: [...map.values()].sort() });
        bad.add(k);
      } else filters[k] = names;
    }
  }
  for (const [from, to] of datePairs()) {
    const a = filters[from.name] as string | undefined;
    const b = filters[to.name] as string | undefined;
    if (a !== undefined && b !== undefined && a > b) all.push({ name: to.name, reason: `must not be before ${from.name}` });
  }
  if (filters['status']) statusAsStages(filters as LeadsFilters);

  let sort: LeadsSort = filters.q !== undefined ? 'relevance' : 'newest';
  if (s.sort !== undefined && !bad.has('sort')) {
    if (s.sort === 'relevance' && s.q === undefined) {
      all.push({ name: 'sort', reason: 'relevance needs q', allowed: ['newest', 'oldest', 'value_desc', 'value_asc'] });
    } else sort = s.sort;
  }

  const pageSize = s.page_size ?? config.pageSizeDefault;
  if (!bad.has('page_size') && pageSize > config.pageSizeMax) {
    all.push({ name: 'page_size', reason: `must be at most ${config.pageSizeMax}` });
  }
  if (s.page !== undefined && s.cursor !== undefined) {
    all.push({ name: 'cursor', reason: REASONS.pageAndCursor });
  }
  if (!bad.has('page') && s.page !== undefined && s.page > config.pageMax) {
    all.push({ name: 'page', reason: `must be at most ${config.pageMax}; page deeper with cursor (pass next_cursor as cursor)` });
  }
  if (all.length > 0) throw invalidParams(all);
  const hash = filtersHash('leads', normalisedFilters(filters as LeadsFilters), sort);
  let paging: LeadsPaging;
  if (s.cursor !== undefined) {
    const c = decodeCursor(s.cursor, hash, config); // throws 400 on cursor
    if (!sortKeyValid(sort, c.key)) throw invalidParams([{ name: 'cursor', reason: 'not a valid cursor; pass next_cursor unchanged' }]);
    if (sort === 'relevance' && c.release !== releaseId) {
      throw invalidParams([{ name: 'cursor', reason: 'relevance cursors expire with the release they were made on (scores change); start again without cursor' }]);
    }
    paging = { mode: 'cursor', pageSize, after: c.key, cursorRelease: c.release };
  } else {
    const page = s.page ?? 1;
    paging = { mode: 'page', page, pageSize, offset: (page - 1) * pageSize };
  }
  return { filters: filters as LeadsFilters, sort, paging, hash };
}

/**
 * Validate the path id and query of `GET /leads/{id}` (no query parameters are accepted).
 * Throws `invalidParams`; returns the id.
 */
export function parseLeadId(id: string, raw: RawQuery): number {
  const errors: ParamError[] = Object.keys(raw).map((name) => ({ name, reason: REASONS.unknownParameter }));
  if (!/^[1-9][0-9]{0,14}$/.test(id)) errors.push({ name: 'id', reason: 'must be a positive integer' });
  if (errors.length > 0) throw invalidParams(errors);
  return Number(id);
}
