import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { buildCompanyIndex } from '../../../pipeline/normalise/company-match.ts';
import {
  evidenceHolds,
  foldName,
  hasLegalForm,
  isPublicBody,
  nameEvidence,
} from '../../../pipeline/normalise/name-evidence.ts';
import type { CompanyRow } from '../../../pipeline/types.ts';

function company(number: string, name: string): CompanyRow {
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
  };
}

const REGISTER = buildCompanyIndex([
  company('111111', 'Murphy Roofing Limited'),
  company('222222', 'Peter McVerry Trust'), // a CLG exempt from using its legal form
  company('333333', 'Seán Power Construction Limited'),
]);

const CASES: [string, string | null, ReturnType<typeof nameEvidence>][] = [
  // company register: the normalised key, legal form included
  ['MURPHY ROOFING LTD.', null, 'company_register'],
  ['The Murphy Roofing Limited', null, 'company_register'],
  ['Peter McVerry Trust', null, 'company_register'],
  ['Sean Power Construction Ltd', null, 'company_register'],
  // a declared number whose company has the same name without its legal form
  ['Murphy Roofing', '111111', 'company_register'],
  ['Murphy Roofing', '0111111', 'company_register'],
  // legal forms, in English and Irish, not on the register
  ['Zyxwv Quux Limited', null, 'legal_form'],
  ['Zyxwv Quux DAC', null, 'legal_form'],
  ['Zyxwv Quux Designated Activity Company', null, 'legal_form'],
  ['Zyxwv Quux Unlimited Company', null, 'legal_form'],
  ['Zyxwv Quux ULC', null, 'legal_form'],
  ['Zyxwv Quux plc', null, 'legal_form'],
  ['Zyxwv Quux CLG', null, 'legal_form'],
  ['Zyxwv Quux Company Limited by Guarantee', null, 'legal_form'],
  ['Zyxwv Quux LLP', null, 'legal_form'],
  ['Ó Cinnéide Uisce Teoranta', null, 'legal_form'],
  ['Ó Cinnéide Uisce Teo.', null, 'legal_form'],
  ['Zyxwv Quux Cuideachta Ghníomhaíochta Ainmnithe', null, 'legal_form'],
  // public bodies without a legal form
  ['Cork County Council', null, 'public_body'],
  ['DUN LAOGHAIRE RATHDOWN COUNTY COUNCIL', null, 'public_body'],
  ['Limerick City and County Council', null, 'public_body'],
  ['Uisce Éireann', null, 'public_body'],
  ['Uisce Eireann', null, 'public_body'],
  ['Health Service Executive', null, 'public_body'],
  ['The Minister for Education', null, 'public_body'],
  ['Board of Management of Scoil Mhuire', null, 'public_body'],
  ['Kerry Education and Training Board', null, 'public_body'],
  ['Clúid Housing', null, 'public_body'],
  ['Ballyboy GAA Club', null, 'public_body'],
  ['Ballyboy Tidy Towns Association', null, 'public_body'],
  // individuals: business words, trading names, a name like a registered company's, any number
  ['Rory Power', null, null],
  ['Mary Church', null, null],
  ['Tom Bank', null, null],
  ['Aoife Ireland', null, null],
  ['Seán Irish', null, null],
  ['Liam Stone Services', null, null],
  ['Rory Power Roofing', null, null],
  ['Seán Power Construction', null, null], // the company is "… Limited": resemblance is not evidence
  ['Seán Power Construction', '111111', null], // a number of another company
  ['Murphy Roofing', null, null],
  ['Power Energy Wind Solar Services', null, null],
  ['Cork', null, null],
  ['Council', null, null],
  ['Limited', null, null],
  ['', null, null],
];

for (const [name, declared, expected] of CASES) {
  test(`nameEvidence(${JSON.stringify(name)}${declared ? `, ${declared}` : ''}) → ${expected}`, () => {
    assert.is(nameEvidence(name, REGISTER, declared), expected);
    if (expected !== null)
      assert.ok(evidenceHolds(name, expected, REGISTER, declared), 'the gate accepts what the rule found');
    for (const other of ['company_register', 'legal_form', 'public_body', null]) {
      if (expected === null)
        assert.not.ok(evidenceHolds(name, other, REGISTER, declared), `the gate refuses ${other} for an individual`);
    }
  });
}

test('helpers: foldName, hasLegalForm, isPublicBody', () => {
  assert.is(foldName('The Minister for Education & Youth'), 'minister for education and youth');
  assert.ok(hasLegalForm('X Ltd.'));
  assert.not.ok(hasLegalForm('Ltd'), 'a legal form alone is not a name');
  assert.not.ok(hasLegalForm('Limited Edition Hair'), 'a legal form must end the name');
  assert.ok(isPublicBody('Comhairle Contae Chiarraí') || isPublicBody('Kerry County Council'));
  assert.not.ok(isPublicBody('Mary Council'), 'an unknown council is not a public body');
});
test.run();
