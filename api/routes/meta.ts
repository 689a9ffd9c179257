/**
 * `GET /v1/meta`: which release is served (id, build time, as-of date, schema version), row
 * counts, freshness per planning authority, the allowed values of every enumerated filter, and
 * `release_status`: the release served and, when the published one was refused (its files do not
 * match its manifest, or it failed to load), its id, the reason and when it is tried again.
 * Values that depend on the data (verticals, use classes, authorities, counties) are read from
 * the release once and cached per release id; fixed enumerations come from schemas/lead.schema.json.
 * `sources_freshness` (where each source's raw files came from and when, from the manifest) is
 * present only when the release's manifest has it. `freshness_by_source` (per source: when it was
 * downloaded and last checked, its rows and newest application date; the same figures
 * GET /v1/authorities gives per authority) is present when the manifest has `authority_freshness`.
 */
import Router from '@koa/router';
import { LEAD_SCHEMA } from '../../common/lead-record.ts';
import type { ApiConfig } from '../config.ts';
import type { AppDeps } from '../http/app-deps.ts';
import type { AppContext, AppState } from '../http/context.ts';
import { mount, type Operation } from './operation.ts';
import { schemaRef } from '../openapi/endpoint.ts';
import type { ApiDb } from '../duckdb/db.ts';
import { invalidParams } from '../http/errors.ts';
import { noQuerySchema, parseQuery } from '../query/parse-query.ts';
import { responseMeta } from '../access/masking.ts';
import type { Release } from '../releases/release.ts';
import { authorityFreshnessOf } from './authorities.ts';

const schemaEnum = (field: string): string[] =>
  (LEAD_SCHEMA.properties[field]?.enum ?? []).filter((v): v is string => typeof v === 'string');

export interface Freshness {
  authority: string;
  county: string;
  leads: number;
  latest_received: string | null;
}

export interface MetaEnums {
  vertical: string[];
  explicit_vertical: string[];
  use_class: string[];
  works_kind: string[];
  scale: string[];
  readiness: string[];
  status: string[];
  authority: string[];
  county: string[];
}

/** Pure builders: the release-dependent queries of /v1/meta (no parameters needed). */
function metaQueries(
  leads: string,
): Record<'freshness' | 'verticals' | 'useClasses' | 'counties', { sql: string; params: unknown[] }> {
  return {
    freshness: {
      sql: `SELECT planning_authority AS authority, any_value(county) AS county, count(*)::BIGINT AS leads, max(received_date) AS latest_received
            FROM ${leads} GROUP BY planning_authority ORDER BY planning_authority`,
      params: [],
    },
    verticals: {
      sql: `SELECT DISTINCT v AS value FROM (SELECT unnest(verticals) AS v FROM ${leads}) ORDER BY value`,
      params: [],
    },
    useClasses: { sql: `SELECT DISTINCT use_class AS value FROM ${leads} ORDER BY value`, params: [] },
    counties: { sql: `SELECT DISTINCT county AS value FROM ${leads} ORDER BY value`, params: [] },
  };
}

interface MetaData {
  freshness: Freshness[];
  enums: MetaEnums;
}

/** Read the release-dependent parts once per release. */
async function loadMetaData(db: ApiDb, release: Release): Promise<MetaData> {
  const q = metaQueries(release.tables.leads);
  const values = (rows: { value: string | null }[]): string[] =>
    rows.map((r) => r.value).filter((v): v is string => v !== null);
  const [freshness, verticals, useClasses, counties] = await Promise.all([
    db.all<Freshness & Record<string, unknown>>(q.freshness.sql, q.freshness.params),
    db.all<{ value: string | null }>(q.verticals.sql, q.verticals.params),
    db.all<{ value: string | null }>(q.useClasses.sql, q.useClasses.params),
    db.all<{ value: string | null }>(q.counties.sql, q.counties.params),
  ]);
  return {
    freshness: freshness.map((f) => ({
      authority: f.authority,
      county: f.county,
      leads: Number(f.leads),
      latest_received: f.latest_received ?? null,
    })),
    enums: {
      vertical: values(verticals),
      explicit_vertical: values(verticals),
      use_class: values(useClasses),
      works_kind: schemaEnum('works_kind'),
      scale: schemaEnum('scale'),
      readiness: schemaEnum('lead_readiness'),
      status: schemaEnum('status'),
      authority: freshness.map((f) => f.authority),
      county: values(counties),
    },
  };
}

/** What the meta operation shares: the release's data, read once per release. */
interface MetaEnv {
  deps: Pick<AppDeps, 'releases'>;
  dataFor: (release: Release) => Promise<MetaData>;
}

/** `GET /v1/meta`. */
async function meta(ctx: AppContext, { deps, dataFor }: MetaEnv): Promise<void> {
  const { errors } = parseQuery(noQuerySchema(), ctx.query); // takes none
  if (errors.length > 0) throw invalidParams(errors);
  const { release, key } = ctx.state;
  const m = release.manifest;
  const data = await dataFor(release);
  const fresh = authorityFreshnessOf(m);
  ctx.body = {
    release: { id: release.id, built_at: m.built_at, as_of: m.as_of, schema_version: m.schema_version },
    counts: { tables: m.counts.tables, records_total: m.counts.records_total },
    freshness: data.freshness,
    ...(m.sources_freshness ? { sources_freshness: m.sources_freshness } : {}),
    ...(fresh ? { freshness_by_source: fresh.sources } : {}),
    enums: data.enums,
    release_status: deps.releases.status(),
    _meta: responseMeta(release.id, key.scope, []),
  };
}

/** The meta operation (path relative to the /v1 mount). */
export const META_OPERATIONS: readonly Operation<MetaEnv>[] = [
  {
    method: 'get',
    path: '/meta',
    tag: 'Meta',
    summary: 'Release, counts, freshness and allowed filter values',
    description:
      'The release being served, its counts, freshness per planning authority, the allowed values of every enumerated filter, ' +
      'and `release_status`: a published release refused because its files do not match its manifest (or it failed to load), with the reason.',
    ok: { schema: schemaRef('MetaResponse'), description: 'Release metadata.' },
    errors: [400],
    cached: true,
    handler: meta,
  },
];

/** `loadMetaData` remembered for the newest release. */
function metaDataCache(db: ApiDb): (release: Release) => Promise<MetaData> {
  const cache = new Map<string, Promise<MetaData>>();
  return (release) => {
    let p = cache.get(release.id);
    if (!p) {
      for (const id of cache.keys()) if (id !== release.id) cache.delete(id); // keep only the newest
      p = loadMetaData(db, release);
      p.catch(() => cache.delete(release.id));
      cache.set(release.id, p);
    }
    return p;
  };
}

/** The meta router (paths relative to the /v1 mount). */
export function metaRouter(_config: ApiConfig, deps: Pick<AppDeps, 'db' | 'releases'>): Router<AppState> {
  return mount(META_OPERATIONS, { deps, dataFor: metaDataCache(deps.db) });
}
