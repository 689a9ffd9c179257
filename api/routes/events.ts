/**
 * What changed, for customers who keep a copy (docs/sync.md):
 *
 * - `GET /v1/events` — the release's event log (`events.parquet`, schemas/event.schema.json) in id
 *   order, resumable with the opaque signed `after` cursor (api/query/paging.ts), filtered by
 *   `types` and the lead filters (api/query/events-query.ts says how). Each event served counts
 *   one row of the daily budget.
 * - `GET /v1/leads/{id}/history` — one lead's events and its stages, with dates.
 *
 * Every event's `changes` is masked for the caller's scope by api/access/masking.ts (`maskChanges`):
 * an enriched field's before and after are null for commonwealth, the field still listed.
 */
import Router from '@koa/router';
import type { ApiConfig } from '../config.ts';
import type { AppDeps } from '../http/app-deps.ts';
import type { AppContext, AppState } from '../http/context.ts';
import { ApiError, notFound } from '../http/errors.ts';
import type { Release } from '../releases/release.ts';
import { areaIds } from '../gis/geometry-ids.ts';
import { maskedFor, responseMeta } from '../access/masking.ts';
import { parseLeadId } from '../query/leads-params.ts';
import { served, type Served } from '../access/budget.ts';
import { mount, type Operation } from './operation.ts';
import { LEAD_ID_PARAM, schemaRef } from '../openapi/endpoint.ts';
import { querySchema } from '../query/parse-query.ts';
import { releaseSourcesCache } from '../releases/release-lookups.ts';
import {
  afterReleaseQuery,
  cursorExpired,
  eventsExtentQuery,
  eventsPageQuery,
  parseEventsQuery,
  type EventRow,
} from '../query/events-query.ts';
import { encodeCursor } from '../query/paging.ts';
import { pageHref, setPageLinks } from '../render/link-header.ts';
import { eventLogTable, leadEvents, servedEvent, stagesOf } from '../releases/lead-history.ts';

/** The release's event log table, or 503 `events_unavailable` for a release built before the log existed. */
function eventsTable(release: Release): string {
  const table = eventLogTable(release);
  if (table === null) {
    throw new ApiError(
      503,
      'events_unavailable',
      `release ${release.id} was built before the event log existed; the next refresh starts it`,
    );
  }
  return table;
}

/** What the events operations share. */
interface EventsEnv {
  config: ApiConfig;
  deps: Pick<AppDeps, 'db'>;
  sourcesFor: ReturnType<typeof releaseSourcesCache>;
}

/** `GET /v1/events`: the next page of the event log after the cursor. */
async function eventsPage(ctx: AppContext, { config, deps, sourcesFor }: EventsEnv): Promise<Served> {
  const { release, key } = ctx.state;
  const src = await sourcesFor(release);
  const req = parseEventsQuery(ctx.query, config, src.places);
  const events = eventsTable(release);
  const ext = eventsExtentQuery(events);
  const [extent] = await deps.db.all<{
    first_id: number | null;
    last_id: number | null;
    first_release: string | null;
  }>(ext.sql, ext.params);
  const firstId = Number(extent?.first_id ?? 0);
  const lastId = Number(extent?.last_id ?? 0);
  let afterId: number;
  if (req.start && 'afterId' in req.start) afterId = req.start.afterId;
  else if (req.start) {
    const q = afterReleaseQuery(events, req.start.afterRelease);
    afterId = Number((await deps.db.all<{ after_id: number }>(q.sql, q.params))[0]?.after_id ?? 0);
    if (firstId > 1 && extent?.first_release && req.start.afterRelease < extent.first_release) {
      throw cursorExpired(
        `the events after release ${req.start.afterRelease} are older than the log keeps (it starts with release ${extent.first_release}): make a full export and start again from its release`,
      );
    }
  } else afterId = Math.max(0, firstId - 1);
  if (firstId > 0 && afterId + 1 < firstId) {
    throw cursorExpired(
      `the events after this cursor are older than the log keeps (it starts at event ${firstId}): make a full export and start again from its release`,
    );
  }
  const ids = await areaIds(deps.db, src.leads.leads, req.filters);
  const q = eventsPageQuery(events, src.leads, req, afterId, req.pageSize + 1, ids);
  const rows = await deps.db.all<EventRow>(q.sql, q.params);
  const more = rows.length > req.pageSize;
  const page = more ? rows.slice(0, req.pageSize) : rows;
  return served(page.length, () => {
    // a walk that reached the end resumes after the log's last event (the filters skipped the rest)
    const reached = more ? Number(page.at(-1)!.id) : Math.max(afterId, lastId);
    const nextCursor = encodeCursor([reached], release.id, req.hash, config);
    if (more) setPageLinks(ctx, { next: pageHref(ctx, { cursor: nextCursor, after: null, after_release: null }) });
    ctx.body = {
      results: page.map((r) => servedEvent(r, key.scope)),
      next_cursor: nextCursor,
      has_more: more,
      _meta: responseMeta(release.id, key.scope, maskedFor('lead', key.scope)),
    };
  });
}

/** `GET /v1/leads/{id}/history`: one lead's stages and events. */
async function leadHistory(ctx: AppContext, { deps }: EventsEnv): Promise<Served> {
  const { release, key } = ctx.state;
  const id = parseLeadId(ctx.params['id'] ?? '', ctx.query);
  const events = await leadEvents(deps.db, eventsTable(release), id, key.scope);
  const leadRows = await deps.db.all<{
    lead_key: string;
    lead_readiness: string;
    status: string;
    first_seen: string;
  }>(`SELECT lead_key, lead_readiness, status, first_seen FROM ${release.tables.leads} WHERE id = ?`, [id]);
  const lead = leadRows[0] ?? null;
  if (!lead && events.length === 0) throw notFound(`lead ${id}`);
  return served(Math.max(1, events.length), () => {
    ctx.body = {
      lead_id: id,
      lead_key: lead?.lead_key ?? (events[0]!['lead_key'] as string),
      published: lead !== null,
      first_seen: lead?.first_seen ?? null,
      stages: stagesOf(events, lead),
      events,
      _meta: responseMeta(release.id, key.scope, maskedFor('lead', key.scope)),
    };
  });
}

/** The events operations (paths relative to the /v1 mount). */
export const EVENTS_OPERATIONS: readonly Operation<EventsEnv>[] = [
  {
    method: 'get',
    path: '/leads/{id}/history',
    tag: 'Sync',
    summary: "A lead's timeline across releases",
    description:
      "The lead's stages with their dates (the source's date where it has one, and the release that observed it) and its events with every changed field before / after, over the releases the event log keeps (52 weekly releases). " +
      'Also for a lead removed since (`published` false). Enriched fields\' before / after are null for scopes without enriched access. Charged one row per event (at least one). The lead detail links here (`Link: <…>; rel="history"`).',
    pathParams: [LEAD_ID_PARAM],
    ok: { schema: schemaRef('LeadHistory'), description: "The lead's timeline." },
    errors: [400, 404],
    cached: true,
    handler: leadHistory,
  },
  {
    method: 'get',
    path: '/events',
    tag: 'Sync',
    summary: 'What changed: the event feed',
    description:
      'The event log of the releases (docs/sync.md): per lead and release, `lead.created`, `lead.updated`, `lead.stage_changed` (readiness / status from → to, dated by the source) or `lead.removed`, with every changed field before / after. ' +
      'In id order; ids never change, so the opaque signed cursor `next_cursor`, passed back as `after`, survives refreshes: walk until `has_more` is false, keep the cursor, come back next week. ' +
      "Start a mirror with a full export, then `after_release=<the export's release>`. `types` and the lead filters of `GET /leads` narrow the feed: a lead filter selects the events of leads that match it now; `lead.removed` passes every lead filter. " +
      "Masked like every response: an enriched field's before / after are null for commonwealth, the field still present. Each event counts one row of the daily budget. " +
      'A cursor older than the log (52 weekly releases) is 410 `cursor_expired`: make a full export again.',
    query: querySchema('events-query.schema.json'),
    ok: { schema: schemaRef('EventsPage'), description: 'The next events.' },
    errors: [400, 410],
    cached: true,
    handler: eventsPage,
  },
];

/** The events router (paths relative to the /v1 mount). */
export function eventsRouter(config: ApiConfig, deps: Pick<AppDeps, 'db'>): Router<AppState> {
  return mount(EVENTS_OPERATIONS, { config, deps, sourcesFor: releaseSourcesCache(deps.db) });
}
