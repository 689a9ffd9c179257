/**
 * The `read:<source>` stages after the sales: each reads one source's raw files with its adapter
 * (pipeline/sources/) and accounts its lines, rows and rejects. The company register comes first:
 * the planning applications and commencement notices stream past it, each applicant and builder
 * decided on its evidence as the row is read, into the lead build's staging files
 * (pipeline/normalise/lead-staging.ts) — the rows themselves are never held.
 */
import { buildCompanyIndex } from '../normalise/company-match.ts';
import { leadStagingFiles, openApplicationSink, openNoticeSink, writeKept } from '../normalise/lead-staging.ts';
import { leadKeyOf, leadResolvers, leadSource, linkedNotice } from '../normalise/leads.ts';
import { readCommencements } from '../sources/commencements.ts';
import { readCompanies } from '../sources/companies.ts';
import { readInfrastructure } from '../sources/infrastructure.ts';
import { readMaterials } from '../sources/materials.ts';
import { readPlanning } from '../sources/planning.ts';
import { readRents } from '../sources/rents.ts';
import { account, need } from './context.ts';
import type { Stage } from './runner.ts';

/** Companies and their filings come from the same CRO folder and are accounted as two sources. */
export const readCompaniesStage: Stage = {
  name: 'read:companies',
  async run(ctx) {
    const r = (ctx.made.companies = await readCompanies(need(ctx, 'files').by.companies));
    account(ctx, 'companies', r.companies);
    account(ctx, 'filings', r.filings);
    const register = (ctx.made.register = buildCompanyIndex(r.companies.rows));
    ctx.made.resolvers = leadResolvers(register);
    ctx.made.staging = leadStagingFiles(need(ctx, 'build').dir);
    return r.companies.lines + r.filings.lines;
  },
};

export const readPlanningStage: Stage = {
  name: 'read:planning',
  async run(ctx) {
    const resolvers = need(ctx, 'resolvers');
    const files = need(ctx, 'staging');
    const sink = openApplicationSink(files);
    const r = await readPlanning(need(ctx, 'files').by.planning, (row, arrival) => {
      const facts = resolvers.authority(row.authority);
      sink.write({
        arrival,
        leadKey: leadKeyOf(facts, row.authority, row.application_number),
        slug: facts?.slug ?? null,
        authority: facts?.name ?? null,
        source: leadSource(row, resolvers),
      });
    });
    sink.close();
    writeKept(files.keptApplications, r.kept);
    account(ctx, 'planning', r, r.kept.length);
    return r.lines;
  },
};

export const readCommencementsStage: Stage = {
  name: 'read:commencements',
  async run(ctx) {
    const resolvers = need(ctx, 'resolvers');
    const files = need(ctx, 'staging');
    const sink = openNoticeSink(files);
    const r = await readCommencements(need(ctx, 'files').by.commencements, (row, arrival) => {
      const facts = row.authority ? resolvers.authority(row.authority) : null;
      sink.write({
        arrival,
        permissionNumber: row.permission_number,
        slug: facts?.slug ?? null,
        authority: facts?.name ?? null,
        notice: linkedNotice(row, resolvers),
      });
    });
    sink.close();
    writeKept(files.keptNotices, r.kept);
    account(ctx, 'commencements', r, r.kept.length);
    return r.lines;
  },
};

export const readInfrastructureStage: Stage = {
  name: 'read:infrastructure',
  async run(ctx) {
    const r = (ctx.made.infrastructure = await readInfrastructure(need(ctx, 'files').by.infrastructure));
    account(ctx, 'infrastructure', r);
    return r.lines;
  },
};

// Rents and materials feed the analytics only; a raw folder without them builds no yields / costs
// and accounts no source (so the gates do not fail a source it never had).

export const readRentsStage: Stage = {
  name: 'read:rents',
  async run(ctx) {
    const files = need(ctx, 'files').by.rents;
    const r = (ctx.made.rents = await readRents(files));
    if (files.length) account(ctx, 'rents', r);
    return r.lines;
  },
};

export const readMaterialsStage: Stage = {
  name: 'read:materials',
  async run(ctx) {
    const files = need(ctx, 'files').by.materials;
    const r = (ctx.made.materials = await readMaterials(files));
    if (files.length) account(ctx, 'materials', r);
    return r.lines;
  },
};
