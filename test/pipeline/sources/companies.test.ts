import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { fileURLToPath } from 'node:url';
import { normaliseCompany, normaliseFiling, readCompanies } from '../../../pipeline/sources/companies.ts';
import { CRO_COMPANY_COLUMNS } from '../../../pipeline/sources/formats.ts';
import { countReasons } from '../../../pipeline/sources/common.ts';
import type { CompanyRow, Reject } from '../../../pipeline/types.ts';

const fixture = (name: string) => fileURLToPath(new URL(`../../fixtures/companies/${name}`, import.meta.url));
const isReject = (x: object): x is Reject => 'reason' in x;

function companyRec(over: Record<string, string>): Record<string, string> {
  const rec: Record<string, string> = Object.fromEntries(CRO_COMPANY_COLUMNS.map((c) => [c, '']));
  return { ...rec, company_num: '123', company_name: 'Example Builders Limited', ...over };
}

const companyCases: {
  name: string;
  over: Record<string, string>;
  expect: Partial<CompanyRow> | [Reject['reason'], string | null];
}[] = [
  { name: 'trailing status spaces trimmed', over: { company_status: 'Normal ' }, expect: { status: 'Normal' } },
  { name: 'nace float form', over: { nace_v2_code: '6202.0' }, expect: { nace_code: '6202' } },
  { name: 'nace lost leading zero', over: { nace_v2_code: '111.0' }, expect: { nace_code: '0111' } },
  { name: 'company number with .0', over: { company_num: '123.0' }, expect: { company_number: '123' } },
  {
    name: 'address joined, county from last line',
    over: { company_address_1: 'Main Street', company_address_2: 'Macroom', company_address_3: 'Co. Cork' },
    expect: { address: 'Main Street, Macroom, Co. Cork', county: 'Cork' },
  },
  {
    name: 'Dublin postal district',
    over: { company_address_1: 'Quay St', company_address_2: 'Dublin 6W' },
    expect: { county: 'Dublin' },
  },
  {
    name: 'no county in address',
    over: { company_address_1: 'Unit 1', company_address_2: 'Business Park' },
    expect: { county: null },
  },
  { name: 'no address', over: {}, expect: { address: null, county: null } },
  { name: 'eircode → routing key', over: { eircode: 'd04 x2y3' }, expect: { eircode_routing_key: 'D04' } },
  {
    name: 'name key',
    over: { company_name: 'The Example Builders Ltd.' },
    expect: { name_key: 'example builders ltd' },
  },
  {
    name: 'dates parsed',
    over: { company_reg_date: '05/04/2011', comp_dissolved_date: '2020-01-02' },
    expect: { reg_date: '2011-04-05', dissolved_date: '2020-01-02' },
  },
  { name: 'missing number', over: { company_num: ' ' }, expect: ['missing_field', 'company_num'] },
  { name: 'non-integer number', over: { company_num: '12a' }, expect: ['invalid_number', 'company_num'] },
  { name: 'zero number', over: { company_num: '0' }, expect: ['invalid_number', 'company_num'] },
  { name: 'missing name', over: { company_name: '' }, expect: ['missing_field', 'company_name'] },
  {
    name: 'invalid date names the column',
    over: { last_ar_date: '2020-02-30' },
    expect: ['invalid_date', 'last_ar_date'],
  },
];

for (const c of companyCases) {
  test(`normaliseCompany: ${c.name}`, () => {
    const r = normaliseCompany(companyRec(c.over), 'f.csv', 7);
    if (Array.isArray(c.expect)) {
      assert.ok(isReject(r), 'expected a reject');
      assert.is(r.reason, c.expect[0]);
      assert.is(r.detail, c.expect[1]);
      assert.is(r.line, 7);
      assert.is(r.source, 'companies');
    } else {
      assert.not.ok(isReject(r), JSON.stringify(r));
      for (const [k, v] of Object.entries(c.expect)) assert.equal((r as unknown as Record<string, unknown>)[k], v, k);
    }
  });
}

const filingCases: {
  name: string;
  rec: Record<string, string>;
  expect: Record<string, unknown> | [Reject['reason'], string];
}[] = [
  {
    name: 'good row',
    rec: {
      company_num: '5',
      document_number: 'D1',
      filing_type: 'B1',
      filing_description: ' Annual  Return ',
      received_date: '2024-03-01',
      effective_date: '',
    },
    expect: {
      company_number: '5',
      document_number: 'D1',
      filing_type: 'B1',
      description: 'Annual Return',
      filing_date: '2024-03-01',
      effective_date: null,
    },
  },
  {
    name: 'missing type',
    rec: { company_num: '5', filing_type: '', received_date: '2024-03-01' },
    expect: ['missing_field', 'filing_type'],
  },
  {
    name: 'missing received date',
    rec: { company_num: '5', filing_type: 'B1', received_date: '' },
    expect: ['missing_field', 'received_date'],
  },
  {
    name: 'invalid effective date',
    rec: { company_num: '5', filing_type: 'B1', received_date: '2024-03-01', effective_date: 'soon' },
    expect: ['invalid_date', 'effective_date'],
  },
  {
    name: 'bad company number',
    rec: { company_num: 'x', filing_type: 'B1', received_date: '2024-03-01' },
    expect: ['invalid_number', 'company_num'],
  },
];

for (const c of filingCases) {
  test(`normaliseFiling: ${c.name}`, () => {
    const r = normaliseFiling(c.rec, 'f.csv', 3);
    if (Array.isArray(c.expect)) {
      assert.ok(isReject(r));
      assert.is(r.reason, c.expect[0]);
      assert.is(r.detail, c.expect[1]);
    } else {
      assert.not.ok(isReject(r));
      for (const [k, v] of Object.entries(c.expect)) assert.equal((r as unknown as Record<string, unknown>)[k], v, k);
    }
  });
}

test('readCompanies: extract + filings, every line accounted for', async () => {
  const { companies, filings } = await readCompanies([fixture('cro-companies.csv'), fixture('cro-filings.csv')]);
  assert.is(companies.lines, 11);
  assert.is(companies.rows.length + companies.rejects.length, companies.lines);
  assert.equal(countReasons(companies.rejects), {
    missing_field: 2,
    invalid_number: 1,
    invalid_date: 1,
    malformed_row: 1,
    duplicate: 1,
  });
  assert.equal(
    companies.rows.map((r) => r.company_number),
    ['100001', '100002', '100003', '100004', '100005'],
  );
  // the later row of a duplicate company number wins; the earlier line is the reject
  const dac = companies.rows[1]!;
  assert.is(dac.company_name, 'Knockanore Wind Designated Activity Company');
  assert.is(dac.last_ar_date, '2025-06-01');
  const dup = companies.rejects.find((r) => r.reason === 'duplicate')!;
  assert.equal([dup.line, dup.key, dup.detail], [3, '100002', `superseded by ${fixture('cro-companies.csv')}:12`]);
  const b = companies.rows[0]!;
  assert.equal(
    [b.status, b.nace_code, b.county, b.eircode_routing_key, b.address],
    ['Normal', '4391', 'Galway', 'H91', 'Unit 4 Ballybrit Business Park, Galway, Co. Galway'],
  );
  assert.equal(
    companies.rows.map((r) => r.county),
    ['Galway', 'Dublin', 'Dublin', 'Kilkenny', 'Cork'],
  );

  assert.is(filings.lines, 10);
  assert.is(filings.rows.length + filings.rejects.length, filings.lines);
  assert.equal(countReasons(filings.rejects), { missing_field: 3, invalid_date: 1, malformed_row: 1, duplicate: 1 });
  assert.equal(
    filings.rows.map((f) => f.document_number),
    ['D0000001', 'D0000002', 'D0000003', null],
  );
  assert.is(filings.rows[2]!.company_number, '100003', 'later duplicate document kept');
  assert.ok(filings.rejects.every((r) => r.source === 'companies'));
});

test('readCompanies: header in any order and case', async () => {
  const { companies, filings } = await readCompanies([fixture('cro-companies-reordered.csv')]);
  assert.is(companies.rejects.length, 0);
  assert.is(filings.lines, 0);
  const r = companies.rows[0]!;
  assert.equal(
    [r.company_number, r.company_name, r.name_key, r.county, r.eircode_routing_key, r.nace_code, r.last_ar_date],
    ['200001', 'The Brannock Roofing Co. Ltd', 'brannock roofing co ltd', 'Limerick', 'V94', '4391', null],
  );
});

test('readCompanies: unknown header → one reject for the file', async () => {
  const { companies } = await readCompanies([fixture('not-cro.csv')]);
  assert.is(companies.rows.length, 0);
  assert.equal(
    companies.rejects.map((r) => [r.reason, r.line]),
    [['unknown_header', 1]],
  );
  assert.is(companies.lines, 1);
});

test.run();
