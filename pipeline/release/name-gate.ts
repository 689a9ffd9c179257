/**
 * The privacy gate: no name is published without evidence that it belongs to an organisation.
 *
 * Run on the records about to be written, against the release's own company register. Every
 * published name field (`EVIDENCED_NAME_FIELDS`) must carry evidence, and the evidence must hold
 * for that name (`evidenceHolds`: the same rules the normaliser used). A failure refuses the
 * release whatever `--force` says. Messages name the table, record id and field, never the name.
 * Pure: records and register in, counts and messages out.
 */
import type { CompanyIndex } from '../normalise/company-match.ts';
import { EVIDENCED_NAME_FIELDS, evidenceHolds } from '../normalise/name-evidence.ts';
import { NAME_EVIDENCE, type NameEvidence } from '../types.ts';

/** Published names by table, field and kind of evidence (the manifest's `counts.published_names`). */
export type PublishedNameCounts = Record<string, Record<string, Record<NameEvidence, number>>>;

export interface NameGateResult {
  passed: boolean;
  counts: PublishedNameCounts;
  /** Names that failed, counted per table and field. */
  failures: number;
  messages: string[];
}

type NamedRecord = { id?: number } & Record<string, unknown>;

/** The number field published beside a name field (`applicant_org` → `applicant_company_number`). */
const NUMBER_FIELD: Record<string, string> = {
  applicant_org: 'applicant_company_number',
  main_contractor: 'main_contractor_company_number',
  applicant: 'applicant_company_number',
};

/** At most this many failing records are named in the messages. */
const MAX_EXAMPLES = 5;

/** The tables whose names the gate checks, and each one's name and evidence fields. */
const GATED_TABLES = [
  ['leads', EVIDENCED_NAME_FIELDS.lead],
  ['infrastructure', EVIDENCED_NAME_FIELDS.infrastructure],
] as const;

type GatedTable = (typeof GATED_TABLES)[number][0];

/**
 * The privacy gate over records checked one at a time (the refresh streams its leads through
 * it); `result()` gives the counts and messages. `checkPublishedNames` runs it over whole tables.
 */
export class NameGate {
  private readonly register: CompanyIndex;
  private readonly perField = new Map<GatedTable, Record<string, Record<NameEvidence, number>>>();
  private readonly bad = new Map<GatedTable, Record<string, { n: number; ids: (number | string)[] }>>();

  constructor(register: CompanyIndex) {
    this.register = register;
    for (const [table, fields] of GATED_TABLES) {
      const perField: Record<string, Record<NameEvidence, number>> = {};
      for (const [field] of fields)
        perField[field] = Object.fromEntries(NAME_EVIDENCE.map((e) => [e, 0])) as Record<NameEvidence, number>;
      this.perField.set(table, perField);
      this.bad.set(table, {});
    }
  }

  /** Check every published name of one record of `table`. */
  check(table: GatedTable, r: NamedRecord): void {
    const fields = table === 'leads' ? EVIDENCED_NAME_FIELDS.lead : EVIDENCED_NAME_FIELDS.infrastructure;
    for (const [field, evidenceField] of fields) {
      const name = r[field];
      if (name === null || name === undefined || name === '') continue;
      const evidence = (r[evidenceField] ?? null) as string | null;
      const number = (r[NUMBER_FIELD[field]!] ?? null) as string | null;
      if (typeof name === 'string' && evidenceHolds(name, evidence, this.register, number)) {
        this.perField.get(table)![field]![evidence as NameEvidence]++;
      } else {
        const b = (this.bad.get(table)![field] ??= { n: 0, ids: [] });
        b.n++;
        if (b.ids.length < MAX_EXAMPLES)
          b.ids.push(r.id ?? (r['lead_key'] as string) ?? (r['project_key'] as string) ?? '?');
      }
    }
  }

  /** The counts of published names by kind of evidence, and a message per failing field. */
  result(): NameGateResult {
    const counts: PublishedNameCounts = {};
    const messages: string[] = [];
    let failures = 0;
    for (const [table] of GATED_TABLES) {
      counts[table] = this.perField.get(table)!;
      for (const [field, b] of Object.entries(this.bad.get(table)!)) {
        failures += b.n;
        messages.push(
          `${table}.${field}: ${b.n.toLocaleString('en-IE')} published name(s) without evidence that they belong to an organisation ` +
            `(e.g. ${b.ids.join(', ')}); names are published only with company_register, legal_form or public_body evidence`,
        );
      }
    }
    return { passed: failures === 0, counts, failures, messages };
  }
}

/**
 * Check the published names of each table.
 *
 * @example checkPublishedNames({ leads, infrastructure }, register) // { passed: true, counts: { leads: { applicant_org: { company_register: 812, … } } } … }
 */
export function checkPublishedNames(
  tables: { leads: Iterable<NamedRecord>; infrastructure: Iterable<NamedRecord> },
  register: CompanyIndex,
): NameGateResult {
  const gate = new NameGate(register);
  for (const [table] of GATED_TABLES) for (const r of tables[table]) gate.check(table, r);
  return gate.result();
}
