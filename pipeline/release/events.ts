/**
 * The release's event log (`events.parquet`): per lead, what changed against the previous
 * release — `lead.created`, `lead.updated`, `lead.stage_changed`, `lead.removed` — with every
 * changed field's value before and after, carried forward from the previous release's log and
 * trimmed to `EVENT_RETENTION_WEEKS`. The shape is `schemas/event.schema.json`.
 *
 * The diff runs in DuckDB over the two releases' `leads.parquet` (only leads whose content hash
 * differs, or that appear or vanish, leave DuckDB), so its cost is the week's changes, not the
 * release. Event ids continue from the previous log's highest id, in (type order, lead id) order
 * within a release, so ids increase across releases and a reader's cursor survives a refresh. The
 * first release of a data folder records no events: it is the baseline a mirror starts from.
 *
 * Pure functions build the SQL and the events; `writeEvents` is the thin I/O around them.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { sqlString, type Db } from '../lib/duckdb.ts';
import { columnsFromSchema, openTableSink, type TableSpec } from './tables.ts';
import { rm } from 'node:fs/promises';

/** Weekly releases whose events a release keeps (the log's retention; at least a year). */
export const EVENT_RETENTION_WEEKS = 52;

export type EventType = 'lead.created' | 'lead.updated' | 'lead.stage_changed' | 'lead.removed';

/** The event types, in the order a release numbers its events. */
export const EVENT_TYPES: readonly EventType[] = ['lead.created', 'lead.stage_changed', 'lead.updated', 'lead.removed'];

export interface FieldChange {
  before: unknown;
  after: unknown;
}

export interface LeadEvent {
  id: number;
  type: EventType;
  lead_id: number;
  lead_key: string;
  release_id: string;
  observed_at: string;
  occurred_at: string | null;
  reason: 'gone_from_source' | null;
  changes: Record<string, FieldChange>;
}

type LeadRow = Record<string, unknown> & { id: number; lead_key: string };

/** The fields whose change is a change of stage. */
export const STAGE_FIELDS = ['lead_readiness', 'status'] as const;

/** The source's date of reaching each readiness stage: the first of these lead fields that has one. */
export const STAGE_DATE_FIELDS: Record<string, readonly string[]> = {
  application: ['received_date'],
  further_information: [],
  appealed: [],
  granted: ['grant_date', 'decision_date', 'appeal_decision_date'],
  commencing: ['commencement_date'],
  under_construction: ['commencement_date'],
  completed: ['completion_date'],
  refused: ['decision_date', 'appeal_decision_date'],
  withdrawn: ['withdrawn_date'],
  expired: ['expiry_date'],
};

/** The table spec of `events.parquet` (columns from the event schema; ordered by id). */
export function eventsSpec(): TableSpec {
  return { name: 'events', columns: columnsFromSchema('event'), orderBy: 'id', rowGroupRows: 50_000 };
}

/**
 * The leads that differ between two `leads.parquet` files: one row per lead whose content hash
 * differs or that is in only one of them, with the whole lead before (`o`) and after (`n`) as
 * structs (null when absent), in lead id order.
 */
export function changedLeadsSql(previousLeads: string, leads: string): string {
  return (
    `SELECT coalesce(n.id, o.id) AS lead_id, CASE WHEN o.id IS NULL THEN NULL ELSE o END AS before, CASE WHEN n.id IS NULL THEN NULL ELSE n END AS after ` +
    `FROM read_parquet(${sqlString(previousLeads)}) o FULL OUTER JOIN read_parquet(${sqlString(leads)}) n ON o.id = n.id ` +
    `WHERE o.content_hash IS DISTINCT FROM n.content_hash ORDER BY lead_id`
  );
}

const same = (a: unknown, b: unknown): boolean =>
  a === b ? true : JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

/**
 * The event of one lead that differs (before and/or after present), without its id. `fields` is
 * the lead schema's field order, the order of `changes`.
 */
export function leadEvent(
  before: LeadRow | null,
  after: LeadRow | null,
  fields: readonly string[],
  release: { id: string; asOf: string },
): Omit<LeadEvent, 'id'> {
  const lead = (after ?? before)!;
  const changes: Record<string, FieldChange> = {};
  for (const f of fields) {
    const b = before?.[f] ?? null;
    const a = after?.[f] ?? null;
    if (before && after && same(b, a)) continue;
    changes[f] = { before: b, after: a };
  }
  const base = {
    lead_id: lead.id,
    lead_key: lead.lead_key,
    release_id: release.id,
    observed_at: release.asOf,
    reason: null,
    changes,
  };
  if (!before)
    return { ...base, type: 'lead.created', occurred_at: (after!['received_date'] as string | null) ?? null };
  if (!after) return { ...base, type: 'lead.removed', occurred_at: null, reason: 'gone_from_source' };
  if (STAGE_FIELDS.some((f) => f in changes)) {
    const dates = (STAGE_DATE_FIELDS[after['lead_readiness'] as string] ?? [])
      .map((f) => after[f] as string | null)
      .filter((d) => d);
    return { ...base, type: 'lead.stage_changed', occurred_at: dates[0] ?? null };
  }
  return { ...base, type: 'lead.updated', occurred_at: null };
}

/** Number a release's events: ids from `firstId`, in EVENT_TYPES order then lead id order. */
export function numberEvents(events: Omit<LeadEvent, 'id'>[], firstId: number): LeadEvent[] {
  const rank = (t: EventType): number => EVENT_TYPES.indexOf(t);
  return [...events]
    .sort((a, b) => rank(a.type) - rank(b.type) || a.lead_id - b.lead_id)
    .map((e, i) => ({ id: firstId + i, ...e }));
}

/** First as-of date kept by a log trimmed on `asOf`: events observed on or after it stay. */
export function retentionStart(asOf: string, weeks = EVENT_RETENTION_WEEKS): string {
  const d = new Date(`${asOf}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() - 7 * (weeks - 1) - 6);
  return d.toISOString().slice(0, 10);
}

/**
 * COPY the carried-forward log (previous events observed on or after `keepFrom`, when there is
 * a previous log) and this release's staged events into `events.parquet`, ordered by id.
 */
export function writeEventsSql(
  spec: TableSpec,
  stagedNdjson: string,
  previousEvents: string | null,
  keepFrom: string,
  out: string,
): string {
  const cols = spec.columns.map(([n, t]) => `${sqlString(n)}: ${sqlString(t)}`).join(', ');
  const list = spec.columns.map(([n]) => `"${n}"`).join(', ');
  const fresh = `SELECT ${list} FROM read_json(${sqlString(stagedNdjson)}, format = 'newline_delimited', columns = {${cols}}, maximum_object_size = 16777216)`;
  const carried = previousEvents
    ? `SELECT ${list} FROM read_parquet(${sqlString(previousEvents)}) WHERE observed_at >= DATE ${sqlString(keepFrom)} UNION ALL `
    : '';
  return `COPY (${carried}${fresh} ORDER BY id) TO ${sqlString(out)} (FORMAT PARQUET, COMPRESSION ZSTD, ROW_GROUP_SIZE ${spec.rowGroupRows ?? 50_000})`;
}

export interface EventsWritten {
  /** Rows of `events.parquet` (carried forward + new). */
  rows: number;
  /** This release's events, by type. */
  counts: Record<EventType, number>;
  /** This release's events (validated by the caller). */
  events: LeadEvent[];
}

/**
 * Write `<dir>/events.parquet` from the previous release's folder (or none) and the freshly
 * written `<dir>/leads.parquet`.
 */
export async function writeEvents(
  db: Db,
  dir: string,
  previousDir: string | null,
  release: { id: string; asOf: string },
): Promise<EventsWritten> {
  const spec = eventsSpec();
  const fields = columnsFromSchema('lead').map(([n]) => n);
  const prevLeads = previousDir ? join(previousDir, 'leads.parquet') : null;
  const prevEvents =
    previousDir && existsSync(join(previousDir, 'events.parquet')) ? join(previousDir, 'events.parquet') : null;
  let drafts: Omit<LeadEvent, 'id'>[] = [];
  if (prevLeads && existsSync(prevLeads)) {
    const rows = await db.all<{ before: LeadRow | null; after: LeadRow | null }>(
      changedLeadsSql(prevLeads, join(dir, 'leads.parquet')),
    );
    drafts = rows.map((r) => leadEvent(r.before, r.after, fields, release));
  }
  const lastId = prevEvents
    ? Number(
        (await db.all<{ m: number | null }>(`SELECT max(id) AS m FROM read_parquet(${sqlString(prevEvents)})`))[0]?.m ??
          0,
      )
    : 0;
  const events = numberEvents(drafts, lastId + 1);
  const sink = openTableSink(dir, spec.name);
  for (const e of events) sink.write(e);
  sink.close();
  await db.run(writeEventsSql(spec, sink.path, prevEvents, retentionStart(release.asOf), join(dir, 'events.parquet')));
  await rm(sink.path, { force: true });
  const rows = Number(
    (
      await db.all<{ n: number }>(`SELECT count(*) AS n FROM read_parquet(${sqlString(join(dir, 'events.parquet'))})`)
    )[0]!.n,
  );
  const counts = Object.fromEntries(EVENT_TYPES.map((t) => [t, events.filter((e) => e.type === t).length])) as Record<
    EventType,
    number
  >;
  return { rows, counts, events };
}
