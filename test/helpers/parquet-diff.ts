/**
 * An independent diff of two releases' `leads.parquet`, written here in DuckDB SQL and not
 * through the project's change code (pipeline/release/events.ts): which leads appeared, vanished,
 * changed stage or changed otherwise, and every differing column's value before and after (as
 * DuckDB's own `to_json`). The sync tests compare the event log and `/v1/events` with it.
 */
import { openDb } from '../../pipeline/lib/duckdb.ts';
import { sqlIdent, sqlString } from '../../common/sql.ts';

export interface DiffRow {
  lead_id: number;
  type: string;
  field: string;
  before: unknown;
  after: unknown;
}

export async function diffLeads(previousLeads: string, leads: string): Promise<DiffRow[]> {
  const db = await openDb();
  try {
    const o = `read_parquet(${sqlString(previousLeads)})`;
    const n = `read_parquet(${sqlString(leads)})`;
    const cols = (await db.all<{ column_name: string }>(`DESCRIBE SELECT * FROM ${n}`)).map((r) => r.column_name);
    await db.run(`CREATE TEMP TABLE o AS SELECT * FROM ${o}`);
    await db.run(`CREATE TEMP TABLE n AS SELECT * FROM ${n}`);
    await db.run(`CREATE TEMP TABLE kinds AS
      SELECT n.id AS lead_id, 'lead.created' AS type FROM n ANTI JOIN o USING (id)
      UNION ALL SELECT o.id, 'lead.removed' FROM o ANTI JOIN n USING (id)
      UNION ALL SELECT o.id, CASE WHEN o.lead_readiness IS DISTINCT FROM n.lead_readiness OR o.status IS DISTINCT FROM n.status
        THEN 'lead.stage_changed' ELSE 'lead.updated' END
        FROM o JOIN n USING (id) WHERE o.content_hash IS DISTINCT FROM n.content_hash`);
    const per = cols.map((c) => {
      const q = sqlIdent(c);
      return `SELECT k.lead_id, k.type, ${sqlString(c)} AS field, to_json(o.${q})::VARCHAR AS before, to_json(n.${q})::VARCHAR AS after
        FROM kinds k LEFT JOIN o ON o.id = k.lead_id LEFT JOIN n ON n.id = k.lead_id
        WHERE k.type IN ('lead.created', 'lead.removed') OR o.${q} IS DISTINCT FROM n.${q}`;
    });
    const rows = await db.all<{
      lead_id: number;
      type: string;
      field: string;
      before: string | null;
      after: string | null;
    }>(`${per.join(' UNION ALL ')} ORDER BY lead_id, field`);
    return rows.map((r) => ({
      ...r,
      before: r.before === null ? null : JSON.parse(r.before),
      after: r.after === null ? null : JSON.parse(r.after),
    }));
  } finally {
    db.close();
  }
}

/** Events flattened to the diff's rows (one per changed field), in the same order. */
export function flattenEvents(
  events: { lead_id: number; type: string; changes: Record<string, { before: unknown; after: unknown }> }[],
): DiffRow[] {
  return events
    .flatMap((e) =>
      Object.entries(e.changes).map(([field, c]) => ({
        lead_id: e.lead_id,
        type: e.type,
        field,
        before: c.before,
        after: c.after,
      })),
    )
    .sort((a, b) => a.lead_id - b.lead_id || (a.field < b.field ? -1 : a.field > b.field ? 1 : 0));
}
