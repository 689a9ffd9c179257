/**
 * The refresh as a table of stages, run in this order by `runStages` (pipeline/stages/runner.ts).
 * This table is the one declaration of the stages: `make refresh` prints a progress line per
 * entry (`[ 2/18] read:ppr …`), the manifest records each one's timing under its name, and
 * `deps.onStage` is called with the name as each starts.
 *
 *   fingerprint → start → read:companies → read:planning → read:commencements
 *   → read:<other sources>… → link → leads → read:ppr → write:sales → track
 *   → validate (privacy gate) → write:tables → events → search-index → geojson → analytics
 *   → manifest (quality gates) → publish
 *
 * The PPR files are read in a worker thread from `start` to `read:ppr` (pipeline/stages/sales.ts),
 * beside the stages between, which is when the refresh uses both cores.
 *
 * A stage may end the refresh after it (`end`): `fingerprint` when the input is unchanged,
 * `validate` when the privacy gate fails (or throws on invalid rows), `manifest` when a quality
 * gate fails without `--force`, `publish` always. Small stages are written here; larger ones
 * have their own file.
 */
import { join } from 'node:path';
import { runAnalytics } from '../intel/analytics.ts';
import { writeGeoJson } from '../release/geojson.ts';
import { publishRelease, pruneReleases } from '../release/publish.ts';
import { inputFingerprint, listRawFiles } from '../release/raw-files.ts';
import { writeStagedSearchIndex } from '../release/search-index.ts';
import { need } from './context.ts';
import { leadsStage } from './leads.ts';
import { linkStage } from './link.ts';
import { builtSummary, manifestStage } from './manifest.ts';
import {
  readCommencementsStage,
  readCompaniesStage,
  readInfrastructureStage,
  readMaterialsStage,
  readPlanningStage,
  readRentsStage,
} from './read-sources.ts';
import type { Stage } from './runner.ts';
import { readPprStage, startStage, writeSalesStage } from './sales.ts';
import { eventsStage } from './events.ts';
import { trackStage } from './track.ts';
import { validateStage } from './validate.ts';
import { writeTablesStage } from './write-tables.ts';

/** Hash the raw files and the pipeline's code; stop if the current release was built from the same. */
const fingerprintStage: Stage = {
  name: 'fingerprint',
  async run(ctx) {
    const files = await listRawFiles(ctx.config.rawDir);
    if (files.all.length === 0)
      throw new Error(`no raw files under ${ctx.config.rawDir} (run 'leads generate' or pass --raw DIR)`);
    ctx.made.files = files;
    ctx.made.fingerprint = await inputFingerprint(ctx.config.rawDir, files.all);
    return files.all.length;
  },
  end(ctx) {
    const previous = ctx.previous;
    if (!previous || previous.manifest.input_fingerprint !== need(ctx, 'fingerprint') || ctx.config.force) return null;
    return {
      status: 'unchanged',
      releaseId: previous.id,
      message: `input unchanged since release ${previous.id}: nothing to publish (use --force to rebuild)`,
    };
  },
};

/** The BM25 search index over each lead's description, address, authority and application number. */
const searchIndexStage: Stage = {
  name: 'search-index',
  async run(ctx) {
    const build = need(ctx, 'build');
    const stats = (ctx.made.search = await writeStagedSearchIndex(
      await build.fresh(),
      need(ctx, 'searchStaging'),
      build.dir,
    ));
    return stats.docs;
  },
};

/** The GeoJSON layers, rendered from the Parquet files; rows = features of the national layers. */
const geojsonStage: Stage = {
  name: 'geojson',
  async run(ctx) {
    const build = need(ctx, 'build');
    const index = (ctx.made.geojson = await writeGeoJson(await build.fresh(), build.dir));
    return index.layers.reduce((a, l) => a + (l.name.includes('/') ? 0 : l.features), 0);
  },
};

/** The market analytics tables (pipeline/intel/): price index, yields, emerging zones, material costs. */
const analyticsStage: Stage = {
  name: 'analytics',
  async run(ctx) {
    const build = need(ctx, 'build');
    const rents = need(ctx, 'rents');
    const analytics = (ctx.made.analytics = await runAnalytics(await build.fresh(), {
      salesPath: need(ctx, 'intelSalesPath'),
      leadsParquet: join(build.dir, 'leads.parquet'),
      rents: rents.rows,
      materials: need(ctx, 'materials').rows,
      asOf: need(ctx, 'asOf'),
      buildDir: build.dir,
      validators: need(ctx, 'validators'),
    }));
    Object.assign(ctx.counts, analytics.tables);
    rents.rows.length = 0;
    return Object.values(analytics.tables).reduce((x, y) => x + y, 0);
  },
};

/** Rename the build folder into place, switch `current` atomically, prune old releases. */
const publishStage: Stage = {
  name: 'publish',
  async run(ctx) {
    const build = need(ctx, 'build');
    await build.close();
    await publishRelease(ctx.config.dataDir, build.dir, build.releaseId);
    await pruneReleases(ctx.config.dataDir, ctx.config.releaseRetentionWeeks, build.now);
    return 1;
  },
  end(ctx) {
    const gates = need(ctx, 'gates');
    const releaseId = need(ctx, 'build').releaseId;
    return {
      ...builtSummary(ctx),
      status: 'published',
      releaseId,
      gates: { ...gates, forced: !gates.passed },
      message: `published release ${releaseId}` + (gates.passed ? '' : ' (gates forced)'),
    };
  },
};

/** The refresh, in order. */
export const STAGES: readonly Stage[] = [
  fingerprintStage,
  startStage,
  readCompaniesStage,
  readPlanningStage,
  readCommencementsStage,
  readInfrastructureStage,
  readRentsStage,
  readMaterialsStage,
  linkStage,
  leadsStage,
  readPprStage,
  writeSalesStage,
  trackStage,
  validateStage,
  writeTablesStage,
  eventsStage,
  searchIndexStage,
  geojsonStage,
  analyticsStage,
  manifestStage,
  publishStage,
];
