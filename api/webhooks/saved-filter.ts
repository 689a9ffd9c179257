/**
 * Saved filters: a query string in the grammar of `GET /v1/leads` (`vertical=solar&county=Cork`),
 * parsed by the same parser (`parseLeadsQuery`), so the grammar is identical and a bad filter is
 * refused with the same problem details. Paging and sorting parameters are not filters and are
 * refused. The filter is stored parsed (canonical authority / county names) and as a canonical
 * query string.
 */
import { invalidParams } from '../http/errors.ts';
import { parseLeadsQuery, type PlaceNames, type RawQuery } from '../query/leads-params.ts';
import { normalisedFilters, type LeadsFilters } from '../query/leads-query.ts';
import { FILTERS, filterQueryPairs } from '../query/lead-filters.ts';

const NOT_FILTERS = ['page', 'page_size', 'cursor', 'sort'];

/** A query string (with or without `?`) as Koa would parse it: repeated names become arrays. */
export function rawQueryOf(filter: string): RawQuery {
  const out: RawQuery = {};
  for (const [k, v] of new URLSearchParams(filter.replace(/^\?/, ''))) {
    const prev = out[k];
    out[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
  }
  return out;
}

/**
 * The canonical query string of parsed filters, in the order of the filter table
 * (api/query/lead-filters.ts): lists comma-joined and sorted, `near` as `near=lat,lon&radius_m=…`,
 * a polygon as its GeoJSON text (`filterQueryPairs`); commas left readable.
 */
export function filterString(f: LeadsFilters): string {
  const n = normalisedFilters(f) as Record<string, unknown>;
  const parts: string[] = [];
  for (const d of FILTERS) {
    const v = n[d.name];
    if (v === undefined) continue;
    for (const [name, text] of filterQueryPairs(d, v))
      parts.push(`${name}=${encodeURIComponent(text).replace(/%2C/g, ',')}`);
  }
  return parts.join('&');
}

/**
 * Parse a saved filter against the release's place names. Throws the `invalidParams` ApiError
 * `GET /v1/leads` would give for the same query (plus paging / sort names refused).
 *
 * @example parseSavedFilter('vertical=solar&county=cork', places) // { filters: { vertical: ['solar'], county: ['Cork'] }, filter: 'vertical=solar&county=Cork' }
 */
export function parseSavedFilter(filter: string, places: PlaceNames): { filters: LeadsFilters; filter: string } {
  const raw = rawQueryOf(filter);
  const paging = Object.keys(raw).filter((k) => NOT_FILTERS.includes(k));
  if (paging.length > 0)
    throw invalidParams(paging.map((name) => ({ name, reason: 'paging and sorting are not part of a saved filter' })));
  const { filters } = parseLeadsQuery(
    raw,
    { pageSizeDefault: 1, pageSizeMax: 1, pageMax: 1, cursorSecret: '', cursorSecretsPrevious: [] },
    places,
    '',
  ); // (no cursor is valid here)
  const normal = normalisedFilters(filters);
  return { filters: normal, filter: filterString(normal) };
}
