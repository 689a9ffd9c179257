import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  arcgisFeatureRecord,
  cleanApplicationNumber,
  normalisePlanning,
  readPlanning,
} from '../../../pipeline/sources/planning.ts';
import { PLANNING_COLUMNS } from '../../../pipeline/sources/formats.ts';
import type { PlanningRow, Reject } from '../../../pipeline/types.ts';

const FIXTURES = fileURLToPath(new URL('../../fixtures/planning/', import.meta.url));
const CSV = join(FIXTURES, 'planning.csv');
const JSON_FILE = join(FIXTURES, 'planning.json');

/** Personal data written into the fixtures; none of it may survive the adapter. */
const PERSONAL = [
  'Seamus',
  'Ottoway',
  'Quillan',
  'Padraig',
  'Zumwalt',
  'Lighthouse Lane',
  'Orla',
  'Brennock',
  'Harbour View',
  'Brid',
  'Okonkwo',
  'Rathfake Cottage',
  'Docklands Business Park',
];

/** Copy a fixture to a temp dir with its text transformed (CRLF, BOM). */
function variant(src: string, name: string, transform: (buf: Buffer) => Buffer): { file: string; done: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'planning-test-'));
  const file = join(dir, name);
  writeFileSync(file, transform(readFileSync(src)));
  return { file, done: () => rmSync(dir, { recursive: true, force: true }) };
}

const toCrlf = (b: Buffer): Buffer => Buffer.from(b.toString('utf8').replace(/\n/g, '\r\n'), 'utf8');
const withBom = (b: Buffer): Buffer => Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), b]);

function rec(over: Record<string, string>): Record<string, string> {
  const r: Record<string, string> = {};
  for (const c of PLANNING_COLUMNS) r[c] = '';
  Object.assign(r, {
    PlanningAuthority: 'Cork City Council',
    ApplicationNumber: '2341234',
    ReceivedDate: '2023-03-01',
  });
  return Object.assign(r, over);
}

function byLine<T extends { line: number }>(xs: T[]): Map<number, T> {
  return new Map(xs.map((x) => [x.line, x]));
}

test('cleanApplicationNumber trims, upper-cases and collapses spaces', () => {
  const cases: [string, string | null][] = [
    [' fw23a/0123 ', 'FW23A/0123'],
    ['ma23  /   0456', 'MA23 / 0456'],
    ['   ', null],
  ];
  for (const [raw, want] of cases) assert.is(cleanApplicationNumber(raw), want, raw);
});

test('normalisePlanning: one rejected column per case, detail names it', () => {
  const cases: [Record<string, string>, Reject['reason'], string][] = [
    [{ ApplicationNumber: ' ' }, 'missing_field', 'ApplicationNumber'],
    [{ PlanningAuthority: '' }, 'missing_field', 'PlanningAuthority'],
    [{ PlanningAuthority: 'Gotham City Council' }, 'unknown_authority', 'PlanningAuthority'],
    [{ ReceivedDate: '' }, 'missing_field', 'ReceivedDate'],
    [{ ReceivedDate: '2023-13-01' }, 'invalid_date', 'ReceivedDate'],
    [{ GrantDate: 'pending' }, 'invalid_date', 'GrantDate'],
    [{ ETL_DATE: '30/02/2024' }, 'invalid_date', 'ETL_DATE'],
    [{ FIRecDate: 'x' }, 'invalid_date', 'FIRecDate'],
    [{ AreaofSite: '1.2ha' }, 'invalid_number', 'AreaofSite'],
    [{ NumResidentialUnits: '3.5' }, 'invalid_number', 'NumResidentialUnits'],
    [{ FloorArea: 'n/a' }, 'invalid_number', 'FloorArea'],
    [{ ITMEasting: 'east', ITMNorthing: '700000' }, 'invalid_coordinates', 'ITMEasting'],
    [{ ITMEasting: '600000', ITMNorthing: '0' }, 'invalid_coordinates', 'ITMEasting/ITMNorthing'],
  ];
  for (const [over, reason, detail] of cases) {
    const r = normalisePlanning(rec(over), 'f.csv', 7) as Reject;
    assert.is(r.reason, reason, JSON.stringify(over));
    assert.is(r.detail, detail, JSON.stringify(over));
    assert.is(r.line, 7);
    assert.is(r.source, 'planning');
  }
});

test('normalisePlanning: a forename makes a person (name dropped); a name without one waits for evidence', () => {
  const cases: [Record<string, string>, boolean, string | null, boolean][] = [
    [
      { ApplicantForename: '', ApplicantSurname: 'Greenfield Developments Ltd' },
      false,
      'Greenfield Developments Ltd',
      false,
    ],
    [{ ApplicantSurname: 'Cork  County Council', ApplicantAddress: 'City Hall' }, false, 'Cork County Council', true],
    [{ ApplicantForename: 'Aoife', ApplicantSurname: 'Dunphy' }, true, null, true],
    // a business word for a surname changes nothing: a forename is a person
    [{ ApplicantForename: 'Rory', ApplicantSurname: 'Power' }, true, null, true],
    [{ ApplicantForename: 'Mary', ApplicantSurname: 'Church Developments Ltd' }, true, null, true],
    [{ ApplicantAddress: '1 Some Road' }, false, null, true],
    [{}, false, null, false],
  ];
  for (const [over, person, name, contact] of cases) {
    const row = normalisePlanning(rec(over), 'f.csv', 2) as PlanningRow;
    assert.is(row.applicant_person, person, JSON.stringify(over));
    assert.is(row.applicant_name, name, JSON.stringify(over));
    assert.is(row.has_contact, contact, JSON.stringify(over));
  }
  for (const [fore, sur] of [
    ['Aoife', 'Dunphy'],
    ['Rory', 'Power'],
  ] as const) {
    const row = JSON.stringify(
      normalisePlanning(rec({ ApplicantForename: fore, ApplicantSurname: sur, ApplicantAddress: 'Knockfake' }), 'f', 2),
    );
    for (const s of [fore, sur, 'Knockfake']) assert.not.ok(row.includes(s), s);
  }
});

test('normalisePlanning: OneOffHouse flags and eircode routing key only', () => {
  const cases: [string, boolean][] = [
    ['Y', true],
    ['Yes', true],
    ['N', false],
    ['No', false],
    ['', false],
  ];
  for (const [v, want] of cases)
    assert.is((normalisePlanning(rec({ OneOffHouse: v }), 'f', 2) as PlanningRow).one_off_house, want, v);
  const row = normalisePlanning(rec({ DevelopmentPostcode: 't12 ab34' }), 'f', 2) as PlanningRow;
  assert.is(row.eircode_routing_key, 'T12');
  assert.not.ok(JSON.stringify(row).toUpperCase().includes('AB34'));
});

test('readPlanning: the CSV fixture, row by row', async () => {
  const res = await readPlanning([CSV]);
  assert.is(res.lines, 16);
  assert.is(res.rows.length + res.rejects.length, res.lines);
  assert.equal(
    res.rows.map((r) => r.line),
    [2, 14, 4, 16, 18],
  );

  const rows = byLine(res.rows);
  const first = rows.get(2)!;
  assert.is(first.authority, 'Dublin City');
  assert.is(first.application_number, 'D23A/0001');
  assert.is(first.description, 'Construction of 12 apartments');
  assert.is(first.eircode_routing_key, 'D02');
  assert.ok(Math.abs(first.lat! - 53.35) < 1e-4 && Math.abs(first.lon! + 6.26) < 1e-4, `${first.lat},${first.lon}`);
  assert.is(first.site_area_ha, 0.42);
  assert.is(first.num_units, 12);
  assert.is(first.floor_area_m2, 1500.5);
  assert.is(first.received_date, '2023-02-01');
  assert.is(first.decision_date, '2023-03-20');
  assert.is(first.expiry_date, '2028-04-24');
  assert.is(first.etl_date, '2023-03-01');
  assert.is(first.applicant_person, false);
  assert.is(first.applicant_name, 'Brightwater Homes Ltd');
  assert.is(first.has_contact, true);
  assert.is(first.one_off_house, false);
  assert.is(first.site_id, 'S-1');

  const galway = rows.get(14)!; // newer ETL_DATE replaced line 3
  assert.is(galway.authority, 'Galway City');
  assert.is(galway.application_number, 'G23/0042');
  assert.is(galway.applicant_person, true);
  assert.is(galway.applicant_name, null);
  assert.is(galway.lat, null);

  const cork = rows.get(4)!;
  assert.is(cork.authority, 'Cork County');
  assert.is(cork.applicant_person, false);
  assert.is(cork.applicant_name, null);
  assert.is(cork.has_contact, false);
  assert.is(cork.address, null);
  assert.is(cork.received_date, '2023-06-15');

  assert.is(rows.get(16)!.description, 'Demolition of shed, construction of "The Barn" dwelling');
  assert.is(rows.get(16)!.one_off_house, true);
  assert.is(rows.get(18)!.authority, 'Dún Laoghaire-Rathdown');
  assert.is(rows.get(18)!.received_date, '2023-01-09');

  const want: [number, Reject['reason'], string | null][] = [
    [3, 'duplicate', null],
    [5, 'unknown_authority', 'PlanningAuthority'],
    [6, 'missing_field', 'ReceivedDate'],
    [7, 'invalid_date', 'ReceivedDate'],
    [8, 'invalid_date', 'DecisionDate'],
    [9, 'invalid_number', 'FloorArea'],
    [10, 'invalid_coordinates', 'ITMEasting/ITMNorthing'],
    [11, 'malformed_row', null],
    [12, 'missing_field', 'ApplicationNumber'],
    [13, 'duplicate', null],
    [15, 'invalid_number', 'NumResidentialUnits'],
  ];
  const rejects = [...res.rejects].sort((a, b) => a.line - b.line);
  assert.equal(
    rejects.map((r) => [r.line, r.reason]),
    want.map(([l, r]) => [l, r]),
  );
  for (const [line, , detail] of want) {
    if (detail !== null) assert.is(rejects.find((r) => r.line === line)!.detail, detail, `line ${line}`);
  }
  const dupOld = rejects.find((r) => r.line === 13)!;
  assert.is(dupOld.key, 'D23A/0001');
  assert.ok(dupOld.detail!.endsWith('planning.csv:2'), dupOld.detail!);
  assert.ok(rejects.find((r) => r.line === 3)!.detail!.endsWith('planning.csv:14'));
});

test('readPlanning: applicant names and addresses appear nowhere in the output', async () => {
  const text = JSON.stringify(await readPlanning([CSV, JSON_FILE]));
  for (const s of PERSONAL) assert.not.ok(text.includes(s), `leaked ${s}`);
});

test('readPlanning: duplicates across files, equal ETL dates keep the later file', async () => {
  const res = await readPlanning([CSV, CSV]);
  assert.is(res.lines, 32);
  assert.is(res.rows.length, 5);
  assert.is(res.rows.length + res.rejects.length, res.lines);
  assert.ok(res.rejects.filter((r) => r.reason === 'duplicate').length === 2 + 5 + 2);
});

test('readPlanning: CRLF line endings and a UTF-8 BOM give the same rows', async () => {
  const plain = await readPlanning([CSV]);
  const v = variant(CSV, 'crlf-bom.csv', (b) => withBom(toCrlf(b)));
  try {
    const res = await readPlanning([v.file]);
    assert.equal(res.rows, plain.rows);
    assert.equal(
      res.rejects.map((r) => [r.line, r.reason, r.detail?.replace(v.file, CSV)]),
      plain.rejects.map((r) => [r.line, r.reason, r.detail]),
    );
  } finally {
    v.done();
  }
});

test('readPlanning: a file without the required columns is one unknown_header reject', async () => {
  const res = await readPlanning([join(FIXTURES, 'bad-header.csv')]);
  assert.equal(res.rows, []);
  assert.is(res.lines, 1);
  assert.equal(
    res.rejects.map((r) => [r.reason, r.line]),
    [['unknown_header', 1]],
  );
});

test('readPlanning: the ArcGIS JSON form with epoch-ms dates', async () => {
  const res = await readPlanning([JSON_FILE]);
  assert.is(res.lines, 4);
  assert.is(res.rows.length + res.rejects.length, 4);
  const [solar, house] = res.rows;
  assert.ok(solar && house);
  assert.is(solar.application_number, '23/60001');
  assert.is(solar.authority, 'Kildare');
  assert.is(solar.received_date, '2023-02-01');
  assert.is(solar.decision_date, '2023-06-15');
  assert.is(solar.etl_date, '2024-01-10');
  assert.is(solar.num_units, 0);
  assert.is(solar.floor_area_m2, 320.5);
  assert.is(solar.site_id, '77');
  assert.is(solar.applicant_name, 'Kilbrack Renewables Ltd');
  assert.ok(Math.abs(solar.lat! - 53.35) < 1e-4 && Math.abs(solar.lon! + 6.26) < 1e-4); // from geometry
  assert.is(house.application_number, 'MA23 / 0456');
  assert.is(house.applicant_person, true);
  assert.is(house.one_off_house, true);
  assert.is(house.lat, null);
  assert.equal(
    res.rejects.map((r) => [r.line, r.reason, r.detail]),
    [
      [3, 'missing_field', 'ReceivedDate'],
      [4, 'malformed_row', 'attributes'],
    ],
  );
});

test('readPlanning: unreadable JSON documents are single file rejects', async () => {
  const cases: [string, Reject['reason']][] = [
    ['{"features": [', 'malformed_row'],
    ['{"type": "FeatureCollection"}', 'unknown_header'],
    ['{"features": [{"attributes": {"Foo": 1}}]}', 'unknown_header'],
  ];
  const dir = mkdtempSync(join(tmpdir(), 'planning-json-'));
  try {
    for (const [text, reason] of cases) {
      const file = join(dir, 'x.json');
      writeFileSync(file, text);
      const res = await readPlanning([file]);
      assert.equal([res.rows.length, res.lines, res.rejects.map((r) => r.reason)], [0, 1, [reason]], text);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('arcgisFeatureRecord: geometry by spatial reference, attributes as text', () => {
  const near = (a: string | undefined, b: number): boolean => Math.abs(Number(a) - b) < 1;
  const itm = arcgisFeatureRecord({ attributes: { A: 1, B: null }, geometry: { x: 715845.9, y: 734720.3 } }, 2157)!;
  assert.equal([itm.A, itm.B, itm.ITMEasting, itm.ITMNorthing], ['1', '', '715845.9', '734720.3']);
  const wgs = arcgisFeatureRecord({ attributes: {}, geometry: { x: -6.26, y: 53.35 } }, 4326)!;
  assert.ok(near(wgs.ITMEasting, 715845.9) && near(wgs.ITMNorthing, 734720.3), JSON.stringify(wgs));
  const merc = arcgisFeatureRecord({ attributes: {}, geometry: { x: -696860.01, y: 7048002.69 } }, 102100)!;
  assert.ok(near(merc.ITMEasting, 715846) && near(merc.ITMNorthing, 734720), JSON.stringify(merc));
  const own = arcgisFeatureRecord(
    { attributes: { ITMEasting: 600000, ITMNorthing: 700000 }, geometry: { x: 1, y: 2 } },
    2157,
  )!;
  assert.equal([own.ITMEasting, own.ITMNorthing], ['600000', '700000']);
  assert.is(arcgisFeatureRecord({ geometry: { x: 1, y: 2 } }, null), null);
  assert.is(arcgisFeatureRecord('nope', null), null);
});

test.run();
