/**
 * Pure SQL builders for webhook dispatch: the leads a webhook has not seen yet (id above its
 * watermark — lead ids are issued in increasing order as leads are first seen, see
 * docs/releases.md) that match its saved filter, in id order; and the highest lead id of a
 * release (where the watermark moves to). The filter clauses are those of `GET /v1/leads`.
 */
import {
  LEAD_COLUMNS,
  leadsFrom,
  leadsWhere,
  type LeadsFilters,
  type LeadsSource,
  type SqlQuery,
} from './leads-query.ts';

/**
 * Leads with `id > afterId` matching `filters`, every lead column, ordered by id (`areaIds`: the
 * ids in the filters' areas, when they have geometry filters — api/gis/geometry-ids.ts).
 *
 * @example newLeadsQuery(src, { county: ['Cork'] }, 1200)
 *   // SELECT l.id, … FROM … AS l WHERE l.id > ? AND l.county IN (?) ORDER BY l.id   params [1200, 'Cork']
 */
export function newLeadsQuery(
  src: LeadsSource,
  filters: LeadsFilters,
  afterId: number,
  areaIds?: readonly number[],
): SqlQuery {
  const from = leadsFrom(src, filters.q);
  const where = leadsWhere(filters, areaIds);
  return {
    sql: `SELECT ${LEAD_COLUMNS.map((c) => `l.${c}`).join(', ')}\nFROM ${from.sql}\nWHERE l.id > ? AND ${where.sql}\nORDER BY l.id`,
    params: [...from.params, afterId, ...where.params],
  };
}

/** The highest lead id of the leads table (0 when empty). */
export function maxLeadIdQuery(leadsTable: string): SqlQuery {
  return { sql: `SELECT coalesce(max(id), 0)::BIGINT AS max_id FROM ${leadsTable}`, params: [] };
}

/** The highest event id of a release's event log (0 when empty). */
export function maxEventIdQuery(eventsTable: string): SqlQuery {
  return { sql: `SELECT coalesce(max(id), 0)::BIGINT AS max_id FROM ${eventsTable}`, params: [] };
}
