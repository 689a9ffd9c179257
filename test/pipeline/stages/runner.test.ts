/**
 * The stage runner over small stage tables of its own: order, the `onStage` hook, progress lines
 * taken from the table, timings, ending early, errors. The real table runs in
 * test/pipeline/run.test.ts.
 */
import { rejects } from 'node:assert/strict';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadPipelineConfig } from '../../../pipeline/config.ts';
import { createContext, need, type BuildContext } from '../../../pipeline/stages/context.ts';
import { progressLine, runStages, startMemoryMeter, type Stage } from '../../../pipeline/stages/runner.ts';
import { tempDir } from '../../helpers/tmp.ts';

const dir = tempDir('leads-stages-');

function context(progress = true): { ctx: BuildContext; log: string[]; started: string[] } {
  const log: string[] = [];
  const started: string[] = [];
  const config = loadPipelineConfig({}, { dataDir: dir, rawDir: dir, progress });
  const ctx = createContext(
    config,
    {
      now: () => new Date('2026-11-09T06:00:00Z'),
      log: (l) => log.push(l),
      onStage: (s) => void started.push(s),
      collectGarbage: () => {}, // none per stage in a long-lived test process (pipeline/stages/context.ts)
    },
    null,
  );
  return { ctx, log, started };
}

const step = (name: string, rows: number, ran: string[]): Stage => ({
  name,
  async run() {
    ran.push(name);
    return rows;
  },
});

async function run(stages: readonly Stage[], ctx: BuildContext) {
  const meter = startMemoryMeter();
  try {
    return await runStages(stages, ctx, meter);
  } finally {
    meter.stop();
  }
}

test('runs the table in order: onStage before each, one progress line per stage named from the table, timings by name', async () => {
  const ran: string[] = [];
  const { ctx, log, started } = context();
  const done: Stage = { ...step('last', 1, ran), end: () => ({ status: 'published', message: 'done' }) };
  const outcome = await run([step('first', 3, ran), step('second:two', 1234, ran), done], ctx);
  assert.equal(outcome, { status: 'published', message: 'done' });
  assert.equal(ran, ['first', 'second:two', 'last']);
  assert.equal(started, ['first', 'second:two', 'last']);
  assert.equal(
    log.map((l) => /^\[ ?(\d+)\/(\d+)\] (\S+) +([\d,]+) rows /.exec(l)?.slice(1)),
    [
      ['1', '3', 'first', '3'],
      ['2', '3', 'second:two', '1,234'],
      ['3', '3', 'last', '1'],
    ],
  );
  assert.equal(Object.keys(ctx.stages), ['first', 'second:two', 'last']);
  assert.is(ctx.stages['second:two']!.rows, 1234);
});

test('onStage is awaited before the stage runs', async () => {
  const events: string[] = [];
  const { ctx } = context(false);
  const hooked = createContext(
    ctx.config,
    {
      ...ctx.deps,
      onStage: async (s) => {
        await Promise.resolve();
        events.push(`hook ${s}`);
      },
    },
    null,
  );
  const stage = (name: string): Stage => ({ name, run: async () => (events.push(`run ${name}`), 0) });
  await run([stage('a'), { ...stage('b'), end: () => ({ status: 'published', message: '' }) }], hooked);
  assert.equal(events, ['hook a', 'run a', 'hook b', 'run b']);
});

test('a stage that names an outcome ends the refresh: later stages neither start nor print', async () => {
  const ran: string[] = [];
  const { ctx, log, started } = context();
  const stop: Stage = {
    ...step('check', 1, ran),
    end: () => ({ status: 'unchanged', releaseId: 'r1', message: 'nothing to do' }),
  };
  const outcome = await run([step('a', 1, ran), stop, step('never', 1, ran)], ctx);
  assert.is(outcome.status, 'unchanged');
  assert.is(outcome.releaseId, 'r1');
  assert.equal(ran, ['a', 'check']);
  assert.equal(started, ['a', 'check']);
  assert.is(log.length, 2);
  assert.match(log[1]!, /^\[ 2\/3\] check /);
});

test('progress off: no lines, timings still kept', async () => {
  const { ctx, log } = context(false);
  await run([{ ...step('only', 5, []), end: () => ({ status: 'published', message: '' }) }], ctx);
  assert.equal(log, []);
  assert.is(ctx.stages['only']!.rows, 5);
});

test('a stage or its end that throws ends the refresh with that error', async () => {
  const ran: string[] = [];
  const boom: Stage = {
    name: 'boom',
    run: async () => {
      throw new Error('unreadable file');
    },
  };
  await rejects(() => run([boom, step('after', 1, ran)], context().ctx), /unreadable file/);
  const invalid: Stage = {
    ...step('validate', 1, ran),
    end: () => {
      throw new Error('published rows failed schema validation');
    },
  };
  await rejects(() => run([invalid, step('after', 1, ran)], context().ctx), /failed schema validation/);
  assert.equal(ran, ['validate']);
});

test('a table that ends without an outcome is an error, and so is a stage reading what no stage made yet', async () => {
  await rejects(() => run([step('a', 1, [])], context().ctx), /stage table ended without an outcome \(last stage: a\)/);
  const early: Stage = { name: 'early', run: async (ctx) => need(ctx, 'tracked').infra.records.length };
  await rejects(() => run([early], context().ctx), /'tracked' is needed before any stage made it/);
});

test('progressLine: position, name, rows, seconds, rows/s and RSS in fixed columns', () => {
  assert.is(
    progressLine(2, 18, 'read:ppr', { ms: 312, rows: 3959, rows_per_s: 12689 }, 312.4, 177 * 1048576),
    '[ 2/18] read:ppr                  3,959 rows    0.3 s     12,689 rows/s    177 MB RSS',
  );
});

test.run();
