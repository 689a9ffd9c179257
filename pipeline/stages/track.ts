/**
 * `track`: identity and change tracking against the previous release's registry (ids, first
 * seen, last changed, new / updated / removed), in key order so new ids are deterministic; then
 * each lead's nearest neighbours and the supplier table.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { nearestNeighbours } from '../normalise/neighbours.ts';
import { buildSuppliers } from '../normalise/suppliers.ts';
import { trackChanges, type RegistryEntry } from '../release/registry.ts';
import { LEAD_UNHASHED } from '../../common/lead-record.ts';
import { readParquet } from '../release/tables.ts';
import { need } from './context.ts';
import type { Stage } from './runner.ts';

const byKey = <T extends { lead_key?: string; project_key?: string }>(a: T, b: T): number =>
  (a.lead_key ?? a.project_key)! < (b.lead_key ?? b.project_key)! ? -1 : 1;

export const trackStage: Stage = {
  name: 'track',
  async run(ctx) {
    const previous = ctx.previous;
    const prevRegistry: RegistryEntry[] =
      previous && existsSync(join(previous.dir, 'registry.parquet'))
        ? await readParquet<RegistryEntry>(need(ctx, 'build').db(), join(previous.dir, 'registry.parquet'))
        : [];
    const normalised = need(ctx, 'normalised');
    const asOf = need(ctx, 'asOf');
    const suppliers = buildSuppliers(need(ctx, 'companies').companies.rows, normalised.leads);
    const leads = trackChanges(
      'leads',
      normalised.leads.sort(byKey),
      (d) => d.lead_key,
      prevRegistry,
      asOf,
      LEAD_UNHASHED,
    );
    const infra = trackChanges(
      'infrastructure',
      [...normalised.infraDrafts].sort(byKey),
      (d) => d.project_key,
      prevRegistry,
      asOf,
    );
    const neighbours = nearestNeighbours(leads.records.map((l) => ({ id: l.id, lat: l.lat, lon: l.lon })));
    ctx.made.tracked = { leads, infra, neighbours, suppliers };
    return leads.records.length + infra.records.length;
  },
};
