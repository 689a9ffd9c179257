import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { addDays } from '../../../pipeline/lib/dates.ts';
import {
  deriveReadiness,
  normaliseDecision,
  READINESS_VALUES,
  readinessSince,
  STATUS_OF,
  TRANSITIONS,
} from '../../../pipeline/normalise/readiness.ts';
import type { CommencementRow, PlanningRow, Readiness } from '../../../pipeline/types.ts';

const AS_OF = '2026-03-01';
const daysAgo = (n: number): string => addDays(AS_OF, -n);

function planning(o: Partial<PlanningRow> = {}): PlanningRow {
  return {
    authority: 'Cork County',
    application_number: '24/12345',
    description: 'Extension to dwelling',
    address: null,
    eircode_routing_key: null,
    lat: null,
    lon: null,
    application_status: null,
    application_type: 'Permission',
    decision: null,
    land_use_code: null,
    site_area_ha: null,
    num_units: null,
    floor_area_m2: null,
    one_off_house: false,
    received_date: '2024-05-01',
    withdrawn_date: null,
    decision_date: null,
    decision_due_date: null,
    grant_date: null,
    expiry_date: null,
    appeal_ref: null,
    appeal_status: null,
    appeal_decision: null,
    appeal_decision_date: null,
    appeal_submitted_date: null,
    fi_request_date: null,
    fi_received_date: null,
    public_url: null,
    etl_date: null,
    site_id: null,
    applicant_person: true,
    applicant_name: null,
    has_contact: false,
    line: 2,
    ...o,
  };
}

function notice(o: Partial<CommencementRow> = {}): CommencementRow {
  return {
    cn_number: 'CN0001',
    permission_number: '24/12345',
    authority: 'Cork County',
    project_name: null,
    description: null,
    project_type: null,
    activity_type: null,
    date_granted: null,
    submitted_date: null,
    commencement_date: null,
    proposed_end_date: null,
    units_for_phase: null,
    phase: null,
    total_units: null,
    town: null,
    eircode_routing_key: null,
    county: null,
    lat: null,
    lon: null,
    validation_status: null,
    not_commenced: false,
    opt_out: false,
    builder_name: null,
    builder_company_number: null,
    ccc_number: null,
    ccc_date: null,
    ccc_type: null,
    ccc_units_completed: null,
    line: 2,
    ...o,
  };
}

const GRANTED = {
  decision: 'GRANT PERMISSION',
  decision_date: '2024-09-01',
  grant_date: '2024-10-10',
  expiry_date: '2029-10-09',
};

const DECISION_CASES: [string | null, string | null, ReturnType<typeof normaliseDecision>][] = [
  ['GRANT PERMISSION', null, 'granted'],
  ['Grant Retention Permission', null, 'granted'],
  ['CONDITIONAL', null, 'granted'],
  ['UNCONDITIONAL', null, 'granted'],
  ['GRANT OUTLINE PERMISSION', 'DECISION MADE', 'granted'],
  ['REFUSE PERMISSION', null, 'refused'],
  ['Refusal', null, 'refused'],
  ['SPLIT DECISION', null, 'split'],
  ['GRANT PERMISSION & REFUSE PERMISSION', null, 'split'],
  ['INVALID APPLICATION', null, 'invalid'],
  ['INCOMPLETE APPLICATION', null, 'invalid'],
  [null, 'INCOMPLETED APPLICATION', 'invalid'],
  ['WITHDRAWN', null, null],
  ['DECLARED WITHDRAWN', 'WITHDRAWN', null],
  [null, 'NEW APPLICATION', null],
  [null, null, null],
  ['SOMETHING ELSE', null, null],
];
for (const [raw, status, expected] of DECISION_CASES) {
  test(`normaliseDecision(${raw}, ${status}) → ${expected}`, () => assert.is(normaliseDecision(raw, status), expected));
}

const READINESS_CASES: [string, PlanningRow, CommencementRow[], Readiness][] = [
  ['new application', planning(), [], 'application'],
  ['further information requested', planning({ fi_request_date: daysAgo(30) }), [], 'further_information'],
  [
    'FI received, still undecided',
    planning({ fi_request_date: daysAgo(60), fi_received_date: daysAgo(10) }),
    [],
    'further_information',
  ],
  ['FI then granted', planning({ fi_request_date: daysAgo(300), ...GRANTED }), [], 'granted'],
  ['granted', planning(GRANTED), [], 'granted'],
  ['split counts as granted', planning({ ...GRANTED, decision: 'SPLIT DECISION' }), [], 'granted'],
  ['refused', planning({ decision: 'REFUSE PERMISSION', decision_date: daysAgo(100) }), [], 'refused'],
  ['withdrawn date', planning({ withdrawn_date: daysAgo(5) }), [], 'withdrawn'],
  ['withdrawn decision text', planning({ decision: 'DECLARED WITHDRAWN' }), [], 'withdrawn'],
  ['withdrawn status', planning({ application_status: 'WITHDRAWN' }), [], 'withdrawn'],
  ['invalid application is closed as withdrawn', planning({ decision: 'INVALID APPLICATION' }), [], 'withdrawn'],
  [
    'appeal lodged, undecided',
    planning({ ...GRANTED, appeal_ref: 'ABP-318000-24', appeal_submitted_date: daysAgo(40) }),
    [],
    'appealed',
  ],
  [
    'appeal against refusal, undecided',
    planning({ decision: 'REFUSE PERMISSION', appeal_ref: 'ABP-1', appeal_status: 'APPEALED' }),
    [],
    'appealed',
  ],
  [
    'appeal refused overturns grant',
    planning({
      ...GRANTED,
      appeal_ref: 'ABP-1',
      appeal_decision: 'REFUSE PERMISSION',
      appeal_decision_date: daysAgo(10),
    }),
    [],
    'refused',
  ],
  [
    'appeal granted overturns refusal',
    planning({
      decision: 'REFUSE PERMISSION',
      appeal_ref: 'ABP-1',
      appeal_decision: 'GRANT PERMISSION',
      appeal_decision_date: daysAgo(10),
      expiry_date: addDays(AS_OF, 1800),
    }),
    [],
    'granted',
  ],
  [
    'appeal withdrawn: local grant stands',
    planning({ ...GRANTED, appeal_ref: 'ABP-1', appeal_status: 'WITHDRAWN' }),
    [],
    'granted',
  ],
  [
    'appeal dismissed: local refusal stands',
    planning({
      decision: 'REFUSE PERMISSION',
      appeal_ref: 'ABP-1',
      appeal_decision: 'DISMISSED',
      appeal_decision_date: daysAgo(3),
    }),
    [],
    'refused',
  ],
  ['withdrawn beats appealed', planning({ withdrawn_date: daysAgo(1), appeal_ref: 'ABP-1' }), [], 'withdrawn'],
  ['commenced today', planning(GRANTED), [notice({ commencement_date: AS_OF })], 'commencing'],
  ['commencement in the future', planning(GRANTED), [notice({ commencement_date: addDays(AS_OF, 30) })], 'commencing'],
  ['commenced exactly 90 days ago', planning(GRANTED), [notice({ commencement_date: daysAgo(90) })], 'commencing'],
  ['commenced 91 days ago', planning(GRANTED), [notice({ commencement_date: daysAgo(91) })], 'under_construction'],
  ['notice without a date', planning(GRANTED), [notice()], 'commencing'],
  [
    'earliest phase decides',
    planning(GRANTED),
    [notice({ commencement_date: daysAgo(10) }), notice({ cn_number: 'CN2', commencement_date: daysAgo(400) })],
    'under_construction',
  ],
  ['notice before the decision is recorded', planning(), [notice({ commencement_date: daysAgo(5) })], 'commencing'],
  [
    'completion certificate',
    planning(GRANTED),
    [notice({ commencement_date: daysAgo(400), ccc_number: 'CCC1', ccc_date: daysAgo(20) })],
    'completed',
  ],
  [
    'one of two phases certified',
    planning(GRANTED),
    [
      notice({ commencement_date: daysAgo(400), ccc_date: daysAgo(20) }),
      notice({ cn_number: 'CN2', commencement_date: daysAgo(200) }),
    ],
    'under_construction',
  ],
  [
    'not-commenced notice is ignored',
    planning(GRANTED),
    [notice({ not_commenced: true, commencement_date: daysAgo(5) })],
    'granted',
  ],
  ['expired: granted, past expiry, no notice', planning({ ...GRANTED, expiry_date: daysAgo(1) }), [], 'expired'],
  ['expiry today is not expired', planning({ ...GRANTED, expiry_date: AS_OF }), [], 'granted'],
  [
    'past expiry but a notice exists',
    planning({ ...GRANTED, expiry_date: daysAgo(100) }),
    [notice({ commencement_date: daysAgo(500) })],
    'under_construction',
  ],
  [
    'refused beats a notice',
    planning({ decision: 'REFUSE PERMISSION' }),
    [notice({ commencement_date: daysAgo(5) })],
    'refused',
  ],
];
for (const [name, p, notices, expected] of READINESS_CASES) {
  test(`deriveReadiness: ${name} → ${expected}`, () => assert.is(deriveReadiness(p, notices, AS_OF), expected));
}

test('every readiness value is reached by a case and has a status group', () => {
  const seen = new Set(READINESS_CASES.map(([, p, n]) => deriveReadiness(p, n, AS_OF)));
  assert.equal([...seen].sort(), [...READINESS_VALUES].sort());
  assert.equal(Object.keys(STATUS_OF).sort(), [...READINESS_VALUES].sort());
});

/** `readiness_since`: the date of the evidence for the stage each case reaches. */
const SINCE_CASES: [string, PlanningRow, CommencementRow[], Readiness, string | null][] = [
  ['received', planning(), [], 'application', '2024-05-01'],
  ['further information', planning({ fi_request_date: '2024-06-20' }), [], 'further_information', '2024-06-20'],
  ['grant date', planning(GRANTED), [], 'granted', '2024-10-10'],
  ['decision date when no grant date', planning({ ...GRANTED, grant_date: null }), [], 'granted', '2024-09-01'],
  ['refusal', planning({ decision: 'REFUSE PERMISSION', decision_date: '2024-08-02' }), [], 'refused', '2024-08-02'],
  [
    'appeal lodged',
    planning({ ...GRANTED, appeal_ref: 'ABP-1', appeal_submitted_date: '2024-11-01' }),
    [],
    'appealed',
    '2024-11-01',
  ],
  [
    'granted on appeal: the appeal decision',
    planning({
      decision: 'REFUSE PERMISSION',
      decision_date: '2024-08-02',
      appeal_ref: 'ABP-1',
      appeal_decision: 'GRANT PERMISSION',
      appeal_decision_date: '2025-01-15',
    }),
    [],
    'granted',
    '2025-01-15',
  ],
  ['expiry', planning({ ...GRANTED, expiry_date: daysAgo(3) }), [], 'expired', daysAgo(3)],
  [
    'earliest commencement',
    planning(GRANTED),
    [notice({ commencement_date: daysAgo(10) }), notice({ cn_number: 'CN0002', commencement_date: daysAgo(20) })],
    'commencing',
    daysAgo(20),
  ],
  ['undated commencement', planning(GRANTED), [notice()], 'commencing', null],
  [
    'the day past the window',
    planning(GRANTED),
    [notice({ commencement_date: daysAgo(200) })],
    'under_construction',
    addDays(daysAgo(200), 91),
  ],
  [
    'last completion certificate',
    planning(GRANTED),
    [
      notice({ commencement_date: daysAgo(400), ccc_date: daysAgo(30) }),
      notice({ cn_number: 'CN0002', commencement_date: daysAgo(300), ccc_date: daysAgo(9) }),
    ],
    'completed',
    daysAgo(9),
  ],
  ['withdrawn', planning({ withdrawn_date: '2024-07-07' }), [], 'withdrawn', '2024-07-07'],
];
for (const [name, p, notices, stage, since] of SINCE_CASES) {
  test(`readinessSince: ${name} → ${stage} since ${since}`, () => {
    assert.is(deriveReadiness(p, notices, AS_OF), stage);
    assert.is(readinessSince(stage, p, notices), since);
  });
}

test('under_construction since: the first release date on which the rules say so', () => {
  const p = planning(GRANTED);
  const notices = [notice({ commencement_date: daysAgo(150) })];
  const since = readinessSince('under_construction', p, notices)!;
  assert.is(deriveReadiness(p, notices, since), 'under_construction');
  assert.is(deriveReadiness(p, notices, addDays(since, -1)), 'commencing');
});

test('STATUS_OF groups', () => {
  const groups: Record<string, Readiness[]> = {};
  for (const r of READINESS_VALUES) (groups[STATUS_OF[r]] ??= []).push(r);
  assert.equal(groups, {
    planning: ['application', 'further_information', 'appealed'],
    approved: ['granted'],
    active: ['commencing', 'under_construction'],
    closed: ['completed', 'refused', 'withdrawn', 'expired'],
  });
});

test('TRANSITIONS reach every value from the start, and docs list them', () => {
  const reached = new Set<Readiness | null>([null]);
  let grew = true;
  while (grew) {
    grew = false;
    for (const t of TRANSITIONS)
      if (reached.has(t.from) && !reached.has(t.to)) {
        reached.add(t.to);
        grew = true;
      }
  }
  for (const r of READINESS_VALUES) assert.ok(reached.has(r), r);
  const doc = readFileSync(new URL('../../../docs/data-model.md', import.meta.url), 'utf8');
  for (const t of TRANSITIONS) assert.ok(doc.includes(t.trigger), `docs miss trigger "${t.trigger}"`);
});

test.run();
