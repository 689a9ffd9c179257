/**
 * `normalise`: the release's as-of date, the company register, one lead per planning application
 * with its commencement notices linked, and the infrastructure projects merged from their
 * fragments. The planning and commencement rows are dropped once the leads are built.
 */
import { authoritySourceReads } from '../release/manifest.ts';
import { buildCompanyIndex } from '../normalise/company-match.ts';
import { mergeInfrastructure } from '../normalise/infrastructure.ts';
import { buildLeads } from '../normalise/leads.ts';
import { need } from './context.ts';
import type { Stage } from './runner.ts';

export const normaliseStage: Stage = {
  name: 'normalise',
  async run(ctx) {
    const planning = need(ctx, 'planning');
    const commencements = need(ctx, 'commencements');
    const asOf = (ctx.made.asOf =
      latestDate(planning.rows.map((r) => r.etl_date)) ?? need(ctx, 'build').now.toISOString().slice(0, 10));
    const index = buildCompanyIndex(need(ctx, 'companies').companies.rows);
    const built = buildLeads(planning.rows, commencements.rows, index, asOf);
    const infraDrafts = mergeInfrastructure(need(ctx, 'infrastructure').rows, index, asOf);
    ctx.made.normalised = { ...built, infraDrafts, index };
    ctx.made.authorityReads = authoritySourceReads(planning.rows, commencements.rows);
    planning.rows.length = 0;
    commencements.rows.length = 0;
    return built.leads.length + infraDrafts.length;
  },
};

/** The latest of some ISO dates, null when there is none. */
export function latestDate(dates: (string | null)[]): string | null {
  let max: string | null = null;
  for (const d of dates) if (d && (!max || d > max)) max = d;
  return max;
}
