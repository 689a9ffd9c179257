/**
 * The staging files of the tables the refresh streams rows into as it makes them (leads,
 * registry, changes, lead neighbours), each row validated against its schema on the way: no
 * stage holds a whole table, and `write:tables` turns each file into Parquet.
 */
import type { RegistryEntry, Change } from '../release/registry.ts';
import { openTableSink, type NdjsonSink } from '../release/tables.ts';
import type { RecordKind, Validators } from '../validate.ts';
import { RowCheck } from '../validate.ts';
import type { LeadDraft } from '../normalise/leads.ts';
import type { Neighbour } from '../normalise/neighbours.ts';

/** A table's staging file whose rows are validated as they are written (`kind` null: no schema). */
export class CheckedSink<T> {
  readonly sink: NdjsonSink;
  readonly kind: RecordKind | null;
  readonly check: RowCheck | null;

  constructor(dir: string, table: string, validators: Validators, kind: RecordKind | null) {
    this.sink = openTableSink(dir, table);
    this.kind = kind;
    this.check = kind ? new RowCheck(validators, kind, 5) : null;
  }

  write(row: T): void {
    this.check?.check(row);
    this.sink.write(row);
  }
}

/** The streamed tables of one build. */
export interface TableSinks {
  leads: CheckedSink<LeadDraft>;
  registry: CheckedSink<RegistryEntry>;
  changes: CheckedSink<Change>;
  lead_neighbours: CheckedSink<Neighbour>;
}

/** Open the streamed tables' staging files in the build folder `dir`. */
export function openTableSinks(dir: string, validators: Validators): TableSinks {
  return {
    leads: new CheckedSink(dir, 'leads', validators, 'lead'),
    registry: new CheckedSink(dir, 'registry', validators, null),
    changes: new CheckedSink(dir, 'changes', validators, 'change'),
    lead_neighbours: new CheckedSink(dir, 'lead_neighbours', validators, 'lead-neighbour'),
  };
}
