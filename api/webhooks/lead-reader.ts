/**
 * Where the dispatcher reads leads from: the release the server is serving (its DuckDB tables),
 * or — for the `leads webhooks …` commands — the release `DATA_DIR/current` points at, read
 * straight from its Parquet files.
 */
import { openApiDb, type ApiDb, type Row } from '../duckdb/db.ts';
import { keptRelease, type ReleaseTables } from '../releases/kept-release.ts';
import type { PlaceNames } from '../query/leads-params.ts';
import type { LeadsSource } from '../query/leads-query.ts';
import { maxEventIdQuery, maxLeadIdQuery } from '../query/webhook-leads-query.ts';
import { loadReleaseSources } from '../releases/release-lookups.ts';
import { eventLogTable } from '../releases/lead-history.ts';
import { NoReleaseError, readCurrentLink, type Release, type ReleaseManager } from '../releases/release.ts';

/** What dispatch needs of one release. */
export interface LeadSnapshot {
  releaseId: string;
  source: LeadsSource;
  /** Canonical authority / county names (saved filters are parsed against them). */
  places: PlaceNames;
  /** Highest lead id of the release. */
  maxLeadId: number;
  /** The release's event log table, or null for a release built before the log existed. */
  events: string | null;
  /** Highest event id of the log (0 when empty or absent). */
  maxEventId: number;
}

export interface LeadReader {
  /** The current release, or null when none is published. */
  snapshot(): Promise<LeadSnapshot | null>;
  all<T extends Row = Row>(sql: string, params: readonly unknown[]): Promise<T[]>;
  close(): Promise<void>;
}

async function snapshotOf(db: ApiDb, release: Pick<ReleaseTables, 'id' | 'tables' | 'path'>): Promise<LeadSnapshot> {
  const mq = maxLeadIdQuery(release.tables.leads);
  const events = eventLogTable(release);
  const eq = events ? maxEventIdQuery(events) : null;
  const [sources, max, maxEvent] = await Promise.all([
    loadReleaseSources(db, release),
    db.all<{ max_id: number }>(mq.sql, mq.params),
    eq ? db.all<{ max_id: number }>(eq.sql, eq.params) : Promise.resolve([]),
  ]);
  return {
    releaseId: release.id,
    source: sources.leads,
    places: sources.places,
    maxLeadId: Number(max[0]?.max_id ?? 0),
    events,
    maxEventId: Number(maxEvent[0]?.max_id ?? 0),
  };
}

/** Read from the server's current release (DuckDB tables already loaded). */
export function serverLeadReader(db: ApiDb, releases: ReleaseManager): LeadReader {
  let cached: { id: string; snap: Promise<LeadSnapshot> } | null = null;
  return {
    async snapshot() {
      let release: Release;
      try {
        release = releases.current();
      } catch (e) {
        if (e instanceof NoReleaseError) return null;
        throw e;
      }
      if (cached?.id !== release.id) {
        const snap = snapshotOf(db, release);
        cached = { id: release.id, snap };
        snap.catch(() => (cached = null));
      }
      return cached.snap;
    },
    all: (sql, params) => db.all(sql, params),
    async close() {},
  };
}

/** Read the release `<dataDir>/current` points at from its Parquet files (own small DuckDB). */
export function dataDirLeadReader(dataDir: string): LeadReader {
  let db: Promise<ApiDb> | null = null;
  const open = (): Promise<ApiDb> => (db ??= openApiDb({ connections: 1, threads: 1, memoryLimit: '256MB' }));
  return {
    async snapshot() {
      const link = readCurrentLink(dataDir);
      const release = link && keptRelease(dataDir, link.id);
      return release ? snapshotOf(await open(), release) : null;
    },
    async all(sql, params) {
      return (await open()).all(sql, params);
    },
    async close() {
      if (db) (await db).close();
    },
  };
}
