import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { fileURLToPath } from 'node:url';
import { decisionOutcome, mergeInfrastructure, type InfraDraft } from '../../../pipeline/normalise/infrastructure.ts';
import { buildCompanyIndex, companyNameKey } from '../../../pipeline/normalise/company-match.ts';
import { projectKey, readInfrastructure } from '../../../pipeline/sources/infrastructure.ts';
import type { CompanyRow, InfraFragment, InfraVertical } from '../../../pipeline/types.ts';

const fixture = (name: string) => fileURLToPath(new URL(`../../fixtures/infrastructure/${name}`, import.meta.url));

function company(num: string, name: string): CompanyRow {
  return {
    company_number: num,
    company_name: name,
    name_key: companyNameKey(name),
    status: 'Normal',
    status_code: null,
    company_type: null,
    reg_date: null,
    last_ar_date: null,
    last_accounts_date: null,
    dissolved_date: null,
    status_date: null,
    address: null,
    county: null,
    eircode_routing_key: null,
    nace_code: null,
    line: 2,
  };
}
const companies = buildCompanyIndex([
  company('100002', 'Knockanore Wind DAC'),
  company('100003', 'Atlantic Data Centres Ireland Limited'),
]);
const noCompanies = buildCompanyIndex([]);

let lineNo = 1;
/** A fragment with every field empty except those given. */
function frag(
  kind: InfraFragment['kind'],
  name: string,
  vertical: InfraVertical | null,
  over: Partial<InfraFragment> = {},
): InfraFragment {
  return {
    kind,
    project_key: projectKey(name, vertical),
    name,
    vertical,
    technology: null,
    applicant: null,
    capacity_mw: null,
    connection_voltage_kv: null,
    county: null,
    authority: null,
    lat: null,
    lon: null,
    case_id: null,
    category: null,
    description: null,
    lodged_date: null,
    decision: null,
    decision_date: null,
    connection_date: null,
    auction_round: null,
    status: null,
    cru_connection_policy: null,
    public_url: null,
    line: ++lineNo,
    file: `${kind}.csv`,
    ...over,
  };
}

test('a project in three files → one draft with the documented precedence', () => {
  const fragments = [
    frag('grid_connection', 'KNOCKANORE', 'wind', {
      capacity_mw: 61.2,
      connection_voltage_kv: 110,
      county: 'Waterford',
      lat: 52.05,
      lon: -7.86,
      connection_date: '2024-09-01',
      technology: 'onshore_wind',
    }),
    frag('abp_case', 'Knockanore Wind Farm', 'wind', {
      case_id: 'ABP-1',
      capacity_mw: 61,
      county: 'Cork',
      authority: 'Cork County',
      lodged_date: '2021-05-04',
      decision: 'Grant',
      decision_date: '2022-11-30',
      category: 'Strategic Infrastructure Development',
      description: 'Knockanore Wind Farm: 12 turbines',
      public_url: 'https://example.ie/1',
      technology: 'onshore_wind',
    }),
    frag('auction', 'Knockanore Wind Farm', 'wind', {
      auction_round: 'RESS 3',
      capacity_mw: 60,
      applicant: 'Knockanore Wind Designated Activity Company',
      county: 'Kerry',
      technology: 'onshore_wind',
    }),
  ];
  const [d, ...rest] = mergeInfrastructure(fragments, companies, '2025-01-31');
  assert.is(rest.length, 0);
  const expected: InfraDraft = {
    project_key: 'wind:knockanore',
    name: 'Knockanore Wind Farm', // most frequent spelling
    vertical: 'wind',
    technology: 'onshore_wind',
    applicant: 'Knockanore Wind Designated Activity Company',
    applicant_evidence: 'company_register',
    applicant_company_number: '100002',
    capacity_mw: 60, // auction > grid > data centre > ABP
    connection_voltage_kv: 110,
    county: 'Waterford', // grid > data centre > ABP
    planning_authority: 'Cork County',
    lat: 52.05,
    lon: -7.86,
    status: 'operational',
    consenting_route: 'strategic_infrastructure',
    case_id: 'ABP-1',
    lodged_date: '2021-05-04',
    decision: 'Grant',
    decision_date: '2022-11-30',
    connection_date: '2024-09-01',
    auction_round: 'RESS 3',
    auction_winner: true,
    eu_fast_lane: false,
    regulator_connection_rule: false,
    sources: ['abp_case', 'auction', 'grid_connection'],
    description: 'Knockanore Wind Farm: 12 turbines',
    public_url: 'https://example.ie/1',
  };
  assert.equal(d, expected);
  // input order does not matter
  assert.equal(mergeInfrastructure([...fragments].reverse(), companies, '2025-01-31'), [expected]);
});

type FlagCase = { name: string; fragments: InfraFragment[]; asOf?: string; expect: Partial<InfraDraft> };
const cases: FlagCase[] = [
  // status
  {
    name: 'grid connection in the past → operational',
    fragments: [frag('grid_connection', 'A', 'wind', { connection_date: '2020-01-01' })],
    asOf: '2025-01-01',
    expect: { status: 'operational', connection_date: '2020-01-01' },
  },
  {
    name: 'grid connection after the data date → not operational',
    fragments: [frag('grid_connection', 'A', 'wind', { connection_date: '2026-01-01' })],
    asOf: '2025-01-01',
    expect: { status: 'proposed' },
  },
  {
    name: 'data centre Operational → operational',
    fragments: [frag('data_centre', 'A', 'data_centre', { status: 'Operational' })],
    expect: { status: 'operational' },
  },
  {
    name: 'ABP grant → consented',
    fragments: [frag('abp_case', 'A', 'solar', { decision: 'Grant', lodged_date: '2023-01-01' })],
    expect: { status: 'consented' },
  },
  {
    name: 'data centre Planning granted → consented',
    fragments: [frag('data_centre', 'A', 'data_centre', { status: 'Planning granted' })],
    expect: { status: 'consented' },
  },
  {
    name: 'data centre Under construction → consented',
    fragments: [frag('data_centre', 'A', 'data_centre', { status: 'Under construction' })],
    expect: { status: 'consented' },
  },
  {
    name: 'ABP refuse → refused',
    fragments: [frag('abp_case', 'A', 'solar', { decision: 'Refuse' })],
    expect: { status: 'refused' },
  },
  {
    name: 'undecided ABP case → in_planning',
    fragments: [frag('abp_case', 'A', 'solar', { decision: 'Undecided' })],
    expect: { status: 'in_planning' },
  },
  {
    name: 'empty ABP decision → in_planning',
    fragments: [frag('abp_case', 'A', 'solar', { decision: null })],
    expect: { status: 'in_planning' },
  },
  {
    name: 'refused then re-lodged → in_planning',
    fragments: [
      frag('abp_case', 'A', 'solar', { decision: 'Refuse', lodged_date: '2022-01-01' }),
      frag('abp_case', 'A', 'solar', { decision: null, lodged_date: '2024-01-01', case_id: 'NEW' }),
    ],
    expect: { status: 'in_planning', case_id: 'NEW' },
  },
  {
    name: 'withdrawn ABP case → proposed',
    fragments: [frag('abp_case', 'A', 'solar', { decision: 'Withdrawn' })],
    expect: { status: 'proposed' },
  },
  {
    name: 'auction only → proposed',
    fragments: [frag('auction', 'A', 'solar', { auction_round: 'RESS 2' })],
    expect: { status: 'proposed', auction_winner: true, auction_round: 'RESS 2' },
  },
  // consenting route
  {
    name: 'SID category → strategic_infrastructure',
    fragments: [frag('abp_case', 'A', 'wind', { category: 'Strategic Infrastructure Development' })],
    expect: { consenting_route: 'strategic_infrastructure' },
  },
  {
    name: 'Section 182A → strategic_infrastructure',
    fragments: [frag('abp_case', 'A', 'grid', { category: 'Section 182A Electricity Transmission' })],
    expect: { consenting_route: 'strategic_infrastructure' },
  },
  {
    name: 'appeal category → appeal',
    fragments: [frag('abp_case', 'A', 'wind', { category: 'Normal Planning Appeal' })],
    expect: { consenting_route: 'appeal' },
  },
  {
    name: 'data centre with planning reference → local_authority',
    fragments: [frag('data_centre', 'A', 'data_centre', { case_id: 'F21A/1' })],
    expect: { consenting_route: 'local_authority', case_id: 'F21A/1' },
  },
  {
    name: 'data centre without reference → unknown',
    fragments: [frag('data_centre', 'A', 'data_centre')],
    expect: { consenting_route: 'unknown' },
  },
  // EU fast lane
  {
    name: 'wind lodged 2025-01-01 → fast lane',
    fragments: [frag('abp_case', 'A', 'wind', { lodged_date: '2025-01-01' })],
    expect: { eu_fast_lane: true },
  },
  {
    name: 'battery lodged 2025-06-01 → fast lane',
    fragments: [frag('abp_case', 'A', 'battery_storage', { lodged_date: '2025-06-01' })],
    expect: { eu_fast_lane: true },
  },
  {
    name: 'solar lodged 2024-12-31 → no fast lane',
    fragments: [frag('abp_case', 'A', 'solar', { lodged_date: '2024-12-31' })],
    expect: { eu_fast_lane: false },
  },
  {
    name: 'grid lodged 2025 → no fast lane',
    fragments: [frag('abp_case', 'A', 'grid', { lodged_date: '2025-06-01' })],
    expect: { eu_fast_lane: false },
  },
  {
    name: 'no ABP case → no fast lane',
    fragments: [frag('auction', 'A', 'wind', { auction_round: 'RESS 5' })],
    expect: { eu_fast_lane: false },
  },
  // regulator rule
  {
    name: 'CRU policy Yes → regulator rule',
    fragments: [frag('data_centre', 'A', 'data_centre', { cru_connection_policy: true })],
    expect: { regulator_connection_rule: true },
  },
  {
    name: 'CRU policy No → no rule',
    fragments: [frag('data_centre', 'A', 'data_centre', { cru_connection_policy: false })],
    expect: { regulator_connection_rule: false },
  },
  // field precedence
  {
    name: 'grid phases add up',
    fragments: [
      frag('grid_connection', 'A', 'wind', { capacity_mw: 20.7, connection_date: '2011-01-01' }),
      frag('grid_connection', 'A', 'wind', { capacity_mw: 2.3, connection_date: '2009-01-01' }),
      frag('abp_case', 'A', 'wind', { capacity_mw: 30 }),
    ],
    expect: { capacity_mw: 23, connection_date: '2009-01-01' },
  },
  {
    name: 'latest auction round wins',
    fragments: [
      frag('auction', 'A', 'solar', { auction_round: 'RESS 4', capacity_mw: 50 }),
      frag('auction', 'A', 'solar', { auction_round: 'RESS 2', capacity_mw: 48 }),
    ],
    expect: { auction_round: 'RESS 4', capacity_mw: 50 },
  },
  {
    name: 'data-centre capacity over ABP',
    fragments: [
      frag('abp_case', 'A', 'data_centre', { capacity_mw: 100 }),
      frag('data_centre', 'A', 'data_centre', { capacity_mw: 90 }),
    ],
    expect: { capacity_mw: 90 },
  },
  {
    name: 'operator matched to the register',
    fragments: [frag('data_centre', 'A', 'data_centre', { applicant: 'Atlantic Data Centres Ireland Ltd.' })],
    expect: { applicant: 'Atlantic Data Centres Ireland Ltd.', applicant_company_number: '100003' },
  },
  {
    name: 'unmatched applicant keeps the name',
    fragments: [frag('auction', 'A', 'wind', { applicant: 'Nobody Wind Ltd' })],
    expect: { applicant: 'Nobody Wind Ltd', applicant_company_number: null },
  },
  {
    name: 'name tie → ABP spelling',
    fragments: [frag('grid_connection', 'Ard', 'wind'), frag('abp_case', 'Ard Wind Farm', 'wind')],
    expect: { name: 'Ard Wind Farm' },
  },
  {
    name: 'default technology per vertical',
    fragments: [frag('abp_case', 'A', 'battery_storage')],
    expect: { technology: 'bess' },
  },
  {
    name: 'ABP technology over grid',
    fragments: [
      frag('grid_connection', 'A', 'grid', { technology: 'transmission_line' }),
      frag('abp_case', 'A', 'grid', { technology: 'substation' }),
    ],
    expect: { technology: 'substation' },
  },
  {
    name: 'location: data centre over ABP',
    fragments: [
      frag('abp_case', 'A', 'data_centre', { county: 'Meath', authority: 'Meath' }),
      frag('data_centre', 'A', 'data_centre', { county: 'Dublin', authority: 'Fingal', lat: 53.4, lon: -6.3 }),
    ],
    expect: { county: 'Dublin', planning_authority: 'Fingal', lat: 53.4, lon: -6.3 },
  },
  {
    name: 'voltage from the data-centre file when no grid row has one',
    fragments: [
      frag('grid_connection', 'A', 'data_centre'),
      frag('data_centre', 'A', 'data_centre', { connection_voltage_kv: 220 }),
    ],
    expect: { connection_voltage_kv: 220 },
  },
];

for (const c of cases) {
  test(`merge: ${c.name}`, () => {
    const out = mergeInfrastructure(c.fragments, companies, c.asOf);
    assert.is(out.length, 1);
    for (const [k, v] of Object.entries(c.expect))
      assert.equal((out[0] as unknown as Record<string, unknown>)[k], v, k);
  });
}

const outcomes: [string | null, ReturnType<typeof decisionOutcome>][] = [
  ['Grant', 'grant'],
  ['GRANT PERMISSION', 'grant'],
  ['Refuse', 'refuse'],
  ['Refused', 'refuse'],
  ['Undecided', 'undecided'],
  [null, 'undecided'],
  ['', 'undecided'],
  ['Withdrawn', 'other'],
  ['Split Decision', 'other'],
];
for (const [raw, want] of outcomes)
  test(`decisionOutcome(${JSON.stringify(raw)})`, () => assert.is(decisionOutcome(raw), want));

test('merge: fragments without a vertical are left out; output sorted by key', () => {
  const out = mergeInfrastructure(
    [
      frag('abp_case', 'Road Scheme', null),
      frag('abp_case', 'Zed', 'wind'),
      frag('abp_case', 'Alpha', 'wind'),
      frag('data_centre', 'Beta', 'data_centre'),
    ],
    noCompanies,
  );
  assert.equal(
    out.map((d) => d.project_key),
    ['data_centre:beta', 'wind:alpha', 'wind:zed'],
  );
});

test('merge: without asOf the data date is the latest lodging or decision date', () => {
  const out = mergeInfrastructure(
    [
      frag('grid_connection', 'Late', 'wind', { connection_date: '2025-06-01' }),
      frag('grid_connection', 'Early', 'wind', { connection_date: '2025-01-01' }),
      frag('abp_case', 'Other', 'solar', { lodged_date: '2025-03-01' }),
    ],
    noCompanies,
  );
  assert.equal(
    out.map((d) => [d.project_key, d.status]),
    [
      ['solar:other', 'in_planning'],
      ['wind:early', 'operational'],
      ['wind:late', 'proposed'],
    ],
  );
});

test('merge: the fixture files end to end', async () => {
  const files = [
    'abp-cases.csv',
    'ress-auction-results.csv',
    'grid-connections.csv',
    'cap_wind_sample.csv',
    'data-centres.csv',
  ];
  const { rows } = await readInfrastructure(files.map(fixture));
  const drafts = mergeInfrastructure(rows, companies);
  const summary = drafts.map((d) => [d.project_key, d.status, d.capacity_mw, d.sources.join('+')]);
  assert.equal(summary, [
    ['battery_storage:dromana', 'refused', 100, 'abp_case+grid_connection'],
    ['data_centre:atlantic hub', 'operational', 90, 'data_centre'],
    ['data_centre:boyne valley data campus', 'consented', 60, 'data_centre'],
    ['data_centre:shannon edge', 'in_planning', 30, 'data_centre'],
    ['grid:grid upgrade for the cashla to dalton 110 kv line including uprating of', 'in_planning', null, 'abp_case'],
    ['grid:kilpaddoge', 'operational', null, 'abp_case+grid_connection'],
    ['solar:lough road', 'operational', 5, 'grid_connection'],
    ['solar:tullabeg', 'in_planning', 50, 'abp_case+auction'],
    ['wind:glenbeg', 'operational', 24, 'grid_connection'],
    ['wind:knockanore', 'operational', 60, 'abp_case+auction+grid_connection'],
  ]);
  const by = new Map(drafts.map((d) => [d.project_key, d]));
  const k = by.get('wind:knockanore')!;
  assert.equal(
    [k.name, k.applicant_company_number, k.connection_voltage_kv, k.county, k.planning_authority, k.auction_round],
    ['Knockanore Wind Farm', '100002', 110, 'Waterford', 'Waterford', 'RESS 3'],
  );
  const t = by.get('solar:tullabeg')!;
  assert.equal([t.eu_fast_lane, t.auction_round, t.consenting_route], [true, 'RESS 4', 'strategic_infrastructure']);
  const a = by.get('data_centre:atlantic hub')!;
  assert.equal(
    [a.regulator_connection_rule, a.applicant_company_number, a.consenting_route, a.planning_authority],
    [true, '100003', 'local_authority', 'Fingal'],
  );
  assert.equal(
    [by.get('grid:kilpaddoge')!.technology, by.get('battery_storage:dromana')!.consenting_route],
    ['substation', 'appeal'],
  );
  assert.is(by.get('solar:lough road')!.county, null);
});

test.run();
