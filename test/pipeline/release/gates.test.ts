import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { checkGates, type SourceCounts } from '../../../pipeline/release/gates.ts';

const limits = { maxShrinkRatio: 0.2, maxRejectRatio: 0.01 };
const src = (
  lines: number,
  rows: number,
  rejects = lines - rows,
  reasons: Record<string, number> = { invalid_date: lines - rows },
): SourceCounts => ({ lines, rows, rejects, reasons });

const cases: {
  name: string;
  current: Record<string, SourceCounts>;
  previous: Record<string, SourceCounts> | null;
  passed: boolean;
  match?: RegExp[];
}[] = [
  { name: 'first release within limits', current: { ppr: src(1000, 995) }, previous: null, passed: true },
  { name: 'rejects exactly at 1% pass', current: { ppr: src(1000, 990) }, previous: null, passed: true },
  {
    name: 'rejects over 1% fail, naming source and numbers',
    current: { ppr: src(1000, 989, 11, { invalid_date: 8, unknown_county: 3 }) },
    previous: null,
    passed: false,
    match: [/source 'ppr' rejected 1\.1% of its lines \(11 of 1,000; limit 1\.0%; invalid_date 8, unknown_county 3\)/],
  },
  {
    name: 'shrink of exactly 20% passes',
    current: { planning: src(800, 800) },
    previous: { planning: src(1000, 1000) },
    passed: true,
  },
  {
    name: 'shrink over 20% fails',
    current: { planning: src(799, 799) },
    previous: { planning: src(1000, 1000) },
    passed: false,
    match: [/source 'planning' shrank 20\.1% against the last release \(799 rows now, 1,000 before; limit 20\.0%\)/],
  },
  {
    name: 'growth passes',
    current: { planning: src(5000, 5000) },
    previous: { planning: src(1000, 1000) },
    passed: true,
  },
  {
    name: 'a source that vanished fails',
    current: { planning: src(10, 10) },
    previous: { planning: src(10, 10), ppr: src(10, 10) },
    passed: false,
    match: [/source 'ppr' is missing from this build \(it had 10 rows\)/],
  },
  {
    name: 'a source with no rows fails',
    current: { ppr: src(3, 0, 3) },
    previous: null,
    passed: false,
    match: [/source 'ppr' produced no rows/],
  },
];

for (const c of cases) {
  test(c.name, () => {
    const r = checkGates(c.current, c.previous, limits);
    assert.is(r.passed, c.passed, r.messages.join('\n'));
    for (const m of c.match ?? [])
      assert.ok(
        r.messages.some((x) => m.test(x)),
        `${m} in ${JSON.stringify(r.messages)}`,
      );
  });
}

test.run();
