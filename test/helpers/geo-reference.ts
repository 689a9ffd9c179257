/**
 * Reference answers of the area filters, computed without the API's geometry module: `near` by
 * the haversine formula in DuckDB SQL over a table's rows, `polygon` by turf's
 * `booleanPointInPolygon` over every row with coordinates. The route and dispatch tests compare
 * the ids the API serves with these (the default-scale comparison is test/api/gis/geo-search.test.ts).
 */
import booleanPointInPolygon from '@turf/boolean-point-in-polygon';
import type { ApiDb } from '../../api/duckdb/db.ts';
import { EARTH_RADIUS_M, EDGE_TOLERANCE_M, type AreaGeometry } from '../../api/gis/geometry.ts';

const HAVERSINE_SQL = `2 * ${EARTH_RADIUS_M} * asin(least(1, sqrt(pow(sin(radians(CAST(lat AS DOUBLE) - ?) / 2), 2) + cos(radians(?)) * cos(radians(CAST(lat AS DOUBLE))) * pow(sin(radians(CAST(lon AS DOUBLE) - ?) / 2), 2))))`;

/** Ids (ascending) of `table`'s rows within `radius_m` of (lat, lon), edge inclusive to `EDGE_TOLERANCE_M`; `where`: further SQL conditions. */
export async function referenceNear(
  db: Pick<ApiDb, 'all'>,
  table: string,
  near: { lat: number; lon: number; radius_m: number },
  where = 'TRUE',
): Promise<number[]> {
  const rows = await db.all<{ id: number }>(
    `SELECT CAST(id AS BIGINT) AS id FROM ${table} WHERE lat IS NOT NULL AND lon IS NOT NULL AND (${where}) AND ${HAVERSINE_SQL} <= ? ORDER BY id`,
    [near.lat, near.lat, near.lon, near.radius_m + EDGE_TOLERANCE_M],
  );
  return rows.map((r) => Number(r.id));
}

/** Ids (ascending) of `table`'s rows inside `g` by turf (boundary inside); `where`: further SQL conditions. */
export async function referencePolygon(
  db: Pick<ApiDb, 'all'>,
  table: string,
  g: AreaGeometry,
  where = 'TRUE',
): Promise<number[]> {
  const rows = await db.all<{ id: number; lat: number; lon: number }>(
    `SELECT CAST(id AS BIGINT) AS id, CAST(lat AS DOUBLE) AS lat, CAST(lon AS DOUBLE) AS lon FROM ${table} WHERE lat IS NOT NULL AND lon IS NOT NULL AND (${where}) ORDER BY id`,
  );
  return rows.filter((r) => booleanPointInPolygon([r.lon, r.lat], g)).map((r) => Number(r.id));
}

/**
 * A square ring (closed, counter-clockwise) of half-width `h` degrees of longitude and latitude
 * around (lon, lat), optionally with a square hole of half-width `hole` whose south-west corner is
 * exactly on (holeLon, holeLat) — a point on a hole's ring counts as inside.
 */
export function squareWithHole(
  lon: number,
  lat: number,
  h: number,
  hole?: { lon: number; lat: number; size: number },
): AreaGeometry {
  const outer = [
    [lon - h, lat - h],
    [lon + h, lat - h],
    [lon + h, lat + h],
    [lon - h, lat + h],
    [lon - h, lat - h],
  ];
  if (!hole) return { type: 'Polygon', coordinates: [outer] };
  const { lon: x, lat: y, size: s } = hole;
  return {
    type: 'Polygon',
    coordinates: [
      outer,
      [
        [x, y],
        [x, y + s],
        [x + s, y + s],
        [x + s, y],
        [x, y],
      ],
    ],
  };
}
