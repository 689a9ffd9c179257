/**
 * Runs a table of stages in order: calls `deps.onStage` as each starts, times it, runs a full
 * garbage collection after it (the next stage's DuckDB memory must not stack on rows already
 * freed; `deps.collectGarbage` replaces it), prints its progress line, and stops at the first stage that names an outcome.
 */
import { collectGarbage } from '../lib/memory.ts';
import type { BuildContext, StageOutcome, StageTiming } from './context.ts';

export interface Stage {
  /** Shown in the progress line, the key of its timing in the manifest, passed to `deps.onStage`. */
  readonly name: string;
  /** Do the stage's work; returns the rows it handled (progress line and timings). */
  run(ctx: BuildContext): Promise<number>;
  /** Checked after the stage: the outcome that ends the refresh here, or null to go on. May throw. */
  end?(ctx: BuildContext): StageOutcome | null;
}

/** Peak resident memory, sampled every 50 ms and after each stage, and the stage it was seen in. */
export interface MemoryMeter {
  /** The stage now running ('start' before the first). */
  stage: string;
  readonly peakRss: number;
  readonly peakStage: string;
  /** Take a sample now without attributing it to a stage (between stages). */
  sample(): void;
  stop(): void;
}

/** Start sampling resident memory (the timer is unref'd: it never keeps the process alive); `stop()` when done. */
export function startMemoryMeter(): MemoryMeter {
  let peakRss = process.memoryUsage().rss;
  let peakStage = 'start';
  const meter: MemoryMeter = {
    stage: 'start',
    get peakRss() {
      return peakRss;
    },
    get peakStage() {
      return peakStage;
    },
    sample() {
      peakRss = Math.max(peakRss, process.memoryUsage().rss);
    },
    stop() {
      clearInterval(timer);
    },
  };
  const timer = setInterval(() => {
    const rss = process.memoryUsage().rss;
    if (rss > peakRss) {
      peakRss = rss;
      peakStage = meter.stage;
    }
  }, 50);
  timer.unref();
  return meter;
}

/** `[ 4/21] read:planning   202,309 rows   5.9 s   34,201 rows/s   526 MB RSS` (numbers in en-IE). */
export function progressLine(
  position: number,
  total: number,
  name: string,
  t: StageTiming,
  ms: number,
  rssBytes: number,
): string {
  return (
    `[${String(position).padStart(2)}/${total}] ${name.padEnd(20)} ${t.rows.toLocaleString('en-IE').padStart(10)} rows ` +
    `${(ms / 1000).toFixed(1).padStart(6)} s ${t.rows_per_s.toLocaleString('en-IE').padStart(10)} rows/s ` +
    `${Math.round(rssBytes / 1048576)
      .toLocaleString('en-IE')
      .padStart(6)} MB RSS`
  );
}

/**
 * Run `stages` in order over `ctx` and return the outcome named by the first stage that ends the
 * refresh. A stage that throws ends it with that error. Timings go to `ctx.stages`.
 */
export async function runStages(
  stages: readonly Stage[],
  ctx: BuildContext,
  meter: MemoryMeter,
): Promise<StageOutcome> {
  for (const [i, stage] of stages.entries()) {
    await ctx.deps.onStage?.(stage.name);
    meter.stage = stage.name;
    const s = performance.now();
    const rows = await stage.run(ctx);
    (ctx.deps.collectGarbage ?? collectGarbage)(); // hand freed rows back before the next stage stacks DuckDB memory on top
    const ms = performance.now() - s;
    const timing = { ms: Math.round(ms), rows, rows_per_s: ms > 0 ? Math.round((rows / ms) * 1000) : rows };
    ctx.stages[stage.name] = timing;
    meter.sample();
    if (ctx.config.progress)
      ctx.deps.log(progressLine(i + 1, stages.length, stage.name, timing, ms, process.memoryUsage().rss));
    const outcome = stage.end?.(ctx) ?? null;
    if (outcome) return outcome;
  }
  throw new Error(`the refresh's stage table ended without an outcome (last stage: ${stages.at(-1)?.name ?? 'none'})`);
}
