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
import { deriveReadiness, normaliseDecision, readinessSince, STATUS_OF, type NoticeFacts } from './readiness.ts';
import { estimateValue } from './value.ts';
import { UNTRACKED, type Tracking } from '../release/registry.ts';

/**
 * A lead before the registry assigns its id, first/last-seen dates and content hash: those fields
 * hold the `UNTRACKED` placeholders until `trackChanges` fills them in.
 */
export type LeadDraft = Omit<Lead, keyof Tracking> & Tracking;

/**
 * The registry's natural key of a lead: `<authority slug>/<APPLICATION NUMBER>`. Accepts the
 * authority's slug, canonical name or any spelling `resolveAuthority` knows; the application
 * number is trimmed and upper-cased.
 *
 * @example leadKey('Dún Laoghaire-Rathdown', 'd23a/0456') // 'dun-laoghaire-rathdown/D23A/0456'
 */
export function leadKey(authoritySlugOrName: string, applicationNumber: string): string {
  return leadKeyOf(resolveAuthority(authoritySlugOrName), authoritySlugOrName, applicationNumber);
}

/** `leadKey` with the authority already resolved (`facts`; null when `authority` resolves to none). */
export function leadKeyOf(facts: { slug: string } | null, authority: string, applicationNumber: string): string {
  const slug = facts ? facts.slug : foldText(authority).replace(/[^a-z0-9]+/g, '-');
  return `${slug}/${applicationNumber.trim().toUpperCase()}`;
}

export interface AuthorityFacts {
  name: string;
  slug: string;
  county: string;
}

/** What may be published about a planning application's applicant, decided on evidence as its row is read. */
export interface ApplicantFacts {
  applicant_type: LeadDraft['applicant_type'];
  applicant_org: string | null;
  applicant_org_evidence: NameEvidence | null;
  applicant_company_number: string | null;
  applicant_match_confidence: number | null;
}

/**
 * A planning row as the lead build reads it: the applicant's name and person flag replaced by
 * what may be published of them (`leadSource`). The refresh stages these, never the rows, so a
 * name without evidence that it is an organisation's never leaves the adapter's memory.
 */
export type LeadSource = Omit<PlanningRow, 'applicant_name' | 'applicant_person' | 'line'> & ApplicantFacts;

/** The main contractor a notice gives its lead when its builder is the lead's latest (all null: an individual). */
export interface ContractorFacts {
  main_contractor: string | null;
  main_contractor_evidence: NameEvidence | null;
  main_contractor_company_number: string | null;
}

/**
 * A commencement notice as the lead build reads it: the facts a lead takes from it, its builder's
 * name replaced by whether it names one and what may be published of it (`linkedNotice`).
 */
export type LinkedNotice = NoticeFacts &
  Pick<CommencementRow, 'cn_number' | 'submitted_date' | 'proposed_end_date' | 'ccc_units_completed'> & {
    has_builder: boolean;
    contractor: ContractorFacts;
  };

/** Authority and name look-ups for the lead build, cached: spellings and names repeat across many rows. */
export type LeadResolvers = ReturnType<typeof leadResolvers>;

/** Per-build caches: authority spellings and company matches repeat across many rows. */
export function leadResolvers(companies: CompanyIndex) {
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

/** A planning row as the lead build reads it: its applicant decided on evidence, the name dropped. */
export function leadSource(p: PlanningRow, resolvers: LeadResolvers): LeadSource {
  const { applicant_name: _name, applicant_person: _person, line: _line, ...facts } = p;
  return { ...facts, ...applicantFacts(p, resolvers) };
}

/** A notice as the lead build reads it: its builder decided on evidence, the name dropped. */
export function linkedNotice(n: CommencementRow, resolvers: LeadResolvers): LinkedNotice {
  return {
    cn_number: n.cn_number,
    commencement_date: n.commencement_date,
    submitted_date: n.submitted_date,
    proposed_end_date: n.proposed_end_date,
    ccc_date: n.ccc_date,
    ccc_number: n.ccc_number,
    ccc_units_completed: n.ccc_units_completed,
    not_commenced: n.not_commenced,
    has_builder: Boolean(n.builder_name),
    contractor: contractorFacts(n.builder_name ? n : null, resolvers),
  };
}

/** The date a notice is ordered by when picking the latest builder. */
function noticeTime(n: LinkedNotice): string {
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
  const resolvers = leadResolvers(companies);
  const { authority } = resolvers;

  // One row per lead key (the later row wins), then index rows by application number.
  const rows: PlanningRow[] = [];
  const facts: (AuthorityFacts | null)[] = [];
  const keys: string[] = [];
  const byKey = new Map<string, number>();
  for (const p of planning) {
    const f = authority(p.authority);
    const key = leadKeyOf(f, p.authority, p.application_number);
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
    const notices = (noticesOf[i] ?? []).map((n) => linkedNotice(n, resolvers));
    leads[i] = toLead(leadSource(rows[i]!, resolvers), facts[i]!, keys[i]!, notices, asOf);
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

/** One published lead from its planning application, authority facts and linked notices. */
export function toLead(
  p: LeadSource,
  f: AuthorityFacts | null,
  key: string,
  notices: LinkedNotice[],
  asOf: string,
): LeadDraft {
  const county = f ? f.county : 'Unknown';
  const c = classifyApplication(p);
  const value = estimateValue({
    useClass: c.use_class,
    floorAreaM2: p.floor_area_m2,
    units: p.num_units,
    county,
    description: p.description,
  });
  const readiness = deriveReadiness(p, notices, asOf);
  const phases = mergePhases(notices);
  return {
    ...planningFields(p, f, key, county),
    lead_readiness: readiness,
    readiness_since: readinessSince(readiness, p, notices),
    status: STATUS_OF[readiness],
    ...classificationFields(p, c, value),
    has_contact: p.has_contact,
    applicant_type: p.applicant_type,
    land_use_code: p.land_use_code,
    further_info_requested: p.fi_request_date !== null,
    appeal_ref: p.appeal_ref,
    appeal_status: p.appeal_status,
    appeal_decision: p.appeal_decision,
    appeal_decision_date: p.appeal_decision_date,
    commencement_notice: phases.first ? phases.first.cn_number : null,
    commencement_date: phases.commencement,
    proposed_end_date: phases.proposedEnd,
    completion_date: phases.completion,
    units_completed: phases.unitsCompleted,
    applicant_org: p.applicant_org,
    applicant_org_evidence: p.applicant_org_evidence,
    applicant_company_number: p.applicant_company_number,
    applicant_match_confidence: p.applicant_match_confidence,
    ...(phases.builder ? phases.builder.contractor : NO_CONTRACTOR),
    public_url: p.public_url,
    ...UNTRACKED,
  };
}

/** The lead's identity and the planning application's own facts, up to its normalised decision. */
function planningFields(p: LeadSource, f: AuthorityFacts | null, key: string, county: string) {
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
  };
}

/** Verticals, use class, scale, size and estimated value. */
function classificationFields(
  p: LeadSource,
  c: ReturnType<typeof classifyApplication>,
  value: ReturnType<typeof estimateValue>,
) {
  return {
    verticals: c.verticals,
    explicit_verticals: c.explicit_verticals,
    vertical_evidence: c.vertical_evidence,
    use_class: c.use_class,
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
  };
}

/**
 * The applicant: its type, and the organisation's name, evidence and company match. A name is
 * published only with evidence that it is an organisation's (name-evidence.ts).
 */
function applicantFacts(p: PlanningRow, { match, evidence }: LeadResolvers): ApplicantFacts {
  const applicantEvidence = p.applicant_person ? null : evidence(p.applicant_name);
  const applicantOrg = applicantEvidence ? p.applicant_name : null;
  const type: LeadDraft['applicant_type'] = applicantOrg
    ? 'organisation'
    : p.applicant_person || p.applicant_name !== null
      ? 'individual'
      : 'unknown';
  const applicant = match(applicantOrg);
  return {
    applicant_type: type,
    applicant_org: applicantOrg,
    applicant_org_evidence: applicantEvidence,
    applicant_company_number: applicant ? applicant.company_number : null,
    applicant_match_confidence: applicant ? applicant.confidence : null,
  };
}

/** A lead's phased notices merged: the first notice, earliest commencement, latest end and completion, summed units, the latest builder. */
interface Phases {
  first: LinkedNotice | null;
  commencement: string | null;
  proposedEnd: string | null;
  completion: string | null;
  unitsCompleted: number | null;
  builder: LinkedNotice | null;
}

/** Merge a lead's phased notices (any order: the result does not depend on it). */
function mergePhases(notices: LinkedNotice[]): Phases {
  const m: Phases = {
    first: null,
    commencement: null,
    proposedEnd: null,
    completion: null,
    unitsCompleted: null,
    builder: null,
  };
  for (const n of notices) {
    if (isEarlierNotice(n, m.first)) m.first = n;
    m.commencement = earliest(m.commencement, n.commencement_date);
    m.proposedEnd = latest(m.proposedEnd, n.proposed_end_date);
    m.completion = latest(m.completion, n.ccc_date);
    if (n.ccc_units_completed !== null) m.unitsCompleted = (m.unitsCompleted ?? 0) + n.ccc_units_completed;
    if (n.has_builder && isLaterBuilder(n, m.builder)) m.builder = n;
  }
  return m;
}

/** Whether `n` commenced before `first` (a dated notice before an undated one; ties: the lower notice number). */
function isEarlierNotice(n: LinkedNotice, first: LinkedNotice | null): boolean {
  return (
    first === null ||
    (n.commencement_date !== null &&
      (first.commencement_date === null || n.commencement_date < first.commencement_date)) ||
    (n.commencement_date === first.commencement_date && n.cn_number < first.cn_number)
  );
}

/** Whether `n` is a later notice than `builder`'s (by notice time, then notice number). */
function isLaterBuilder(n: LinkedNotice, builder: LinkedNotice | null): boolean {
  if (builder === null) return true;
  const t = noticeTime(n);
  const bt = noticeTime(builder);
  return t > bt || (t === bt && n.cn_number > builder.cn_number);
}

/** The earlier of two dates; an empty or null date is ignored. */
function earliest(cur: string | null, d: string | null): string | null {
  return d && (cur === null || d < cur) ? d : cur;
}

/** The later of two dates; an empty or null date is ignored. */
function latest(cur: string | null, d: string | null): string | null {
  return d && (cur === null || d > cur) ? d : cur;
}

const NO_CONTRACTOR: ContractorFacts = Object.freeze({
  main_contractor: null,
  main_contractor_evidence: null,
  main_contractor_company_number: null,
});

/**
 * The main contractor a notice's builder would be: published only with evidence that it is an
 * organisation (an individual: null). The notice's own CRO number is the builder's declaration,
 * preferred to a name match.
 */
function contractorFacts(builder: CommencementRow | null, { match, evidence }: LeadResolvers): ContractorFacts {
  const declared = builder?.builder_company_number?.replace(/\D/g, '') || null;
  const contractorEvidence = builder ? evidence(builder.builder_name, declared) : null;
  const contractor = contractorEvidence ? builder!.builder_name : null;
  if (contractor === null) return NO_CONTRACTOR;
  return {
    main_contractor: contractor,
    main_contractor_evidence: contractorEvidence,
    main_contractor_company_number: declared ?? match(contractor)?.company_number ?? null,
  };
}
