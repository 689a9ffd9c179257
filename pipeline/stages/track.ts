/**
 * `track`: the infrastructure projects' ids and changes against the previous registry (a few
 * thousand: tracked in memory, in key order), each lead's nearest neighbours (from the ids and
 * coordinates `leads` kept, written straight to their staging file) and the supplier table.
 */
import { forEachNeighbour } from '../normalise/neighbours.ts';
import { buildSuppliers } from '../normalise/suppliers.ts';
import { sqlString } from '../lib/duckdb.ts';
import { trackChanges, type RegistryEntry } from '../release/registry.ts';
import { need } from './context.ts';
import { previousRegistryPath } from './leads.ts';
import type { Stage } from './runner.ts';

export const trackStage: Stage = {
  name: 'track',
  async run(ctx) {
    const build = need(ctx, 'build');
    const sinks = need(ctx, 'sinks');
    const registry = previousRegistryPath(ctx);
    const prevInfra = registry
      ? await build
          .db()
          .all<RegistryEntry & Record<string, unknown>>(
            `SELECT * FROM read_parquet(${sqlString(registry)}) WHERE kind = 'infrastructure'`,
          )
      : [];
    const drafts = [...need(ctx, 'infraDrafts')].sort((a, b) => (a.project_key < b.project_key ? -1 : 1));
    const infra = trackChanges('infrastructure', drafts, (d) => d.project_key, prevInfra, need(ctx, 'asOf'));
    for (const e of infra.entries) sinks.registry.write(e);
    for (const c of infra.changes) sinks.changes.write(c);
    const gate = need(ctx, 'nameGate');
    for (const p of infra.records) gate.check('infrastructure', p);
    need(ctx, 'changeCounts').infrastructure = infra.counts;
    const points = need(ctx, 'points');
    const neighbours = forEachNeighbour(points, (n) => sinks.lead_neighbours.write(n));
    points.clear();
    const suppliers = buildSuppliers(need(ctx, 'companies').companies.rows, need(ctx, 'projects'));
    ctx.made.tracked = { infra, suppliers };
    return infra.records.length + neighbours;
  },
};
