import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { CsvParser, csvField, csvLine, parseCsv, readCsvBatches, sniffEncoding } from '../../../pipeline/lib/csv.ts';
import type { CsvRecord } from '../../../pipeline/lib/csv.ts';

type Want = [number, string[], string?][]; // line, fields, malformed

const simple = (recs: CsvRecord[]): Want =>
  recs.map((r) => (r.malformed ? [r.line, r.fields, r.malformed] : [r.line, r.fields]));

const CASES: [string, string, Want][] = [
  [
    'plain LF',
    'a,b\n1,2\n',
    [
      [1, ['a', 'b']],
      [2, ['1', '2']],
    ],
  ],
  [
    'no final newline',
    'a,b\n1,2',
    [
      [1, ['a', 'b']],
      [2, ['1', '2']],
    ],
  ],
  [
    'CRLF',
    'a,b\r\n1,2\r\n',
    [
      [1, ['a', 'b']],
      [2, ['1', '2']],
    ],
  ],
  [
    'lone CR',
    'a,b\r1,2',
    [
      [1, ['a', 'b']],
      [2, ['1', '2']],
    ],
  ],
  [
    'BOM',
    '\uFEFFa,b\n1,2\n',
    [
      [1, ['a', 'b']],
      [2, ['1', '2']],
    ],
  ],
  ['quoted comma and escaped quote', '"x, y","say ""hi"""\n', [[1, ['x, y', 'say "hi"']]]],
  ['empty fields', ',a,,\n', [[1, ['', 'a', '', '']]]],
  ['empty quoted field', '"",x\n', [[1, ['', 'x']]]],
  [
    'blank lines skipped, numbering kept',
    'a\n\n\r\nb\n',
    [
      [1, ['a']],
      [4, ['b']],
    ],
  ],
  [
    'quoted newline spans lines',
    'h\n"one\ntwo",x\nnext\n',
    [
      [1, ['h']],
      [2, ['one\ntwo', 'x']],
      [4, ['next']],
    ],
  ],
  [
    'quoted CRLF spans lines',
    'h\r\n"one\r\ntwo"\r\nnext\r\n',
    [
      [1, ['h']],
      [2, ['one\r\ntwo']],
      [4, ['next']],
    ],
  ],
  ['quote inside unquoted field kept', 'a"b,c\n', [[1, ['a"b', 'c']]]],
  ['text after closing quote kept', '"abc"def,x\n', [[1, ['abcdef', 'x']]]],
  [
    'unterminated quote',
    'a\n"open,b\n',
    [
      [1, ['a']],
      [2, ['open,b\n'], 'unterminated quoted field'],
    ],
  ],
];

test('parseCsv: records, fields and start lines', () => {
  for (const [name, text, want] of CASES) assert.equal(simple(parseCsv(text)), want, name);
});

test('CsvParser: any chunking gives the same records as one push', () => {
  for (const [name, text, want] of CASES) {
    for (const size of [1, 2, 3, 7]) {
      const p = new CsvParser();
      const out: CsvRecord[] = [];
      for (let i = 0; i < text.length; i += size) out.push(...p.push(text.slice(i, i + size)));
      out.push(...p.end());
      const kept = out.filter((r) => !(r.fields.length === 1 && r.fields[0] === '' && !r.malformed));
      assert.equal(simple(kept), want, `${name} / chunk ${size}`);
    }
  }
});

test('sniffEncoding: UTF-8 unless the bytes are not UTF-8', () => {
  const e = Buffer.from('Dún Laoghaire', 'utf8');
  const cases: [string, Uint8Array, string][] = [
    ['ascii', Buffer.from('a,b\n'), 'utf-8'],
    ['utf-8 accents', e, 'utf-8'],
    ['windows-1252 euro', Buffer.from([0x22, 0x80, 0x31, 0x22]), 'windows-1252'],
    ['windows-1252 accent', Buffer.from([0x44, 0xfa, 0x6e]), 'windows-1252'],
    ['utf-8 cut inside a character', e.subarray(0, 2), 'utf-8'], // "D" + first byte of "ú"
    ['empty', new Uint8Array(0), 'utf-8'],
  ];
  for (const [name, bytes, want] of cases) assert.is(sniffEncoding(bytes), want, name);
});

test('readCsvBatches: windows-1252 bytes 0x80-0x9F decode to their characters', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'csv-test-'));
  try {
    const file = join(dir, 'cp.csv');
    // "Price (€)" / "€1,5" and "O’Brien – Dún" in Windows-1252
    writeFileSync(
      file,
      Buffer.concat([
        Buffer.from('Price (', 'latin1'),
        Buffer.from([0x80]),
        Buffer.from(')\n"', 'latin1'),
        Buffer.from([0x80]),
        Buffer.from('1,5","O', 'latin1'),
        Buffer.from([0x92]),
        Buffer.from('Brien ', 'latin1'),
        Buffer.from([0x96]),
        Buffer.from(' D\xfan"\n', 'latin1'),
      ]),
    );
    const recs: CsvRecord[] = [];
    for await (const b of readCsvBatches(file, 'windows-1252')) recs.push(...b);
    assert.equal(
      recs.map((r) => r.fields),
      [['Price (€)'], ['€1,5', 'O’Brien – Dún']],
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('readCsvBatches: records and characters that straddle the 1 MiB read chunks', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'csv-big-'));
  try {
    const file = join(dir, 'big.csv');
    const row = '"é, multi\nline",Ω\n'; // 19 bytes in UTF-8, odd length so chunk edges fall everywhere
    const n = 70_000; // ~1.3 MB
    writeFileSync(file, 'h1,h2\n' + row.repeat(n));
    let count = 0;
    let bad = 0;
    let lastLine = 0;
    for await (const batch of readCsvBatches(file)) {
      for (const r of batch) {
        if (r.line === 1) continue;
        count++;
        if (r.fields[0] !== 'é, multi\nline' || r.fields[1] !== 'Ω' || r.malformed) bad++;
        lastLine = r.line;
      }
    }
    assert.is(count, n);
    assert.is(bad, 0);
    assert.is(lastLine, 2 + (n - 1) * 2);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('csvField / csvLine: quote only when needed, and parse back', () => {
  const cases: [string | number | boolean | null | undefined, string][] = [
    ['plain', 'plain'],
    ['a,b', '"a,b"'],
    ['say "x"', '"say ""x"""'],
    ['l1\nl2', '"l1\nl2"'],
    [null, ''],
    [undefined, ''],
    [12.5, '12.5'],
    [true, 'true'],
  ];
  for (const [v, want] of cases) assert.is(csvField(v), want, String(v));
  assert.is(csvField('a', true), '"a"');
  assert.is(csvField(null, true), '""');
  const values = ['x, y', 'q"uote', 'multi\r\nline', '', 'Dún'];
  assert.equal(parseCsv(csvLine(values) + '\n')[0]!.fields, values);
});

test.run();
