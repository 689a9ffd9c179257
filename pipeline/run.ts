/**
 * The weekly refresh: raw source files in, a validated, versioned release out.
 *
 *   read sources → normalise & enrich → identity & change tracking → validate against schemas/
 *   → write Parquet, search index, GeoJSON → market analytics (pipeline/intel/)
 *   → manifest & quality gates → atomic publish → prune
 *
 * `runPipeline(config, deps)` takes the refresh lock, runs the stage table
 * (`STAGES`, pipeline/stages/index.ts) and returns a summary; nothing runs on import.
 * Everything is built in `releases/.build-<id>/` and only the final rename makes it current.
 */
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { PipelineConfig } from './config.ts';
import type { PreviousManifest } from './release/manifest.ts';
import { acquireRefreshLock, currentRelease } from './release/publish.ts';
import { removeBuildFolders } from '../common/refresh-lock.ts';
import {
  createContext,
  type BuildContext,
  type PipelineDeps,
  type RefreshSummary,
  type StageOutcome,
} from './stages/context.ts';
import { STAGES } from './stages/index.ts';
import { runStages, startMemoryMeter, type MemoryMeter } from './stages/runner.ts';

export { SCHEMA_VERSION } from './release/manifest.ts';
export { parquetRowCounts } from './release/checksums.ts';
export type { PipelineDeps, RefreshSummary, StageTiming } from './stages/context.ts';

/** Run one refresh. Throws only for operational errors (lock held, unreadable files, invalid rows). */
export async function runPipeline(config: PipelineConfig, deps: PipelineDeps): Promise<RefreshSummary> {
  const t0 = performance.now();
  const meter = startMemoryMeter();
  let ctx: BuildContext | null = null;
  try {
    const releaseLock = await acquireRefreshLock(config.dataDir);
    try {
      // what a killed refresh left (also when this one ends `unchanged` and builds nothing)
      const stale = await removeBuildFolders(config.dataDir);
      if (stale.length > 0)
        deps.log(`removed ${stale.length} build folder(s) a killed refresh left: ${stale.join(', ')}`);
      const current = currentRelease(config.dataDir);
      const previous = current
        ? {
            ...current,
            manifest: JSON.parse(await readFile(join(current.dir, 'manifest.json'), 'utf8')) as PreviousManifest,
          }
        : null;
      ctx = createContext(config, deps, previous);
      const outcome = await runStages(STAGES, ctx, meter);
      return summarise(outcome, ctx, meter, t0);
    } finally {
      const build = ctx?.made.build;
      await build?.close();
      // A build that was not published is removed (after a publish its folder has been renamed).
      if (build) await rm(build.dir, { recursive: true, force: true });
      await releaseLock();
    }
  } finally {
    meter.stop();
  }
}

function summarise(outcome: StageOutcome, ctx: BuildContext, meter: MemoryMeter, t0: number): RefreshSummary {
  return {
    status: outcome.status,
    releaseId: outcome.releaseId ?? null,
    previousReleaseId: ctx.previous?.id ?? null,
    asOf: outcome.asOf ?? null,
    changes: outcome.changes ?? null,
    counts: outcome.counts ?? {},
    sources: outcome.sources ?? {},
    gates: outcome.gates ?? { passed: true, forced: false, messages: [] },
    stages: ctx.stages,
    releaseBytes: outcome.releaseBytes ?? null,
    peakRssMb: Math.round(
      Math.max(meter.peakRss, process.memoryUsage().rss, process.resourceUsage().maxRSS * 1024) / 1048576,
    ),
    peakRssStage: meter.peakStage,
    wallMs: Math.round(performance.now() - t0),
    message: outcome.message,
  };
}
