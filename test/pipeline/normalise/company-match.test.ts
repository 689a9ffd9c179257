import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { buildCompanyIndex, companyNameKey } from '../../../pipeline/normalise/company-match.ts';
import { readCsvBatches } from '../../../pipeline/lib/csv.ts';
import type { CompanyRow } from '../../../pipeline/types.ts';
import { testIf } from '../../helpers/skip.ts';

const repoRoot = fileURLToPath(new URL('../../..', import.meta.url));
const realdata = join(repoRoot, '../shared/realdata');

function company(num: string, name: string, extra: Partial<CompanyRow> = {}): CompanyRow {
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
    ...extra,
  };
}

const keyCases: [string, string][] = [
  ['Murphy Roofing Limited', 'murphy roofing ltd'],
  ['MURPHY ROOFING LTD.', 'murphy roofing ltd'],
  ['The Murphy Roofing Ltd', 'murphy roofing ltd'],
  ['Murphy  Roofing   Teoranta', 'murphy roofing ltd'],
  ['Ó Cinnéide Uisce & Teas Teo', 'ocinneide uisce and teas ltd'],
  ['J.P. O Brien Builders Ltd', 'jp obrien builders ltd'],
  ['J P OBrien Builders Ltd', 'jp obrien builders ltd'],
  ['S.I.S. Limited', 'sis ltd'],
  ['T Dunne and Sons Limited', 't dunne and sons ltd'],
  ['Bay O Connor Ltd', 'bay oconnor ltd'],
  ['Greenfield Solar Designated Activity Company', 'greenfield solar dac'],
  ['Greenfield Solar D.A.C.', 'greenfield solar dac'],
  ['Bank Holdings Public Limited Company', 'bank holdings plc'],
  ['Tidy Towns Company Limited by Guarantee', 'tidy towns clg'],
  ['Family Trust Unlimited Company', 'family trust uc'],
  ["O'Brien & Sons (Builders) Limited", 'obrien and sons builders ltd'],
  ['A. & S. Clothing Limited', 'a and s clothing ltd'],
  ['Theatre Lighting Ltd', 'theatre lighting ltd'],
];

for (const [name, key] of keyCases) {
  test(`companyNameKey(${JSON.stringify(name)})`, () => {
    assert.is(companyNameKey(name), key);
  });
}

const register = [
  company('1001', 'Murphy Roofing Limited'),
  company('1002', 'Greenfield Solar DAC'),
  company('1003', 'Atlantic Data Centres Ireland Limited'),
  company('1004', 'Kelly Brothers Plant Hire and Civil Engineering Limited'),
  company('1005', 'Murphy Roofing Limited', { status: 'Dissolved', reg_date: '2001-01-01' }),
  company('1006', 'Roofing Supplies Limited'),
];
const index = buildCompanyIndex(register);

const matchCases: { name: string | null; expect: [string, number] | null }[] = [
  { name: 'Murphy Roofing Limited', expect: ['1001', 1] }, // live company preferred over dissolved namesake
  { name: 'murphy roofing ltd.', expect: ['1001', 1] },
  { name: 'The Murphy Roofing Ltd', expect: ['1001', 1] },
  { name: 'Greenfield Solar Designated Activity Company', expect: ['1002', 1] },
  { name: 'Greenfield Solar Limited', expect: ['1002', 0.9] }, // suffix variant
  { name: 'Greenfield Solar', expect: ['1002', 0.9] },
  { name: 'Atlantic Data Centres Ireland', expect: ['1003', 0.9] },
  // token variants: one word more (7/8 tokens shared) or one fewer (6/7)
  { name: 'Kelly Brothers Plant Hire & Civil Engineering Services Ltd', expect: ['1004', 0.88] },
  { name: 'Kelly Brothers Plant Hire Civil Engineering Limited', expect: ['1004', 0.86] },
  { name: 'Murphy Plumbing Limited', expect: null },
  { name: 'Roofing Limited', expect: null },
  { name: '', expect: null },
  { name: null, expect: null },
];

for (const c of matchCases) {
  test(`match(${JSON.stringify(c.name)})`, () => {
    const m = index.match(c.name);
    if (c.expect === null) assert.is(m, null);
    else {
      assert.ok(m, 'expected a match');
      assert.equal([m!.company_number, m!.confidence], c.expect);
    }
  });
}

test('match: cached results are not shared objects', () => {
  const a = index.match('Murphy Roofing Limited')!;
  a.confidence = 0;
  assert.is(index.match('Murphy Roofing Limited')!.confidence, 1);
});

test('match: the choice among namesakes does not depend on input order', () => {
  const reversed = buildCompanyIndex([...register].reverse());
  for (const c of matchCases) assert.equal(reversed.match(c.name), index.match(c.name), String(c.name));
});

test('match: 12,000 companies × 60,000 lookups (the speed is measured by make bench, not here)', () => {
  const words = [
    'north',
    'south',
    'atlantic',
    'celtic',
    'green',
    'rock',
    'oak',
    'river',
    'hill',
    'bay',
    'stone',
    'glen',
  ];
  const trades = [
    'roofing',
    'building',
    'electrical',
    'plumbing',
    'solar',
    'wind',
    'civil',
    'joinery',
    'paving',
    'plant hire',
  ];
  const rows: CompanyRow[] = [];
  for (let i = 0; i < 12_000; i++) {
    const name = `${words[i % 12]} ${words[(i * 7) % 12]} ${trades[i % 10]} ${i} Limited`;
    rows.push(company(String(i + 1), name));
  }
  const idx = buildCompanyIndex(rows);
  let hits = 0;
  for (let j = 0; j < 60_000; j++) {
    const i = (j * 7919) % 12_000;
    const base = `${words[i % 12]} ${words[(i * 7) % 12]} ${trades[i % 10]} ${i}`;
    const variant =
      j % 3 === 0 ? `${base} Ltd` : j % 3 === 1 ? `THE ${base.toUpperCase()} LIMITED` : `${base} Services Ltd`;
    if (idx.match(j % 5 === 0 ? `${variant} ${j}` : variant)) hits++;
  }
  assert.ok(hits > 30_000, `hits ${hits}`);
});

const croFile = join(realdata, 'cro_derived_sme_dissolution/test_positives_only.csv');
testIf(test, existsSync(croFile) ? null : `${croFile} not found (real data folder missing)`)(
  'real CRO names: self-match and variants match back',
  async () => {
    const file = croFile;
    const rows: CompanyRow[] = [];
    let header: string[] | null = null;
    for await (const batch of readCsvBatches(file)) {
      for (const rec of batch) {
        if (!header) header = rec.fields;
        else
          rows.push(
            company(rec.fields[header.indexOf('company_num')]!, rec.fields[header.indexOf('company_name')]!.trim()),
          );
      }
    }
    assert.is(rows.length, 3841);
    const idx = buildCompanyIndex(rows);
    const keyCount = new Map<string, number>();
    for (const r of rows) keyCount.set(r.name_key, (keyCount.get(r.name_key) ?? 0) + 1);
    let variantsTried = 0;
    for (const r of rows) {
      assert.ok(r.name_key.length > 0, r.company_name);
      const self = idx.match(r.company_name)!;
      assert.is(self.confidence, 1, r.company_name);
      assert.is(companyNameKey(self.company_name), r.name_key);
      if (keyCount.get(r.name_key) !== 1) continue;
      const variants = [
        r.company_name.replace(/\bLIMITED\b/, 'Ltd'),
        r.company_name.toLowerCase(),
        r.company_name.replace(/[.,'()&-]/g, ' '),
        /^THE /.test(r.company_name) ? r.company_name.slice(4) : `THE ${r.company_name}`,
      ];
      for (const v of variants) {
        if (/&/.test(r.company_name) && !/&/.test(v)) continue; // '&' removed changes the words
        variantsTried++;
        const m = idx.match(v);
        assert.ok(m, `no match for variant ${v}`);
        assert.is(m!.company_number, r.company_number, v);
        assert.ok(m!.confidence >= 0.9, `${v}: ${m!.confidence}`);
      }
    }
    assert.ok(variantsTried > 10_000, `variants tried ${variantsTried}`);
  },
);

test.run();
