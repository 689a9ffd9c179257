/**
 * The geometry filters on the SQL paths (exports, webhook dispatch, GeoJSON feeds, OGC items):
 * DuckDB here has no spatial extension, and a second evaluator in SQL could disagree with the
 * index at an edge. So SQL only narrows to the area's envelope (boxes that hold every point the
 * area can hold: never decides), and the one geometry module (api/gis/geometry.ts) tests each
 * row in it; the ids that pass go into the query as one `l.id IN (…)` condition
 * (`filterClauses`' `areaIds`, api/query/lead-filters.ts).
 */
import type { ApiDb } from '../duckdb/db.ts';
import type { SqlQuery } from '../query/leads-query.ts';
import { areaTest, envelopes, hasArea, latLonTest, type AreaFilters } from './geometry.ts';

/**
 * The leads (id, lat, lon) inside the envelope of the areas of `f` — the candidates — or null
 * when `f` has no area.
 *
 * @example areaCandidatesQuery('read_parquet(…)', { bbox: [-6.4, 53.2, -6.1, 53.4] })
 *   // SELECT id, CAST(lat AS DOUBLE) AS lat, CAST(lon AS DOUBLE) AS lon FROM … WHERE ((lat BETWEEN ? AND ? AND lon BETWEEN ? AND ?))
 */
function areaCandidatesQuery(
  leadsTable: string,
  f: AreaFilters,
  columns: { lat: string; lon: string } = { lat: 'lat', lon: 'lon' },
): SqlQuery | null {
  if (!hasArea(f)) return null;
  const boxes = envelopes(f) ?? [];
  const params: unknown[] = [];
  const lat = `CAST(${columns.lat} AS DOUBLE)`;
  const lon = `CAST(${columns.lon} AS DOUBLE)`;
  const ors = boxes.map(([w, s, e, n]) => {
    params.push(s, n, w, e);
    return `(${lat} BETWEEN ? AND ? AND ${lon} BETWEEN ? AND ?)`;
  });
  return {
    sql: `SELECT CAST(id AS BIGINT) AS id, ${lat} AS lat, ${lon} AS lon FROM ${leadsTable} WHERE ${ors.length > 0 ? `(${ors.join(' OR ')})` : 'FALSE'}`,
    params,
  };
}

/**
 * The ids (ascending) of the leads of `leadsTable` in every area of `f`, or undefined when `f`
 * has none: the envelope's rows from DuckDB, each tested by `areaTest`.
 */
export async function areaIds(
  db: Pick<ApiDb, 'all'>,
  leadsTable: string,
  f: AreaFilters,
): Promise<number[] | undefined> {
  const q = areaCandidatesQuery(leadsTable, f);
  if (!q) return undefined;
  const rows = await db.all<{ id: number; lat: number | null; lon: number | null }>(q.sql, q.params);
  const inArea = latLonTest(areaTest(f));
  return rows
    .filter((r) => r.lat !== null && r.lon !== null && inArea(r.lat, r.lon))
    .map((r) => Number(r.id))
    .sort((a, b) => a - b);
}
