import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  homeKey,
  isNewDwelling,
  normaliseSale,
  eircodeHash,
  parseEuroCents,
  postalDistrictRoutingKey,
  readPpr,
} from '../../../pipeline/sources/ppr.ts';
import type { Reject, SaleRow } from '../../../pipeline/types.ts';
import { skipFile } from '../../helpers/skip.ts';

const FIXTURES = fileURLToPath(new URL('../../fixtures/ppr/', import.meta.url));
const CURRENT = join(FIXTURES, 'current.csv'); // Windows-1252, current header
const OLD = join(FIXTURES, 'old.csv'); // Windows-1252, older header with Postal Code
const REPO = fileURLToPath(new URL('../../..', import.meta.url));
const REAL = join(REPO, '../shared/realdata/ppr');

const sha = (s: string): string => createHash('sha256').update(s).digest('hex');

function rec(over: Record<string, string>): Record<string, string> {
  return Object.assign(
    {
      'Date of Sale (dd/mm/yyyy)': '01/02/2023',
      Address: '1 Test Road',
      County: 'Cork',
      Eircode: '',
      'Price (€)': '€100,000.00',
      'Not Full Market Price': 'No',
      'VAT Exclusive': 'No',
      'Description of Property': 'Second-Hand Dwelling house /Apartment',
      'Property Size Description': '',
    },
    over,
  );
}

test('parseEuroCents: exact cents from the text', () => {
  const cases: [string, number | undefined][] = [
    ['€458,150.00', 45815000],
    ['€1,234,567.89', 123456789],
    ['€95,000', 9500000],
    ['€0.10', 10],
    ['€0.1', 10],
    ['€1,000,000.01', 100000001],
    ['€268,722.47', 26872247],
    ['€ 12', 1200],
    ['1234.5', 123450],
    ['€90,071,992,547,409.91', 9007199254740991],
    ['€90,071,992,547,409.92', undefined], // beyond exact integers
    ['€12.345', undefined],
    ['€1,23.00', undefined],
    ['€-5.00', undefined],
    ['', undefined],
    ['EUR 5', undefined],
  ];
  for (const [s, want] of cases) assert.is(parseEuroCents(s), want, s);
});

test('postalDistrictRoutingKey: Dublin districts only', () => {
  const cases: [string, string | null][] = [
    ['Dublin 3', 'D03'],
    ['Dublin 15', 'D15'],
    ['Dublin 6w', 'D6W'],
    ['DUBLIN 6W', 'D6W'],
    ['Baile Átha Cliath 18', 'D18'],
    ['Dublin 19', null],
    ['Dublin 25', null],
    ['', null],
    ['Cork', null],
  ];
  for (const [s, want] of cases) assert.is(postalDistrictRoutingKey(s), want, s);
});

test('isNewDwelling: English and Irish descriptions', () => {
  const cases: [string | null, boolean][] = [
    ['New Dwelling house /Apartment', true],
    ['Teach/Árasán Cónaithe Nua', true],
    ['Second-Hand Dwelling house /Apartment', false],
    ['Teach/Árasán Cónaithe Atháimhe', false],
    [null, false],
  ];
  for (const [s, want] of cases) assert.is(isNewDwelling(s), want, String(s));
});

test('homeKey: folded address and the full Eircode without spaces', () => {
  assert.is(homeKey('12 Bóthar na Trá, Salthill', 'h91 ab12'), sha('12 bothar na tra salthill|H91AB12'));
  assert.is(homeKey('12 BOTHAR NA TRA,  SALTHILL', null), sha('12 bothar na tra salthill|'));
  assert.is.not(homeKey('1 Test Road', 'T12AB34'), homeKey('1 Test Road', 'T12AB35'));
});

test('normaliseSale: one rejected column per case', () => {
  const cases: [Record<string, string>, Reject['reason'], string][] = [
    [{ 'Date of Sale (dd/mm/yyyy)': '' }, 'missing_field', 'Date of Sale (dd/mm/yyyy)'],
    [{ 'Date of Sale (dd/mm/yyyy)': '2023-02-01' }, 'invalid_date', 'Date of Sale (dd/mm/yyyy)'],
    [{ 'Date of Sale (dd/mm/yyyy)': '29/02/2023' }, 'invalid_date', 'Date of Sale (dd/mm/yyyy)'],
    [{ Address: ' ' }, 'missing_field', 'Address'],
    [{ County: '' }, 'missing_field', 'County'],
    [{ County: 'Fermanagh' }, 'unknown_county', 'County'],
    [{ 'Price (€)': '' }, 'missing_field', 'Price (€)'],
    [{ 'Price (€)': '€12,34' }, 'invalid_number', 'Price (€)'],
  ];
  for (const [over, reason, detail] of cases) {
    const r = normaliseSale(rec(over), 'f.csv', 9) as Reject;
    assert.is(r.reason, reason, JSON.stringify(over));
    assert.is(r.detail, detail, JSON.stringify(over));
    assert.is(r.key, null);
  }
});

test('readPpr: current header, Windows-1252, row by row', async () => {
  const res = await readPpr([CURRENT]);
  assert.is(res.lines, 12);
  assert.is(res.rows.length + res.rejects.length, res.lines);
  const [galway, dun, kerry, wicklow] = res.rows as [SaleRow, SaleRow, SaleRow, SaleRow];
  assert.is(res.rows.length, 4);
  assert.equal(galway, {
    date_of_sale: '2023-02-01',
    address: '12 Bóthar na Trá, Salthill',
    county: 'Galway',
    eircode_routing_key: 'H91',
    home_key: sha('12 bothar na tra salthill|H91AB12'),
    eircode_hash: eircodeHash('h91 ab12'),
    price_cents: 45815000,
    not_full_market_price: false,
    vat_exclusive: true,
    description: 'New Dwelling house /Apartment',
    is_new_dwelling: true,
    property_size: null,
    line: 2,
  });
  assert.is(dun.address, '4 Main St, Dún Laoghaire');
  assert.is(dun.price_cents, 123456789);
  assert.is(dun.not_full_market_price, true);
  assert.is(dun.eircode_routing_key, null);
  assert.is(dun.property_size, 'greater than or equal to 38 sq metres and less than 125 sq metres');
  assert.is(kerry.county, 'Kerry');
  assert.is(kerry.address, 'Apt 2, Cé na Mara');
  assert.is(kerry.price_cents, 9500000);
  assert.is(kerry.is_new_dwelling, true);
  assert.is(kerry.home_key, sha('apt 2 ce na mara|V92XY34'));
  assert.is(wicklow.price_cents, 10);
  assert.is(wicklow.is_new_dwelling, false);
  assert.is(wicklow.line, 13);
  assert.not.ok(JSON.stringify(res).includes('AB12'), 'full Eircode only inside home_key and eircode_hash');
  assert.is(dun.eircode_hash, null);
  assert.match(galway.eircode_hash!, /^[0-9a-f]{16}$/);
  assert.is(eircodeHash('H91AB12'), galway.eircode_hash, 'case and spaces do not matter');
  assert.is.not(eircodeHash('H91AB13'), galway.eircode_hash);
  assert.is.not(kerry.eircode_hash, galway.eircode_hash);

  assert.equal(
    res.rejects.map((r) => [r.line, r.reason, r.detail]),
    [
      [5, 'duplicate', 'same as line 3'],
      [6, 'invalid_date', 'Date of Sale (dd/mm/yyyy)'],
      [7, 'invalid_number', 'Price (€)'],
      [8, 'missing_field', 'Price (€)'],
      [9, 'unknown_county', 'County'],
      [10, 'missing_field', 'Address'],
      [11, 'malformed_row', '3 fields, header has 9'],
      [12, 'missing_field', 'Date of Sale (dd/mm/yyyy)'],
    ],
  );
});

test('readPpr: older header with Postal Code', async () => {
  const res = await readPpr([OLD]);
  assert.is(res.lines, 4);
  assert.equal(res.rejects, []);
  assert.equal(
    res.rows.map((r) => [r.address, r.county, r.eircode_routing_key, r.price_cents, r.is_new_dwelling]),
    [
      ['1 Fake Terrace', 'Dublin', 'D6W', 24242400, false],
      ['9 Sráid an Mhuilinn', 'Dublin', 'D18', 30000000, false],
      ['3 Canal View', 'Dublin', null, 19999999, true],
      ['5 Canal View', 'Dublin', null, 100, true],
    ],
  );
  assert.is(res.rows[0]!.home_key, sha('1 fake terrace|'));
});

test('readPpr: no dedupe across files or of repeat sales, only exact repeated lines', async () => {
  const res = await readPpr([OLD, OLD]);
  assert.is(res.rows.length, 8);
  assert.is(res.rejects.length, 0);
});

test('readPpr: CRLF, and the same file re-encoded as UTF-8 with a BOM, give the same rows', async () => {
  const plain = await readPpr([CURRENT]);
  const bytes = readFileSync(CURRENT);
  const dir = mkdtempSync(join(tmpdir(), 'ppr-test-'));
  try {
    const crlf = join(dir, 'crlf.csv');
    writeFileSync(crlf, Buffer.from(bytes.toString('latin1').replace(/\n/g, '\r\n'), 'latin1'));
    const utf8 = join(dir, 'utf8.csv');
    // the fixture holds only Latin-1 letters and the euro sign (0x80)
    writeFileSync(utf8, '\uFEFF' + bytes.toString('latin1').replace(/\x80/g, '€'));
    for (const file of [crlf, utf8]) {
      const res = await readPpr([file]);
      assert.equal(res.rows, plain.rows, file);
      assert.equal(
        res.rejects.map((r) => [r.line, r.reason]),
        plain.rejects.map((r) => [r.line, r.reason]),
        file,
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('readPpr: a header that is neither layout is one unknown_header reject', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'ppr-hdr-'));
  try {
    const file = join(dir, 'x.csv');
    writeFileSync(file, 'Date,Address,Price\n01/02/2023,1 Road,100\n');
    const res = await readPpr([file]);
    assert.equal([res.rows.length, res.lines, res.rejects.map((r) => r.reason)], [0, 1, ['unknown_header']]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

/** Decode a real PPR file independently of the adapter: iconv when installed, else TextDecoder. */
function decodeCp1252(file: string): string {
  try {
    return execFileSync('iconv', ['-f', 'CP1252', '-t', 'UTF-8', file], { maxBuffer: 64 << 20 }).toString('utf8');
  } catch {
    // stream: true — Node 20's one-shot windows-1252 decode drops bytes 0x80–0x9F (the €)
    return new TextDecoder('windows-1252').decode(readFileSync(file), { stream: true });
  }
}

const REAL_FILES: [string, number, number][] = [
  // file, data lines, exact duplicate lines
  ['PPR-2023-02.csv', 3838, 5],
  ['PPR-2017-Dublin.csv', 17974, 22],
];

if (!existsSync(REAL)) {
  skipFile(
    test,
    'ppr.test.ts real-data tests',
    `${REAL} does not exist (the real PPR samples are not on this machine)`,
  );
} else {
  for (const [name, dataLines, dups] of REAL_FILES) {
    test(`real data ${name}: every line accounted for, price sum matches an independent count`, async () => {
      const file = join(REAL, name);
      const res = await readPpr([file]);
      assert.is(res.lines, dataLines);
      assert.is(res.rows.length + res.rejects.length, dataLines);
      assert.equal(
        res.rejects.map((r) => r.reason),
        Array(dups).fill('duplicate'),
      );

      // independent: plain line split + regex over the iconv-decoded text, exact lines deduplicated
      const lines = decodeCp1252(file)
        .split('\n')
        .slice(1)
        .filter((l) => l.trim() !== '');
      assert.is(lines.length, dataLines);
      const unique = [...new Set(lines)];
      let sum = 0n;
      for (const l of unique) {
        const m = /,"€([\d,]+)\.(\d\d)",/.exec(l);
        assert.ok(m, `no price in a line of ${name}`);
        sum += BigInt(m[1]!.replace(/,/g, '') + m[2]!);
      }
      assert.is(res.rows.length, unique.length);
      assert.is(
        res.rows.reduce((s, r) => s + BigInt(r.price_cents), 0n),
        sum,
      );
    });
  }

  test('real data: hand-picked rows, exact prices and accents intact', async () => {
    const res = await readPpr([join(REAL, 'PPR-2023-02.csv'), join(REAL, 'PPR-2017-Dublin.csv')]);
    const at = (file: string, line: number): SaleRow =>
      res.rows.find((r) => r.line === line && r.date_of_sale.startsWith(file))!;
    const cases: [string, number, string, number, string | null, boolean][] = [
      ['2023', 2, '02 Harpur Park, Harpur Lane, Leixlip', 45815000, null, true],
      ['2023', 3, '1 DONCARRIG, BALLYCOMMON, NENAGH', 37922500, 'E45', false],
      ['2023', 105, '6 Dún Riabhach Park, Castle Street, Ashbourne', 43612335, null, true],
      ['2023', 529, '46 SLÍ NA SPÉIRE, CLIEVERAGH, LISTOWEL', 15500000, 'V31', false],
      ['2017', 14573, '60 SANDYFORD DOWNS, SANDYFORD, DUBLIN 18', 58000000, 'D18', false],
      ['2017', 2036, '134 CLÓS NA LOCHÁN, STIGH LORGAN, CO. ÁTHA CLIATH', 60500000, null, false],
    ];
    for (const [year, line, address, cents, key, isNew] of cases) {
      const row = at(year, line);
      assert.ok(row, `${year} line ${line}`);
      assert.equal(
        [row.address, row.price_cents, row.eircode_routing_key, row.is_new_dwelling],
        [address, cents, key, isNew],
        `${year} line ${line}`,
      );
    }
    assert.is(at('2017', 14573).description, 'Teach/Árasán Cónaithe Atháimhe');
  });
}

test.run();
