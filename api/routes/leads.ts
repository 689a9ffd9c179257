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
import type { JsonBody } from '../engine/leads-engine.ts';
import { maskingFor } from '../access/masking.ts';
import { charging, served, type Served } from '../access/budget.ts';
import { parseLeadId, parseLeadsQuery, type RawQuery } from '../query/leads-params.ts';
import { parseJsonObject, readJsonText } from '../http/request-body.ts';
import { rememberTexts } from '../../common/lru.ts';
import { encodeCursor } from '../query/paging.ts';
import { pageHref, setPageLinks } from '../render/link-header.ts';

/** Answer with a JSON body; its buffer goes back to the engine's pool once sent. */
function send(ctx: AppContext, body: JsonBody): void {
  ctx.type = 'json';
  ctx.body = body.bytes;
  ctx.res.once('finish', body.done);
}

/** Largest body of `POST /v1/leads/search` (a 10,000-position polygon is ~300 KB as JSON). */
export const SEARCH_BODY_BYTES_MAX = 1_048_576;

/**
 * A `POST /v1/leads/search` body as the query `GET /v1/leads` would have: each member as its
 * query text — lists (arrays) comma-joined, numbers and booleans as text, `near` given as
 * `{lat, lon}` as "lat,lon", `polygon` (a GeoJSON object) and any other object as JSON — so the
 * one parser answers both alike (and names the same mistakes). `null` members are absent.
 *
 * @example searchBodyAsQuery({ county: ['Cork', 'Kerry'], near: { lat: 53.35, lon: -6.26 }, radius_m: 500 })
 *   // { county: 'Cork,Kerry', near: '53.35,-6.26', radius_m: '500' }
 */
export function searchBodyAsQuery(body: Record<string, unknown>): RawQuery {
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

/** The leads router (paths relative to the /v1 mount). */
export function leadsRouter(config: ApiConfig): Router<AppState> {
  const router = new Router<AppState>();

  /** One page for a parsed-or-not query: the GET's query string, or the POST's body as one. */
  const answer = (ctx: AppContext, query: RawQuery, links: boolean): Served => {
    const { release, key } = ctx.state;
    const req = parseLeadsQuery(query, config, release.leads.places(), release.id);
    const { paging } = req;
    const page = release.leads.page(
      {
        filters: req.filters,
        sort: req.sort,
        pageSize: paging.pageSize,
        offset: paging.mode === 'page' ? paging.offset : 0,
        after: paging.mode === 'cursor' ? paging.after : null,
      },
      maskingFor(key.scope),
    );
    return served(page.count, () => {
      const nextCursor = page.next ? encodeCursor(page.next, release.id, req.hash, config) : null;
      if (links) setPageLinks(ctx, { next: nextCursor && pageHref(ctx, { cursor: nextCursor, page: null }) });
      send(ctx, page.json({ page: paging.mode === 'page' ? paging.page : null, next_cursor: nextCursor }));
    });
  };

  router.get(
    '/leads',
    charging((ctx: AppContext) => answer(ctx, ctx.query, true)),
  );

  // A read: nothing changes, safe to retry. The next page is the same body with `cursor` set to
  // the answer's `next_cursor` (no Link header: a link is a GET, and the area may not fit a URL).
  router.post(
    '/leads/search',
    charging(async (ctx: AppContext) =>
      answer(ctx, searchQueryOf(await readJsonText(ctx.req, ctx.get('Content-Type'), SEARCH_BODY_BYTES_MAX)), false),
    ),
  );

  router.get(
    '/leads/:id',
    charging((ctx: AppContext) => {
      const { release, key } = ctx.state;
      const id = parseLeadId(ctx.params['id'] ?? '', ctx.query);
      const detail = release.leads.detail(id, maskingFor(key.scope));
      if (!detail) throw notFound(`lead ${id}`);
      return served(1, () => {
        ctx.append('Link', `</v1/leads/${id}/history>; rel="history"`); // its timeline across releases (api/routes/events.ts)
        send(ctx, detail.json());
      });
    }),
  );

  return router;
}
