/**
 * The module-loader flags of this process (`--import tsx`, `--require …`, `--loader …`), for a
 * child `node` that runs this project's TypeScript the way this process does: through tsx where
 * this process was started with it (`make serve`, `make bench`, the systemd unit), with Node's own
 * type stripping where it was started without one (the test runner's workers,
 * test/runner/worker.ts). The index-building child (api/engine/release-indexes.ts) and the bench's
 * servers and load generator (bench/) are started with them.
 *
 * @example spawn(process.execPath, [...loaderArgs(), 'api/engine/build-child.ts', dir]);
 */
export function loaderArgs(execArgv: readonly string[] = process.execArgv): string[] {
  const out: string[] = [];
  for (let i = 0; i < execArgv.length; i++) {
    const a = execArgv[i]!;
    if (/^--(import|require|loader|experimental-loader)=/.test(a)) out.push(a);
    else if (
      ['--import', '--require', '--loader', '--experimental-loader', '-r'].includes(a) &&
      i + 1 < execArgv.length
    )
      out.push(a, execArgv[++i]!);
  }
  return out;
}
