/**
 * `write:tables`: the release's Parquet tables from the validated rows (layouts in
 * pipeline/release/table-specs.ts) and `rejects.jsonl`. Then the big in-memory copies are
 * dropped: only the per-authority counts and the search documents go on, the later stages read
 * the Parquet files.
 */
import { join } from 'node:path';
import { countByAuthority, authorityLeads } from '../release/manifest.ts';
import { REGISTRY_SPEC, tableSpec } from '../release/table-specs.ts';
import { writeNdjson, writeTable } from '../release/tables.ts';
import { need } from './context.ts';
import type { Stage } from './runner.ts';

export const writeTablesStage: Stage = {
  name: 'write:tables',
  async run(ctx) {
    const build = need(ctx, 'build');
    const { dir } = build;
    const db = build.db();
    const tracked = need(ctx, 'tracked');
    const published = need(ctx, 'published');
    const counts = ctx.counts;
    counts['leads'] = await writeTable(
      db,
      dir,
      tableSpec('leads', ctx.config.leadsRowGroupRows),
      tracked.leads.records,
    );
    counts['infrastructure'] = await writeTable(db, dir, tableSpec('infrastructure'), tracked.infra.records);
    counts['companies'] = await writeTable(db, dir, tableSpec('companies'), published.companies);
    counts['filings'] = await writeTable(db, dir, tableSpec('filings'), published.filings);
    counts['suppliers'] = await writeTable(db, dir, tableSpec('suppliers'), tracked.suppliers);
    counts['lead_neighbours'] = await writeTable(db, dir, tableSpec('lead_neighbours'), tracked.neighbours);
    counts['changes'] = await writeTable(db, dir, tableSpec('changes'), published.changes);
    counts['registry'] = await writeTable(db, dir, REGISTRY_SPEC, published.registry);
    writeNdjson(join(dir, 'rejects.jsonl'), ctx.rejects);
    const rows = Object.values(counts).reduce((a, b) => a + b, 0) - (counts['sales'] ?? 0);

    // Written: drop the big in-memory copies before the search and GeoJSON stages.
    for (const a of [
      tracked.neighbours,
      published.registry,
      published.changes,
      published.companies,
      published.filings,
      tracked.suppliers,
      ctx.rejects,
    ])
      a.length = 0;
    const leads = tracked.leads.records;
    ctx.made.authorities = countByAuthority(leads);
    ctx.made.authorityLeads = authorityLeads(leads);
    ctx.made.searchDocs = leads.map((l) => ({
      id: l.id,
      text: `${l.description} ${l.address ?? ''} ${l.planning_authority} ${l.application_number}`,
    }));
    leads.length = 0; // written; the later stages read the Parquet files
    need(ctx, 'normalised').leads.length = 0; // the same objects (completed in place by trackChanges)
    return rows;
  },
};
