/**
 * The compression bench section (bench/compression.ts) runs end to end on the tiny release, a
 * few requests per case: a row per page, encoding and measure, the encoded pages far smaller than
 * the identity ones (its baseline), CPU and latency measured. Says nothing about speed.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { compressionBench } from '../../bench/compression.ts';
import { tinyDataDir } from '../helpers/api.ts';
import { REPO_ROOT } from '../helpers/tmp.ts';
import { enginePackPreload } from '../helpers/engine-pack-preload.ts';

test('the compression section measures bytes and server CPU for identity, gzip and br', async () => {
  const rows = await compressionBench({
    root: REPO_ROOT,
    dataDir: await tinyDataDir(),
    requests: 3,
    rounds: 1,
    warmup: 1, // (each case's answer is still checked: status 200, the encoding asked)
    serverNodeArgs: enginePackPreload(), // the API process's indexes from the tests' packs
    log: () => {},
  });
  assert.is(rows.length, 2 * 3 * 3, 'two pages × three encodings × bytes, CPU, latency');
  for (const page of ['100-lead page', '1,000-feature GeoJSON page']) {
    const identity = rows.find((r) => r.metric === `compression: ${page}, identity, bytes`)!;
    assert.ok(identity.value > 100_000, `${page}: ${identity.value} bytes`);
    for (const enc of ['gzip', 'br']) {
      const bytes = rows.find((r) => r.metric === `compression: ${page}, ${enc}, bytes`)!;
      assert.is(bytes.baseline, identity.value);
      assert.ok(bytes.value * 4 < identity.value, `${page} ${enc}: ${bytes.value} of ${identity.value} bytes`);
      const cpu = rows.find((r) => r.metric === `compression: ${page}, ${enc}, server CPU`)!;
      assert.ok(cpu.value >= 0 && cpu.baseline !== undefined, `${page} ${enc}: CPU measured`);
    }
  }
});

test.run();
