/**
 * `write:tables`: the release's Parquet tables (layouts in pipeline/release/table-specs.ts) — the
 * streamed ones from their staging files, the others from the validated rows — and
 * `rejects.jsonl`, listed by source in the publishers' order (`SOURCE_ORDER`). Then the in-memory
 * copies are dropped: the later stages read the Parquet files.
 */
import { join } from 'node:path';
import { REGISTRY_SPEC, tableSpec } from '../release/table-specs.ts';
import { writeNdjson, writeTable, writeTableFromSink, type TableSpec } from '../release/tables.ts';
import type { Reject } from '../types.ts';
import { need } from './context.ts';
import { SOURCE_ORDER } from './link.ts';
import type { Stage } from './runner.ts';
import type { CheckedSink } from './sinks.ts';

export const writeTablesStage: Stage = {
  name: 'write:tables',
  async run(ctx) {
    const build = need(ctx, 'build');
    const { dir } = build;
    const db = build.db();
    const tracked = need(ctx, 'tracked');
    const published = need(ctx, 'published');
    const sinks = need(ctx, 'sinks');
    const counts = ctx.counts;
    const streamed = async <T>(spec: TableSpec, s: CheckedSink<T>): Promise<number> => {
      const n = s.sink.close();
      await writeTableFromSink(db, dir, spec, s.sink, s.inOrder);
      return n;
    };
    counts['leads'] = await streamed(tableSpec('leads', ctx.config.leadsRowGroupRows), sinks.leads);
    counts['infrastructure'] = await writeTable(db, dir, tableSpec('infrastructure'), tracked.infra.records);
    counts['companies'] = await writeTable(db, dir, tableSpec('companies'), published.companies);
    counts['filings'] = await writeTable(db, dir, tableSpec('filings'), published.filings);
    counts['suppliers'] = await writeTable(db, dir, tableSpec('suppliers'), tracked.suppliers);
    counts['lead_neighbours'] = await streamed(tableSpec('lead_neighbours'), sinks.lead_neighbours);
    counts['changes'] = await streamed(tableSpec('changes'), sinks.changes);
    counts['registry'] = await streamed(REGISTRY_SPEC, sinks.registry);
    writeNdjson(join(dir, 'rejects.jsonl'), inSourceOrder(ctx.rejects));
    const rows = Object.values(counts).reduce((a, b) => a + b, 0) - (counts['sales'] ?? 0);
    for (const a of [published.companies, published.filings, tracked.suppliers, ctx.rejects]) a.length = 0;
    return rows;
  },
};

/** The rejects listed by source in `SOURCE_ORDER` (filings' rejects are the `companies` source's), in read order within one. */
function inSourceOrder(rejects: readonly Reject[]): Reject[] {
  const rank = (r: Reject): number => {
    const i = (SOURCE_ORDER as readonly string[]).indexOf(r.source);
    return i < 0 ? SOURCE_ORDER.length : i;
  };
  return [...rejects].sort((a, b) => rank(a) - rank(b));
}
