/**
 * The release manifest (`manifest.json`, schema `release-manifest`): what a release holds and how
 * it was built. Pure builders; the manifest stage (pipeline/stages/manifest.ts) validates and
 * writes it.
 */
import type { AnalyticsSummary } from '../intel/analytics.ts';
import type { CommencementRow, Lead, PlanningRow } from '../types.ts';
import type { FileChecksums } from './checksums.ts';
import type { GateResult, SourceCounts } from './gates.ts';
import type { GeoJsonIndex } from './geojson.ts';
import type { PublishedNameCounts } from './name-gate.ts';
import type { ChangeCounts } from './registry.ts';
import type { SearchIndexStats } from './search-index.ts';
import { AUTHORITIES, resolveAuthority } from '../reference/authorities.ts';
import type { FetchLog, SourcesFreshness } from '../fetch/log.ts';

export const SCHEMA_VERSION = '1.0.0';

/** The fields of the current release's manifest that the next refresh reads. */
export interface PreviousManifest {
  release_id: string;
  input_fingerprint: string;
  counts: { sources: Record<string, SourceCounts> };
}

/** Leads per planning authority: every known authority (0 when it has none), then any other seen. */
export type AuthorityCounts = Record<string, { leads: number; latest_received: string | null }>;

/** Count leads and the latest received date per planning authority. */
export function countByAuthority(leads: Iterable<Pick<Lead, 'planning_authority' | 'received_date'>>): AuthorityCounts {
  const tally = new AuthorityTally();
  for (const l of leads) tally.count(l);
  return tally.counts;
}

/**
 * The per-authority figures of the manifest, added up one lead at a time (the refresh streams its
 * leads through one): `counts` as `countByAuthority`, `leads` as `authorityLeads`.
 */
export class AuthorityTally {
  readonly counts: AuthorityCounts = {};
  readonly leads: AuthorityLeads = {};

  constructor() {
    for (const a of AUTHORITIES) {
      this.counts[a.name] = { leads: 0, latest_received: null };
      this.leads[a.name] = { by_status: {}, bbox: null };
    }
  }

  /** Add a lead to `counts`. */
  count(l: Pick<Lead, 'planning_authority' | 'received_date'>): void {
    const a =
      this.counts[l.planning_authority] ?? (this.counts[l.planning_authority] = { leads: 0, latest_received: null });
    a.leads++;
    if (!a.latest_received || l.received_date > a.latest_received) a.latest_received = l.received_date;
  }

  /** Add a lead to `leads` (status and bounding box). */
  place(l: Pick<Lead, 'planning_authority' | 'status' | 'lat' | 'lon'>): void {
    const a = this.leads[l.planning_authority] ?? (this.leads[l.planning_authority] = { by_status: {}, bbox: null });
    a.by_status[l.status] = (a.by_status[l.status] ?? 0) + 1;
    if (l.lat === null || l.lon === null || !Number.isFinite(l.lat) || !Number.isFinite(l.lon)) return;
    const lon = Math.round(l.lon * 1e6) / 1e6;
    const lat = Math.round(l.lat * 1e6) / 1e6;
    const b = a.bbox;
    a.bbox = b
      ? [Math.min(b[0], lon), Math.min(b[1], lat), Math.max(b[2], lon), Math.max(b[3], lat)]
      : [lon, lat, lon, lat];
  }
}

/** The sources whose rows belong to a planning authority, and the date that says how new a row is. */
export const AUTHORITY_SOURCES = ['planning', 'commencements'] as const;
export type AuthoritySource = (typeof AUTHORITY_SOURCES)[number];

/** What one source held for one authority when the refresh read it. */
export interface SourceRead {
  /** Rows of the source for this authority (before linking; rejects not counted). */
  records: number;
  /** Newest application date (planning: received; commencements: submitted, else commencement) among them. */
  newest_date: string | null;
}

/** Per authority and source: what the refresh read (computed in `normalise`, before the source rows are dropped). */
export type AuthoritySourceReads = Record<string, Record<AuthoritySource, SourceRead>>;

/** Count each authority's rows per source and their newest application date. Unknown authorities are left out. */
export function authoritySourceReads(
  planning: Iterable<Pick<PlanningRow, 'authority' | 'received_date'>>,
  commencements: Iterable<Pick<CommencementRow, 'authority' | 'submitted_date' | 'commencement_date'>>,
): AuthoritySourceReads {
  const rows: AuthorityRead[] = [];
  for (const p of planning)
    rows.push({
      source: 'planning',
      authority: resolveAuthority(p.authority)?.name ?? null,
      records: 1,
      newest_date: p.received_date,
    });
  for (const c of commencements)
    rows.push({
      source: 'commencements',
      authority: resolveAuthority(c.authority)?.name ?? null,
      records: 1,
      newest_date: c.submitted_date ?? c.commencement_date,
    });
  return sourceReadsOf(rows);
}

/** Rows read of one source for one authority (canonical name; null: unknown) and their newest date. */
export interface AuthorityRead {
  source: AuthoritySource;
  authority: string | null;
  records: number;
  newest_date: string | null;
}

/** `AuthoritySourceReads` from counts per source and authority (the refresh's come from SQL over its staged rows). */
export function sourceReadsOf(reads: Iterable<AuthorityRead>): AuthoritySourceReads {
  const out: AuthoritySourceReads = {};
  for (const a of AUTHORITIES)
    out[a.name] = { planning: { records: 0, newest_date: null }, commencements: { records: 0, newest_date: null } };
  for (const { source, authority, records, newest_date } of reads) {
    const r = authority ? out[authority]?.[source] : undefined;
    if (!r) continue;
    r.records += records;
    if (newest_date && (!r.newest_date || newest_date > r.newest_date)) r.newest_date = newest_date;
  }
  return out;
}

/** Leads of one authority by status, and the bounding box of those with coordinates. */
export type AuthorityLeads = Record<
  string,
  { by_status: Record<string, number>; bbox: [number, number, number, number] | null }
>;

/** Leads by status and their bounding box, per authority (every known authority present). */
export function authorityLeads(
  leads: Iterable<Pick<Lead, 'planning_authority' | 'status' | 'lat' | 'lon'>>,
): AuthorityLeads {
  const tally = new AuthorityTally();
  for (const l of leads) tally.place(l);
  return tally.leads;
}

/** When a source was last obtained from its publisher, from the fetch log (all null without one, or for generated files). */
export interface SourceFetched {
  origin: 'fetched' | 'generated' | 'unknown';
  /** Newest `fetched_at` of the source's files: when the copy the refresh read was downloaded. */
  fetched_at: string | null;
  /** Newest `checked_at`: when the publisher was last asked (a not-modified answer counts). */
  checked_at: string | null;
}

/** The manifest's `authority_freshness`: per source (national), then per authority. */
export function authorityFreshness(reads: AuthoritySourceReads, leads: AuthorityLeads, log: FetchLog | null) {
  const fetched = {} as Record<AuthoritySource, SourceFetched>;
  for (const s of AUTHORITY_SOURCES) {
    const files = Object.values(log?.downloads ?? {}).filter((d) => d.source === s && d.fetched_at !== null);
    const max = (xs: (string | null)[]): string | null =>
      xs.reduce<string | null>((m, x) => (x && (!m || x > m) ? x : m), null);
    fetched[s] = {
      origin: files.length > 0 ? 'fetched' : log && log.origin !== 'fetched' ? 'generated' : 'unknown',
      fetched_at: max(files.map((f) => f.fetched_at)),
      checked_at: max(files.map((f) => f.checked_at)),
    };
  }
  const names = [...new Set([...Object.keys(leads), ...Object.keys(reads)])];
  const sum = (pick: (r: Record<AuthoritySource, SourceRead>) => SourceRead): SourceRead => {
    let records = 0;
    let newest: string | null = null;
    for (const n of names) {
      const r = reads[n];
      if (!r) continue;
      records += pick(r).records;
      const d = pick(r).newest_date;
      if (d && (!newest || d > newest)) newest = d;
    }
    return { records, newest_date: newest };
  };
  return {
    sources: Object.fromEntries(AUTHORITY_SOURCES.map((s) => [s, { ...fetched[s], ...sum((r) => r[s]) }])) as Record<
      AuthoritySource,
      SourceFetched & SourceRead
    >,
    authorities: Object.fromEntries(
      names.map((n) => [
        n,
        {
          county: AUTHORITIES.find((a) => a.name === n)?.county ?? null,
          by_status: leads[n]?.by_status ?? {},
          bbox: leads[n]?.bbox ?? null,
          sources: Object.fromEntries(
            AUTHORITY_SOURCES.map((s) => [s, reads[n]?.[s] ?? { records: 0, newest_date: null }]),
          ) as Record<AuthoritySource, SourceRead>,
        },
      ]),
    ),
  };
}

export type AuthorityFreshness = ReturnType<typeof authorityFreshness>;

export interface ManifestInput {
  releaseId: string;
  builtAt: Date;
  asOf: string;
  previousReleaseId: string | null;
  /** Rows per table, in the order the tables were written. */
  tables: Record<string, number>;
  sources: Record<string, SourceCounts>;
  authorities: AuthorityCounts;
  linkedNotices: number;
  unlinkedNotices: number;
  publishedNames: PublishedNameCounts;
  changes: Record<'leads' | 'infrastructure', ChangeCounts>;
  search: SearchIndexStats;
  geojson: GeoJsonIndex;
  analytics: AnalyticsSummary['pairs'];
  files: FileChecksums;
  stages: Record<string, { ms: number; rows: number; rows_per_s: number }>;
  gates: GateResult;
  /** `--force`: a failed gate is then recorded as forced. */
  force: boolean;
  fingerprint: string;
  /** The raw folder's fetch log (where each source came from, when); null when it has none. */
  freshness: SourcesFreshness | null;
  /** Per source and planning authority: when the source was obtained, what it held (issue 17.3). */
  authorityFreshness: AuthorityFreshness;
}

/** `counts.records_total`: leads, infrastructure projects and companies. */
export function recordsTotal(tables: Record<string, number>): number {
  return tables['leads']! + tables['infrastructure']! + tables['companies']!;
}

/** The manifest object, keys in the published order. */
export function buildManifest(p: ManifestInput) {
  return {
    schema_version: SCHEMA_VERSION,
    release_id: p.releaseId,
    built_at: p.builtAt.toISOString(),
    as_of: p.asOf,
    previous_release: p.previousReleaseId,
    counts: {
      tables: p.tables,
      records_total: recordsTotal(p.tables),
      sources: p.sources,
      authorities: p.authorities,
      linked_commencement_notices: p.linkedNotices,
      unlinked_commencement_notices: p.unlinkedNotices,
      published_names: p.publishedNames,
    },
    changes: p.changes,
    search_index: p.search,
    geojson: p.geojson,
    analytics: p.analytics,
    files: p.files,
    stages: p.stages,
    gates: { passed: p.gates.passed, forced: !p.gates.passed && p.force, messages: p.gates.messages },
    input_fingerprint: p.fingerprint,
    // authority_freshness: per source and authority, what was read and when (GET /v1/authorities);
    // absent (not null) without a fetch log, so manifests of hand-filled raw folders keep their shape
    authority_freshness: p.authorityFreshness,
    ...(p.freshness ? { sources_freshness: p.freshness } : {}),
  };
}

export type ReleaseManifest = ReturnType<typeof buildManifest>;
