/**
 * Per-release lookups the leads, export and webhook code needs before it can parse a request or
 * build a query: the release's canonical authority / county names (for case- and accent-free
 * matching) and its leads source (leads table and search index, for `q` in SQL).
 *
 * A loaded release answers from its leads engine (no I/O: the names are those its index holds,
 * the search index's mean document length was read when it was built). A release that is not
 * loaded — a kept release an export cursor points at, or the release the `leads webhooks …`
 * commands read straight from `DATA_DIR/current` — is read through DuckDB (two small queries),
 * once per release.
 */
import type { ApiDb } from '../duckdb/db.ts';
import type { ReleaseTables } from './kept-release.ts';
import { placeNames, type PlaceNames } from '../query/leads-params.ts';
import { leadsPlacesQuery, leadsSource, searchAvgdlQuery, type LeadsSource } from '../query/leads-query.ts';
import type { Release } from './release.ts';

export interface ReleaseSources {
  places: PlaceNames;
  leads: LeadsSource;
}

/** A release that is loaded (it has its leads engine), or one read from its files. */
type AnyRelease = Release | Pick<ReleaseTables, 'id' | 'tables' | 'path'>;

const isLoaded = (release: AnyRelease): release is Release => 'leads' in release;

/** The `ReleaseSources` of a loaded release, from its leads engine. */
export function loadedReleaseSources(release: Release): ReleaseSources {
  return { places: release.leads.places(), leads: leadsSource(release, release.leads.avgdl) };
}

/** The `ReleaseSources` of a release from its files (two small DuckDB queries); from its engine when it is loaded. */
export async function loadReleaseSources(db: ApiDb, release: AnyRelease): Promise<ReleaseSources> {
  if (isLoaded(release)) return loadedReleaseSources(release);
  const pq = leadsPlacesQuery(release.tables.leads);
  const aq = searchAvgdlQuery(release.path('search_terms.parquet'));
  const [places, avg] = await Promise.all([
    db.all<{ planning_authority: string; county: string }>(pq.sql, pq.params),
    db.all<{ avgdl: number | null }>(aq.sql, aq.params).catch(() => [{ avgdl: null }]),
  ]);
  return { places: placeNames(places), leads: leadsSource(release, avg[0]?.avgdl ?? null) };
}

/** `loadReleaseSources` for any release: loaded ones from their engine, the others read once and kept (at most `keep`). */
export function releaseSourcesCache(db: ApiDb, keep = 4): (release: AnyRelease) => Promise<ReleaseSources> {
  const cache = new Map<string, Promise<ReleaseSources>>();
  return async (release) => {
    if (isLoaded(release)) return loadedReleaseSources(release);
    const key = `${release.id}\u0000${release.tables.leads}`;
    let p = cache.get(key);
    if (!p) {
      p = loadReleaseSources(db, release);
      p.catch(() => cache.delete(key));
      cache.set(key, p);
      while (cache.size > keep) cache.delete(cache.keys().next().value!);
    }
    return p;
  };
}
