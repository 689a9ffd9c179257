/**
 * The leads query (`GET /v1/leads`, and the filters of the exports and of webhook saved filters):
 * `parseQuery` (api/query/parse-query.ts) checks it against `schemas/leads-query.schema.json`,
 * generated from the filter table; what is the leads' own is here — the release's canonical
 * values of the `multi` filters (authority, county, …), a date range's order, the status → stage
 * rule, `sort=relevance` needing `q`, and the paging limits of the configuration. Every problem
 * becomes one `{name, reason, allowed?}` entry of a single 400 (`invalidParams`).
 */
import { parseSearchQuery } from '../../common/search-syntax.ts';
import type { ApiConfig } from '../config.ts';
import { invalidParams, type ParamError } from '../http/errors.ts';
import { normalisedFilters, sortKeyValid, type LeadsFilters, type LeadsSort, type SortKey } from './leads-query.ts';
import {
  datePairs,
  FILTERS,
  LEADS_SORT_NAMES,
  filtersOfKind,
  STATUS_GROUP_OF,
  type FilterFold,
  type GeometryFilter,
} from './lead-filters.ts';
import { foldPlace, foldText, REASONS } from './query-common.ts';
import { parseQuery, querySchema, type ParsedQuery, type RawQuery, type ValueParser } from './parse-query.ts';
import { GEOMETRY_REASONS, parseBBox, parseNear, parsePolygonText, type AreaFilters } from '../gis/geometry.ts';
import { decodeCursor, filtersHash, type CursorSecrets } from './paging.ts';

export type { RawQuery };

type JsonSchema = Record<string, any>;

/** The leads query schema (`schemas/leads-query.schema.json`). */
export function leadsQuerySchema(): JsonSchema {
  return querySchema('leads-query.schema.json');
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
  /** Hash of filters + sort, carried by cursors (`filtersHash`; taken on first read: a last page, which has no next_cursor, needs none). */
  readonly hash: string;
}

/** The `geometry` filters of the filter table. */
const GEOMETRY_FILTERS: readonly GeometryFilter[] = filtersOfKind('geometry');

/**
 * The typed post-parsers of the `geometry` filters (api/gis/geometry.ts), by parameter: every
 * parser of a query that takes the lead filters passes them to `parseQuery`.
 */
export const LEAD_FILTER_PARSERS: Readonly<Record<string, ValueParser>> = Object.fromEntries(
  GEOMETRY_FILTERS.map((f) => [
    f.name,
    f.shape === 'circle' ? parseNear : f.shape === 'bbox' ? (text: string) => parseBBox(text) : parsePolygonText,
  ]),
);

/** A `geometry` filter's parsed value, `near` joined with its companion `radius_m` (default `RADIUS_M.default`). */
function geometryValue(f: GeometryFilter, values: Record<string, unknown>): unknown {
  const c = f.companion;
  return c
    ? { ...(values[f.name] as object), [c.name]: (values[c.name] as number | undefined) ?? c.default }
    : values[f.name];
}

/** A companion given without its filter (`radius_m` without `near`): an error naming the companion. */
function companionErrors(
  q: Pick<ParsedQuery, 'values' | 'bad'>,
  fs: readonly GeometryFilter[],
  errors: ParamError[],
): void {
  for (const f of fs) {
    const c = f.companion;
    if (c && q.values[c.name] !== undefined && q.values[f.name] === undefined && !q.bad.has(f.name)) {
      errors.push({ name: c.name, reason: GEOMETRY_REASONS.radiusWithoutNear });
      q.bad.add(c.name);
    }
  }
}

/**
 * The area filters of a parsed query that takes some of the `geometry` filters (`fs`) besides
 * the lead filters' endpoints — the GeoJSON feeds and OGC items take `near` (+ `radius_m`) and
 * `polygon` (api/query/feeds-query.ts): the same values and the same errors as on `/v1/leads`.
 * Pass `LEAD_FILTER_PARSERS` to `parseQuery` for them.
 */
export function areaFiltersOf(
  q: Pick<ParsedQuery, 'values' | 'bad'>,
  fs: readonly GeometryFilter[],
  errors: ParamError[],
): AreaFilters {
  const out: Record<string, unknown> = {};
  for (const f of fs) if (q.values[f.name] !== undefined) out[f.name] = geometryValue(f, q.values);
  companionErrors(q, fs, errors);
  return out as AreaFilters;
}

/**
 * The lead filters of a parsed query (leads, exports, webhook saved filters): list values
 * de-duplicated, `multi` values mapped to the release's canonical names through `places` (unknown
 * ones are an error listing the known), a date range's end not before its start, and a `status`
 * holding lifecycle stages rewritten as `readiness` (`statusAsStages`), `near` joined with its
 * `radius_m` (default `RADIUS_M.default`; `radius_m` alone is an error). Errors are added to `errors`.
 */
export function leadFiltersOf(
  q: Pick<ParsedQuery, 'values' | 'bad'>,
  places: PlaceNames,
  errors: ParamError[],
): LeadsFilters {
  const filters: Record<string, unknown> = {};
  const s = q.values as Record<string, any>;
  for (const f of FILTERS) {
    const k = f.name;
    if (f.kind === 'date' && f.alias && s[f.alias] !== undefined) {
      if (s[k] !== undefined && s[k] !== s[f.alias]) {
        errors.push({ name: f.alias, reason: REASONS.aliasOf(k) });
        q.bad.add(f.alias);
      }
      s[k] ??= s[f.alias];
    }
    if (s[k] === undefined) continue;
    if (f.kind === 'enum') filters[k] = [...new Set(s[k] as string[])];
    else if (f.kind === 'geometry') filters[k] = geometryValue(f, s);
    else if (f.kind === 'text') {
      // q's syntax (common/search-syntax.ts): the one parser the SQL builder and the index evaluate
      const parsed = parseSearchQuery(s[k] as string);
      if (parsed.error !== undefined) {
        errors.push({ name: k, reason: parsed.error });
        q.bad.add(k);
      } else filters[k] = s[k];
    } else if (f.kind !== 'multi') filters[k] = s[k];
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
        errors.push({ name: k, reason: REASONS.unknownValues(k, unknown), allowed: [...map.values()].sort() });
        q.bad.add(k);
      } else filters[k] = names;
    }
  }
  companionErrors(q, GEOMETRY_FILTERS, errors);
  for (const [from, to] of datePairs()) {
    const a = filters[from.name] as string | undefined;
    const b = filters[to.name] as string | undefined;
    if (a !== undefined && b !== undefined && a > b)
      errors.push({ name: to.name, reason: REASONS.notBefore(from.name) });
  }
  if (filters['status']) statusAsStages(filters as LeadsFilters);
  return filters as LeadsFilters;
}

/** The sorts a request may ask for: `relevance` needs `q`, `distance` needs `near`. */
function sortsAllowed(s: Record<string, unknown>): string[] {
  return LEADS_SORT_NAMES.filter(
    (x) => (x !== 'relevance' || s.q !== undefined) && (x !== 'distance' || s.near !== undefined),
  );
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
  const q = parseQuery(leadsQuerySchema(), raw, { parsers: LEAD_FILTER_PARSERS });
  const all = [...q.errors];
  const bad = q.bad;
  const filters = leadFiltersOf(q, places, all);
  const s = q.shaped as Record<string, any>;
  const v = q.values as Record<string, any>;

  let sort: LeadsSort = filters.q !== undefined ? 'relevance' : 'newest';
  if (v.sort !== undefined) {
    if (v.sort === 'relevance' && s.q === undefined) {
      all.push({ name: 'sort', reason: 'relevance needs q', allowed: sortsAllowed(s) });
    } else if (v.sort === 'distance' && s.near === undefined) {
      all.push({ name: 'sort', reason: GEOMETRY_REASONS.distanceWithoutNear, allowed: sortsAllowed(s) });
    } else sort = v.sort;
  }

  const pageSize: number = v.page_size ?? config.pageSizeDefault;
  if (!bad.has('page_size') && pageSize > config.pageSizeMax) {
    all.push({ name: 'page_size', reason: REASONS.atMost(config.pageSizeMax) });
  }
  if (s.page !== undefined && s.cursor !== undefined) {
    all.push({ name: 'cursor', reason: REASONS.pageAndCursor });
  }
  if (v.page !== undefined && v.page > config.pageMax) {
    all.push({ name: 'page', reason: REASONS.pageBeyond(config.pageMax) });
  }
  if (all.length > 0) throw invalidParams(all);
  let hash: string | undefined;
  let paging: LeadsPaging;
  if (v.cursor !== undefined) {
    hash = leadsFiltersHash(filters, sort);
    const c = decodeCursor(v.cursor, hash, config); // throws 400 on cursor
    if (!sortKeyValid(sort, c.key))
      throw invalidParams([{ name: 'cursor', reason: REASONS.badCursor('pass next_cursor unchanged') }]);
    if (sort === 'relevance' && c.release !== releaseId) {
      throw invalidParams([
        {
          name: 'cursor',
          reason:
            'relevance cursors expire with the release they were made on (scores change); start again without cursor',
        },
      ]);
    }
    paging = { mode: 'cursor', pageSize, after: c.key, cursorRelease: c.release };
  } else {
    const page: number = v.page ?? 1;
    paging = { mode: 'page', page, pageSize, offset: (page - 1) * pageSize };
  }
  return new ParsedLeadsRequest(filters, sort, paging, hash);
}

/** The hash of the leads filters and sort that cursors carry. */
const leadsFiltersHash = (filters: LeadsFilters, sort: LeadsSort): string =>
  filtersHash('leads', normalisedFilters(filters), sort);

/**
 * A parsed `GET /leads` query whose filters hash is taken on first read (a class, not an object
 * with a closure: tsx names every closure made per request with Object.defineProperty, ~0.5 µs).
 */
class ParsedLeadsRequest implements LeadsRequest {
  readonly filters: LeadsFilters;
  readonly sort: LeadsSort;
  readonly paging: LeadsPaging;
  private taken: string | undefined;
  constructor(filters: LeadsFilters, sort: LeadsSort, paging: LeadsPaging, taken: string | undefined) {
    this.filters = filters;
    this.sort = sort;
    this.paging = paging;
    this.taken = taken;
  }

  get hash(): string {
    return (this.taken ??= leadsFiltersHash(this.filters, this.sort));
  }
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
