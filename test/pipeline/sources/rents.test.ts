/** The RTB rent index adapter (PxStat RIQ02 CSV) on a hand-written fixture with the table's quirks. */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { join } from 'node:path';
import { dwellingClass, parseQuarter, readRents, rentPlace, RentCells } from '../../../pipeline/sources/rents.ts';
import { REPO_ROOT } from '../../helpers/tmp.ts';

const fixture = (f: string): string => join(REPO_ROOT, 'test', 'fixtures', 'rents', f);

test('parseQuarter: PxStat code and label forms', () => {
  assert.equal(parseQuarter('20231'), { quarter: '2023Q1', start: '2023-01-01' });
  assert.equal(parseQuarter('2024Q4'), { quarter: '2024Q4', start: '2024-10-01' });
  assert.equal(parseQuarter('2024 Q3'), { quarter: '2024Q3', start: '2024-07-01' });
  for (const bad of ['20235', '2023Q0', '23Q1', 'Q1 2023', '']) assert.is(parseQuarter(bad), undefined, bad);
});

test('dwellingClass: RIQ02 property types', () => {
  assert.is(dwellingClass('All property types'), 'all');
  assert.is(dwellingClass('Semi detached house'), 'house');
  assert.is(dwellingClass('Terrace house'), 'house');
  assert.is(dwellingClass('Other flats'), 'apartment');
  assert.is(dwellingClass('Caravan'), null);
});

test('rentPlace: the State, a bare county name, or neither (a postal district is not its county)', () => {
  assert.equal(rentPlace('Ireland'), { county: null, national: true });
  assert.equal(rentPlace('Co. Cork'), { county: 'Cork', national: false });
  assert.equal(rentPlace('Dublin 4'), { county: null, national: false });
  assert.equal(rentPlace('Carlow Town'), { county: null, national: false });
});

test('RentCells: each cell worked out once, the same answer as the functions it remembers', () => {
  const cells = new RentCells();
  for (const round of [1, 2])
    for (const t of ['All property types', 'Semi detached house', 'Apartment', 'Other flats', 'Mobile home']) {
      assert.is(cells.dwelling(t), dwellingClass(t), `${t}, round ${round}`);
      assert.equal(cells.place(t), rentPlace(t));
    }
  assert.equal(cells.quarter('20231'), parseQuarter('20231'));
  assert.is(cells.quarter('2023Q9'), undefined);
  assert.is(cells.quarter('2023Q9'), undefined, 'an undefined answer is remembered as itself');
  assert.is(cells.allBedrooms('All bedrooms'), true);
  assert.is(cells.allBedrooms('One bed'), false);
  assert.is(cells.place('Dublin 4'), cells.place('Dublin 4'), 'the second ask is the first answer');
});

test('readRents: rows, suppressed cells skipped, rejects naming the column', async () => {
  const r = await readRents([fixture('riq02.csv')]);
  assert.is(r.suppressed, 2, 'empty and ".." values are suppressed cells, not errors');
  assert.is(r.lines, 11 - 2, 'lines with a value');
  assert.is(r.rows.length + r.rejects.length, r.lines);
  assert.equal(
    r.rows.map((x) => [x.location, x.county, x.national, x.dwelling, x.all_bedrooms, x.rent_eur]),
    [
      ['Ireland', null, true, 'all', true, 1468.25],
      ['Dublin', 'Dublin', false, 'house', true, 2201.5],
      ['Dublin 4', null, false, 'apartment', false, 2450],
    ],
  );
  assert.is(r.rows[0]!.quarter, '2023Q1');
  assert.equal(
    r.rejects.map((x) => [x.line, x.reason, x.detail]),
    [
      [7, 'invalid_date', 'TLIST(Q1)'],
      [8, 'invalid_number', 'VALUE'],
      [9, 'unknown_category', 'Property Type'],
      [10, 'missing_field', 'Location'],
      [11, 'duplicate', 'same cell as line 2'],
      [12, 'malformed_row', '9 fields, header has 12'],
    ],
  );
});

test('readRents: a file of another layout is one unknown_header reject', async () => {
  const r = await readRents([fixture('not-riq02.csv')]);
  assert.equal([r.rows.length, r.lines, r.rejects.map((x) => x.reason)], [0, 1, ['unknown_header']]);
});

test.run();
