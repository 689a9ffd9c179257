import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parseDate } from '../../../pipeline/lib/dates.ts';
import {
  type DateStyle,
  dayToIso,
  encodeCp1252,
  fmtDate,
  fmtEuro,
  group3,
  isoToDay,
} from '../../../pipeline/synth/output.ts';

test('encodeCp1252: € is 0x80, Latin-1 letters keep their byte', () => {
  const cases: [string, number[]][] = [
    ['€', [0x80]],
    ['á é í ó ú', [0xe1, 0x20, 0xe9, 0x20, 0xed, 0x20, 0xf3, 0x20, 0xfa]],
    ['ÁÉÍÓÚ', [0xc1, 0xc9, 0xcd, 0xd3, 0xda]],
    ['"€1"', [0x22, 0x80, 0x31, 0x22]],
  ];
  for (const [text, bytes] of cases) assert.equal([...encodeCp1252(text)], bytes, text);
});

test('encodeCp1252: refuses characters the register cannot hold', () => {
  for (const s of ['ł', '✓', '\u0081', 'Ā']) assert.throws(() => encodeCp1252(s), /Windows-1252/, s);
});

test('fmtDate: every style parses back to the same day', () => {
  const day = isoToDay('2023-04-05');
  const cases: [DateStyle, string][] = [
    [0, '2023-04-05'],
    [1, '05/04/2023'],
    [2, '2023/04/05 00:00:00'],
    [3, '2023-04-05T00:00:00Z'],
  ];
  for (const [style, text] of cases) {
    assert.is(fmtDate(day, style), text);
    assert.is(parseDate(text), '2023-04-05');
  }
  assert.is(fmtDate(null, 1), '');
});

test('day numbers round-trip', () => {
  for (const iso of ['1965-03-01', '2010-01-01', '2024-02-29', '2030-12-31']) assert.is(dayToIso(isoToDay(iso)), iso);
});

test('fmtEuro and group3: register price spelling', () => {
  const cases: [number, string][] = [
    [45815000, '€458,150.00'],
    [107000000, '€1,070,000.00'],
    [37444934, '€374,449.34'],
    [500005, '€5,000.05'],
  ];
  for (const [cents, text] of cases) assert.is(fmtEuro(cents), text);
  assert.is(group3(999), '999');
  assert.is(group3(1000), '1,000');
});

test.run();
