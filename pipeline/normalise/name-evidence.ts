/**
 * Names and evidence: the one rule that decides whether a name may leave the pipeline.
 *
 * A name (planning applicant, main contractor, infrastructure applicant) is published only with
 * evidence that it belongs to an organisation, recorded beside it:
 *
 * - `company_register`: the name's normalised key (`companyNameKey`: case, accents, punctuation,
 *   a leading "The", `&`/"and" and the spelling of the legal form folded) equals the key of a
 *   company in the release's CRO register, legal form included; or the source row declares a CRO
 *   number that is in the register and whose company has the same key without its legal form.
 *   A name that only resembles a registered company ("John Power" beside "John Power Limited",
 *   or a fuzzy match) is not evidence.
 * - `legal_form`: the name ends in a legal form (Limited, Ltd, DAC, PLC, CLG, UC, ULC, Unlimited
 *   Company, LLP, LP, Teoranta / Teo and the Irish forms).
 * - `public_body`: the name is one of the 31 local authorities' councils (every spelling
 *   `resolveAuthority` knows, ending in "Council") or a public body of
 *   `pipeline/reference/public-bodies.json` (a name or a pattern, over the folded name).
 *
 * Anything else is an individual: the name is dropped, never published, indexed or written to a
 * rejects file. A source row that gives a forename is a person whatever its surname says: the
 * adapters drop such names before they get here.
 */
import { readFileSync } from 'node:fs';
import { foldText, resolveAuthority } from '../reference/authorities.ts';
import { baseOf, companyNameKey, LEGAL_SUFFIXES, type CompanyIndex } from './company-match.ts';
import type { NameEvidence } from '../types.ts';

/** The published name fields and the field that carries each one's evidence. */
export const EVIDENCED_NAME_FIELDS = {
  lead: [
    ['applicant_org', 'applicant_org_evidence'],
    ['main_contractor', 'main_contractor_evidence'],
  ],
  infrastructure: [['applicant', 'applicant_evidence']],
} as const;

interface PublicBodies {
  names: string[];
  patterns: string[];
}

const PUBLIC_BODIES = JSON.parse(
  readFileSync(new URL('../reference/public-bodies.json', import.meta.url), 'utf8'),
) as PublicBodies;

/**
 * A name folded for comparison: lower case, no accents, `&` read as "and", punctuation and a
 * leading "The" removed, spaces collapsed.
 *
 * @example foldName('The Minister for Education & Youth') // 'minister for education and youth'
 */
export function foldName(name: string): string {
  return foldText(name.replace(/&/g, ' and ').replace(/['’`.]/g, '')).replace(/^the /, '');
}

const PUBLIC_NAMES = new Set(PUBLIC_BODIES.names.map(foldName));
const PUBLIC_PATTERNS = PUBLIC_BODIES.patterns.map((p) => new RegExp(`^(?:${p})$`));

/** True when the name ends in a legal form (`Murphy Roofing Ltd.`, `Ó Cinnéide Teo`, `X Unlimited Company`). */
export function hasLegalForm(name: string): boolean {
  const key = companyNameKey(name).split(' ');
  return key.length > 1 && LEGAL_SUFFIXES.has(key[key.length - 1]!);
}

/** True when the name is a local authority's council or a listed public body. */
export function isPublicBody(name: string): boolean {
  const folded = foldName(name);
  if (!folded) return false;
  if (PUBLIC_NAMES.has(folded)) return true;
  if ((/ council$/.test(folded) || /^comhairle /.test(folded)) && resolveAuthority(name) !== null) return true;
  return PUBLIC_PATTERNS.some((re) => re.test(folded));
}

/**
 * The evidence that a name belongs to an organisation, or null when there is none (the name is
 * then an individual's and must not be published). `declaredNumber` is a CRO number the source
 * row itself gives for the name (a BCMS builder's company number), never a number found by
 * matching.
 *
 * @example nameEvidence('Murphy Roofing', register, '123456') // 'company_register' when 123456 is Murphy Roofing Limited
 * @example nameEvidence('Rory Power', register) // null
 */
export function nameEvidence(
  name: string | null,
  register: CompanyIndex,
  declaredNumber: string | null = null,
): NameEvidence | null {
  if (name === null || name.trim() === '') return null;
  if (register.registered(name)) return 'company_register';
  if (declaredNumber && declaredMatches(name, register, declaredNumber)) return 'company_register';
  if (hasLegalForm(name)) return 'legal_form';
  if (isPublicBody(name)) return 'public_body';
  return null;
}

/** The declared CRO number is a registered company whose name, legal form aside, is this name. */
function declaredMatches(name: string, register: CompanyIndex, declaredNumber: string): boolean {
  const c = register.byNumber(declaredNumber);
  return c !== null && baseOf(companyNameKey(c.company_name)) === baseOf(companyNameKey(name));
}

/**
 * Whether recorded evidence holds for a published name (the publish gate's check): the same
 * rules as `nameEvidence`, read from the release's own register. `companyNumber` is the number
 * published beside the name.
 */
export function evidenceHolds(
  name: string,
  evidence: string | null,
  register: CompanyIndex,
  companyNumber: string | null,
): boolean {
  switch (evidence) {
    case 'company_register':
      return (
        register.registered(name) !== null || (companyNumber !== null && declaredMatches(name, register, companyNumber))
      );
    case 'legal_form':
      return hasLegalForm(name);
    case 'public_body':
      return isPublicBody(name);
    default:
      return false;
  }
}
