/**
 * Why a test file failed, in a few lines, for the end of the run (test/runner/main.ts): CI keeps
 * only the tail of a long run's output, so the reason is printed again beside the summary. From a
 * file's output, its colours stripped by the caller (test/runner/main.ts' `strip`): each uvu
 * `FAIL` block — the test's name, the message, the diff — and the first stack line in the
 * repository outside node_modules; without a `FAIL` block (a file that threw while loading, timed
 * out or killed its worker), its last lines.
 *
 * @example failureExcerpt('   FAIL  "x"\n    boom  (is)\n\n    at assert (…/node_modules/uvu/…)\n    at Object.handler (file:///repo/test/a.test.ts:4:3)\n')
 * // → '   FAIL  "x"\n    boom  (is)\n    at Object.handler (file:///repo/test/a.test.ts:4:3)'
 */

/** At most this many lines per file. */
const MAX_LINES = 30;

export function failureExcerpt(output: string, maxLines = MAX_LINES): string {
  const lines = output.split('\n');
  const out: string[] = [];
  for (let i = 0; i < lines.length && out.length < maxLines; i++) {
    if (!/^\s*FAIL\s/.test(lines[i]!)) continue;
    out.push(lines[i]!);
    let j = i + 1;
    // the message and the diff, up to the stack
    for (; j < lines.length && !/^\s+at /.test(lines[j]!) && !/^\s*FAIL\s/.test(lines[j]!); j++)
      if (lines[j]!.trim() !== '') out.push(lines[j]!);
    // the first frame of the project's own code
    for (; j < lines.length && /^\s+at /.test(lines[j]!); j++)
      if (!lines[j]!.includes('node_modules') && !lines[j]!.includes('node:')) {
        out.push(lines[j]!);
        break;
      }
  }
  if (out.length === 0) {
    const tail = lines.filter((l) => l.trim() !== '');
    out.push(...tail.slice(-Math.min(12, maxLines)));
  }
  return out.slice(0, maxLines).join('\n');
}
