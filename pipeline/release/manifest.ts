/**
 * The release manifest (`manifest.json`, schema `release-manifest`): what a release holds and how
 * it was built. Pure builders; the manifest stage (pipeline/stages/manifest.ts) validates and
 * writes it.
 */
import type { AnalyticsSummary } from '../intel/analytics.ts';
import type { Lead } from '../types.ts';
import type { FileChecksums } from './checksums.ts';
import type { GateResult, SourceCounts } from './gates.ts';
import type { GeoJsonIndex } from './geojson.ts';
import type { PublishedNameCounts } from './name-gate.ts';
import type { ChangeCounts } from './registry.ts';
import type { SearchIndexStats } from './search-index.ts';
import { AUTHORITIES } from '../reference/authorities.ts';
import type { SourcesFreshness } from '../fetch/log.ts';

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
  const authorities: AuthorityCounts = {};
  for (const a of AUTHORITIES) authorities[a.name] = { leads: 0, latest_received: null };
  for (const l of leads) {
    const a = authorities[l.planning_authority] ?? (authorities[l.planning_authority] = { leads: 0, latest_received: null });
    a.leads++;
    if (!a.latest_received || l.received_date > a.latest_received) a.latest_received = l.received_date;
  }
  return authorities;
}

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
    // absent (not null) without a fetch log, so manifests of hand-filled raw folders keep their shape
    ...(p.freshness ? { sources_freshness: p.freshness } : {}),
  };
}

export type ReleaseManifest = ReturnType<typeof buildManifest>;
