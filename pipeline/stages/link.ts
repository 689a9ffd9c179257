/**
 * `link`: DuckDB over the staged applications and notices (pipeline/normalise/lead-staging.ts):
 * the rows each adapter kept, one application per lead key, each notice linked to its lead; then
 * the release's as-of date, the per-authority reads and the infrastructure projects merged from
 * their fragments. The linked tables stay in the build's DuckDB instance for `leads`, which
 * streams them; the index files are removed once read (the heaps once `leads` has read them).
 */
import { rm } from 'node:fs/promises';
import { mergeInfrastructure } from '../normalise/infrastructure.ts';
import { AUTHORITY_READS_SQL, linkStatements, LINK_SUMMARY_SQL } from '../normalise/lead-staging.ts';
import { sourceReadsOf, type AuthorityRead } from '../release/manifest.ts';
import { need, type BuildContext } from './context.ts';
import type { Stage } from './runner.ts';

export const linkStage: Stage = {
  name: 'link',
  async run(ctx) {
    const db = need(ctx, 'build').db();
    const files = need(ctx, 'staging');
    for (const sql of linkStatements(files)) await db.run(sql);
    await Promise.all(
      [files.applications, files.keptApplications, files.notices, files.keptNotices].map((f) => rm(f, { force: true })),
    );
    const [summary] = await db.all<{ latest_etl: string | null; linked: number; notices: number }>(LINK_SUMMARY_SQL);
    const asOf = (ctx.made.asOf = summary!.latest_etl ?? need(ctx, 'build').now.toISOString().slice(0, 10));
    ctx.made.linked = { linkedNotices: summary!.linked, unlinkedNotices: summary!.notices - summary!.linked };
    ctx.made.authorityReads = sourceReadsOf(await db.all<AuthorityRead & Record<string, unknown>>(AUTHORITY_READS_SQL));
    const infraDrafts = (ctx.made.infraDrafts = mergeInfrastructure(
      need(ctx, 'infrastructure').rows,
      need(ctx, 'register'),
      asOf,
    ));
    return summary!.notices + infraDrafts.length;
  },
};

/**
 * The order sources are listed in (the manifest's `sources`, the summary, `rejects.jsonl`): the
 * publishers' order, whatever order the stages read them in (the company register is read before
 * the applications, whose names it decides; the sales beside them, in a worker thread).
 */
export const SOURCE_ORDER = [
  'ppr',
  'planning',
  'commencements',
  'companies',
  'filings',
  'infrastructure',
  'rents',
  'materials',
] as const;

/** Re-list `ctx.sources` in `SOURCE_ORDER` (any other source after them, as read); `validate` does, once every source is read. */
export function orderSources(ctx: BuildContext): void {
  const sources = ctx.sources;
  const read = Object.entries(sources);
  for (const [k] of read) delete sources[k];
  const rank = (k: string): number => {
    const i = (SOURCE_ORDER as readonly string[]).indexOf(k);
    return i < 0 ? SOURCE_ORDER.length : i;
  };
  for (const [k, v] of read.sort((a, b) => rank(a[0]) - rank(b[0]))) sources[k] = v;
}
