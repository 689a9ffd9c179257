import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  DEFAULT_SCHEMA_DIR,
  RECORD_KINDS,
  enrichedFields,
  loadValidators,
  validateAll,
  type RecordKind,
} from '../../pipeline/validate.ts';
import type { CompanyRow, FilingRow, InfraProject, Lead, Reject, SaleRow } from '../../pipeline/types.ts';

const v = loadValidators();

function schemaOf(kind: RecordKind): { properties: Record<string, unknown> } {
  return JSON.parse(readFileSync(join(DEFAULT_SCHEMA_DIR, `${kind}.schema.json`), 'utf8'));
}

// ---- valid examples, typed so that tsc fails when a type gains or loses a field ----

const lead: Lead = {
  id: 42,
  lead_key: 'dun-laoghaire-rathdown/D24A/0123',
  application_number: 'D24A/0123',
  planning_authority: 'Dún Laoghaire-Rathdown',
  county: 'Dublin',
  address: 'Site at Main Street, Dundrum',
  eircode_routing_key: 'D14',
  lat: 53.2905,
  lon: -6.2452,
  description: 'Construction of 24 apartments with basement car park and demolition of existing shed',
  application_type: 'PERMISSION',
  received_date: '2024-03-05',
  decision_date: '2024-06-20',
  decision_due_date: '2024-04-29',
  grant_date: '2024-07-30',
  expiry_date: '2029-07-29',
  withdrawn_date: null,
  decision: 'granted',
  lead_readiness: 'commencing',
  readiness_since: '2025-01-13',
  status: 'active',
  verticals: ['roofing', 'solar'],
  explicit_verticals: ['solar'],
  vertical_evidence: ['roofing: implied by extension', 'solar: solar'],
  use_class: 'residential',
  works_kind: 'new_works',
  scale: 'large',
  num_units: 24,
  floor_area_m2: 2150.5,
  site_area_ha: 0.42,
  one_off_house: false,
  demolition: true,
  est_value: 6_450_000,
  est_value_basis: 'floor_area',
  has_contact: true,
  applicant_type: 'organisation',
  land_use_code: 'A',
  further_info_requested: true,
  appeal_ref: null,
  appeal_status: null,
  appeal_decision: null,
  appeal_decision_date: null,
  commencement_notice: 'CN0123456DC',
  commencement_date: '2025-01-13',
  proposed_end_date: '2026-06-30',
  completion_date: null,
  units_completed: null,
  applicant_org: 'Dundrum Homes Limited',
  applicant_org_evidence: 'company_register',
  applicant_company_number: '654321',
  applicant_match_confidence: 0.97,
  main_contractor: 'Acme Construction Ltd',
  main_contractor_evidence: 'legal_form',
  main_contractor_company_number: '123456',
  public_url: 'https://planning.agileapplications.ie/dunlaoghaire/application-details/123',
  first_seen: '2024-03-11',
  last_changed: '2025-01-20',
  content_hash: '9f86d081884c7d65',
};

const infra: InfraProject = {
  id: 7,
  project_key: 'knockanore wind farm',
  name: 'Knockanore Wind Farm',
  vertical: 'wind',
  technology: 'Onshore Wind',
  applicant: 'Knockanore Wind DAC',
  applicant_evidence: 'legal_form',
  applicant_company_number: '700123',
  capacity_mw: 45.6,
  connection_voltage_kv: 110,
  county: 'Kerry',
  planning_authority: 'Kerry',
  lat: 52.52,
  lon: -9.6,
  status: 'consented',
  consenting_route: 'strategic_infrastructure',
  case_id: '318921',
  lodged_date: '2025-02-03',
  decision: 'GRANT PERMISSION',
  decision_date: '2025-09-01',
  connection_date: null,
  auction_round: 'RESS 4',
  auction_winner: true,
  eu_fast_lane: true,
  regulator_connection_rule: false,
  sources: ['abp_case', 'auction'],
  description: '10 turbine wind farm',
  public_url: 'https://www.pleanala.ie/en-ie/case/318921',
  first_seen: '2025-02-10',
  last_changed: '2025-09-08',
  content_hash: 'a'.repeat(64),
};

const company: Omit<CompanyRow, 'line' | 'name_key'> = {
  company_number: '123456',
  company_name: 'ACME CONSTRUCTION LIMITED',
  status: 'Normal',
  status_code: '1',
  company_type: 'LTD - Private Company Limited by Shares',
  reg_date: '1998-04-01',
  last_ar_date: '2024-04-01',
  last_accounts_date: '2023-12-31',
  dissolved_date: null,
  status_date: null,
  address: 'Unit 4, Business Park, Naas, Co. Kildare',
  county: 'Kildare',
  eircode_routing_key: 'W91',
  nace_code: '4120',
};

const filing: Omit<FilingRow, 'line'> = {
  company_number: '123456',
  document_number: 'B1-2024-0001',
  filing_type: 'B1',
  description: 'Annual Return',
  filing_date: '2024-04-15',
  effective_date: '2024-04-01',
};

const sale: Omit<SaleRow, 'line' | 'price_cents' | 'eircode_hash'> & { sale_id: string; price_eur: number } = {
  sale_id: '0123456789abcdef',
  date_of_sale: '2023-02-14',
  address: '12 Main Street, Dundrum, Dublin 14',
  county: 'Dublin',
  eircode_routing_key: 'D14',
  home_key: 'b'.repeat(64),
  price_eur: 458150.07,
  not_full_market_price: false,
  vat_exclusive: false,
  description: 'Second-Hand Dwelling house /Apartment',
  is_new_dwelling: false,
  property_size: null,
};

const reject: Reject = {
  source: 'planning',
  file: 'planning-2024.csv',
  line: 17,
  key: 'D24A/0123',
  reason: 'invalid_date',
  detail: 'ReceivedDate',
};

const supplier = {
  company_number: '123456',
  company_name: 'ACME ROOFING LIMITED',
  vertical: 'roofing',
  county: 'Kildare',
  nace_code: '4391',
  projects_as_builder: 3,
};

const leadDetail = {
  ...lead,
  project: {
    description: lead.description,
    use_class: lead.use_class,
    works_kind: lead.works_kind,
    verticals: lead.verticals,
    explicit_verticals: lead.explicit_verticals,
    vertical_evidence: lead.vertical_evidence,
    scale: lead.scale,
    num_units: lead.num_units,
    floor_area_m2: lead.floor_area_m2,
    site_area_ha: lead.site_area_ha,
    demolition: lead.demolition,
    est_value: lead.est_value,
    est_value_basis: lead.est_value_basis,
    application_type: lead.application_type,
    lead_readiness: lead.lead_readiness,
    status: lead.status,
    received_date: lead.received_date,
    decision: lead.decision,
    decision_date: lead.decision_date,
    grant_date: lead.grant_date,
    expiry_date: lead.expiry_date,
    commencement_date: lead.commencement_date,
    proposed_end_date: lead.proposed_end_date,
    completion_date: lead.completion_date,
    public_url: lead.public_url,
  },
  zoning_and_appeals: {
    land_use_code: 'A',
    land_use_description: 'Residential',
    further_info_requested: true,
    decision: 'granted',
    decision_date: '2024-06-20',
    appeal_ref: null,
    appeal_status: null,
    appeal_decision: null,
    appeal_decision_date: null,
  },
  area_comparables: {
    eircode_routing_key: 'D14',
    county: 'Dublin',
    window_months: 12,
    sales_count: 1,
    median_price_eur: 458150.07,
    recent_sales: [
      {
        date_of_sale: '2023-02-14',
        address: sale.address,
        price_eur: 458150.07,
        is_new_dwelling: false,
        description: null,
      },
    ],
    nearby_leads: [
      {
        id: 43,
        description: 'Extension',
        distance_m: 120.5,
        use_class: 'residential',
        lead_readiness: 'granted',
        est_value: 80000,
      },
    ],
  },
  suppliers: [supplier],
  main_contractor: { name: 'Acme Construction Ltd', company_number: '123456', company },
  registered_company: { ...company, company_number: '654321', match_confidence: 0.97 },
  company_filings: [filing],
};

const manifest = {
  schema_version: '1.0.0',
  release_id: '20250602T031415Z',
  built_at: '2025-06-02T03:14:15.926Z',
  as_of: '2025-06-01',
  previous_release: '2025-05-26',
  counts: {
    tables: {
      leads: 10,
      infrastructure: 2,
      companies: 5,
      filings: 9,
      sales: 100,
      suppliers: 3,
      lead_neighbours: 40,
      authorities: 31,
    },
    records_total: 17,
    sources: { planning: { lines: 12, rows: 10, rejects: 2, reasons: { invalid_date: 1, duplicate: 1 } } },
    authorities: {
      'Dublin City': { leads: 4, latest_received: '2025-05-30' },
      Leitrim: { leads: 0, latest_received: null },
    },
    linked_commencement_notices: 3,
    unlinked_commencement_notices: 1,
  },
  changes: {
    leads: { new: 1, updated: 2, removed: 0, unchanged: 7 },
    infrastructure: { new: 0, updated: 0, removed: 0, unchanged: 2 },
  },
  search_index: { docs: 10, terms: 120, postings: 300, avgdl: 14.2 },
  geojson: {
    layers: [
      { name: 'leads', features: 9 },
      { name: 'leads/0', features: 9, bytes: 2048 },
    ],
  },
  files: {
    'leads.parquet': { bytes: 1024, sha256: 'c'.repeat(64), rows: 10 },
    'manifest.md': { bytes: 10, sha256: 'd'.repeat(64), rows: null },
  },
  stages: { ingest: { ms: 1200, rows: 10, rows_per_s: 8.3 } },
  gates: { passed: true, forced: false, messages: [] },
  input_fingerprint: 'e'.repeat(64),
};

const problem = {
  type: 'https://schemas.leads.ie/v1/problems/invalid_parameter',
  title: 'Invalid parameter',
  status: 400,
  detail: 'readiness must be one of the listed values',
  instance: '/v1/leads?readiness=soon',
  code: 'invalid_parameter',
  request_id: 'req-1',
  errors: [{ name: 'readiness', reason: 'not an allowed value', allowed: ['application', 'commencing'] }],
};

const VALID: Record<RecordKind, Record<string, unknown>> = {
  lead: { ...lead },
  'lead-detail': leadDetail,
  'infrastructure-project': { ...infra },
  company: { ...company },
  filing: { ...filing },
  'property-sale': sale,
  supplier,
  'lead-neighbour': { lead_id: 42, neighbour_id: 43, distance_m: 120.5, rank: 1 },
  change: { table: 'leads', id: 42, key: lead.lead_key, change: 'updated' },
  event: {
    id: 7,
    type: 'lead.stage_changed',
    lead_id: 42,
    lead_key: lead.lead_key,
    release_id: '20261116T060000Z',
    observed_at: '2026-11-16',
    occurred_at: '2026-11-12',
    reason: null,
    changes: { lead_readiness: { before: 'granted', after: 'commencing' } },
  },
  reject: { ...reject },
  'price-index-point': {
    area: 'Cork',
    county: 'Cork',
    quarter: '2024Q3',
    period_start: '2024-07-01',
    index_value: 142.7,
    std_error: 1.2,
    ci_low: 140.4,
    ci_high: 145.1,
    pairs: 812,
    low_sample: false,
    base_quarter: '2010Q1',
  },
  'rental-yield': {
    area: 'Ireland',
    county: null,
    property_type: 'apartment',
    quarter: '2024Q3',
    period_start: '2024-07-01',
    monthly_rent_eur: 1650.5,
    rent_cells: 1,
    typical_price_eur: 285000,
    sales: 4210,
    gross_yield_pct: 6.95,
  },
  'emerging-zone': {
    rank: 1,
    area: 'Meath',
    county: 'Meath',
    score: 1.42,
    applications_12m: 4100,
    applications_prev_12m: 3800,
    applications_growth_pct: 7.89,
    applications_z: 1.1,
    commencements_12m: 900,
    commencements_prev_12m: 700,
    commencements_growth_pct: 28.57,
    commencements_z: 2.0,
    price_change_pct: 6.1,
    price_quarter: '2026Q3',
    price_z: 1.16,
    as_of: '2026-11-09',
  },
  'material-cost': {
    material: 'Structural steel',
    month: '2026-10',
    period_start: '2026-10-01',
    index_value: 151.2,
    yoy_pct: 2.3,
    latest: true,
  },
  'release-manifest': manifest,
  problem,
};

test('a valid example of every record kind passes', () => {
  for (const kind of RECORD_KINDS) assert.equal(v.validate(kind, VALID[kind]), [], kind);
});

test('nullable fields accept null and enriched fields may be blanked to null', () => {
  const blankLead = { ...lead };
  for (const f of enrichedFields('lead')) (blankLead as Record<string, unknown>)[f] = null;
  assert.equal(v.validate('lead', { ...blankLead, lat: null, lon: null, decision: null, address: null }), []);
  const blankDetail: Record<string, unknown> = { ...leadDetail };
  for (const f of enrichedFields('lead-detail')) blankDetail[f] = null;
  assert.equal(v.validate('lead-detail', blankDetail), []);
  assert.equal(
    v.validate('infrastructure-project', {
      ...infra,
      applicant: null,
      applicant_company_number: null,
      connection_voltage_kv: null,
      capacity_mw: null,
    }),
    [],
  );
});

type Mutation = [name: string, field: string, mutate: (row: Record<string, unknown>) => void];
const drop = (f: string): Mutation => [`missing ${f}`, f, (r) => void delete r[f]];
const set = (label: string, f: string, value: unknown): Mutation => [label, f, (r) => void (r[f] = value)];
const extra: Mutation = ['extra property', 'phone', (r) => void (r.phone = '087 123 4567')];

/** Per kind: missing required field, wrong enum (or pattern), extra property, wrong date format. */
const MUTATIONS: Record<RecordKind, Mutation[]> = {
  lead: [
    drop('county'),
    set('wrong enum', 'lead_readiness', 'soon'),
    extra,
    set('bad date', 'received_date', '05/03/2024'),
    set('impossible date', 'grant_date', '2024-02-30'),
    set('lat outside Ireland', 'lat', 48.85),
    set('id zero', 'id', 0),
    set('bad vertical', 'verticals', ['Solar']),
    set('bad hash', 'content_hash', 'XYZ'),
    set('unknown authority', 'planning_authority', 'Atlantis'),
    set('decision text', 'decision', 'GRANT PERMISSION'),
    set('fractional est_value', 'est_value', 10.5),
    set('full eircode', 'eircode_routing_key', 'D14 X2Y3'),
  ],
  'lead-detail': [
    drop('project'),
    set('wrong enum', 'lead_readiness', 'soon'),
    extra,
    set('bad date', 'first_seen', '2024-13-01'),
    set('main_contractor as a name', 'main_contractor', 'Acme Construction Ltd'),
    ['section missing a field', 'project', (r) => void delete (r.project as Record<string, unknown>).scale],
    [
      'extra property in a section',
      'zoning_and_appeals',
      (r) => void ((r.zoning_and_appeals as Record<string, unknown>).owner_phone = 'x'),
    ],
    [
      'bad nested sale date',
      'area_comparables',
      (r) =>
        void ((r.area_comparables as { recent_sales: Record<string, unknown>[] }).recent_sales[0]!.date_of_sale =
          '14/02/2023'),
    ],
  ],
  'infrastructure-project': [
    drop('vertical'),
    set('wrong enum', 'vertical', 'nuclear'),
    extra,
    set('bad date', 'lodged_date', '2025-2-3'),
    set('voltage too high', 'connection_voltage_kv', 765),
    set('negative capacity', 'capacity_mw', -1),
    set('wrong consenting route', 'consenting_route', 'fast'),
    set('unknown source kind', 'sources', ['twitter']),
  ],
  company: [
    drop('company_name'),
    set('bad routing key', 'eircode_routing_key', 'B12'),
    extra,
    set('bad date', 'reg_date', '1998/04/01'),
  ],
  filing: [
    drop('filing_type'),
    set('bad company number', 'company_number', 'IE123'),
    extra,
    set('bad date', 'filing_date', 'yesterday'),
  ],
  'property-sale': [
    drop('home_key'),
    set('wrong county', 'county', 'Antrim'),
    extra,
    set('bad date', 'date_of_sale', '14/02/2023'),
    set('price with fraction of a cent', 'price_eur', 100.001),
    set('short sale id', 'sale_id', 'abc'),
    set('price as text', 'price_eur', '€458,150.00'),
  ],
  supplier: [
    drop('vertical'),
    set('bad vertical', 'vertical', 'Roofing Works'),
    extra,
    set('negative count', 'projects_as_builder', -1),
  ],
  'lead-neighbour': [drop('rank'), set('rank zero', 'rank', 0), extra, set('negative distance', 'distance_m', -3)],
  change: [drop('key'), set('wrong enum', 'change', 'deleted'), extra, set('wrong table', 'table', 'sales')],
  event: [
    drop('changes'),
    set('wrong type', 'type', 'lead.deleted'),
    extra,
    set('change without after', 'changes', { status: { before: 'planning' } }),
  ],
  reject: [drop('reason'), set('wrong enum', 'reason', 'bad_row'), extra, set('unknown source', 'source', 'twitter')],
  'price-index-point': [
    drop('pairs'),
    set('bad quarter', 'quarter', '2024-Q3'),
    extra,
    set('bad date', 'period_start', '2024/07/01'),
    set('unknown area', 'area', 'Antrim'),
  ],
  'rental-yield': [
    drop('sales'),
    set('wrong class', 'property_type', 'bungalow'),
    extra,
    set('too few sales', 'sales', 3),
  ],
  'emerging-zone': [
    drop('score'),
    set('rank zero', 'rank', 0),
    extra,
    set('bad as_of', 'as_of', 'today'),
    set('national area', 'area', 'Ireland'),
  ],
  'material-cost': [
    drop('yoy_pct'),
    set('bad month', 'month', '2026-13'),
    extra,
    set('negative index', 'index_value', -1),
  ],
  'release-manifest': [
    drop('gates'),
    set('wrong version', 'schema_version', '2.0.0'),
    extra,
    set('bad as_of', 'as_of', '2025-06-01T00:00:00Z'),
    set('bad built_at', 'built_at', '2025-06-02'),
    [
      'missing table count',
      'counts',
      (r) => void delete (r.counts as { tables: Record<string, unknown> }).tables.leads,
    ],
    [
      'unknown reject reason',
      'counts',
      (r) =>
        void ((
          r.counts as { sources: { planning: { reasons: Record<string, number> } } }
        ).sources.planning.reasons.oops = 1),
    ],
    [
      'search index missing a count',
      'search_index',
      (r) => void delete (r.search_index as Record<string, unknown>).terms,
    ],
    [
      'bad sha256',
      'files',
      (r) => void ((r.files as Record<string, { sha256: string }>)['leads.parquet']!.sha256 = 'zz'),
    ],
  ],
  problem: [drop('code'), set('bad code', 'code', 'Not-Found'), extra, set('bad status', 'status', 99)],
};

test('mutated rows fail with a message naming the field', () => {
  for (const kind of RECORD_KINDS) {
    for (const [label, field, mutate] of MUTATIONS[kind]) {
      const row = structuredClone(VALID[kind]);
      mutate(row);
      const errors = v.validate(kind, row);
      assert.ok(errors.length > 0, `${kind}: ${label} should fail`);
      assert.ok(errors.join(' ').includes(field), `${kind}: ${label}: "${errors.join('; ')}" should name ${field}`);
    }
  }
});

test('messages never echo the row values', () => {
  const errors = v.validate('lead', { ...lead, phone: '087 123 4567', address: 12345 });
  assert.ok(errors.length > 0);
  assert.not.ok(errors.join(' ').includes('087 123'), errors.join(' '));
});

test('non-objects are rejected', () => {
  for (const kind of RECORD_KINDS) {
    for (const value of [null, 'x', 3, []])
      assert.ok(v.validate(kind, value).length > 0, `${kind} ${JSON.stringify(value)}`);
  }
});

test('validate throws on an unknown kind', () => {
  assert.throws(() => v.validate('sale' as RecordKind, {}), /unknown record kind/);
});

test('loadValidators throws when a schema folder lacks a schema', () => {
  assert.throws(() => loadValidators(join(DEFAULT_SCHEMA_DIR, '..', 'test')), /missing/);
});

test('validateAll counts invalid rows and caps the samples', () => {
  const rows = [sale, { ...sale, county: 'Antrim' }, sale, { ...sale, price_eur: -1 }, { ...sale, sale_id: 'x' }];
  const r = validateAll(v, 'property-sale', rows, 2);
  assert.is(r.checked, 5);
  assert.is(r.invalid, 3);
  assert.is(r.samples.length, 2);
  assert.match(r.samples[0]!, /^row 1: \/county/);
  assert.match(r.samples[1]!, /^row 3: \/price_eur/);
  assert.equal(validateAll(v, 'property-sale', [], 2), { checked: 0, invalid: 0, samples: [] });
});

test('schemas accept exactly the fields of the TypeScript types', () => {
  const cases: [RecordKind, object][] = [
    ['lead', lead],
    ['infrastructure-project', infra],
    ['company', company],
    ['filing', filing],
    ['property-sale', sale],
    ['reject', reject],
  ];
  for (const [kind, example] of cases) {
    assert.equal(Object.keys(schemaOf(kind).properties).sort(), Object.keys(example).sort(), kind);
  }
});

test('enrichedFields lists the enriched properties of each kind', () => {
  const cases: [RecordKind, string[]][] = [
    [
      'lead',
      [
        'applicant_company_number',
        'applicant_match_confidence',
        'applicant_org',
        'applicant_org_evidence',
        'main_contractor',
        'main_contractor_company_number',
        'main_contractor_evidence',
      ],
    ],
    ['infrastructure-project', ['applicant', 'applicant_company_number', 'applicant_evidence']],
    [
      'lead-detail',
      [
        'applicant_company_number',
        'applicant_match_confidence',
        'applicant_org',
        'applicant_org_evidence',
        'company_filings',
        'main_contractor',
        'main_contractor_company_number',
        'main_contractor_evidence',
        'registered_company',
        'suppliers',
      ],
    ],
    ['property-sale', []],
    ['company', []],
  ];
  for (const [kind, expected] of cases) assert.equal(enrichedFields(kind).sort(), expected, kind);
});

test('bulk validation of many property sales: every valid row passes, a bad one in the middle is counted', () => {
  // (Its speed is measured by `make bench`'s refresh section, stage read:ppr, never here.)
  const n = 50_000;
  const rows: Record<string, unknown>[] = Array.from({ length: n }, (_, k) => ({
    ...sale,
    price_eur: 100_000 + k * 0.37,
    sale_id: k.toString(16).padStart(16, '0'),
  }));
  assert.is(validateAll(v, 'property-sale', rows).invalid, 0);
  rows[n / 2] = { ...sale, price_eur: 'free' };
  assert.is(validateAll(v, 'property-sale', rows).invalid, 1);
});

test.run();
