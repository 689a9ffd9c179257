import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { VERTICALS } from '../../../pipeline/normalise/classify.ts';
import type { LeadDraft } from '../../../pipeline/normalise/leads.ts';
import { buildSuppliers, countProjects } from '../../../pipeline/normalise/suppliers.ts';
import type { CompanyRow } from '../../../pipeline/types.ts';
import { loadValidators } from '../../../pipeline/validate.ts';

function company(number: string, name: string, o: Partial<CompanyRow> = {}): CompanyRow {
  return {
    company_number: number,
    company_name: name,
    name_key: '',
    status: 'Normal',
    status_code: '1',
    company_type: null,
    reg_date: '2010-01-01',
    last_ar_date: null,
    last_accounts_date: null,
    dissolved_date: null,
    status_date: null,
    address: null,
    county: 'Cork',
    eircode_routing_key: null,
    nace_code: '4391',
    line: 2,
    ...o,
  };
}

/** Only the field buildSuppliers reads; the rest of a lead is irrelevant here. */
const lead = (contractor: string | null) => ({ main_contractor_company_number: contractor }) as LeadDraft;

const FILTER_CASES: [string, CompanyRow, boolean][] = [
  ['roofer, Normal, Cork', company('1', 'A Roofing Ltd'), true],
  ['status with trailing space and other case', company('2', 'B Ltd', { status: 'normal ' }), true],
  ['dissolved', company('3', 'C Ltd', { status: 'Dissolved' }), false],
  ['no status', company('4', 'D Ltd', { status: null }), false],
  ['county unknown', company('5', 'E Ltd', { county: null }), false],
  ['county not a county', company('6', 'F Ltd', { county: 'Atlantis' }), false],
  ['county spelled "Co. Cork"', company('7', 'G Ltd', { county: 'Co. Cork' }), true],
  ['NACE of no vertical (software)', company('8', 'H Ltd', { nace_code: '6202' }), false],
  ['no NACE', company('9', 'I Ltd', { nace_code: null }), false],
];
for (const [name, c, kept] of FILTER_CASES) {
  test(`buildSuppliers filter: ${name} → ${kept ? 'kept' : 'dropped'}`, () => {
    assert.is(buildSuppliers([c], new Map()).length > 0, kept);
  });
}

test('buildSuppliers: one row per (company, vertical) a NACE code serves', () => {
  const rows = buildSuppliers([company('10', 'Spark Electrical Ltd', { nace_code: '4321' })], new Map());
  const expected = VERTICALS.filter((v) => v.nace.includes('4321'))
    .map((v) => v.code)
    .sort();
  assert.equal(
    rows.map((r) => r.vertical),
    expected,
  );
  assert.ok(expected.includes('electrical') && expected.includes('solar'));
  for (const r of rows)
    assert.equal(
      { ...r, vertical: '' },
      {
        company_number: '10',
        company_name: 'Spark Electrical Ltd',
        vertical: '',
        county: 'Cork',
        nace_code: '4321',
        projects_as_builder: 0,
      },
    );
});

test('buildSuppliers: projects_as_builder counts leads naming the company; sort order', () => {
  const companies = [
    company('20', 'Zeta Roofing Ltd'),
    company('21', 'Alpha Roofing Ltd'),
    company('22', 'Beta Roofing Ltd'),
    company('23', 'Dublin Roofing Ltd', { county: 'Dublin' }),
    company('24', 'Cork Landscapes Ltd', { nace_code: '8130' }),
    company('20', 'Zeta Roofing Ltd'), // repeated register row: counted once
  ];
  const leads = [lead('20'), lead('20'), lead('22'), lead(null), lead('999')];
  const rows = buildSuppliers(companies, countProjects(leads)).map((r) => [
    r.county,
    r.vertical,
    r.company_name,
    r.projects_as_builder,
  ]);
  assert.equal(rows, [
    ['Cork', 'landscaping', 'Cork Landscapes Ltd', 0],
    ['Cork', 'roofing', 'Zeta Roofing Ltd', 2],
    ['Cork', 'roofing', 'Beta Roofing Ltd', 1],
    ['Cork', 'roofing', 'Alpha Roofing Ltd', 0],
    ['Dublin', 'roofing', 'Dublin Roofing Ltd', 0],
  ]);
});

test('buildSuppliers: rows validate against schemas/supplier.schema.json', () => {
  const v = loadValidators();
  const rows = buildSuppliers(
    [
      company('30', 'Spark Electrical Ltd', { nace_code: '4321' }),
      company('31', 'Green Gardens Ltd', { nace_code: '8130', county: 'Co. Galway' }),
    ],
    countProjects([lead('30')]),
  );
  assert.ok(rows.length > 0);
  for (const r of rows) assert.equal(v.validate('supplier', r), [], `${r.company_number}/${r.vertical}`);
});

test.run();
