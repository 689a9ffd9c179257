/**
 * The generator's ground truth about names (and what each planning application is), kept to itself: which names written into the raw
 * files are individuals' (homeowners, owners, builders trading under their own name) and which
 * are organisations' (every company of the register, public bodies, clubs). The pipeline never
 * reads it; the privacy tests do, to check that no individual's name is served anywhere and to
 * measure how many organisations still are.
 *
 * Written only when asked for (`generateRaw({ truthFile })`, `leads generate --truth FILE`),
 * outside the raw folder.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

/** The ground truth as written to disk. */
export interface NameTruthFile {
  /** Individuals' names as "Forename Surname" (the part that identifies the person). */
  individuals: string[];
  /** Organisations' names as written in the raw files. */
  organisations: string[];
  /** Organisations named as planning or infrastructure applicants: the denominator of the published share. */
  applicant_organisations: string[];
  /** Organisations named as builders on commencement notices. */
  builder_organisations: string[];
  /**
   * What each planning application is, as the generator made it (written applications, bad rows
   * included): its template's class (`UseClassKey` of descriptions.ts) and its kind of works
   * (`WorksKind`: new_works, retention, extension_of_duration, amendment, outline, declaration),
   * for scoring the classifier on generated text. Sorted by authority, then number.
   */
  applications: ApplicationTruth[];
}

/** The generator's answer for one application. */
export interface ApplicationTruth {
  planning_authority: string;
  application_number: string;
  generator_class: string;
  works_kind: string;
  application_type: string;
}

/** The role an organisation is named in. */
export type NamedRole = 'applicant' | 'builder' | 'register';

/** Collects names while the generator writes; `write` puts them in a JSON file. */
export class NameTruth {
  readonly individuals = new Set<string>();
  readonly organisations = new Set<string>();
  readonly applicants = new Set<string>();
  readonly builders = new Set<string>();
  readonly applications: ApplicationTruth[] = [];

  individual(name: string): void {
    this.individuals.add(name.replace(/\s+/g, ' ').trim());
  }

  /** An organisation, in the role it is written in (a register company not named anywhere: `register`). */
  organisation(name: string, role: NamedRole): void {
    const n = name.replace(/\s+/g, ' ').trim();
    this.organisations.add(n);
    if (role === 'applicant') this.applicants.add(n);
    else if (role === 'builder') this.builders.add(n);
  }

  /** An application's class and kind of works. */
  application(a: ApplicationTruth): void {
    this.applications.push(a);
  }

  toJSON(): NameTruthFile {
    return {
      individuals: [...this.individuals].sort(),
      organisations: [...this.organisations].sort(),
      applicant_organisations: [...this.applicants].sort(),
      builder_organisations: [...this.builders].sort(),
      applications: [...this.applications].sort((x, y) =>
        x.planning_authority < y.planning_authority
          ? -1
          : x.planning_authority > y.planning_authority
            ? 1
            : x.application_number < y.application_number
              ? -1
              : x.application_number > y.application_number
                ? 1
                : 0,
      ),
    };
  }

  write(path: string): void {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, JSON.stringify(this.toJSON()) + '\n');
  }
}
