/**
 * Merge infrastructure fragments (one per row of the consenting-case, auction, grid-connection
 * and data-centre files) into published projects. Fragments with the same `project_key` are one
 * project; each field comes from the file that knows it best (precedence below, documented in
 * docs/infrastructure.md). Pure and deterministic: the result does not depend on the order of
 * the fragments.
 */
import type { InfraFragment, InfraProject, InfraVertical, IsoDate } from '../types.ts';
import { inferTechnology } from '../sources/infrastructure.ts';
import { nameEvidence } from './name-evidence.ts';
import type { CompanyIndex } from './company-match.ts';

export type InfraDraft = Omit<InfraProject, 'id' | 'first_seen' | 'last_changed' | 'content_hash'>;

type Kind = InfraFragment['kind'];

/** Renewable verticals eligible for the RED III acceleration ("EU fast lane"). */
export const FAST_LANE_VERTICALS: readonly InfraVertical[] = ['wind', 'solar', 'battery_storage'];
/** Consenting cases lodged on or after this date fall under the RED III acceleration rules. */
export const FAST_LANE_FROM: IsoDate = '2025-01-01';

const ORDER_CAPACITY: readonly Kind[] = ['auction', 'grid_connection', 'data_centre', 'abp_case'];
const ORDER_LOCATION: readonly Kind[] = ['grid_connection', 'data_centre', 'abp_case', 'auction'];
const ORDER_APPLICANT: readonly Kind[] = ['auction', 'data_centre'];
const ORDER_VOLTAGE: readonly Kind[] = ['grid_connection', 'data_centre'];
const ORDER_TECHNOLOGY: readonly Kind[] = ['auction', 'abp_case', 'grid_connection', 'data_centre'];
const ORDER_NAME_TIE: readonly Kind[] = ['abp_case', 'auction', 'grid_connection', 'data_centre'];

function byFileLine(a: InfraFragment, b: InfraFragment): number {
  if (a.file !== b.file) return a.file < b.file ? -1 : 1;
  return a.line - b.line;
}

/** First value (in kind precedence, then file and line) for which `get` is not null. */
function first<T>(
  byKind: Map<Kind, InfraFragment[]>,
  order: readonly Kind[],
  get: (f: InfraFragment) => T | null,
): { value: T; from: InfraFragment } | null {
  for (const k of order) {
    for (const f of byKind.get(k) ?? []) {
      const v = get(f);
      if (v !== null) return { value: v, from: f };
    }
  }
  return null;
}

/**
 * Decision text of a consenting case → `grant` (Grant, Approve…), `refuse`, `undecided` (empty,
 * Undecided, Pending…) or `other` (Withdrawn, Invalid, Split…: neither consented nor pending).
 */
export function decisionOutcome(decision: string | null): 'grant' | 'refuse' | 'undecided' | 'other' {
  const d = (decision ?? '').trim().toLowerCase();
  if (d === '' || /^(undecided|pending|in progress|awaiting|not yet|open|live)/.test(d)) return 'undecided';
  if (/^(grant|approv|permission granted)/.test(d)) return 'grant';
  if (/^(refus|reject)/.test(d)) return 'refuse';
  return 'other';
}

/** Most frequent original spelling; ties go to the spelling seen in the highest-ranked file. */
function pickName(fragments: InfraFragment[]): string {
  const stats = new Map<string, { n: number; rank: number }>();
  for (const f of fragments) {
    const s = stats.get(f.name) ?? { n: 0, rank: Infinity };
    s.n++;
    s.rank = Math.min(s.rank, ORDER_NAME_TIE.indexOf(f.kind));
    stats.set(f.name, s);
  }
  return [...stats].sort(([a, x], [b, y]) => y.n - x.n || x.rank - y.rank || (a < b ? -1 : a > b ? 1 : 0))[0]![0];
}

function roundNumber(s: string): number {
  const m = /(\d+)\s*$/.exec(s);
  return m ? Number(m[1]) : -1;
}

/** The latest date a fragment set mentions as past: case lodging / decision, scheme lodging. */
function dataDate(fragments: InfraFragment[]): IsoDate | null {
  let max: IsoDate | null = null;
  for (const f of fragments) {
    for (const d of [f.lodged_date, f.decision_date]) if (d !== null && (max === null || d > max)) max = d;
  }
  return max;
}

/** One project draft from its fragments (sorted by file, line and kind). */
function mergeOne(
  key: string,
  vertical: InfraVertical,
  fragments: InfraFragment[],
  companies: CompanyIndex,
  asOf: IsoDate | null,
): InfraDraft {
  const byKind = groupByKind(fragments);
  const abp = byKind.get('abp_case') ?? [];
  const grid = byKind.get('grid_connection') ?? [];
  const dcs = byKind.get('data_centre') ?? [];
  const auctions = auctionsLatestFirst(byKind);
  const primary = primaryCase(abp);
  const location = first(byKind, ORDER_LOCATION, (f) => (f.lat !== null && f.lon !== null ? [f.lat, f.lon] : null));
  const connectionDates = grid
    .map((f) => f.connection_date)
    .filter((d): d is string => d !== null)
    .sort();
  const dcRef = dcs.find((f) => f.case_id !== null) ?? null;
  return {
    project_key: key,
    name: pickName(fragments),
    vertical,
    technology: first(byKind, ORDER_TECHNOLOGY, (f) => f.technology)?.value ?? inferTechnology(vertical, null)!,
    ...applicantFields(byKind, companies),
    capacity_mw: mergedCapacity(byKind),
    connection_voltage_kv: first(byKind, ORDER_VOLTAGE, (f) => f.connection_voltage_kv)?.value ?? null,
    county: first(byKind, ORDER_LOCATION, (f) => f.county)?.value ?? null,
    planning_authority: first(byKind, ORDER_LOCATION, (f) => f.authority)?.value ?? null,
    lat: location?.value[0] ?? null,
    lon: location?.value[1] ?? null,
    status: projectStatus(abp, dcs, connectionDates, asOf),
    consenting_route: consentingRoute(abp, dcRef),
    case_id: primary?.case_id ?? dcRef?.case_id ?? null,
    lodged_date: primary?.lodged_date ?? dcs.find((f) => f.lodged_date !== null)?.lodged_date ?? null,
    decision: primary?.decision ?? null,
    decision_date: primary?.decision_date ?? null,
    connection_date: connectionDates[0] ?? null,
    auction_round: auctions[0]?.auction_round ?? null,
    auction_winner: auctions.length > 0,
    eu_fast_lane: isFastLane(vertical, abp),
    regulator_connection_rule: dcs.some((f) => f.cru_connection_policy === true),
    sources: [...byKind.keys()].sort(),
    description: primary?.description ?? null,
    public_url: primary?.public_url ?? dcRef?.public_url ?? null,
  };
}

/** Fragments by kind, each list in the fragments' order. */
function groupByKind(fragments: InfraFragment[]): Map<Kind, InfraFragment[]> {
  const byKind = new Map<Kind, InfraFragment[]>();
  for (const f of fragments) {
    const list = byKind.get(f.kind);
    if (list) list.push(f);
    else byKind.set(f.kind, [f]);
  }
  return byKind;
}

/** Auction rows, latest round first (a project re-bid in a later round); also reorders them in `byKind`. */
function auctionsLatestFirst(byKind: Map<Kind, InfraFragment[]>): InfraFragment[] {
  const auctions = [...(byKind.get('auction') ?? [])].sort(
    (a, b) => roundNumber(b.auction_round ?? '') - roundNumber(a.auction_round ?? '') || byFileLine(a, b),
  );
  if (auctions.length) byKind.set('auction', auctions);
  return auctions;
}

/** The primary consenting case: the latest lodged (then the latest line). */
function primaryCase(abp: InfraFragment[]): InfraFragment | null {
  return (
    [...abp].sort((a, b) => (b.lodged_date ?? '').localeCompare(a.lodged_date ?? '') || byFileLine(b, a))[0] ?? null
  );
}

/** Capacity of the first kind (in precedence) that states one; grid rows of one project are its connected phases and add up. */
function mergedCapacity(byKind: Map<Kind, InfraFragment[]>): number | null {
  for (const k of ORDER_CAPACITY) {
    const list = (byKind.get(k) ?? []).filter((f) => f.capacity_mw !== null);
    if (list.length === 0) continue;
    return k === 'grid_connection'
      ? Math.round(list.reduce((s, f) => s + f.capacity_mw!, 0) * 1000) / 1000
      : list[0]!.capacity_mw;
  }
  return null;
}

/** The first applicant with evidence that it is an organisation (name-evidence.ts; none: null), its evidence and company number. */
function applicantFields(byKind: Map<Kind, InfraFragment[]>, companies: CompanyIndex) {
  const applicant =
    first(byKind, ORDER_APPLICANT, (f) => (nameEvidence(f.applicant, companies) ? f.applicant : null))?.value ?? null;
  return {
    applicant,
    applicant_evidence: nameEvidence(applicant, companies),
    applicant_company_number: applicant === null ? null : (companies.match(applicant)?.company_number ?? null),
  };
}

/**
 * Operational (a grid connection made by `asOf`, or a data centre says so), else consented, in
 * planning or refused by the cases' outcomes and the data-centre statuses; else proposed.
 */
function projectStatus(
  abp: InfraFragment[],
  dcs: InfraFragment[],
  connectionDates: string[],
  asOf: IsoDate | null,
): InfraDraft['status'] {
  const outcomes = abp.map((f) => decisionOutcome(f.decision));
  const dcStatus = dcs.map((f) => (f.status ?? '').toLowerCase());
  if (connectionDates.some((d) => asOf === null || d <= asOf) || dcStatus.includes('operational')) return 'operational';
  if (outcomes.includes('grant') || dcStatus.some((s) => s === 'planning granted' || s === 'under construction'))
    return 'consented';
  if (outcomes.includes('undecided') || dcStatus.includes('in planning')) return 'in_planning';
  if (outcomes.includes('refuse')) return 'refused';
  return 'proposed';
}

/** Strategic infrastructure or appeal by the cases' categories; local authority when a data centre names a case. */
function consentingRoute(abp: InfraFragment[], dcRef: InfraFragment | null): InfraDraft['consenting_route'] {
  const categories = abp.map((f) => (f.category ?? '').toLowerCase());
  if (categories.some((c) => c.includes('strategic infrastructure') || c.includes('section 182')))
    return 'strategic_infrastructure';
  if (categories.some((c) => c.includes('appeal'))) return 'appeal';
  if (dcRef) return 'local_authority';
  return 'unknown';
}

/** A renewable project with a consenting case lodged on or after FAST_LANE_FROM (RED III). */
function isFastLane(vertical: InfraVertical, abp: InfraFragment[]): boolean {
  return (
    FAST_LANE_VERTICALS.includes(vertical) && abp.some((f) => f.lodged_date !== null && f.lodged_date >= FAST_LANE_FROM)
  );
}

/**
 * Merge fragments into project drafts (registry fields `id`, `first_seen`, `last_changed`,
 * `content_hash` are added later), sorted by project_key. Fragments without a vertical (a
 * consenting case that is not energy, data-centre or grid infrastructure) are left out.
 *
 * `asOf` is the date of the data: a grid connection dated after it is not yet operational.
 * When omitted it is the latest lodging or decision date among the fragments (dates that can
 * only lie in the past); with none, every listed connection counts as made.
 */
export function mergeInfrastructure(fragments: InfraFragment[], companies: CompanyIndex, asOf?: IsoDate): InfraDraft[] {
  const today = asOf ?? dataDate(fragments);
  const groups = new Map<string, { vertical: InfraVertical; list: InfraFragment[] }>();
  for (const f of fragments) {
    if (f.vertical === null) continue;
    const g = groups.get(f.project_key);
    if (g) g.list.push(f);
    else groups.set(f.project_key, { vertical: f.vertical, list: [f] });
  }
  const keys = [...groups.keys()].sort();
  return keys.map((k) => {
    const g = groups.get(k)!;
    g.list.sort((a, b) => byFileLine(a, b) || (a.kind < b.kind ? -1 : a.kind > b.kind ? 1 : 0));
    return mergeOne(k, g.vertical, g.list, companies, today);
  });
}
