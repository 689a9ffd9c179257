/**
 * `GET /v1/leads` (search and filter, page or keyset-cursor paging), `POST /v1/leads/search` (the
 * same parameters as a JSON body, for areas too long for a URL: a read, answered and charged
 * exactly as the GET) and `GET /v1/leads/{id}` (the lead with its company-360 sections). Parameters are validated by `api/query/leads-params.ts`; the
 * release's leads engine (`Release.leads`, api/engine/leads-engine.ts) answers both from its
 * in-memory indexes — no DuckDB query per request — masked for the key's scope inside
 * (api/access/masking.ts). The route parses and counts; the records are charged (api/access/budget.ts, `charging`), then it makes the cursor and links, and sends.
 */
import Router from '@koa/router';
import type { ApiConfig } from '../config.ts';
import type { AppContext, AppState } from '../http/context.ts';
import { notFound } from '../http/errors.ts';
import { maskingFor } from '../access/masking.ts';
import { pageQueryOf } from '../engine/leads-engine.ts';
import { served, type Served } from '../access/budget.ts';
import { mount, type Operation } from './operation.ts';
import { LEAD_ID_PARAM, schemaRef } from '../openapi/endpoint.ts';
import { leadsSearchBodySchema } from '../query/lead-filters.ts';
import { leadsQuerySchema, parseLeadId, parseLeadsQuery, type RawQuery } from '../query/leads-params.ts';
import { parseJsonObject, readJsonText } from '../http/request-body.ts';
import { rememberTexts } from '../../common/lru.ts';
import { encodeCursor } from '../query/paging.ts';
import { pageHref, setPageLinks } from '../render/link-header.ts';
import { sendJsonBody as send } from '../render/json-body.ts';

/** Largest body of `POST /v1/leads/search` (a 10,000-position polygon is ~300 KB as JSON). */
const SEARCH_BODY_BYTES_MAX = 1_048_576;

/**
 * A `POST /v1/leads/search` body as the query `GET /v1/leads` would have: each member as its
 * query text — lists (arrays) comma-joined, numbers and booleans as text, `near` given as
 * `{lat, lon}` as "lat,lon", `polygon` (a GeoJSON object) and any other object as JSON — so the
 * one parser answers both alike (and names the same mistakes). `null` members are absent.
 *
 * @example searchBodyAsQuery({ county: ['Cork', 'Kerry'], near: { lat: 53.35, lon: -6.26 }, radius_m: 500 })
 *   // { county: 'Cork,Kerry', near: '53.35,-6.26', radius_m: '500' }
 */
function searchBodyAsQuery(body: Record<string, unknown>): RawQuery {
  const out: RawQuery = {};
  for (const [k, v] of Object.entries(body)) {
    if (v === null || v === undefined) continue;
    if (typeof v === 'string') out[k] = v;
    else if (typeof v === 'number' || typeof v === 'boolean') out[k] = String(v);
    else if (
      Array.isArray(v) &&
      v.every((x) => typeof x === 'string' || typeof x === 'number' || typeof x === 'boolean')
    )
      out[k] = v.join(',');
    else if (k === 'near' && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).sort().join() === 'lat,lon') {
      const { lat, lon } = v as { lat: unknown; lon: unknown };
      out[k] =
        `${typeof lat === 'number' ? lat : JSON.stringify(lat)},${typeof lon === 'number' ? lon : JSON.stringify(lon)}`;
    } else out[k] = JSON.stringify(v);
  }
  return out;
}

/** Search bodies up to `maxChars` characters are remembered as their queries (`searchQueryOf`), at most `entries` of them. */
export const SEARCH_BODY_CACHE = { entries: 64, maxChars: 32_768 } as const;

/**
 * A `POST /v1/leads/search` body's text as its query (`searchBodyAsQuery` of the parsed object),
 * remembered: a drawn territory's body comes back with every page of its results and every poll,
 * so it is parsed, and its polygon written as query text, once — and that text is then the very
 * string `parsePolygonText` remembers its geometry by. A body that is not a JSON object throws
 * (400) and is not remembered; nor is a longer body.
 */
export const searchQueryOf: (text: string) => Readonly<RawQuery> = rememberTexts(SEARCH_BODY_CACHE, (text) =>
  Object.freeze(searchBodyAsQuery(parseJsonObject(text))),
);

/** What the leads operations share. */
interface LeadsEnv {
  config: ApiConfig;
}

/** One page for a parsed-or-not query: the GET's query string, or the POST's body as one. */
function answerPage(ctx: AppContext, config: ApiConfig, query: RawQuery, links: boolean): Served {
  const { release, key } = ctx.state;
  const req = parseLeadsQuery(query, config, release.leads.places(), release.id);
  const { paging } = req;
  const page = release.leads.page(pageQueryOf(req), maskingFor(key.scope));
  return served(page.count, () => {
    const nextCursor = page.next ? encodeCursor(page.next, release.id, req.hash, config) : null;
    if (links) setPageLinks(ctx, { next: nextCursor && pageHref(ctx, { cursor: nextCursor, page: null }) });
    send(ctx, page.json({ page: paging.mode === 'page' ? paging.page : null, next_cursor: nextCursor }));
  });
}

/** One lead with its sections, and the link to its timeline (api/routes/events.ts). */
function leadDetail(ctx: AppContext): Served {
  const { release, key } = ctx.state;
  const id = parseLeadId(ctx.params['id'] ?? '', ctx.query);
  const detail = release.leads.detail(id, maskingFor(key.scope));
  if (!detail) throw notFound(`lead ${id}`);
  return served(1, () => {
    ctx.append('Link', `</v1/leads/${id}/history>; rel="history"`);
    send(ctx, detail.json());
  });
}

/** The leads operations (paths relative to the /v1 mount). */
export const LEADS_OPERATIONS: readonly Operation<LeadsEnv>[] = [
  {
    method: 'get',
    path: '/leads',
    tag: 'Leads',
    summary: 'Search and filter leads',
    description:
      'Planning applications and commencement notices, newest first by default. Filters combine with AND; comma-separated values of one filter mean OR. ' +
      '`q` searches the release search index with relevance ranking. `near` + `radius_m`, `bbox` and `polygon` select by area (docs: Nearby and area search); with `near` each result carries `distance_m` and `sort=distance` is allowed. ' +
      "`application_number` finds a lead by the authority's own reference. Page with `page` + `page_size` (page at most PAGE_MAX) or with the keyset `cursor` from `next_cursor`.",
    query: leadsQuerySchema(),
    ok: { schema: schemaRef('LeadsPage'), description: 'A page of leads.' },
    errors: [400],
    cached: true,
    handler: (ctx, { config }) => answerPage(ctx, config, ctx.query, true),
  },
  // A read: nothing changes, safe to retry. The next page is the same body with `cursor` set to
  // the answer's `next_cursor` (no Link header: a link is a GET, and the area may not fit a URL).
  {
    method: 'post',
    path: '/leads/search',
    tag: 'Leads',
    summary: 'Search leads with a JSON body (areas too long for a URL)',
    description:
      'The same search as `GET /leads`, its parameters as a JSON body — for a drawn `polygon` (a GeoJSON object, up to 10,000 positions) that does not fit a URL. ' +
      'A read: nothing is created or changed, so it is safe to retry; answered exactly as the GET (the same body, `_meta` and `next_cursor`) and charged the same (requests per hour and rows of the daily budget). ' +
      'Next page: send the same body with `cursor` set to `next_cursor` (no `Link` header). Body at most 1 MiB (413); `Content-Type: application/json` (415).',
    body: leadsSearchBodySchema(),
    bodyDescription: 'The parameters of `GET /leads` as JSON members.',
    ok: { schema: schemaRef('LeadsPage'), description: 'A page of leads.' },
    errors: [400, 413, 415],
    reads: true,
    handler: async (ctx, { config }) =>
      answerPage(
        ctx,
        config,
        searchQueryOf(await readJsonText(ctx.req, ctx.get('Content-Type'), SEARCH_BODY_BYTES_MAX)),
        false,
      ),
  },
  {
    method: 'get',
    path: '/leads/{id}',
    tag: 'Leads',
    summary: 'Lead detail with company 360',
    description:
      'One lead with the sections project, zoning and appeals, area comparables, suppliers, main contractor, registered company and the company filing history. ' +
      'Enriched fields and sections are null (or empty) for scopes without enriched access; `_meta.masked` lists them.',
    pathParams: [LEAD_ID_PARAM],
    ok: { schema: schemaRef('LeadDetailResponse'), description: 'The lead and its sections.' },
    errors: [400, 404],
    cached: true,
    handler: leadDetail,
  },
];

/** The leads router (paths relative to the /v1 mount). */
export function leadsRouter(config: ApiConfig): Router<AppState> {
  return mount(LEADS_OPERATIONS, { config });
}
