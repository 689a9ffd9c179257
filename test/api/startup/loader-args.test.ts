/** The loader flags a child `node` gets from this process (api/startup/loader-args.ts). */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loaderArgs } from '../../../api/startup/loader-args.ts';

test('the module loaders of this process, in either spelling; nothing else', () => {
  assert.equal(loaderArgs([]), []);
  assert.equal(loaderArgs(['--import', 'tsx']), ['--import', 'tsx']);
  assert.equal(loaderArgs(['--import=tsx', '--max-semi-space-size=16']), ['--import=tsx']);
  assert.equal(
    loaderArgs(['--heap-growing-percent=50', '--require', 'a.cjs', '-r', 'b.cjs', '--loader', 'l.mjs', '--inspect']),
    ['--require', 'a.cjs', '-r', 'b.cjs', '--loader', 'l.mjs'],
  );
  assert.equal(loaderArgs(['--experimental-loader=x.mjs', '--import']), ['--experimental-loader=x.mjs']);
});

test.run();
