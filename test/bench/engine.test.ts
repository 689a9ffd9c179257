/**
 * The engine bench section (bench/engine.ts) on the tiny release: this checkout's engine beside
 * itself (as `--against` loads another checkout's, by path), a few passes over the first queries
 * of the growth mix. The rows' shape and that both sides answer; says nothing about speed.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { engineBench, queryKind } from '../../bench/engine.ts';
import { tinyDataDir } from '../helpers/api.ts';
import { REPO_ROOT } from '../helpers/tmp.ts';

test('query kinds: filters or q, and the sort', () => {
  assert.is(queryKind('county=Cork&sort=value_asc&page=2'), 'filters, value_asc');
  assert.is(queryKind('vertical=roofing'), 'filters, newest');
  assert.is(queryKind('q=solar%20panels&page=2'), 'q, relevance');
});

test('the engine section times both sides by kind, on the same indexes', async () => {
  const data = await tinyDataDir();
  const rows = await engineBench({
    root: REPO_ROOT,
    benchData: data,
    valuesData: data,
    against: { root: REPO_ROOT, label: 'itself' },
    passes: 2,
    limit: 120,
    log: () => {},
  });
  assert.ok(rows[0]!.metric.startsWith('engine µs a query, all ×120 (vs itself)'), rows[0]!.metric);
  assert.ok(rows.length >= 4, `kinds: ${rows.map((r) => r.metric).join('; ')}`);
  assert.ok(rows.some((r) => r.metric.includes('q, relevance')));
  for (const r of rows) assert.ok(r.value > 0 && r.baseline! > 0, `${r.metric}: ${r.value} vs ${r.baseline}`);
});

test.run();
