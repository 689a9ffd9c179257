/**
 * The `read:<source>` stages after the sales: each reads one source's raw files with its adapter
 * (pipeline/sources/) and accounts its lines, rows and rejects.
 */
import { readCommencements } from '../sources/commencements.ts';
import { readCompanies } from '../sources/companies.ts';
import { readInfrastructure } from '../sources/infrastructure.ts';
import { readMaterials } from '../sources/materials.ts';
import { readPlanning } from '../sources/planning.ts';
import { readRents } from '../sources/rents.ts';
import { account, need } from './context.ts';
import type { Stage } from './runner.ts';

export const readPlanningStage: Stage = {
  name: 'read:planning',
  async run(ctx) {
    const r = (ctx.made.planning = await readPlanning(need(ctx, 'files').by.planning));
    account(ctx, 'planning', r);
    return r.lines;
  },
};

export const readCommencementsStage: Stage = {
  name: 'read:commencements',
  async run(ctx) {
    const r = (ctx.made.commencements = await readCommencements(need(ctx, 'files').by.commencements));
    account(ctx, 'commencements', r);
    return r.lines;
  },
};

/** Companies and their filings come from the same CRO folder and are accounted as two sources. */
export const readCompaniesStage: Stage = {
  name: 'read:companies',
  async run(ctx) {
    const r = (ctx.made.companies = await readCompanies(need(ctx, 'files').by.companies));
    account(ctx, 'companies', r.companies);
    account(ctx, 'filings', r.filings);
    return r.companies.lines + r.filings.lines;
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
