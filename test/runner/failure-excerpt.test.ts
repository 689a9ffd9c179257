import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { failureExcerpt } from './failure-excerpt.ts';

const UVU_FAIL = [
  '\x1b[1mtest/zz/fail.test.ts\x1b[22m',
  '• ✘   (1 / 2)',
  '',
  '   FAIL  "two fails"',
  '    no request failed  (equal)',
  '',
  '        ··[',
  '        Actual:',
  '        --··"a",',
  '        ··]',
  '        ',
  '    at assert (file:///repo/node_modules/uvu/assert/index.mjs:33:8)',
  '    at Module.equal (file:///repo/node_modules/uvu/assert/index.mjs:45:2)',
  '    at Object.handler (file:///repo/test/zz/fail.test.ts:4:34)',
  '    at Number.runner (file:///repo/node_modules/uvu/dist/index.mjs:78:16)',
  '',
  '  Total:     2',
  '  Passed:    1',
].join('\n');

test('a FAIL block: the name, the message, the diff and the test file’s frame, no library frames', () => {
  assert.is(
    failureExcerpt(UVU_FAIL),
    [
      '   FAIL  "two fails"',
      '    no request failed  (equal)',
      '        ··[',
      '        Actual:',
      '        --··"a",',
      '        ··]',
      '    at Object.handler (file:///repo/test/zz/fail.test.ts:4:34)',
    ].join('\n'),
  );
});

test('two FAIL blocks both appear, within the line bound', () => {
  const two = UVU_FAIL + '\n' + UVU_FAIL.replace('two fails', 'three fails');
  const got = failureExcerpt(two);
  assert.match(got, /FAIL {2}"two fails"[\s\S]*FAIL {2}"three fails"/);
  assert.is(failureExcerpt(two, 5).split('\n').length, 5);
});

test('no FAIL block (a timeout, a crash while loading): the last lines that are not blank', () => {
  const out = Array.from({ length: 40 }, (_, i) => `line ${i}`).join('\n') + '\n\n  timed out after 900 s\n';
  const got = failureExcerpt(out).split('\n');
  assert.is(got.length, 12);
  assert.is(got.at(-1), '  timed out after 900 s');
  assert.is(got[0], 'line 29');
});

test.run();
