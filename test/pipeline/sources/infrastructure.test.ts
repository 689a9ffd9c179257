import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  consentingCaseUrl,
  CONSENTING_CASE_URL,
  inferTechnology,
  inferVertical,
  normaliseAbpCase,
  normaliseAuction,
  normaliseDataCentre,
  normaliseGridConnection,
  projectKey,
  readInfrastructure,
} from '../../../pipeline/sources/infrastructure.ts';
import { countReasons } from '../../../pipeline/sources/common.ts';
import { inIreland } from '../../../pipeline/lib/itm.ts';
import type { InfraFragment, Reject } from '../../../pipeline/types.ts';
import { testIf } from '../../helpers/skip.ts';

const repoRoot = fileURLToPath(new URL('../../..', import.meta.url));
const realdata = join(repoRoot, '../shared/realdata');
const fixture = (name: string) => fileURLToPath(new URL(`../../fixtures/infrastructure/${name}`, import.meta.url));
const isReject = (x: object): x is Reject => 'reason' in x;

const keyCases: [string, Parameters<typeof projectKey>[1], string][] = [
  ['Knockanore Wind Farm', 'wind', 'wind:knockanore'],
  ['KNOCKANORE  WINDFARM ', 'wind', 'wind:knockanore'],
  ['Knockanore', 'wind', 'wind:knockanore'],
  ['Tullabeg Solar Farm', 'solar', 'solar:tullabeg'],
  ['Tullabeg Solar PV Project', 'solar', 'solar:tullabeg'],
  ['Dromana Battery Energy Storage System', 'battery_storage', 'battery_storage:dromana'],
  ['Dromana BESS Ltd', 'battery_storage', 'battery_storage:dromana'],
  ['Kilpaddoge Substation', 'grid', 'grid:kilpaddoge'],
  ['Atlantic Hub Data Center', 'data_centre', 'data_centre:atlantic hub'],
  ['Dún Árd Wind Park', 'wind', 'wind:dun ard'],
  ['Wind Farm', 'wind', 'wind:wind farm'],
  ['Mystery Scheme', null, 'unknown:mystery scheme'],
];
for (const [name, vertical, key] of keyCases) {
  test(`projectKey(${JSON.stringify(name)}, ${vertical})`, () => assert.is(projectKey(name, vertical), key));
}

const verticalCases: [string, ReturnType<typeof inferVertical>, string | null][] = [
  ['12 wind turbines and 110 kV substation', 'wind', 'onshore_wind'],
  ['offshore wind farm of 900 MW', 'wind', 'offshore_wind'],
  ['solar photovoltaic array', 'solar', 'solar_pv'],
  ['ground mounted PV panels', 'solar', 'solar_pv'],
  ['battery energy storage system (BESS)', 'battery_storage', 'bess'],
  ['100 MW energy storage facility', 'battery_storage', 'bess'],
  ['220 kV substation', 'grid', 'substation'],
  ['Celtic Interconnector converter station', 'grid', 'interconnector'],
  ['uprate of the 110kV line', 'grid', 'transmission_line'],
  ['data centre campus with 110 kV substation', 'data_centre', 'data_centre'],
  ['new motorway junction', null, null],
];
for (const [text, vertical, tech] of verticalCases) {
  test(`inferVertical/inferTechnology(${JSON.stringify(text)})`, () => {
    assert.is(inferVertical(text), vertical);
    assert.is(inferTechnology(vertical, text), tech);
  });
}

const abp = (over: Record<string, string>) => ({
  ABPCASEID: 'ABP-1-25',
  DEVDESC: 'Glen Wind Farm: 7 turbines (up to 42.5 MW)',
  DEVADDRESS: 'Glen, Co. Cork',
  LODGEDON: '2025-02-01',
  DECISION: '',
  DECIDED_ON: '',
  LINKABPWEB: 'https://example.ie/1',
  PLANINGATY: 'Cork County Council',
  CATEGORY: 'Strategic Infrastructure Development',
  ...over,
});

type Case = {
  name: string;
  run: () => InfraFragment | Reject;
  expect: Partial<InfraFragment> | [Reject['reason'], string | null];
};
const rowCases: Case[] = [
  {
    name: 'abp: name before colon, capacity, authority, dates',
    run: () => normaliseAbpCase(abp({}), 'a.csv', 2),
    expect: {
      name: 'Glen Wind Farm',
      project_key: 'wind:glen',
      vertical: 'wind',
      technology: 'onshore_wind',
      capacity_mw: 42.5,
      authority: 'Cork County',
      county: 'Cork',
      lodged_date: '2025-02-01',
      decision: null,
      case_id: 'ABP-1-25',
    },
  },
  {
    name: 'abp: MWh is not capacity',
    run: () => normaliseAbpCase(abp({ DEVDESC: 'Lee BESS: 200 MWh storage, 50MW export' }), 'a.csv', 2),
    expect: { capacity_mw: 50, vertical: 'battery_storage', project_key: 'battery_storage:lee' },
  },
  {
    name: 'abp: no colon → description truncated as name',
    run: () => normaliseAbpCase(abp({ DEVDESC: 'Solar farm '.repeat(20) }), 'a.csv', 2),
    expect: { vertical: 'solar' },
  },
  {
    name: 'abp: the published case link is kept',
    run: () => normaliseAbpCase(abp({}), 'a.csv', 2),
    expect: { public_url: 'https://example.ie/1' },
  },
  {
    name: "abp: without a link, the consenting body's case page of the case number",
    run: () => normaliseAbpCase(abp({ ABPCASEID: 'ABP-318540-23', LINKABPWEB: '' }), 'a.csv', 2),
    expect: { public_url: 'https://www.pleanala.ie/en-ie/case/318540', case_id: 'ABP-318540-23' },
  },
  {
    name: 'abp: a link that is not a URL is not kept; the case page instead',
    run: () => normaliseAbpCase(abp({ ABPCASEID: 'PL06F.248544', LINKABPWEB: 'see website' }), 'a.csv', 2),
    expect: { public_url: 'https://www.pleanala.ie/en-ie/case/248544' },
  },
  {
    name: 'data centre: a consenting-body reference links to its case page',
    run: () =>
      normaliseDataCentre(
        {
          'Scheme Name': 'Glen Data Centre',
          'Planning Authority': 'Fingal',
          'Planning Reference': 'ABP-314385-22',
          'Demand (MW)': '80',
        },
        'd.csv',
        2,
      ),
    expect: { public_url: 'https://www.pleanala.ie/en-ie/case/314385' },
  },
  {
    name: 'abp: missing case id',
    run: () => normaliseAbpCase(abp({ ABPCASEID: ' ' }), 'a.csv', 2),
    expect: ['missing_field', 'ABPCASEID'],
  },
  {
    name: 'abp: missing description',
    run: () => normaliseAbpCase(abp({ DEVDESC: '' }), 'a.csv', 2),
    expect: ['missing_field', 'DEVDESC'],
  },
  {
    name: 'abp: invalid date',
    run: () => normaliseAbpCase(abp({ DECIDED_ON: '31/02/2025' }), 'a.csv', 2),
    expect: ['invalid_date', 'DECIDED_ON'],
  },
  {
    name: 'abp: unknown authority',
    run: () => normaliseAbpCase(abp({ PLANINGATY: 'Gotham CC' }), 'a.csv', 2),
    expect: ['unknown_authority', 'PLANINGATY'],
  },
  {
    name: 'auction: technology column decides the vertical',
    run: () =>
      normaliseAuction(
        {
          Auction: 'RESS 3',
          'Project ID': 'X',
          'Project Name': 'Glen',
          Technology: 'Onshore Wind',
          'Capacity (MW)': '42',
          Company: 'Glen Wind DAC',
          County: 'Co. Cork',
        },
        'b.csv',
        2,
      ),
    expect: {
      vertical: 'wind',
      project_key: 'wind:glen',
      auction_round: 'RESS 3',
      capacity_mw: 42,
      applicant: 'Glen Wind DAC',
      county: 'Cork',
    },
  },
  {
    name: 'auction: bad capacity',
    run: () =>
      normaliseAuction(
        { Auction: 'RESS 3', 'Project Name': 'Glen', Technology: 'Solar', 'Capacity (MW)': 'n/a' },
        'b.csv',
        2,
      ),
    expect: ['invalid_number', 'Capacity (MW)'],
  },
  {
    name: 'auction: missing round',
    run: () =>
      normaliseAuction({ Auction: '', 'Project Name': 'Glen', Technology: 'Solar', 'Capacity (MW)': '1' }, 'b.csv', 2),
    expect: ['missing_field', 'Auction'],
  },
  {
    name: 'grid: vertical from the file name, date with time',
    run: () =>
      normaliseGridConnection(
        {
          Name: 'Glen',
          'Capacity (MW)': '12',
          'Connection date': '2012-06-01 00:00:00',
          Region: 'Cork',
          'ROI/NI': 'ROI',
          Latitude: '52',
          Longitude: '-8.5',
        },
        '/x/cap_wind_1990-2023.csv',
        2,
      ),
    expect: {
      vertical: 'wind',
      project_key: 'wind:glen',
      connection_date: '2012-06-01',
      county: 'Cork',
      lat: 52,
      lon: -8.5,
    },
  },
  {
    name: 'grid: NI row keeps no county; region that is not a county → null',
    run: () =>
      normaliseGridConnection(
        {
          Name: 'Glen',
          'Capacity (MW)': '12',
          'Connection date': '',
          Region: 'Antrim',
          'ROI/NI': 'NI',
          Latitude: '54.6',
          Longitude: '-6.2',
        },
        '/x/cap_solar.csv',
        2,
      ),
    expect: { vertical: 'solar', county: null, connection_date: null },
  },
  {
    name: 'grid: text without digits in the date → null',
    run: () =>
      normaliseGridConnection(
        {
          Name: 'Glen',
          'Capacity (MW)': '1',
          'Connection date': 'Date unavailable at this time',
          Region: '',
          'ROI/NI': 'ROI',
          Latitude: '',
          Longitude: '',
        },
        '/x/wind.csv',
        2,
      ),
    expect: { connection_date: null, lat: null, lon: null },
  },
  {
    name: 'grid: invalid date with digits',
    run: () =>
      normaliseGridConnection(
        {
          Name: 'Glen',
          'Capacity (MW)': '1',
          'Connection date': '2020-13-01',
          Region: '',
          'ROI/NI': 'ROI',
          Latitude: '',
          Longitude: '',
        },
        '/x/wind.csv',
        2,
      ),
    expect: ['invalid_date', 'Connection date'],
  },
  {
    name: 'grid: coordinates outside Ireland',
    run: () =>
      normaliseGridConnection(
        {
          Name: 'Glen',
          'Capacity (MW)': '1',
          'Connection date': '',
          Region: '',
          'ROI/NI': 'ROI',
          Latitude: '48.8',
          Longitude: '2.3',
        },
        '/x/wind.csv',
        2,
      ),
    expect: ['invalid_coordinates', 'Latitude/Longitude'],
  },
  {
    name: 'grid: bad voltage',
    run: () =>
      normaliseGridConnection(
        {
          Name: 'Glen',
          'Capacity (MW)': '1',
          'Connection date': '',
          Region: '',
          'ROI/NI': 'ROI',
          Latitude: '',
          Longitude: '',
          'Connection Voltage (kV)': 'high',
          Technology: 'Wind',
        },
        'g.csv',
        2,
      ),
    expect: ['invalid_number', 'Connection Voltage (kV)'],
  },
  {
    name: 'grid: missing name',
    run: () => normaliseGridConnection({ Name: '', 'Capacity (MW)': '1' }, 'g.csv', 2),
    expect: ['missing_field', 'Name'],
  },
  {
    name: 'data centre: fields',
    run: () =>
      normaliseDataCentre(
        {
          'Scheme Name': 'Glen Data Centre',
          Operator: 'Glen DC Ltd',
          'Planning Authority': 'Fingal',
          'Planning Reference': 'F1',
          County: '',
          Latitude: '53.4',
          Longitude: '-6.3',
          'Demand (MW)': '80',
          Status: 'Operational',
          'Lodged Date': '01/02/2021',
          'Connection Voltage (kV)': '220',
          'CRU Connection Policy': 'Yes',
        },
        'd.csv',
        2,
      ),
    expect: {
      project_key: 'data_centre:glen',
      authority: 'Fingal',
      county: 'Dublin',
      case_id: 'F1',
      public_url: null,
      capacity_mw: 80,
      connection_voltage_kv: 220,
      lodged_date: '2021-02-01',
      cru_connection_policy: true,
      status: 'Operational',
    },
  },
  {
    name: 'data centre: unknown authority',
    run: () =>
      normaliseDataCentre(
        { 'Scheme Name': 'Glen Data Centre', 'Planning Authority': 'Nowhere Council', 'Demand (MW)': '80' },
        'd.csv',
        2,
      ),
    expect: ['unknown_authority', 'Planning Authority'],
  },
];

for (const c of rowCases) {
  test(c.name, () => {
    const r = c.run();
    if (Array.isArray(c.expect)) {
      assert.ok(isReject(r), `expected a reject, got ${JSON.stringify(r)}`);
      assert.equal([r.reason, r.detail, r.source], [...c.expect, 'infrastructure']);
    } else {
      assert.not.ok(isReject(r), JSON.stringify(r));
      for (const [k, v] of Object.entries(c.expect)) assert.equal((r as unknown as Record<string, unknown>)[k], v, k);
    }
  });
}

test('readInfrastructure: the four fixture files', async () => {
  const files = [
    'abp-cases.csv',
    'ress-auction-results.csv',
    'grid-connections.csv',
    'cap_wind_sample.csv',
    'data-centres.csv',
  ];
  const res = await readInfrastructure(files.map(fixture));
  assert.is(res.lines, 11 + 5 + 7 + 3 + 5);
  assert.is(res.rows.length + res.rejects.length, res.lines);
  assert.equal(countReasons(res.rejects), {
    missing_field: 2,
    invalid_date: 1,
    unknown_authority: 1,
    malformed_row: 1,
    duplicate: 2,
    invalid_number: 3,
    invalid_coordinates: 2,
  });
  const kinds = countReasons(res.rows.map((r) => ({ reason: r.kind }) as unknown as Reject));
  assert.equal(kinds, { abp_case: 6, auction: 3, grid_connection: 7, data_centre: 3 });
  // the later of two rows with the same case id is kept
  const tullabeg = res.rows.find((r) => r.kind === 'abp_case' && r.project_key === 'solar:tullabeg')!;
  assert.is(tullabeg.capacity_mw, 50.5);
  assert.is(tullabeg.lodged_date, '2025-03-14');
  // the substation's name wins over "interconnector" in its description
  assert.is(res.rows.find((r) => r.case_id === 'ABP-318004-23')!.technology, 'substation');
  // swapped Latitude/Longitude values are put right
  const kil = res.rows.find((r) => r.kind === 'grid_connection' && r.project_key === 'grid:kilpaddoge')!;
  assert.equal([kil.lat, kil.lon, kil.connection_date], [52.5712, -9.4021, '2025-02-01']);
  // lower-case, reordered 7-column operator layout; vertical from the file name
  const sample = res.rows.filter((r) => r.file.endsWith('cap_wind_sample.csv'));
  assert.equal(
    sample.map((r) => r.project_key),
    ['wind:knockanore', 'wind:glenbeg', 'wind:glenbeg'],
  );
  assert.equal([sample[0]!.lat, sample[0]!.lon], [52.0471, -7.8562]);
  const road = res.rows.find((r) => r.case_id === 'ABP-318005-23')!;
  assert.is(road.vertical, null);
});

test('readInfrastructure: unknown header → one reject', async () => {
  const res = await readInfrastructure([fixture('unknown-layout.csv')]);
  assert.equal([res.rows.length, res.lines], [0, 1]);
  assert.equal(
    res.rejects.map((r) => [r.reason, r.line]),
    [['unknown_header', 1]],
  );
});

const eirgrid = join(realdata, 'renewables_eirgrid_res_droughts');
testIf(test, existsSync(eirgrid) ? null : `${eirgrid} not found (real data folder missing)`)(
  'real EirGrid wind and solar lists: every row accounted for',
  async () => {
    const dir = eirgrid;
    for (const [file, n, vertical] of [
      ['cap_wind_1990-2023.csv', 390, 'wind'],
      ['cap_solar_2017-2023.csv', 36, 'solar'],
    ] as const) {
      const path = join(dir, file);
      const res = await readInfrastructure([path]);
      assert.is(res.lines, n, file);
      assert.is(res.rows.length + res.rejects.length, n, file);
      assert.is(res.rejects.length, 0, JSON.stringify(res.rejects));
      // NI / ROI per physical line, read independently from the raw text (names have no newlines)
      const text = await readFile(path, 'utf8');
      const niLines = new Set<number>();
      text.split('\n').forEach((l, i) => {
        if (/,NI,[^,]*,[^,]*\s*$/.test(l)) niLines.add(i + 1);
      });
      assert.ok(niLines.size > 0, `${file}: no NI rows found`);
      for (const r of res.rows) {
        assert.is(r.vertical, vertical);
        assert.ok(r.project_key.startsWith(`${vertical}:`));
        if (r.connection_date !== null) assert.match(r.connection_date, /^\d{4}-\d{2}-\d{2}$/);
        if (niLines.has(r.line)) {
          assert.is(r.county, null, `${file}:${r.line} is NI`);
        } else if (r.lat !== null) {
          assert.ok(inIreland(r.lon!, r.lat), `${file}:${r.line} ${r.lat} ${r.lon}`);
        }
      }
      assert.ok(
        res.rows.some((r) => r.county !== null),
        `${file}: no county resolved`,
      );
    }
    const solar = await readInfrastructure([join(dir, 'cap_solar_2017-2023.csv')]);
    const first = solar.rows[0]!;
    // longitude,latitude are swapped and lower-case in this file; dates carry " 00:00:00"
    assert.equal(
      [first.name, first.capacity_mw, first.connection_date, first.county, first.lat, first.lon],
      ['Lysaghtstown', 87, '2024-04-01', 'Cork', 51.932987, -8.219518],
    );
  },
);

test("consentingCaseUrl: the consenting body's references, never a council's", () => {
  const page = (n: string) => `${CONSENTING_CASE_URL}${n}`;
  assert.is(consentingCaseUrl('ABP-318540-23'), page('318540'));
  assert.is(consentingCaseUrl('acp-323187-25'), page('323187'), 'An Coimisiún Pleanála, any case');
  assert.is(consentingCaseUrl('PL06F.248544'), page('248544'));
  assert.is(consentingCaseUrl('PL 29S.301234'), page('301234'));
  assert.is(consentingCaseUrl('318540'), null, "a bare number is only the body's in its own file");
  assert.is(consentingCaseUrl('318540', true), page('318540'));
  for (const council of ['24/1234', 'F21A/0123', 'SD22A/0001', 'D24A', '', 'ABP'])
    assert.is(consentingCaseUrl(council, true), null, council);
  assert.is(consentingCaseUrl(null), null);
});

test.run();
