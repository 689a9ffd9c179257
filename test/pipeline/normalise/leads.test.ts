import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { buildCompanyIndex } from '../../../pipeline/normalise/company-match.ts';
import { buildLeads, leadKey, type LeadDraft } from '../../../pipeline/normalise/leads.ts';
import { loadValidators } from '../../../pipeline/validate.ts';
import type { CommencementRow, CompanyRow, PlanningRow } from '../../../pipeline/types.ts';

const AS_OF = '2026-03-01';

function planning(o: Partial<PlanningRow> = {}): PlanningRow {
  return {
    authority: 'Cork County',
    application_number: '24/100',
    description: 'Construction of a new dwelling house and all associated site works',
    address: 'Ballyvolane, Co. Cork',
    eircode_routing_key: 'T23',
    lat: 51.9,
    lon: -8.4,
    application_status: 'DECISION MADE',
    application_type: 'Permission',
    decision: 'GRANT PERMISSION',
    land_use_code: null,
    site_area_ha: 0.4,
    num_units: 1,
    floor_area_m2: 210,
    one_off_house: true,
    received_date: '2024-05-01',
    withdrawn_date: null,
    decision_date: '2024-08-01',
    decision_due_date: '2024-07-30',
    grant_date: '2024-09-10',
    expiry_date: '2029-09-09',
    appeal_ref: null,
    appeal_status: null,
    appeal_decision: null,
    appeal_decision_date: null,
    appeal_submitted_date: null,
    fi_request_date: null,
    fi_received_date: null,
    public_url: 'https://planning.example/24-100',
    etl_date: '2026-02-20',
    site_id: null,
    applicant_person: true,
    applicant_name: null,
    has_contact: true,
    line: 2,
    ...o,
  };
}

function notice(o: Partial<CommencementRow> = {}): CommencementRow {
  return {
    cn_number: 'CN1',
    permission_number: '24/100',
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

function company(number: string, name: string, o: Partial<CompanyRow> = {}): CompanyRow {
  return {
    company_number: number,
    company_name: name,
    name_key: '',
    status: 'Normal',
    status_code: '1',
    company_type: 'LTD - Private Company Limited by Shares',
    reg_date: '2010-01-01',
    last_ar_date: null,
    last_accounts_date: null,
    dissolved_date: null,
    status_date: null,
    address: null,
    county: 'Cork',
    eircode_routing_key: null,
    nace_code: '4120',
    line: 2,
    ...o,
  };
}

const COMPANIES = buildCompanyIndex([
  company('111111', 'Murphy Builders Limited'),
  company('222222', 'Riverside Developments Limited'),
  company('333333', 'Kelly Construction Limited'),
]);

const LEAD_KEY_CASES: [string, string, string][] = [
  ['Cork County', '24/100', 'cork-county/24/100'],
  ['cork-county', '24/100', 'cork-county/24/100'],
  ['Dún Laoghaire-Rathdown', 'd23a/0456', 'dun-laoghaire-rathdown/D23A/0456'],
  ['Dun Laoghaire Rathdown County Council', ' D23A/0456 ', 'dun-laoghaire-rathdown/D23A/0456'],
  ['LIMERICK CITY AND COUNTY COUNCIL', '2360123', 'limerick/2360123'],
];
for (const [authority, number, expected] of LEAD_KEY_CASES) {
  test(`leadKey(${authority}, ${number})`, () => assert.is(leadKey(authority, number), expected));
}

test('buildLeads: one lead per application with every Lead field set', () => {
  const { leads } = buildLeads([planning()], [], COMPANIES, AS_OF);
  assert.is(leads.length, 1);
  const l = leads[0]!;
  const schema = JSON.parse(readFileSync(new URL('../../../schemas/lead.schema.json', import.meta.url), 'utf8')) as {
    properties: Record<string, unknown>;
  };
  assert.equal(Object.keys(l).sort(), Object.keys(schema.properties).sort());
  assert.equal(
    [l.id, l.first_seen, l.last_changed, l.content_hash],
    [0, '', '', ''],
    'the tracking fields are placeholders until the registry fills them in',
  );
  for (const [k, v] of Object.entries(l)) assert.ok(v !== undefined, `${k} is undefined`);
  assert.is(l.lead_key, 'cork-county/24/100');
  assert.is(l.planning_authority, 'Cork County');
  assert.is(l.county, 'Cork');
  assert.is(l.use_class, 'house');
  assert.is(l.decision, 'granted');
  assert.is(l.lead_readiness, 'granted');
  assert.is(l.status, 'approved');
  assert.is(l.est_value_basis, 'floor_area');
  assert.is(l.est_value, 529_000); // 210 m² × €2,400 × 1.05
  assert.is(l.scale, 'medium');
  // a new house implies the house set; "all associated site works" is boilerplate, not landscaping (docs/data-quality.md)
  assert.ok(
    l.verticals.includes('roofing') && l.verticals.includes('groundworks') && !l.verticals.includes('landscaping'),
  );
  assert.is(l.works_kind, 'new_works');
  assert.equal(l.explicit_verticals, []);
  assert.is(l.vertical_evidence.length, l.verticals.length);
  assert.ok(l.vertical_evidence.includes('roofing: implied by new house'), l.vertical_evidence.join(' | '));
  assert.is(l.further_info_requested, false);
  assert.is(l.has_contact, true);
  assert.is(l.commencement_notice, null);
  assert.is(l.main_contractor, null);
});

test('buildLeads: phases merge (earliest CN, earliest start, latest end and completion, summed units, latest builder)', () => {
  const p = planning({ num_units: 40, one_off_house: false, description: '40 houses', floor_area_m2: null });
  const notices = [
    notice({
      cn_number: 'CN3',
      commencement_date: '2025-06-01',
      proposed_end_date: '2026-12-01',
      builder_name: 'Kelly Construction Ltd',
      ccc_date: null,
      ccc_units_completed: null,
    }),
    notice({
      cn_number: 'CN1',
      commencement_date: '2024-11-01',
      proposed_end_date: '2025-10-01',
      builder_name: 'Murphy Builders Ltd',
      ccc_number: 'CCC1',
      ccc_date: '2025-09-20',
      ccc_units_completed: 12,
    }),
    notice({
      cn_number: 'CN2',
      commencement_date: '2025-01-15',
      proposed_end_date: '2025-12-01',
      builder_name: null,
      ccc_number: 'CCC2',
      ccc_date: '2025-11-30',
      ccc_units_completed: 10,
    }),
  ];
  const { leads, linkedNotices, unlinkedNotices } = buildLeads([p], notices, COMPANIES, AS_OF);
  const l = leads[0]!;
  assert.is(linkedNotices, 3);
  assert.is(unlinkedNotices, 0);
  assert.is(l.commencement_notice, 'CN1');
  assert.is(l.commencement_date, '2024-11-01');
  assert.is(l.proposed_end_date, '2026-12-01');
  assert.is(l.completion_date, '2025-11-30');
  assert.is(l.units_completed, 22);
  assert.is(l.main_contractor, 'Kelly Construction Ltd');
  assert.is(l.main_contractor_company_number, '333333');
  assert.is(l.lead_readiness, 'under_construction'); // CN3 has no completion certificate
  assert.is(l.status, 'active');
  assert.is(l.use_class, 'residential_multi');
  assert.is(l.est_value_basis, 'units');
});

test('buildLeads: the CRO number declared on the notice wins over a name match', () => {
  const n = notice({
    builder_name: 'Zyxwv Quux Ltd',
    builder_company_number: ' 654321 ',
    commencement_date: '2026-02-01',
  });
  const { leads } = buildLeads([planning()], [n], COMPANIES, AS_OF);
  assert.is(leads[0]!.main_contractor, 'Zyxwv Quux Ltd');
  assert.is(leads[0]!.main_contractor_company_number, '654321');
});

test('buildLeads: a declared CRO number is evidence for a name without a legal form when the names agree', () => {
  const agree = notice({
    builder_name: 'Murphy Builders',
    builder_company_number: '111111',
    commencement_date: '2026-02-01',
  });
  const l = buildLeads([planning()], [agree], COMPANIES, AS_OF).leads[0]!;
  assert.equal(
    [l.main_contractor, l.main_contractor_evidence, l.main_contractor_company_number],
    ['Murphy Builders', 'company_register', '111111'],
  );
  // a person's name with some company's number is not evidence
  const other = notice({
    builder_name: 'Rory Power',
    builder_company_number: '111111',
    commencement_date: '2026-02-01',
  });
  const p = buildLeads([planning()], [other], COMPANIES, AS_OF).leads[0]!;
  assert.equal([p.main_contractor, p.main_contractor_evidence, p.main_contractor_company_number], [null, null, null]);
});

test('buildLeads: an individual builder (the latest notice) is not published, even after an organisation', () => {
  const { leads } = buildLeads(
    [planning()],
    [
      notice({ cn_number: 'CN1', builder_name: 'Kelly Construction Ltd', commencement_date: '2025-01-01' }),
      notice({ cn_number: 'CN2', builder_name: 'Seán Stone', commencement_date: '2025-06-01' }),
    ],
    COMPANIES,
    AS_OF,
  );
  assert.equal([leads[0]!.main_contractor, leads[0]!.main_contractor_evidence], [null, null]);
  assert.not.match(JSON.stringify(leads), /Stone/);
});

test('buildLeads: builder with no company match keeps the name, number null', () => {
  const { leads } = buildLeads(
    [planning()],
    [notice({ builder_name: 'Zyxwv Quux Ltd', commencement_date: '2026-02-01' })],
    COMPANIES,
    AS_OF,
  );
  assert.is(leads[0]!.main_contractor, 'Zyxwv Quux Ltd');
  assert.is(leads[0]!.main_contractor_company_number, null);
  assert.is(leads[0]!.lead_readiness, 'commencing');
});

test('buildLeads: linking by number and authority; authority-less notices only when the number is unique', () => {
  const rows = [
    planning({ authority: 'Cork County', application_number: '24/100' }),
    planning({ authority: 'Kerry', application_number: '24/100' }),
    planning({ authority: 'Kerry', application_number: '24/555' }),
  ];
  const notices = [
    notice({ cn_number: 'A', permission_number: '24/100', authority: 'Kerry', commencement_date: '2026-02-01' }), // → Kerry 24/100
    notice({ cn_number: 'B', permission_number: '24/100', authority: null }), // ambiguous nationally → unlinked
    notice({ cn_number: 'C', permission_number: '24/555', authority: null, commencement_date: '2026-01-01' }), // unique → Kerry 24/555
    notice({ cn_number: 'D', permission_number: '24/555', authority: 'Clare' }), // wrong authority → unlinked
    notice({ cn_number: 'E', permission_number: '99/999' }), // no such application
    notice({ cn_number: 'F', permission_number: null }), // no number
    notice({
      cn_number: 'G',
      permission_number: '24/100',
      authority: 'Cork County Council',
      commencement_date: '2026-02-02',
    }), // spelling resolves
  ];
  const { leads, linkedNotices, unlinkedNotices } = buildLeads(rows, notices, COMPANIES, AS_OF);
  assert.is(linkedNotices, 3);
  assert.is(unlinkedNotices, 4);
  const byKey = new Map(leads.map((l) => [l.lead_key, l]));
  assert.is(byKey.get('kerry/24/100')!.commencement_notice, 'A');
  assert.is(byKey.get('kerry/24/555')!.commencement_notice, 'C');
  assert.is(byKey.get('cork-county/24/100')!.commencement_notice, 'G');
});

test('buildLeads: a duplicate application keeps one lead (the later row)', () => {
  const { leads } = buildLeads(
    [planning({ description: 'old text' }), planning({ description: 'Extension to dwelling' })],
    [],
    COMPANIES,
    AS_OF,
  );
  assert.is(leads.length, 1);
  assert.is(leads[0]!.description, 'Extension to dwelling');
});

const org = (name: string): Partial<PlanningRow> => ({ applicant_person: false, applicant_name: name });
const APPLICANT_CASES: [string, Partial<PlanningRow>, Partial<LeadDraft>][] = [
  [
    'organisation on the register',
    org('Riverside Developments Ltd'),
    {
      applicant_type: 'organisation',
      applicant_org: 'Riverside Developments Ltd',
      applicant_org_evidence: 'company_register',
      applicant_company_number: '222222',
      applicant_match_confidence: 1,
    },
  ],
  [
    'legal form, not on the register',
    org('Zyxwv Quux Teoranta'),
    {
      applicant_type: 'organisation',
      applicant_org: 'Zyxwv Quux Teoranta',
      applicant_org_evidence: 'legal_form',
      applicant_company_number: null,
    },
  ],
  [
    'public body without a legal form',
    org('Cork County Council'),
    {
      applicant_type: 'organisation',
      applicant_org: 'Cork County Council',
      applicant_org_evidence: 'public_body',
      applicant_company_number: null,
    },
  ],
  [
    'no evidence: an individual, even with business words',
    org('Parish of Ballyboy Church Power'),
    {
      applicant_type: 'individual',
      applicant_org: null,
      applicant_org_evidence: null,
      applicant_company_number: null,
      applicant_match_confidence: null,
    },
  ],
  [
    'a name like a registered company without its legal form is not evidence',
    org('Murphy Builders'),
    { applicant_type: 'individual', applicant_org: null, applicant_org_evidence: null, applicant_company_number: null },
  ],
  [
    'a forename given: a person, whatever the surname',
    { applicant_person: true, applicant_name: null },
    {
      applicant_type: 'individual',
      applicant_org: null,
      applicant_org_evidence: null,
      applicant_company_number: null,
      applicant_match_confidence: null,
    },
  ],
  [
    'unknown applicant',
    { applicant_person: false, applicant_name: null },
    { applicant_type: 'unknown', applicant_org: null, applicant_org_evidence: null, applicant_company_number: null },
  ],
];
for (const [name, o, expected] of APPLICANT_CASES) {
  test(`buildLeads applicant: ${name}`, () => {
    const l = buildLeads([planning(o)], [], COMPANIES, AS_OF).leads[0]!;
    for (const [k, v] of Object.entries(expected)) assert.equal(l[k as keyof LeadDraft], v, k);
  });
}

const FIELD_CASES: [string, Partial<PlanningRow>, Partial<LeadDraft>][] = [
  [
    'further information flag',
    { decision: null, fi_request_date: '2025-01-01' },
    { further_info_requested: true, lead_readiness: 'further_information', status: 'planning', decision: null },
  ],
  [
    'demolition from the description',
    { description: 'Demolition of existing dwelling and construction of replacement dwelling' },
    { demolition: true },
  ],
  [
    'demolition from the land use code',
    { description: 'Works at site', land_use_code: 'Demolition' },
    { demolition: true },
  ],
  ['no demolition', {}, { demolition: false }],
  [
    'county of a Dublin authority',
    { authority: 'Fingal', application_number: 'F24A/0001' },
    { county: 'Dublin', lead_key: 'fingal/F24A/0001', planning_authority: 'Fingal' },
  ],
  [
    'refused is closed',
    { decision: 'REFUSE PERMISSION' },
    { decision: 'refused', lead_readiness: 'refused', status: 'closed' },
  ],
  [
    'appeal fields copied',
    { appeal_ref: 'ABP-1', appeal_status: 'LODGED', appeal_decision: null },
    { appeal_ref: 'ABP-1', appeal_status: 'LODGED', lead_readiness: 'appealed' },
  ],
];
for (const [name, o, expected] of FIELD_CASES) {
  test(`buildLeads fields: ${name}`, () => {
    const l = buildLeads([planning(o)], [], COMPANIES, AS_OF).leads[0]!;
    for (const [k, v] of Object.entries(expected)) assert.equal(l[k as keyof LeadDraft], v, k);
  });
}

test('buildLeads: demolition from the land use code also adds the demolition vertical', () => {
  const l = buildLeads([planning({ description: 'Works at site', land_use_code: 'Demolition' })], [], COMPANIES, AS_OF)
    .leads[0]!;
  assert.ok(l.verticals.includes('demolition'));
  assert.equal(l.verticals, [...l.verticals].sort());
});

test('buildLeads: privacy — no personal name, phone or e-mail reaches a lead', () => {
  // Adapters never pass personal data, but the normaliser must not invent or carry any either.
  const p = planning({ applicant_person: false, applicant_name: 'Mary Byrne', has_contact: true });
  const n = notice({ builder_name: 'Kelly Construction Ltd', commencement_date: '2026-01-01' });
  const text = JSON.stringify(buildLeads([p], [n], COMPANIES, AS_OF).leads);
  assert.not.match(text, /Mary|Byrne/);
  assert.not.match(text, /@|\+353|\b08\d[ -]?\d{3}/);
  assert.not.match(text, /forename|surname|phone|email/i);
});

test('buildLeads: leads (with registry fields added) validate against schemas/lead.schema.json', () => {
  const rows = [
    planning(),
    planning({
      application_number: '24/101',
      ...org('Riverside Developments Ltd'),
      decision: null,
      fi_request_date: '2025-01-01',
    }),
    planning({
      application_number: '24/102',
      description: 'Construction of a data centre',
      num_units: null,
      floor_area_m2: null,
      one_off_house: false,
      lat: null,
      lon: null,
    }),
    planning({ authority: 'Dún Laoghaire-Rathdown', application_number: 'D24A/0001', decision: 'INVALID APPLICATION' }),
  ];
  const { leads } = buildLeads(
    rows,
    [
      notice({
        builder_name: 'Kelly Construction Ltd',
        commencement_date: '2025-01-01',
        ccc_units_completed: 1,
        ccc_date: '2025-12-01',
      }),
    ],
    COMPANIES,
    AS_OF,
  );
  const v = loadValidators();
  leads.forEach((l, i) => {
    const errors = v.validate('lead', {
      ...l,
      id: i + 1,
      first_seen: AS_OF,
      last_changed: AS_OF,
      content_hash: 'a'.repeat(64),
    });
    assert.equal(errors, [], l.lead_key);
  });
});

test('buildLeads: empty input', () => {
  assert.equal(buildLeads([], [notice()], COMPANIES, AS_OF), { leads: [], linkedNotices: 0, unlinkedNotices: 1 });
});

test.run();
