/**
 * A lead's history in a release's event log (`events.parquet`, schemas/event.schema.json): its
 * events as served to a scope (`changes` masked by api/access/masking.ts `maskChanges`) and the
 * stages they show. `GET /v1/leads/{id}/history` (api/routes/events.ts) and the explorer's lead
 * page (api/app-area/pages/explorer.ts) both read it from here; whether a release has the log at
 * all (`eventLogTable`) is also the events route's and the webhook dispatcher's question.
 */
import { existsSync } from 'node:fs';
import type { ApiDb } from '../duckdb/db.ts';
import { maskChanges, type FieldChange } from '../access/masking.ts';
import type { Scope } from '../access/scopes.ts';
import { leadEventsQuery, type EventRow } from '../query/events-query.ts';
import type { ReleaseTables } from './kept-release.ts';

/** The release's event log table, or null for a release built before the log existed. */
export function eventLogTable(release: Pick<ReleaseTables, 'tables' | 'path'>): string | null {
  return existsSync(release.path('events.parquet')) ? release.tables.events : null;
}

/** An event row as served to `scope`: `changes` parsed and masked. */
export function servedEvent(row: EventRow, scope: Scope): Record<string, unknown> {
  return {
    ...row,
    changes: maskChanges('lead', JSON.parse(row.changes) as Record<string, FieldChange>, scope).changes,
  };
}

/** One lead's events in the event log `table` (`eventLogTable`), in id order, served to `scope`. */
export async function leadEvents(
  db: Pick<ApiDb, 'all'>,
  table: string,
  id: number,
  scope: Scope,
): Promise<Record<string, unknown>[]> {
  const q = leadEventsQuery(table, id);
  return (await db.all<EventRow>(q.sql, q.params)).map((e) => servedEvent(e, scope));
}

/** One stage of a lead's timeline (`GET /leads/{id}/history`). */
export interface Stage {
  lead_readiness: string | null;
  status: string | null;
  occurred_at: string | null;
  observed_at: string | null;
  release_id: string | null;
  event_id: number | null;
}

/**
 * The stages of a lead from its events (in id order) and its current record (null when removed):
 * the stage it had when first seen (from `lead.created`, or the `before` of its first stage
 * change, or its current stage), then one per `lead.stage_changed`, then `removed`.
 */
export function stagesOf(
  events: readonly Record<string, any>[],
  current: { lead_readiness: string; status: string; first_seen: string } | null,
): Stage[] {
  const stages: Stage[] = [];
  const first = events[0];
  const firstStage = events.find((e) => e.type === 'lead.stage_changed');
  if (!first || first.type !== 'lead.created') {
    const before = firstStage?.changes;
    stages.push({
      lead_readiness: before
        ? (before.lead_readiness?.before ?? current?.lead_readiness ?? null)
        : (current?.lead_readiness ?? null),
      status: before ? (before.status?.before ?? current?.status ?? null) : (current?.status ?? null),
      occurred_at: null,
      observed_at: current?.first_seen ?? null,
      release_id: null,
      event_id: null,
    });
  }
  for (const e of events) {
    const c = e.changes as Record<string, FieldChange>;
    if (e.type === 'lead.created' || e.type === 'lead.stage_changed') {
      const prev = stages.at(-1);
      stages.push({
        lead_readiness: (c['lead_readiness']?.after as string | undefined) ?? prev?.lead_readiness ?? null,
        status: (c['status']?.after as string | undefined) ?? prev?.status ?? null,
        occurred_at: e.occurred_at,
        observed_at: e.observed_at,
        release_id: e.release_id,
        event_id: e.id,
      });
    } else if (e.type === 'lead.removed') {
      stages.push({
        lead_readiness: null,
        status: null,
        occurred_at: null,
        observed_at: e.observed_at,
        release_id: e.release_id,
        event_id: e.id,
      });
    }
  }
  return stages;
}
