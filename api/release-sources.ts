/**
 * Per-release lookups the leads, export, GIS and webhook code needs before it can parse a request
 * or build a query: the release's canonical authority / county names (for case- and accent-free
 * matching) and its leads source (leads table and search index, for `q`). Built once per release
 * and kept for the few newest releases asked for (the current one, and kept releases export
 * cursors point at).
 */
import type { ApiDb } from './db.ts';
import type { ReleaseTables } from './kept-release.ts';
import { placeNames, type PlaceNames } from './params.ts';
import { leadsPlacesQuery, leadsSource, searchAvgdlQuery, type LeadsSource } from './query/leads-query.ts';

export interface ReleaseSources {
  places: PlaceNames;
  leads: LeadsSource;
}

/** Read a release's `ReleaseSources` (two small DuckDB queries). */
export async function loadReleaseSources(db: ApiDb, release: Pick<ReleaseTables, 'tables' | 'path'>): Promise<ReleaseSources> {
  const pq = leadsPlacesQuery(release.tables.leads);
  const aq = searchAvgdlQuery(release.path('search_terms.parquet'));
  const [places, avg] = await Promise.all([
    db.all<{ planning_authority: string; county: string }>(pq.sql, pq.params),
    db.all<{ avgdl: number | null }>(aq.sql, aq.params).catch(() => [{ avgdl: null }]),
  ]);
  return { places: placeNames(places), leads: leadsSource(release, avg[0]?.avgdl ?? null) };
}

/** A cache of `ReleaseSources` per release id (at most `keep` releases). */
export function releaseSourcesCache(db: ApiDb, keep = 4): (release: ReleaseTables) => Promise<ReleaseSources> {
  const cache = new Map<string, Promise<ReleaseSources>>();
  return (release) => {
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
