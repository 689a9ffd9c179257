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

/** A table's staging file whose rows are validated as they are written (`kind` null: no schema). */
export class CheckedSink<T> {
  readonly sink: NdjsonSink;
  readonly kind: RecordKind | null;
  readonly check: RowCheck | null;

  constructor(sink: NdjsonSink, validators: Validators, kind: RecordKind | null) {
    this.sink = sink;
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
  const csv = (name: 'changes' | 'lead_neighbours'): NdjsonSink =>
    openCsvTableSink(
      dir,
      name,
      tableSpec(name).columns.map(([n]) => n),
    );
  return {
    leads: new CheckedSink(openTableSink(dir, 'leads'), validators, 'lead'),
    registry: new CheckedSink(
      openCsvTableSink(
        dir,
        'registry',
        REGISTRY_SPEC.columns.map(([n]) => n),
      ),
      validators,
      null,
    ),
    changes: new CheckedSink(csv('changes'), validators, 'change'),
    lead_neighbours: new CheckedSink(csv('lead_neighbours'), validators, 'lead-neighbour'),
  };
}
