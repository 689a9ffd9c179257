/**
 * Planning applications + commencement notices → published leads (one per application).
 *
 * Notices link to an application by `permission_number` == `application_number` and the same
 * planning authority; a notice without an authority links by number alone when that number is
 * unique nationally. Phased notices are merged (earliest commencement, latest end and
 * completion, summed completed units, builder of the latest notice). Classification, value,
 * scale and readiness come from classify.ts and readiness.ts. Pure: the caller reads the rows
 * and writes the result; `asOf` is the release date (the injected clock).
 */
import { foldText, resolveAuthority } from '../reference/authorities.ts';
import type { CommencementRow, Lead, PlanningRow } from '../types.ts';
import { classifyApplication, classifyScale } from './classify.ts';
import type { CompanyIndex } from './company-match.ts';
import { nameEvidence } from './name-evidence.ts';
import type { NameEvidence } from '../types.ts';
import { deriveReadiness, normaliseDecision, readinessSince, STATUS_OF } from './readiness.ts';
import { estimateValue } from './value.ts';

/** A lead before the registry assigns its id, first/last-seen dates and content hash. */
export type LeadDraft = Omit<Lead, 'id' | 'first_seen' | 'last_changed' | 'content_hash'>;

/**
 * The registry's natural key of a lead: `<authority slug>/<APPLICATION NUMBER>`. Accepts the
 * authority's slug, canonical name or any spelling `resolveAuthority` knows; the application
 * number is trimmed and upper-cased.
 *
 * @example leadKey('Dún Laoghaire-Rathdown', 'd23a/0456') // 'dun-laoghaire-rathdown/D23A/0456'
 */
export function leadKey(authoritySlugOrName: string, applicationNumber: string): string {
  const a = resolveAuthority(authoritySlugOrName);
  const slug = a ? a.slug : foldText(authoritySlugOrName).replace(/[^a-z0-9]+/g, '-');
  return `${slug}/${applicationNumber.trim().toUpperCase()}`;
}

interface AuthorityFacts {
  name: string;
  slug: string;
  county: string;
}

/** Per-call caches: authority spellings and company matches repeat across many rows. */
function makeResolvers(companies: CompanyIndex) {
  const authorities = new Map<string, AuthorityFacts | null>();
  const authority = (raw: string): AuthorityFacts | null => {
    let f = authorities.get(raw);
    if (f === undefined) {
      const a = resolveAuthority(raw);
      f = a ? { name: a.name, slug: a.slug, county: a.county } : null;
      authorities.set(raw, f);
    }
    return f;
  };
  const matches = new Map<string, ReturnType<CompanyIndex['match']>>();
  const match = (name: string | null): ReturnType<CompanyIndex['match']> => {
    if (!name) return null;
    let m = matches.get(name);
    if (m === undefined) {
      m = companies.match(name);
      matches.set(name, m);
    }
    return m;
  };
  const evidences = new Map<string, NameEvidence | null>();
  /** Evidence that a name is an organisation's (cached by name and declared number). */
  const evidence = (name: string | null, declaredNumber: string | null = null): NameEvidence | null => {
    if (!name) return null;
    const k = declaredNumber ? `${name}\u0000${declaredNumber}` : name;
    let e = evidences.get(k);
    if (e === undefined) {
      e = nameEvidence(name, companies, declaredNumber);
      evidences.set(k, e);
    }
    return e;
  };
  return { authority, match, evidence };
}

type Resolvers = ReturnType<typeof makeResolvers>;

/** The date a notice is ordered by when picking the latest builder. */
function noticeTime(n: CommencementRow): string {
  return n.commencement_date ?? n.submitted_date ?? '';
}

/**
 * Build one lead per planning application and link commencement notices to them.
 * Returns the leads (in input order, a later duplicate lead key replacing an earlier one) and
 * how many notices linked or did not (no permission number, no application with that number and
 * authority, or an authority-less notice whose number is not unique nationally).
 */
export function buildLeads(
  planning: PlanningRow[],
  commencements: CommencementRow[],
  companies: CompanyIndex,
  asOf: string,
): { leads: LeadDraft[]; linkedNotices: number; unlinkedNotices: number } {
  const resolvers = makeResolvers(companies);
  const { authority } = resolvers;

  // One row per lead key (the later row wins), then index rows by application number.
  const rows: PlanningRow[] = [];
  const facts: (AuthorityFacts | null)[] = [];
  const keys: string[] = [];
  const byKey = new Map<string, number>();
  for (const p of planning) {
    const f = authority(p.authority);
    const key = `${f ? f.slug : foldText(p.authority).replace(/[^a-z0-9]+/g, '-')}/${p.application_number.trim().toUpperCase()}`;
    const at = byKey.get(key);
    if (at !== undefined) {
      rows[at] = p;
      continue;
    }
    byKey.set(key, rows.length);
    rows.push(p);
    facts.push(f);
    keys.push(key);
  }
  const byNumber = new Map<string, number | number[]>();
  for (let i = 0; i < rows.length; i++) {
    const n = rows[i]!.application_number;
    const cur = byNumber.get(n);
    if (cur === undefined) byNumber.set(n, i);
    else if (typeof cur === 'number') byNumber.set(n, [cur, i]);
    else cur.push(i);
  }

  // Link notices.
  const noticesOf: (CommencementRow[] | undefined)[] = new Array(rows.length);
  let linked = 0;
  for (const n of commencements) {
    const target = n.permission_number ? findTarget(byNumber.get(n.permission_number), n, facts, authority) : -1;
    if (target < 0) continue;
    linked++;
    const list = noticesOf[target];
    if (list) list.push(n);
    else noticesOf[target] = [n];
  }

  const leads: LeadDraft[] = new Array(rows.length);
  for (let i = 0; i < rows.length; i++) {
    leads[i] = toLead(rows[i]!, facts[i]!, keys[i]!, noticesOf[i] ?? [], resolvers, asOf);
  }
  return { leads, linkedNotices: linked, unlinkedNotices: commencements.length - linked };
}

/** Index of the lead a notice links to, or -1. */
function findTarget(
  candidates: number | number[] | undefined,
  n: CommencementRow,
  facts: (AuthorityFacts | null)[],
  authority: (raw: string) => AuthorityFacts | null,
): number {
  if (candidates === undefined) return -1;
  const na = n.authority ? authority(n.authority) : null;
  if (!na) return typeof candidates === 'number' ? candidates : -1;
  if (typeof candidates === 'number') return facts[candidates]?.slug === na.slug ? candidates : -1;
  for (const c of candidates) if (facts[c]?.slug === na.slug) return c;
  return -1;
}

function toLead(
  p: PlanningRow,
  f: AuthorityFacts | null,
  key: string,
  notices: CommencementRow[],
  { match, evidence }: Resolvers,
  asOf: string,
): LeadDraft {
  const county = f ? f.county : 'Unknown';
  const c = classifyApplication(p);
  const useClass = c.use_class;
  const value = estimateValue({
    useClass,
    floorAreaM2: p.floor_area_m2,
    units: p.num_units,
    county,
    description: p.description,
  });
  const readiness = deriveReadiness(p, notices, asOf);
  // A name is published only with evidence that it is an organisation's (name-evidence.ts).
  const applicantEvidence = p.applicant_person ? null : evidence(p.applicant_name);
  const applicantOrg = applicantEvidence ? p.applicant_name : null;
  const applicantType = applicantOrg
    ? 'organisation'
    : p.applicant_person || p.applicant_name !== null
      ? 'individual'
      : 'unknown';
  const applicant = match(applicantOrg);

  // Merge phases.
  let first: CommencementRow | null = null;
  let commencement: string | null = null;
  let proposedEnd: string | null = null;
  let completion: string | null = null;
  let unitsCompleted: number | null = null;
  let builder: CommencementRow | null = null;
  for (const n of notices) {
    if (
      first === null ||
      (n.commencement_date !== null &&
        (first.commencement_date === null || n.commencement_date < first.commencement_date)) ||
      (n.commencement_date === first.commencement_date && n.cn_number < first.cn_number)
    ) {
      first = n;
    }
    if (n.commencement_date && (commencement === null || n.commencement_date < commencement))
      commencement = n.commencement_date;
    if (n.proposed_end_date && (proposedEnd === null || n.proposed_end_date > proposedEnd))
      proposedEnd = n.proposed_end_date;
    if (n.ccc_date && (completion === null || n.ccc_date > completion)) completion = n.ccc_date;
    if (n.ccc_units_completed !== null) unitsCompleted = (unitsCompleted ?? 0) + n.ccc_units_completed;
    if (n.builder_name) {
      if (builder === null) builder = n;
      else {
        const t = noticeTime(n);
        const bt = noticeTime(builder);
        if (t > bt || (t === bt && n.cn_number > builder.cn_number)) builder = n;
      }
    }
  }
  // The notice's own CRO number is the builder's declaration: prefer it to a name match.
  const declared = builder?.builder_company_number?.replace(/\D/g, '') || null;
  // The latest builder is the appointed one; published only with evidence (an individual: null).
  const contractorEvidence = builder ? evidence(builder.builder_name, declared) : null;
  const contractor = contractorEvidence ? builder!.builder_name : null;

  return {
    lead_key: key,
    application_number: p.application_number,
    planning_authority: f ? f.name : p.authority,
    county,
    address: p.address,
    eircode_routing_key: p.eircode_routing_key,
    lat: p.lat,
    lon: p.lon,
    description: p.description,
    application_type: p.application_type,
    received_date: p.received_date,
    decision_date: p.decision_date,
    decision_due_date: p.decision_due_date,
    grant_date: p.grant_date,
    expiry_date: p.expiry_date,
    withdrawn_date: p.withdrawn_date,
    decision: normaliseDecision(p.decision, p.application_status),
    lead_readiness: readiness,
    readiness_since: readinessSince(readiness, p, notices),
    status: STATUS_OF[readiness],
    verticals: c.verticals,
    explicit_verticals: c.explicit_verticals,
    vertical_evidence: c.vertical_evidence,
    use_class: useClass,
    works_kind: c.works_kind,
    scale: classifyScale({
      units: p.num_units,
      floorAreaM2: p.floor_area_m2,
      siteAreaHa: p.site_area_ha,
      estValue: value.est_value,
    }),
    num_units: p.num_units,
    floor_area_m2: p.floor_area_m2,
    site_area_ha: p.site_area_ha,
    one_off_house: p.one_off_house,
    demolition: c.demolition,
    est_value: value.est_value,
    est_value_basis: value.est_value_basis,
    has_contact: p.has_contact,
    applicant_type: applicantType,
    land_use_code: p.land_use_code,
    further_info_requested: p.fi_request_date !== null,
    appeal_ref: p.appeal_ref,
    appeal_status: p.appeal_status,
    appeal_decision: p.appeal_decision,
    appeal_decision_date: p.appeal_decision_date,
    commencement_notice: first ? first.cn_number : null,
    commencement_date: commencement,
    proposed_end_date: proposedEnd,
    completion_date: completion,
    units_completed: unitsCompleted,
    applicant_org: applicantOrg,
    applicant_org_evidence: applicantEvidence,
    applicant_company_number: applicant ? applicant.company_number : null,
    applicant_match_confidence: applicant ? applicant.confidence : null,
    main_contractor: contractor,
    main_contractor_evidence: contractorEvidence,
    main_contractor_company_number: contractor ? (declared ?? match(contractor)?.company_number ?? null) : null,
    public_url: p.public_url,
  };
}
