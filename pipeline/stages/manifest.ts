/**
 * `manifest`: the quality gates against the current release's manifest, then `manifest.json`
 * (validated against schema `release-manifest`) with the checksum of every file. After it the
 * refresh stops, publishing nothing, if a gate failed and `--force` was not given.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { checksumFiles } from '../release/checksums.ts';
import { checkGates } from '../release/gates.ts';
import { authorityFreshness, buildManifest, recordsTotal } from '../release/manifest.ts';
import { readFetchLog, sourcesFreshness } from '../fetch/log.ts';
import { need, type BuildContext, type StageOutcome } from './context.ts';
import type { Stage } from './runner.ts';

export const manifestStage: Stage = {
  name: 'manifest',
  async run(ctx) {
    const gates = (ctx.made.gates = checkGates(ctx.sources, ctx.previous?.manifest.counts.sources ?? null, {
      maxShrinkRatio: ctx.config.gateMaxShrinkRatio,
      maxRejectRatio: ctx.config.gateMaxRejectRatio,
    }));
    const build = need(ctx, 'build');
    const linked = need(ctx, 'linked');
    const m = buildManifest({
      releaseId: build.releaseId,
      builtAt: build.now,
      asOf: need(ctx, 'asOf'),
      previousReleaseId: ctx.previous?.id ?? null,
      tables: ctx.counts,
      sources: ctx.sources,
      authorities: need(ctx, 'authorities'),
      linkedNotices: linked.linkedNotices,
      unlinkedNotices: linked.unlinkedNotices,
      publishedNames: need(ctx, 'names').counts,
      changes: need(ctx, 'changeCounts'),
      search: need(ctx, 'search'),
      geojson: need(ctx, 'geojson'),
      analytics: need(ctx, 'analytics').pairs,
      files: await checksumFiles(build.dir),
      stages: ctx.stages,
      gates,
      force: ctx.config.force,
      fingerprint: need(ctx, 'fingerprint'),
      freshness: freshnessOf(ctx.config.rawDir),
      authorityFreshness: authorityFreshness(
        need(ctx, 'authorityReads'),
        need(ctx, 'authorityLeads'),
        readFetchLog(ctx.config.rawDir),
      ),
    });
    const problems = need(ctx, 'validators').validate('release-manifest', m);
    if (problems.length) throw new Error(`manifest failed schema validation: ${problems.join('; ')}`);
    const text = JSON.stringify(m, null, 2) + '\n';
    await writeFile(join(build.dir, 'manifest.json'), text);
    ctx.made.releaseBytes = Object.values(m.files).reduce((a, f) => a + f.bytes, Buffer.byteLength(text));
    return Object.keys(ctx.counts).length;
  },
  end(ctx) {
    const gates = need(ctx, 'gates');
    if (gates.passed || ctx.config.force) return null;
    return {
      ...builtSummary(ctx),
      status: 'blocked',
      releaseId: null,
      gates: { ...gates, forced: false },
      message: `quality gates failed — release not published (current release unchanged; --force to publish anyway):\n  ${gates.messages.join('\n  ')}`,
    };
  },
};

/** The raw folder's fetch log as the manifest's `sources_freshness`, or null without one. */
function freshnessOf(rawDir: string) {
  const log = readFetchLog(rawDir);
  return log ? sourcesFreshness(log) : null;
}

/** The summary fields of a release that was built: as-of date, changes, table counts, sources, size on disk. */
export function builtSummary(
  ctx: BuildContext,
): Pick<StageOutcome, 'asOf' | 'changes' | 'counts' | 'sources' | 'releaseBytes'> {
  return {
    releaseBytes: need(ctx, 'releaseBytes'),
    asOf: need(ctx, 'asOf'),
    changes: need(ctx, 'changeCounts'),
    counts: { ...ctx.counts, records_total: recordsTotal(ctx.counts) },
    sources: ctx.sources,
  };
}
