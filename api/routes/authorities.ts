/**
 * `GET /v1/authorities` (issue 17.3): the planning authorities of the release with their county,
 * leads by status, bounding box, and freshness kept apart per source — when the source was read
 * (downloaded from its publisher) and the newest application date it held for the authority — so
 * a customer can tell "no new leads" from "no new data". Every figure is computed by the pipeline
 * into the manifest (`counts.authorities`, `authority_freshness`); this route only serves them.
 * Any key may call it (no row budget: it returns no records). A release built before the
 * manifest had `authority_freshness` answers 503 `authorities_unavailable`.
 */
import Router from '@koa/router';
import type { ApiConfig } from '../config.ts';
import type { AppContext, AppState } from '../http/context.ts';
import { mount, type Operation } from './operation.ts';
import { schemaRef } from '../openapi/endpoint.ts';
import { ApiError, invalidParams } from '../http/errors.ts';
import { noQuerySchema, parseQuery } from '../query/parse-query.ts';
import { responseMeta } from '../access/masking.ts';
import type { ReleaseManifest } from '../releases/release.ts';

const STATUSES = ['planning', 'approved', 'active', 'closed'] as const;
const SOURCES = ['planning', 'commencements'] as const;

interface SourceRead {
  records: number;
  newest_date: string | null;
}
interface SourceFetched extends SourceRead {
  origin: 'fetched' | 'generated' | 'unknown';
  fetched_at: string | null;
  checked_at: string | null;
}
/** The manifest's `authority_freshness` (pipeline/release/manifest.ts). */
export interface AuthorityFreshness {
  sources: Record<(typeof SOURCES)[number], SourceFetched>;
  authorities: Record<
    string,
    {
      county: string | null;
      by_status: Record<string, number>;
      bbox: [number, number, number, number] | null;
      sources: Record<(typeof SOURCES)[number], SourceRead>;
    }
  >;
}

/** The manifest's authority freshness, or null for a release built without it. */
export function authorityFreshnessOf(m: ReleaseManifest): AuthorityFreshness | null {
  return (m['authority_freshness'] as AuthorityFreshness | undefined) ?? null;
}

/** The /v1/authorities list from a manifest (pure). */
function authoritiesList(m: ReleaseManifest, f: AuthorityFreshness) {
  return Object.keys(f.authorities)
    .sort((a, b) => a.localeCompare(b, 'en-IE'))
    .map((name) => {
      const a = f.authorities[name]!;
      const byStatus = Object.fromEntries(STATUSES.map((s) => [s, a.by_status[s] ?? 0])) as Record<
        (typeof STATUSES)[number],
        number
      >;
      return {
        authority: name,
        county: a.county,
        leads: m.counts.authorities[name]?.leads ?? Object.values(a.by_status).reduce((x, y) => x + y, 0),
        leads_by_status: byStatus,
        latest_received: m.counts.authorities[name]?.latest_received ?? null,
        bbox: a.bbox,
        sources: Object.fromEntries(
          SOURCES.map((s) => {
            const national = f.sources[s];
            return [
              s,
              {
                origin: national.origin,
                read_at: national.fetched_at,
                checked_at: national.checked_at,
                records: a.sources[s].records,
                newest_date: a.sources[s].newest_date,
              },
            ];
          }),
        ),
      };
    });
}

/** `GET /v1/authorities`: served from the release's manifest. */
function authorities(ctx: AppContext): void {
  const { errors } = parseQuery(noQuerySchema(), ctx.query); // takes none
  if (errors.length > 0) throw invalidParams(errors);
  const { release, key } = ctx.state;
  const f = authorityFreshnessOf(release.manifest);
  if (!f)
    throw new ApiError(
      503,
      'authorities_unavailable',
      `release ${release.id} was built before per-authority freshness was recorded; it comes with the next refresh`,
      { expose: true, headers: { 'Retry-After': '3600' } },
    );
  ctx.body = {
    release: { id: release.id, built_at: release.manifest.built_at },
    authorities: authoritiesList(release.manifest, f),
    _meta: responseMeta(release.id, key.scope, []),
  };
}

/** The authorities operation (path relative to the /v1 mount). */
export const AUTHORITIES_OPERATIONS: readonly Operation[] = [
  {
    method: 'get',
    path: '/authorities',
    tag: 'Meta',
    summary: 'Planning authorities with leads by status, bounding box and freshness per source',
    description:
      'The planning authorities of the release: county, leads by status, bounding box, and per source (planning register, BCMS commencement notices) when the source was read from its publisher ' +
      'and the newest application date it held for the authority — so "no new leads" (a recent `read_at`, few new leads) can be told from "no new data" (an old `newest_date`). ' +
      'Computed by the pipeline into the release. Any key; no row budget. A release built before this existed answers 503 `authorities_unavailable`.',
    ok: { schema: schemaRef('AuthoritiesPage'), description: 'The authorities.' },
    errors: [400],
    cached: true,
    handler: authorities,
  },
];

/** The authorities router (paths relative to the /v1 mount). */
export function authoritiesRouter(_config: ApiConfig): Router<AppState> {
  return mount(AUTHORITIES_OPERATIONS, undefined);
}
