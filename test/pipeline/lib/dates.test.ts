import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { addDays, daysBetween, parseDate, ymd } from '../../../pipeline/lib/dates.ts';

test('parseDate: every accepted format', () => {
  const cases: [string, string][] = [
    ['2023-02-01', '2023-02-01'],
    ['2023-2-1', '2023-02-01'],
    ['2023-02-01T13:45:00', '2023-02-01'],
    ['2023-02-01T13:45:00.123Z', '2023-02-01'],
    ['2023-02-01T13:45:00+01:00', '2023-02-01'],
    ['2023-02-01 13:45:00', '2023-02-01'],
    ['2023/02/01', '2023-02-01'],
    ['2023/02/01 00:00:00', '2023-02-01'],
    ['2023/02/01 00:00:00+00', '2023-02-01'], // ArcGIS CSV download
    ['01/02/2023', '2023-02-01'], // day first
    ['5/4/2023', '2023-04-05'],
    ['01/02/2023 10:30', '2023-02-01'],
    ['01-02-2023', '2023-02-01'],
    ['01.02.2023', '2023-02-01'],
    ['01 Feb 2023', '2023-02-01'],
    ['01-FEB-2023', '2023-02-01'],
    ['01-Feb-23', '2023-02-01'],
    ['01-Feb-75', '1975-02-01'],
    ['1 Sept 2023', '2023-09-01'],
    ['  01/02/2023  ', '2023-02-01'],
    ['1675209600000', '2023-02-01'], // epoch ms, 13 digits
    ['1675252799999', '2023-02-01'], // last ms of the UTC day
    ['99999999999', '1973-03-03'], // 11 digits
  ];
  for (const [raw, want] of cases) assert.is(parseDate(raw), want, raw);
});

test('parseDate: empty is null, present but invalid is undefined', () => {
  const empties: (string | null | undefined)[] = ['', '   ', null, undefined];
  for (const e of empties) assert.is(parseDate(e), null, String(e));
  const invalid = [
    '31/02/2023',
    '29/02/2023',
    '2023-13-01',
    '2023-00-10',
    '00/01/2023',
    '1899-12-31',
    '2101-01-01',
    '01 Foo 2023',
    'Feb 2023',
    'yesterday',
    '2023-02-01T25',
    '1234567890',
    '12345678901234',
    '01/02/23',
  ];
  for (const s of invalid) assert.is(parseDate(s), undefined, s);
});

test('ymd: calendar checks including leap years', () => {
  const cases: [number, number, number, string | undefined][] = [
    [2024, 2, 29, '2024-02-29'],
    [2023, 2, 29, undefined],
    [2000, 2, 29, '2000-02-29'],
    [1900, 2, 29, undefined],
    [2023, 4, 31, undefined],
    [2023, 12, 31, '2023-12-31'],
    [2023, 0, 1, undefined],
    [2023, 1, 0, undefined],
  ];
  for (const [y, m, d, want] of cases) assert.is(ymd(y, m, d), want, `${y}-${m}-${d}`);
});

test('addDays and daysBetween: across months, years, leap days and clock changes', () => {
  const cases: [string, number, string][] = [
    ['2023-01-31', 1, '2023-02-01'],
    ['2023-12-31', 1, '2024-01-01'],
    ['2024-02-28', 1, '2024-02-29'],
    ['2023-03-25', 2, '2023-03-27'], // Irish clocks go forward on 26 March 2023
    ['2023-10-28', 2, '2023-10-30'], // and back on 29 October
    ['2023-03-01', -1, '2023-02-28'],
    ['2023-02-01', 0, '2023-02-01'],
    ['2023-01-01', 365, '2024-01-01'],
  ];
  for (const [from, n, want] of cases) {
    assert.is(addDays(from, n), want, `${from} + ${n}`);
    assert.is(daysBetween(from, want), n, `${from} → ${want}`);
  }
});

test('ymd: every day of 1890–2110 (and months and days out of range) as the calendar of Date says', () => {
  const reference = (y: number, m: number, d: number): string | undefined => {
    if (y < 1900 || y > 2100 || m < 1 || m > 12 || d < 1) return undefined;
    if (d > new Date(Date.UTC(y, m, 0)).getUTCDate()) return undefined;
    return `${String(y).padStart(4, '0')}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`;
  };
  let checked = 0;
  for (let y = 1890; y <= 2110; y++)
    for (let m = -1; m <= 14; m++)
      for (let d = -1; d <= 33; d++) {
        if (ymd(y, m, d) !== reference(y, m, d)) assert.unreachable(`${y}-${m}-${d}: ${ymd(y, m, d)}`);
        checked++;
      }
  assert.is(checked, 221 * 16 * 35);
  assert.is(ymd(2024, 2, 29), '2024-02-29');
  assert.is(ymd(2100, 2, 29), undefined);
});

test.run();
