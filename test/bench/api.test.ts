/**
 * The api bench's workload generators: deterministic, (nearly) all distinct — so the API's result
 * cache cannot answer them — and valid for the /leads contract (checked with the baseline's
 * parser, which implements the same parameters).
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn } from 'node:child_process';
import {
  cpuMs,
  cursorPaths,
  generateFilterQueries,
  generateSearchQueries,
  interleave,
  prng,
  sameAnswers,
  treeCpuMs,
  type ReleaseValues,
} from '../../bench/api.ts';
import { parseBaselineList, type EnumValues } from '../../bench/baseline-pg.ts';
import { foldSearchText } from '../../common/search-text.ts';

const V: ReleaseValues = {
  vertical: ['roofing', 'solar', 'heat_pumps'],
  authority: ['Cork County', 'Dún Laoghaire-Rathdown', 'Galway City'],
  county: ['Cork', 'Dublin', 'Galway'],
  readiness: ['granted', 'commencing'],
  status: ['active', 'approved', 'closed'],
  use_class: ['house', 'retail'],
  scale: ['minor', 'major'],
  words: ['kitchen', 'extension', 'dormer', 'shed', 'solar', 'apartments'],
};
const enums = Object.fromEntries(
  (['vertical', 'authority', 'county', 'readiness', 'status', 'use_class', 'scale'] as const).map((k) => [
    k,
    new Map(V[k].map((x) => [foldSearchText(x), x])),
  ]),
) as EnumValues;

test('prng is deterministic per seed', () => {
  const a = prng(7);
  const b = prng(7);
  const c = prng(8);
  const xs = [a(), a(), a()];
  assert.equal(xs, [b(), b(), b()]);
  assert.not.equal(xs, [c(), c(), c()]);
  assert.ok(xs.every((x) => x >= 0 && x < 1));
});

test('filter queries: same seed same list, mostly distinct, all valid', () => {
  const qs = generateFilterQueries(2_000, 1, V);
  assert.equal(qs, generateFilterQueries(2_000, 1, V));
  // this tiny vocabulary collides more often than a release's (31 authorities, 23 verticals …)
  assert.ok(new Set(qs).size > 1_700, `only ${new Set(qs).size} distinct`);
  for (const q of qs) parseBaselineList(new URLSearchParams(q), enums);
});

test('search queries: mostly distinct, all carry q and are valid', () => {
  const qs = generateSearchQueries(500, 2, V);
  assert.ok(new Set(qs).size > 150, `only ${new Set(qs).size} distinct`);
  for (const q of qs) {
    const r = parseBaselineList(new URLSearchParams(q), enums);
    assert.ok(r.q && r.q.length > 0, q);
  }
});

test('interleave takes one from each list in turn, cycling the shorter ones', () => {
  assert.equal(interleave<number | string>([[1, 2, 3], ['a'], []]), [1, 'a', 2, 'a', 3, 'a']);
});

test('cursor paths: every cursor at each page size, size by size', () => {
  assert.equal(cursorPaths(['/leads?cursor=a', '/leads?cursor=b'], 2), [
    '/leads?cursor=a&page_size=20',
    '/leads?cursor=b&page_size=20',
    '/leads?cursor=a&page_size=21',
    '/leads?cursor=b&page_size=21',
  ]);
});

test('sameAnswers counts equal answers position by position', () => {
  assert.equal(sameAnswers(['1:1,2', '3:4', '0:'], ['1:1,2', '3:5', '0:']), { same: 2, of: 3 });
});

test('treeCpuMs counts the CPU of a live child (the API workers under their primary), cpuMs only its own', async () => {
  // a child that burns 600 ms of its own CPU (not of wall time: a loaded box gives it less), says
  // so on stdout, then waits to be killed
  const burn =
    'const e = () => process.cpuUsage().user / 1e3; while (e() < 600); console.log("done"); setInterval(() => {}, 1000);';
  const child = spawn(process.execPath, ['-e', burn], { stdio: ['ignore', 'pipe', 'ignore'] });
  try {
    await new Promise((r) => child.stdout!.once('data', r));
    const own = cpuMs(process.pid);
    const tree = treeCpuMs(process.pid);
    assert.ok(tree - own >= 400, `tree ${tree} ms, own ${own} ms`);
    assert.ok(treeCpuMs(child.pid!) >= 400 && treeCpuMs(child.pid!) <= tree);
  } finally {
    child.kill('SIGKILL');
  }
});

test.run();
