/**
 * The "suppliers by trade and area" table shown in a lead's detail: live companies of the CRO
 * register whose NACE code belongs to a trade vertical, by county, with how many leads name
 * them as main contractor. Pure.
 */
import { resolveCounty } from '../reference/authorities.ts';
import type { CompanyRow } from '../types.ts';
import { VERTICALS } from './classify.ts';
import type { LeadDraft } from './leads.ts';

export interface Supplier {
  company_number: string;
  company_name: string;
  vertical: string;
  county: string;
  nace_code: string;
  projects_as_builder: number;
}

/** NACE code → the verticals it supplies (one code may serve several, e.g. 4321 electrical and solar). */
const VERTICALS_OF_NACE = new Map<string, string[]>();
for (const v of VERTICALS) {
  for (const code of v.nace) {
    const list = VERTICALS_OF_NACE.get(code);
    if (list) list.push(v.code);
    else VERTICALS_OF_NACE.set(code, [v.code]);
  }
}

/** Leads per main contractor's company number (`projects_as_builder`); adds to `into` when given. */
export function countProjects(
  leads: Iterable<Pick<LeadDraft, 'main_contractor_company_number'>>,
  into = new Map<string, number>(),
): Map<string, number> {
  for (const l of leads) {
    const n = l.main_contractor_company_number;
    if (n) into.set(n, (into.get(n) ?? 0) + 1);
  }
  return into;
}

/**
 * One row per (company, vertical) for companies whose status is Normal, whose county resolves to
 * one of the 26 counties and whose NACE code maps to a vertical (`VERTICALS[].nace`).
 * `projects_as_builder` is the company's count in `projects` (`countProjects` of the leads).
 * Sorted by county, vertical, projects_as_builder (most first), company name, company number.
 */
export function buildSuppliers(companies: CompanyRow[], projects: ReadonlyMap<string, number>): Supplier[] {
  const out: Supplier[] = [];
  const seen = new Set<string>();
  for (const c of companies) {
    if (!c.nace_code || (c.status ?? '').trim().toLowerCase() !== 'normal') continue;
    const verticals = VERTICALS_OF_NACE.get(c.nace_code);
    if (!verticals) continue;
    const county = resolveCounty(c.county);
    if (!county) continue;
    if (seen.has(c.company_number)) continue;
    seen.add(c.company_number);
    for (const vertical of verticals) {
      out.push({
        company_number: c.company_number,
        company_name: c.company_name,
        vertical,
        county,
        nace_code: c.nace_code,
        projects_as_builder: projects.get(c.company_number) ?? 0,
      });
    }
  }
  out.sort(
    (a, b) =>
      cmp(a.county, b.county) ||
      cmp(a.vertical, b.vertical) ||
      b.projects_as_builder - a.projects_as_builder ||
      cmp(a.company_name, b.company_name) ||
      cmp(a.company_number, b.company_number),
  );
  return out;
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
