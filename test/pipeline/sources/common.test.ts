/** scanCsv, the reader every CSV adapter shares: records as column → value objects, by layout. */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { scanCsv } from '../../../pipeline/sources/common.ts';
import type { Reject } from '../../../pipeline/types.ts';
import { tempDir } from '../../helpers/tmp.ts';

const dir = tempDir('scan-csv');

async function scan(text: string, omit: string[] = []) {
  const file = join(dir, `f${Math.random().toString(36).slice(2)}.csv`);
  writeFileSync(file, text);
  const records: { rec: Record<string, string>; line: number }[] = [];
  const rejects: Reject[] = [];
  const r = await scanCsv(
    file,
    'planning',
    [{ kind: 'k', columns: ['Name', 'Value', '__proto__'], required: ['Name'] }],
    (_k, rec, line) => records.push({ rec, line }),
    (x) => rejects.push(x),
    omit,
  );
  return { ...r, records, rejects };
}

test('records are own-property objects of every header column, in any header case and order', async () => {
  const r = await scan('value,NAME,Extra\n1,a,x\n2,b,y\n');
  assert.is(r.lines, 2);
  assert.equal(
    r.records.map((x) => x.rec),
    [
      { Value: '1', Name: 'a', Extra: 'x' },
      { Value: '2', Name: 'b', Extra: 'y' },
    ],
  );
  assert.equal(
    r.records.map((x) => x.line),
    [2, 3],
  );
});

test('a __proto__ column is a column like any other (an own property), and omitted columns are never copied', async () => {
  const r = await scan('Name,__proto__,Secret\na,{"polluted":true},hidden\n', ['Secret']);
  const rec = r.records[0]!.rec;
  assert.ok(Object.hasOwn(rec, '__proto__'));
  assert.is(rec['__proto__'], '{"polluted":true}');
  assert.is(Object.getPrototypeOf(rec), Object.prototype);
  assert.not.ok('Secret' in rec);
  assert.is(({} as Record<string, unknown>)['polluted'], undefined);
});

test('a row of the wrong width is a malformed_row reject, not a record', async () => {
  const r = await scan('Name,Value\na,1\nb\nc,3\n');
  assert.equal(
    r.records.map((x) => x.rec['Name']),
    ['a', 'c'],
  );
  assert.equal(
    r.rejects.map((x) => [x.line, x.reason, x.detail]),
    [[3, 'malformed_row', '1 fields, header has 2']],
  );
});

test.run();
