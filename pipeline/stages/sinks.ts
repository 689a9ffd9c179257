/**
 * The staging files of the tables the refresh streams rows into as it makes them (leads,
 * registry, changes, lead neighbours), each row validated against its schema on the way: no
 * stage holds a whole table, and `write:tables` turns each file into Parquet. The leads are
 * staged as NDJSON (lists, free text); the tables of scalars as CSV (pipeline/release/tables.ts).
 */
import type { LeadDraft } from '../normalise/leads.ts';
import type { Neighbour } from '../normalise/neighbours.ts';
import type { Change, RegistryEntry } from '../release/registry.ts';
import { REGISTRY_SPEC, tableSpec } from '../release/table-specs.ts';
import { openCsvTableSink, openTableSink, type NdjsonSink } from '../release/tables.ts';
import type { RecordKind, Validators } from '../validate.ts';
import { RowCheck } from '../validate.ts';

/**
 * A table's staging file whose rows are validated as they are written (`kind` null: no schema).
 * With `before`, the rows must come in the table's own order — `before(a, b)` is true when `a`
 * comes before `b` in it — and a row out of order throws: such a file is written to Parquet as it
 * is, without sorting (`inOrder`).
 */
export class CheckedSink<T> {
  readonly sink: NdjsonSink;
  readonly kind: RecordKind | null;
  readonly check: RowCheck | null;
  readonly inOrder: boolean;
  private readonly before: ((a: T, b: T) => boolean) | null;
  private last: T | null = null;

  constructor(
    sink: NdjsonSink,
    validators: Validators,
    kind: RecordKind | null,
    before: ((a: T, b: T) => boolean) | null = null,
  ) {
    this.sink = sink;
    this.kind = kind;
    this.check = kind ? new RowCheck(validators, kind, 5) : null;
    this.before = before;
    this.inOrder = before !== null;
  }

  write(row: T): void {
    if (this.before && this.last !== null && !this.before(this.last, row))
      throw new Error(`${this.sink.path}: a row came out of the table's order`);
    this.last = row;
    this.check?.check(row);
    this.sink.write(row);
  }
}

/** The leads table's order: received date, then id, newest first (`TABLE_LAYOUTS.leads`). */
const leadsBefore = (a: LeadDraft, b: LeadDraft): boolean =>
  a.received_date > b.received_date || (a.received_date === b.received_date && a.id > b.id);

/** The neighbours table's order: lead id, then rank (`TABLE_LAYOUTS.lead_neighbours`). */
const neighboursBefore = (a: Neighbour, b: Neighbour): boolean =>
  a.lead_id < b.lead_id || (a.lead_id === b.lead_id && a.rank < b.rank);

/** The streamed tables of one build. */
export interface TableSinks {
  leads: CheckedSink<LeadDraft>;
  registry: CheckedSink<RegistryEntry>;
  changes: CheckedSink<Change>;
  lead_neighbours: CheckedSink<Neighbour>;
}

/** Open the streamed tables' staging files in the build folder `dir`. */
export function openTableSinks(dir: string, validators: Validators): TableSinks {
  const csv = (name: string, spec: { columns: readonly (readonly [string, string])[] }): NdjsonSink =>
    openCsvTableSink(
      dir,
      name,
      spec.columns.map(([n]) => n),
    );
  return {
    leads: new CheckedSink(openTableSink(dir, 'leads'), validators, 'lead', leadsBefore),
    registry: new CheckedSink(csv('registry', REGISTRY_SPEC), validators, null),
    changes: new CheckedSink(csv('changes', tableSpec('changes')), validators, 'change'),
    lead_neighbours: new CheckedSink(
      csv('lead_neighbours', tableSpec('lead_neighbours')),
      validators,
      'lead-neighbour',
      neighboursBefore,
    ),
  };
}
