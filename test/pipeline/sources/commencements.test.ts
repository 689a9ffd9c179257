import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { normaliseCommencement, readCommencements } from '../../../pipeline/sources/commencements.ts';
import { COMMENCEMENT_COLUMNS } from '../../../pipeline/sources/formats.ts';
import type { CommencementRow, Reject } from '../../../pipeline/types.ts';

const CSV = fileURLToPath(new URL('../../fixtures/commencements/commencements.csv', import.meta.url));

/** Owner names and phones, and an individual builder, written into the fixture. */
const PERSONAL = ['Maeve', 'Quinlivan', '087 555 0199', 'Ciaran', 'Velasquez', '+353 86 123 4567', '123 4567'];

function rec(over: Record<string, string>): Record<string, string> {
  const r: Record<string, string> = {};
  for (const c of COMMENCEMENT_COLUMNS) r[c] = '';
  r.CN_Number = 'CN9';
  return Object.assign(r, over);
}

test('normaliseCommencement: one rejected column per case, detail names it', () => {
  const cases: [Record<string, string>, Reject['reason'], string][] = [
    [{ CN_Number: '  ' }, 'missing_field', 'CN_Number'],
    [{ CN_Date_Granted: '2023-02-30' }, 'invalid_date', 'CN_Date_Granted'],
    [{ CN_Proposed_end_date: 'tbc' }, 'invalid_date', 'CN_Proposed_end_date'],
    [{ CCC_Date_Validated: '13/13/2023' }, 'invalid_date', 'CCC_Date_Validated'],
    [{ CN_Total_Number_of_Dwelling_Units: '1.5' }, 'invalid_number', 'CN_Total_Number_of_Dwelling_Units'],
    [{ CCC_Units_Completed: 'some' }, 'invalid_number', 'CCC_Units_Completed'],
    [{ CN_LAT: '53.3', CN_LNG: 'west' }, 'invalid_coordinates', 'CN_LNG'],
    [{ CN_LAT: '-6.2', CN_LNG: '53.3' }, 'invalid_coordinates', 'CN_LAT/CN_LNG'], // swapped
  ];
  for (const [over, reason, detail] of cases) {
    const r = normaliseCommencement(rec(over), 'f.csv', 4) as Reject;
    assert.is(r.reason, reason, JSON.stringify(over));
    assert.is(r.detail, detail, JSON.stringify(over));
    assert.is(r.source, 'commencements');
  }
});

test('normaliseCommencement: the builder as named (published only with evidence, by normalise)', () => {
  const cases: [string, string, string | null, string | null][] = [
    ['Castlebuild Construction Ltd', '654321', 'Castlebuild Construction Ltd', '654321'],
    ['Eoin  Mulcahy', '', 'Eoin Mulcahy', null],
    ['Eoin Mulcahy', '99887', 'Eoin Mulcahy', '99887'],
    ['', '', null, null],
  ];
  for (const [name, num, wantName, wantNum] of cases) {
    const row = normaliseCommencement(
      rec({ CN_Builder_Name: name, CN_Builder_Company_Number: num }),
      'f',
      2,
    ) as CommencementRow;
    assert.is(row.builder_name, wantName, name);
    assert.is(row.builder_company_number, wantNum, name);
  }
});

test('normaliseCommencement: authority and county resolve or are null', () => {
  const cases: [string, string, string | null, string | null][] = [
    ['Cork County Council', 'Co. Cork', 'Cork County', 'Cork'],
    ['DLR', 'DUBLIN', 'Dún Laoghaire-Rathdown', 'Dublin'],
    ['Nowhere Council', 'Narnia', null, null],
    ['', '', null, null],
  ];
  for (const [la, county, wantLa, wantCounty] of cases) {
    const row = normaliseCommencement(rec({ LocalAuthority: la, CN_County: county }), 'f', 2) as CommencementRow;
    assert.is(row.authority, wantLa, la);
    assert.is(row.county, wantCounty, county);
  }
});

test('readCommencements: the fixture, row by row', async () => {
  const res = await readCommencements([CSV]);
  assert.is(res.lines, 10);
  assert.is(res.rows.length + res.rejects.length, res.lines);
  assert.equal(
    res.rows.map((r) => r.line),
    [10, 3, 11],
  ); // line 10 replaced line 2 in place

  const [cn1, cn2, cn10] = res.rows as [CommencementRow, CommencementRow, CommencementRow];
  assert.is(cn1.cn_number, 'CN0001');
  assert.is(cn1.permission_number, '23/00777');
  assert.is(cn1.description, '10 houses (phase 1 revised)');
  assert.is(cn1.builder_name, 'Castlebuild Construction Ltd');
  assert.is(cn1.authority, 'Cork County');
  assert.is(cn1.county, 'Cork');
  assert.is(cn1.commencement_date, '2023-05-01');
  assert.is(cn1.date_granted, '2022-11-30');

  assert.is(cn2.cn_number, 'CN0002');
  assert.is(cn2.permission_number, 'G23 / 0042');
  assert.is(cn2.builder_name, 'Tadhg Fennimore'); // an individual: dropped by normalise (no evidence)
  assert.is(cn2.builder_company_number, null);
  assert.is(cn2.authority, null);
  assert.is(cn2.county, null);
  assert.is(cn2.lat, null);
  assert.is(cn2.not_commenced, true);
  assert.is(cn2.opt_out, true);

  assert.is(cn10.ccc_number, 'CCC0010');
  assert.is(cn10.ccc_date, '2024-02-10');
  assert.is(cn10.ccc_units_completed, 8);
  assert.is(cn10.ccc_type, 'Standard');
  assert.is(cn10.authority, 'Dún Laoghaire-Rathdown');

  const rejects = [...res.rejects].sort((a, b) => a.line - b.line);
  assert.equal(
    rejects.map((r) => [r.line, r.reason, r.detail]),
    [
      [2, 'duplicate', `superseded by ${CSV}:10`],
      [4, 'missing_field', 'CN_Number'],
      [5, 'invalid_date', 'CN_Commencement_Date'],
      [6, 'invalid_number', 'CN_Units_for_phase'],
      [7, 'invalid_coordinates', 'CN_LAT/CN_LNG'],
      [8, 'invalid_coordinates', 'CN_LAT'],
      [9, 'malformed_row', '4 fields, header has 34'],
    ],
  );
  assert.is(rejects[0]!.key, 'CN0001');
});

test('normaliseCommencement: WGS84 coordinates kept as is, Eircode reduced to its routing key', () => {
  const row = normaliseCommencement(
    rec({ CN_LAT: '51.9', CN_LNG: '-8.47', CN_Eircode: 'P31 XY12' }),
    'f',
    2,
  ) as CommencementRow;
  assert.equal([row.lat, row.lon, row.eircode_routing_key], [51.9, -8.47, 'P31']);
  assert.not.ok(JSON.stringify(row).includes('XY12'));
});

test('readCommencements: owner names and phones appear nowhere (builders are decided on evidence by normalise)', async () => {
  const text = JSON.stringify(await readCommencements([CSV]));
  for (const s of PERSONAL) assert.not.ok(text.includes(s), `leaked ${s}`);
  assert.not.ok(text.includes('gate code'), 'extra columns are not carried');
});

test('readCommencements: CRLF and BOM, and a file missing CN_Number', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'cn-test-'));
  try {
    const crlf = join(dir, 'crlf.csv');
    const text = readFileSync(CSV, 'utf8');
    writeFileSync(crlf, '\uFEFF' + text.replace(/\n/g, '\r\n'));
    const plain = await readCommencements([CSV]);
    const res = await readCommencements([crlf]);
    assert.equal(res.rows, plain.rows);
    assert.is(res.rejects.length, plain.rejects.length);

    const bad = join(dir, 'bad.csv');
    writeFileSync(bad, 'Number,Town\nCN1,Cork\n');
    const none = await readCommencements([bad]);
    assert.equal(
      [none.rows.length, none.lines, none.rejects.map((r) => [r.reason, r.line])],
      [0, 1, [['unknown_header', 1]]],
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
