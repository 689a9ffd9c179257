/** The CSO building-materials price adapter (PxStat WPM28 CSV) on a hand-written fixture. */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { join } from 'node:path';
import { parseMonth, readMaterials } from '../../../pipeline/sources/materials.ts';
import { REPO_ROOT } from '../../helpers/tmp.ts';

test('parseMonth: PxStat code and label forms', () => {
  assert.equal(parseMonth('202310'), { month: '2023-10', start: '2023-10-01' });
  assert.equal(parseMonth('2023M01'), { month: '2023-01', start: '2023-01-01' });
  assert.equal(parseMonth('2023 October'), { month: '2023-10', start: '2023-10-01' });
  assert.equal(parseMonth('2023-02'), { month: '2023-02', start: '2023-02-01' });
  for (const bad of ['202313', '2023M13', '2023 Octember', '10/2023', '']) assert.is(parseMonth(bad), undefined, bad);
});

test('readMaterials: the index statistic only; the 12-month change and empty cells skipped; rejects name the column', async () => {
  const r = await readMaterials([join(REPO_ROOT, 'test', 'fixtures', 'materials', 'wpm28.csv')]);
  assert.is(r.skipped, 2);
  assert.is(r.lines, 9 - 2);
  assert.is(r.rows.length + r.rejects.length, r.lines);
  assert.equal(
    r.rows.map((x) => [x.material, x.month, x.index_value]),
    [
      ['Structural steel', '2022-10', 162.4],
      ['Structural steel', '2023-10', 150.1],
      ['All materials', '2023-10', 141.9],
    ],
  );
  assert.equal(
    r.rejects.map((x) => [x.line, x.reason, x.detail]),
    [
      [6, 'invalid_date', 'TLIST(M1)'],
      [7, 'invalid_number', 'VALUE'],
      [9, 'missing_field', 'Type of Material'],
      [10, 'duplicate', 'same month and material as line 3'],
    ],
  );
});

test.run();
