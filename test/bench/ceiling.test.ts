/**
 * The ceiling bench section (bench/ceiling.ts) runs end to end on the tiny release, one short round:
 * the bare Koa process answers the recorded paths with the API's own bytes, every load gets only
 * 2xx answers, and the rows name the API against the ceiling, repeated against varied, the
 * API's peak RSS and the parts of a request's time (bench/request-parts.ts). Says nothing about speed.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ceilingBench } from '../../bench/ceiling.ts';
import { tinyDataDir } from '../helpers/api.ts';
import { REPO_ROOT } from '../helpers/tmp.ts';
import { enginePackPreload } from '../helpers/engine-pack-preload.ts';

test('the ceiling section measures the API against bare Koa on the same payloads', async () => {
  const rows = await ceilingBench({
    root: REPO_ROOT,
    benchData: await tinyDataDir(),
    seconds: 0.3, // the rows' shape, not their figures: a third of a second per load is enough to measure something
    varied: 40, // (the bench's 200 and its warm-up of 200 requests per load are for figures)
    warmup: 40,
    serverNodeArgs: enginePackPreload(), // the API processes' indexes from the tests' packs
    connections: 2,
    rounds: 1,
    settle: false, // the test loop's box is never quiet: settling would wait 10 s per load
    log: () => {},
  });
  const row = (prefix: string) => rows.find((r) => r.metric.startsWith(prefix))!;
  const api = row('list page req/s, access on');
  assert.ok(api.value > 0 && api.baseline! > 0, `API ${api.value} req/s, bare Koa ${api.baseline} req/s`);
  assert.ok(api.ok !== undefined);
  assert.ok(row('repeated 22 list queries').value > 0);
  const cpu = row('server CPU per request');
  assert.ok(cpu.value > 0 && cpu.baseline! > 0, 'both servers used CPU');
  assert.ok(row('API peak RSS').value > 50);
  // where a request's time goes: the access middleware, the engine's steps and the write among the parts
  for (const part of [
    'parts: middleware: accessMiddleware',
    'parts: engine: choose the page',
    "parts: engine: write the page's bytes",
    'parts: res.end',
  ])
    assert.ok(
      row(part)?.value > 0,
      `${part}: ${JSON.stringify(rows.filter((r) => r.metric.startsWith('parts:')).map((r) => r.metric))}`,
    );
  assert.ok(row('parts: server CPU per request of the timed run').value > 0);
});

test.run();
