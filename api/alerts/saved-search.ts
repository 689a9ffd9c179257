/**
 * A saved search's query: the explorer's query string (`vertical=roofing&county=Cork&sort=newest`)
 * checked by the one parser of `GET /v1/leads` (`parseLeadsQuery`), so a saved search can never
 * hold a filter the API refuses, and kept in a canonical form (the filters as a webhook's saved
 * filter writes them — api/webhooks/saved-filter.ts `filterString` — then `sort` when given).
 * Paging (`page`, `page_size`, `cursor`) is the explorer's position, not part of the search, and
 * is dropped. Also: the query in plain words, for the form, the list and the alert e-mail.
 */
import type { ApiConfig } from '../config.ts';
import { invalidParams } from '../http/errors.ts';
import { labelOf } from '../../common/labels.ts';
import { FILTERS, filterQueryPairs, type LeadFilter } from '../query/lead-filters.ts';
import { parseLeadsQuery, type PlaceNames } from '../query/leads-params.ts';
import { normalisedFilters, type LeadsFilters, type LeadsSort } from '../query/leads-query.ts';
import { filterString, rawQueryOf } from '../webhooks/saved-filter.ts';

/** Parameters of the explorer's position in a result list, never part of a saved search. */
const PAGING = ['page', 'page_size', 'cursor'];

/** Longest saved query string accepted (a polygon's GeoJSON fits). */
export const SEARCH_QUERY_MAX = 8_000;

export interface ParsedSearch {
  filters: LeadsFilters;
  /** The sort given, or null (the API's default for the filters). */
  sort: LeadsSort | null;
  /** The canonical query string to store and to link to `/app/explorer?<query>`. */
  query: string;
}

/**
 * Parse an explorer query string (with or without `?`) against the release's place names; throws
 * the 400 `invalid_parameter` problem `GET /v1/leads` would give for the same filters.
 *
 * @example parseSearchQuery('county=cork&vertical=roofing&page=3', places, config)
 *   // { filters: { vertical: ['roofing'], county: ['Cork'] }, sort: null, query: 'vertical=roofing&county=Cork' }
 */
export function parseSearchQuery(
  text: string,
  places: PlaceNames,
  config: Pick<ApiConfig, 'pageSizeDefault' | 'pageSizeMax' | 'pageMax'>,
): ParsedSearch {
  if (text.length > SEARCH_QUERY_MAX)
    throw invalidParams([{ name: 'query', reason: `at most ${SEARCH_QUERY_MAX} characters` }]);
  const raw = rawQueryOf(text);
  for (const p of PAGING) delete raw[p];
  const req = parseLeadsQuery(raw, { ...config, cursorSecret: '', cursorSecretsPrevious: [] }, places, '');
  const filters = normalisedFilters(req.filters);
  const sort = raw['sort'] !== undefined ? req.sort : null;
  const f = filterString(filters);
  const query = [f, sort ? `sort=${sort}` : ''].filter((x) => x !== '').join('&');
  return { filters, sort, query };
}

/** The filter's name in words. */
const FILTER_WORDS: Record<string, string> = {
  q: 'Words',
  vertical: 'Trade',
  explicit_vertical: 'Trade named in the text',
  authority: 'Planning authority',
  county: 'County',
  readiness: 'Stage',
  status: 'Status',
  use_class: 'Kind of development',
  works_kind: 'Kind of works',
  scale: 'Scale',
  application_type: 'Application type',
  min_value: 'Estimated value at least (€)',
  min_units: 'Units at least',
  has_contact: 'Has contact details',
  demolition: 'Involves demolition',
  received_from: 'Received on or after',
  received_to: 'Received on or before',
  changed_since: 'Changed since',
  created_since: 'First seen since',
  application_number: 'Council reference',
  near: 'Near',
  bbox: 'Inside the box',
  polygon: 'Inside an area',
};

const SORT_WORDS: Record<string, string> = {
  newest: 'newest first',
  oldest: 'oldest first',
  value_desc: 'highest value first',
  relevance: 'best match first',
  distance: 'nearest first',
  last_changed: 'last changed first',
};

/** One value of a filter in words (trades, stages, statuses, kinds as the app names them). */
function valueWords(f: LeadFilter, v: string): string {
  if (f.name === 'vertical' || f.name === 'explicit_vertical') return labelOf('verticals', v);
  if (f.name === 'readiness') return labelOf('lead_readiness', v);
  if (f.name === 'status')
    return v in { planning: 1, approved: 1, active: 1, closed: 1 }
      ? labelOf('status', v)
      : labelOf('lead_readiness', v);
  if (f.name === 'use_class' || f.name === 'works_kind' || f.name === 'scale') return labelOf(f.name, v);
  if (f.kind === 'flag') return v === 'true' ? 'yes' : 'no';
  return v;
}

/**
 * The search in plain words: one `[what, values]` pair per filter given, in the filter table's
 * order, then the order of the results. An empty list means every lead.
 *
 * @example describeSearch(parseSearchQuery('vertical=roofing&county=Cork', places, config))
 *   // [['Trade', 'Roofing'], ['County', 'Cork']]
 */
export function describeSearch(s: Pick<ParsedSearch, 'filters' | 'sort'>): [string, string][] {
  const out: [string, string][] = [];
  const n = s.filters as Record<string, unknown>;
  for (const f of FILTERS) {
    const v = n[f.name];
    if (v === undefined) continue;
    if (f.kind === 'geometry') {
      const pairs = filterQueryPairs(f, v);
      const text =
        f.shape === 'circle'
          ? `${pairs[1]![1]} m around ${pairs[0]![1]} (latitude, longitude)`
          : f.shape === 'bbox'
            ? `${pairs[0]![1]} (west, south, east, north)`
            : 'a drawn area';
      out.push([FILTER_WORDS[f.name] ?? f.name, text]);
      continue;
    }
    const values = Array.isArray(v) ? v.map(String) : [String(v)];
    const words = values.map((x) => valueWords(f, x));
    out.push([FILTER_WORDS[f.name] ?? f.name, f.name === 'q' ? `“${words.join(' ')}”` : words.join(' or ')]);
  }
  if (s.sort) out.push(['Order', SORT_WORDS[s.sort] ?? s.sort]);
  return out;
}

/** The search in one line of plain words (`Trade: Roofing; County: Cork`, or `All leads`). */
export function searchInWords(s: Pick<ParsedSearch, 'filters' | 'sort'>): string {
  const d = describeSearch(s);
  return d.length ? d.map(([k, v]) => `${k}: ${v}`).join('; ') : 'All leads';
}
