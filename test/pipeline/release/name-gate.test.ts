import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { buildCompanyIndex } from '../../../pipeline/normalise/company-match.ts';
import { checkPublishedNames } from '../../../pipeline/release/name-gate.ts';
import type { CompanyRow } from '../../../pipeline/types.ts';

const REGISTER = buildCompanyIndex([
  {
    company_number: '111111',
    company_name: 'Murphy Roofing Limited',
    name_key: '',
    status: 'Normal',
    status_code: '1',
    company_type: 'LTD',
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
  } as CompanyRow,
]);

const fixture = (name: string): Record<string, unknown>[] =>
  readFileSync(new URL(`../../fixtures/${name}`, import.meta.url), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));

test('a release built with the old word-list classifier is refused, without naming anybody', () => {
  const r = checkPublishedNames({ leads: fixture('old-classifier/leads.ndjson'), infrastructure: [] }, REGISTER);
  assert.is(r.passed, false);
  assert.is(r.failures, 6, 'every name of the fixture: none carries evidence');
  const text = r.messages.join('\n');
  assert.match(text, /leads\.applicant_org: 4 published name/);
  assert.match(text, /117037/);
  for (const name of ['Rory', 'Power', 'Church', 'Stone', 'Bank'])
    assert.not.match(text, new RegExp(name), `the message names no one (${name})`);
});

test('evidence that does not hold for the name is refused; evidence that holds is counted', () => {
  const leads = [
    {
      id: 1,
      applicant_org: 'Rory Power',
      applicant_org_evidence: 'legal_form',
      main_contractor: null,
      main_contractor_evidence: null,
    },
    {
      id: 2,
      applicant_org: 'Mary Church',
      applicant_org_evidence: 'company_register',
      applicant_company_number: '111111',
      main_contractor: null,
    },
    { id: 3, applicant_org: 'Tom Hall', applicant_org_evidence: 'public_body', main_contractor: null },
    {
      id: 4,
      applicant_org: 'Murphy Roofing Ltd',
      applicant_org_evidence: 'company_register',
      main_contractor: 'Murphy Roofing',
      main_contractor_evidence: 'company_register',
      main_contractor_company_number: '111111',
    },
    {
      id: 5,
      applicant_org: 'Cork County Council',
      applicant_org_evidence: 'public_body',
      main_contractor: 'Zyxwv Teoranta',
      main_contractor_evidence: 'legal_form',
    },
    { id: 6, applicant_org: null, applicant_org_evidence: null, main_contractor: null, main_contractor_evidence: null },
  ];
  const infrastructure = [
    { id: 9, applicant: 'Knockanore Wind DAC', applicant_evidence: 'legal_form' },
    { id: 10, applicant: 'Pat Mills', applicant_evidence: null },
  ];
  const r = checkPublishedNames({ leads, infrastructure }, REGISTER);
  assert.is(r.passed, false);
  assert.is(r.failures, 4);
  assert.equal(r.counts, {
    leads: {
      applicant_org: { company_register: 1, legal_form: 0, public_body: 1 },
      main_contractor: { company_register: 1, legal_form: 1, public_body: 0 },
    },
    infrastructure: { applicant: { company_register: 0, legal_form: 1, public_body: 0 } },
  });
  const ok = checkPublishedNames({ leads: leads.slice(3), infrastructure: infrastructure.slice(0, 1) }, REGISTER);
  assert.equal([ok.passed, ok.failures, ok.messages], [true, 0, []]);
});

test.run();
