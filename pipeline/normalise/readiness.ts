/**
 * The lead lifecycle: where a planning application stands today (`lead_readiness`), derived from
 * its planning record and its linked commencement notices, and the coarse `status` group the API
 * filters on. The lifecycle is documented by `TRANSITIONS` (and in docs/data-model.md). Pure.
 */
import { addDays } from '../lib/dates.ts';
import type { CommencementRow, Lead, PlanningRow, Readiness } from '../types.ts';

export { READINESS_VALUES, STATUS_OF } from '../../common/lead-lifecycle.ts';

/** Days after its commencement date during which a project is `commencing`, not `under_construction`. */
export const COMMENCING_WINDOW_DAYS = 90;

/** The documented lifecycle: which event moves a lead from one readiness to another. */
export const TRANSITIONS: readonly { from: Readiness | null; to: Readiness; trigger: string }[] = [
  { from: null, to: 'application', trigger: 'application received by the planning authority' },
  {
    from: 'application',
    to: 'further_information',
    trigger: 'authority requests further information (FIRequestDate set, no decision yet)',
  },
  { from: 'application', to: 'granted', trigger: 'decision to grant (GRANT…, CONDITIONAL…, or a split decision)' },
  { from: 'further_information', to: 'granted', trigger: 'decision to grant after further information' },
  { from: 'application', to: 'refused', trigger: 'decision to refuse' },
  { from: 'further_information', to: 'refused', trigger: 'decision to refuse after further information' },
  {
    from: 'application',
    to: 'withdrawn',
    trigger: 'withdrawn by the applicant (WithdrawnDate or decision/status WITHDRAWN), or declared invalid/incomplete',
  },
  {
    from: 'further_information',
    to: 'withdrawn',
    trigger: 'withdrawn, or further information not supplied in time (declared withdrawn)',
  },
  { from: 'granted', to: 'appealed', trigger: 'third-party appeal lodged against the grant, not yet decided' },
  { from: 'refused', to: 'appealed', trigger: 'first-party appeal lodged against the refusal, not yet decided' },
  {
    from: 'appealed',
    to: 'granted',
    trigger: 'appeal decided to grant, or appeal withdrawn/dismissed/invalid over a local grant',
  },
  {
    from: 'appealed',
    to: 'refused',
    trigger: 'appeal decided to refuse, or appeal withdrawn/dismissed/invalid over a local refusal',
  },
  { from: 'appealed', to: 'withdrawn', trigger: 'application withdrawn while under appeal' },
  {
    from: 'granted',
    to: 'commencing',
    trigger: 'commencement notice linked, commencement date within the last 90 days or in the future',
  },
  {
    from: 'application',
    to: 'commencing',
    trigger: 'commencement notice linked before the planning record shows a decision',
  },
  {
    from: 'granted',
    to: 'under_construction',
    trigger: 'commencement notice whose commencement date is more than 90 days before the release date',
  },
  { from: 'commencing', to: 'under_construction', trigger: '90 days pass after the earliest commencement date' },
  { from: 'commencing', to: 'completed', trigger: 'completion certificate (CCC) on every commenced notice' },
  { from: 'under_construction', to: 'completed', trigger: 'completion certificate (CCC) on every commenced notice' },
  { from: 'granted', to: 'expired', trigger: 'permission expiry date passed with no commencement notice' },
  { from: 'expired', to: 'commencing', trigger: 'a commencement notice links after all (notices override expiry)' },
];

const WITHDRAWN = /WITHDRAW/i;
const SPLIT = /SPLIT|PART(?:LY|IAL)? (?:GRANT|REFUS)|GRANT.*REFUS|REFUS.*GRANT/i;
const INVALID = /INVALID|INCOMPLETE/i;
const REFUSED = /REFUS/i;
const GRANTED = /GRANT|CONDITION|APPROV|PERMITTED/i;
const APPEAL_CLOSED = /DECIDED|DETERMINED|CLOSED|WITHDRAW|DISMISS|INVALID|CONCLUDED|COMPLETE|DISPOSED|FINALISED/i;

/**
 * Normalise a raw planning decision: 'granted' (GRANT…, CONDITIONAL…, UNCONDITIONAL), 'refused'
 * (REFUSE…), 'split' (SPLIT…, or both grant and refuse), 'invalid' (INVALID / INCOMPLETE, also when
 * only the application status says so), null when undecided, withdrawn or unrecognised.
 */
export function normaliseDecision(raw: string | null, status: string | null): Lead['decision'] {
  if (raw) {
    if (WITHDRAWN.test(raw)) return null;
    if (SPLIT.test(raw)) return 'split';
    if (INVALID.test(raw)) return 'invalid';
    if (REFUSED.test(raw)) return 'refused';
    if (GRANTED.test(raw)) return 'granted';
    return null;
  }
  if (status && INVALID.test(status) && !WITHDRAWN.test(status)) return 'invalid';
  return null;
}

let lastAsOf = '';
let lastWindowStart = '';
/** asOf − 90 days, remembered for the last asOf (one release date per run, 200,000 calls). */
function windowStart(asOf: string): string {
  if (asOf !== lastAsOf) {
    lastWindowStart = addDays(asOf, -COMMENCING_WINDOW_DAYS);
    lastAsOf = asOf;
  }
  return lastWindowStart;
}

/** The planning fields the lifecycle rules read. */
export type ReadinessInput = Pick<
  PlanningRow,
  | 'decision'
  | 'application_status'
  | 'withdrawn_date'
  | 'expiry_date'
  | 'fi_request_date'
  | 'received_date'
  | 'grant_date'
  | 'decision_date'
  | 'appeal_ref'
  | 'appeal_status'
  | 'appeal_decision'
  | 'appeal_decision_date'
  | 'appeal_submitted_date'
>;

/** The notice fields the lifecycle rules read. */
export type NoticeFacts = Pick<CommencementRow, 'not_commenced' | 'ccc_date' | 'ccc_number' | 'commencement_date'>;

/** 'pending' while an appeal is lodged and undecided; its outcome when decided; null when none counts. */
function appealOutcome(p: ReadinessInput): 'pending' | 'granted' | 'refused' | 'split' | null {
  if (!p.appeal_ref && !p.appeal_submitted_date && !p.appeal_status && !p.appeal_decision) return null;
  const d = normaliseDecision(p.appeal_decision, null);
  if (d === 'granted' || d === 'refused' || d === 'split') return d;
  if (p.appeal_decision || p.appeal_decision_date) return null; // decided otherwise: local decision stands
  if (p.appeal_status && APPEAL_CLOSED.test(p.appeal_status)) return null;
  return 'pending';
}

/**
 * Where an application stands on `asOf` (the release date). First rule that holds wins:
 * 1. withdrawn — withdrawn date, a WITHDRAWN decision/status, or an invalid application;
 * 2. appealed — an appeal is lodged and undecided;
 * 3. refused — the decision (the appeal's, when decided) is a refusal;
 * 4. completed — every commenced linked notice has a completion certificate;
 * 5. under_construction — earliest commencement date more than 90 days before asOf;
 * 6. commencing — a commenced notice dated within 90 days before asOf, in the future, or undated;
 * 7. expired — granted, expiry date before asOf, no linked notice at all;
 * 8. granted — granted (or split);
 * 9. further_information — further information requested and no decision yet;
 * 10. application.
 * Notices flagged `not_commenced` link to the lead but are not evidence of works on site.
 */
export function deriveReadiness(p: ReadinessInput, notices: readonly NoticeFacts[], asOf: string): Readiness {
  const decision = normaliseDecision(p.decision, p.application_status);
  if (
    p.withdrawn_date ||
    (p.decision && WITHDRAWN.test(p.decision)) ||
    (p.application_status && WITHDRAWN.test(p.application_status)) ||
    decision === 'invalid'
  ) {
    return 'withdrawn';
  }
  const appeal = appealOutcome(p);
  if (appeal === 'pending') return 'appealed';
  const final = appeal ?? decision;
  if (final === 'refused') return 'refused';

  let commenced = 0;
  let certified = 0;
  let earliest: string | null = null;
  for (const n of notices) {
    if (n.not_commenced) continue;
    commenced++;
    if (n.ccc_date || n.ccc_number) certified++;
    if (n.commencement_date && (earliest === null || n.commencement_date < earliest)) earliest = n.commencement_date;
  }
  if (commenced > 0) {
    if (certified === commenced) return 'completed';
    if (earliest !== null && earliest < windowStart(asOf)) return 'under_construction';
    return 'commencing';
  }
  const granted = final === 'granted' || final === 'split';
  if (granted && p.expiry_date && p.expiry_date < asOf && notices.length === 0) return 'expired';
  if (granted) return 'granted';
  if (p.fi_request_date && final === null) return 'further_information';
  return 'application';
}

/**
 * The date a lead entered its `readiness` (`readiness_since`), from the same evidence
 * `deriveReadiness` read; null when the source gives no date for it:
 * application → received; further_information → further information requested; appealed →
 * appeal lodged; granted / refused → the decision that stands (the appeal's when decided, else
 * grant or decision date); expired → permission expiry; commencing → earliest commencement;
 * under_construction → the first day past the 90-day window after it (rule 5); completed → the last
 * completion certificate; withdrawn → the withdrawn date, else the decision date.
 */
export function readinessSince(
  readiness: Readiness,
  p: ReadinessInput,
  notices: readonly NoticeFacts[],
): string | null {
  const commenced = notices.filter((n) => !n.not_commenced);
  const earliest = (dates: (string | null)[]): string | null =>
    dates.reduce<string | null>((a, d) => (d !== null && (a === null || d < a) ? d : a), null);
  const latest = (dates: (string | null)[]): string | null =>
    dates.reduce<string | null>((a, d) => (d !== null && (a === null || d > a) ? d : a), null);
  const appeal = appealOutcome(p);
  const appealDecided = appeal !== null && appeal !== 'pending';
  switch (readiness) {
    case 'application':
      return p.received_date;
    case 'further_information':
      return p.fi_request_date;
    case 'appealed':
      return p.appeal_submitted_date;
    case 'granted':
      return appealDecided ? p.appeal_decision_date : (p.grant_date ?? p.decision_date);
    case 'refused':
      return appealDecided ? p.appeal_decision_date : p.decision_date;
    case 'expired':
      return p.expiry_date;
    case 'commencing':
      return earliest(commenced.map((n) => n.commencement_date));
    case 'under_construction': {
      const start = earliest(commenced.map((n) => n.commencement_date));
      return start === null ? null : addDays(start, COMMENCING_WINDOW_DAYS + 1);
    }
    case 'completed':
      return latest(commenced.map((n) => n.ccc_date));
    case 'withdrawn':
      return p.withdrawn_date ?? p.decision_date;
  }
}
