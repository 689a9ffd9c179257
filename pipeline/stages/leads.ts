/**
 * `leads`: the leads streamed from the linked tables (`link`) in lead-key order, one DuckDB chunk
 * at a time, each one built (`toLead`), tracked against the previous registry (`ChangeTracker`:
 * new ids in key order), validated and checked by the privacy gate as it is written to its
 * staging file. Only small per-lead facts stay behind: each lead's id and coordinates (nearest
 * neighbours), its main contractor's number (suppliers), the per-authority figures and its
 * search terms (staged to a file). Memory stays at a chunk whatever the number of leads.
 */
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { LeadSource, LinkedNotice } from '../normalise/leads.ts';
import { toLead } from '../normalise/leads.ts';
import { PointColumns } from '../normalise/neighbours.ts';
import {
  LEAD_INPUT_SQL,
  LEAD_NOTICES_SQL,
  leadOrderSql,
  previousLeadsSql,
  type LeadInput,
  type LeadNoticeRef,
} from '../normalise/lead-staging.ts';
import { RowHeapReader } from '../lib/row-heap.ts';
import { AuthorityTally } from '../release/manifest.ts';
import { NameGate } from '../release/name-gate.ts';
import { ChangeTracker, type RegistryEntry } from '../release/registry.ts';
import { SearchStaging, searchStagingPath } from '../release/search-index.ts';
import { LEAD_UNHASHED } from '../../common/lead-record.ts';
import { need, type BuildContext } from './context.ts';
import type { Stage } from './runner.ts';
import { openTableSinks } from './sinks.ts';

export const leadsStage: Stage = {
  name: 'leads',
  async run(ctx) {
    const build = need(ctx, 'build');
    const db = build.db();
    const asOf = need(ctx, 'asOf');
    const resolvers = need(ctx, 'resolvers');
    const sinks = (ctx.made.sinks = openTableSinks(build.dir, need(ctx, 'validators')));
    const previousRegistry = previousRegistryPath(ctx);
    const prev = previousRegistry ? previousLeadsSql(previousRegistry) : null;
    const maxId = prev ? (await db.all<{ max_id: number }>(prev.maxId))[0]!.max_id : 0;
    const tracker = new ChangeTracker('leads', maxId, asOf, LEAD_UNHASHED);
    const gate = (ctx.made.nameGate = new NameGate(need(ctx, 'register')));
    const tally = new AuthorityTally();
    const search = (ctx.made.searchStaging = new SearchStaging(searchStagingPath(build.dir)));
    const points = (ctx.made.points = new PointColumns());
    const projects = (ctx.made.projects = new Map<string, number>());
    const files = need(ctx, 'staging');
    const applications = new RowHeapReader(files.applicationHeap);
    const noticeHeap = new RowHeapReader(files.noticeHeap);
    await db.run(leadOrderSql(previousRegistry, maxId));
    const noticeRefs = new NoticeRefs(db.stream<LeadNoticeRef & Record<string, unknown>>(LEAD_NOTICES_SQL));
    let n = 0;
    for await (const chunk of db.stream<LeadInput & Record<string, unknown>>(LEAD_INPUT_SQL)) {
      for (const row of chunk) {
        const source = applications.read<LeadSource>(row.offset, row.bytes);
        const notices: LinkedNotice[] = [];
        for (const ref of await noticeRefs.of(row.lead_key))
          notices.push(noticeHeap.read<LinkedNotice>(ref.offset, ref.bytes));
        const draft = toLead(source, resolvers.authority(source.authority), row.lead_key, notices, asOf);
        const t = tracker.track(draft, row.lead_key, previousEntry(row), row.prev_id === null ? row.id : undefined);
        sinks.registry.write(t.entry);
        if (t.change) sinks.changes.write(t.change);
        const lead = t.record;
        sinks.leads.write(lead);
        gate.check('leads', lead);
        tally.count(lead);
        tally.place(lead);
        points.push(lead.id, lead.lat, lead.lon);
        const contractor = lead.main_contractor_company_number;
        if (contractor) projects.set(contractor, (projects.get(contractor) ?? 0) + 1);
        search.add({
          id: lead.id,
          text: `${lead.description} ${lead.address ?? ''} ${lead.planning_authority} ${lead.application_number}`,
        });
        n++;
      }
    }
    await noticeRefs.end();
    search.close();
    applications.close();
    noticeHeap.close();
    await Promise.all([files.applicationHeap, files.noticeHeap].map((f) => rm(f, { force: true })));
    if (prev) {
      for await (const chunk of db.stream<RegistryEntry & Record<string, unknown>>(prev.absent)) {
        for (const old of chunk) {
          const t = tracker.absent(old);
          sinks.registry.write(t.entry);
          if (t.change) sinks.changes.write(t.change);
        }
      }
    }
    ctx.made.changeCounts = { leads: tracker.counts, infrastructure: { new: 0, updated: 0, removed: 0, unchanged: 0 } };
    ctx.made.authorities = tally.counts;
    ctx.made.authorityLeads = tally.leads;
    // the linked tables are read: a fresh instance hands their memory back
    await build.fresh();
    return n;
  },
};

/** The previous release's `registry.parquet`, or null (a first build, or a release without one). */
export function previousRegistryPath(ctx: BuildContext): string | null {
  const path = ctx.previous ? join(ctx.previous.dir, 'registry.parquet') : null;
  return path && existsSync(path) ? path : null;
}

/**
 * The linked notices' references, read from their own stream in the leads' order and handed out
 * lead by lead: `of(key)` takes the run of references of lead `key`, which must be the next lead
 * with notices (the two streams share their order; a reference left behind is an error).
 */
class NoticeRefs {
  private readonly chunks: AsyncIterator<LeadNoticeRef[]>;
  private chunk: LeadNoticeRef[] = [];
  private at = 0;
  private done = false;

  constructor(stream: AsyncIterable<LeadNoticeRef[]>) {
    this.chunks = stream[Symbol.asyncIterator]();
  }

  /** The next reference without taking it (null at the end). */
  private async peek(): Promise<LeadNoticeRef | null> {
    while (this.at >= this.chunk.length) {
      if (this.done) return null;
      const next = await this.chunks.next();
      if (next.done) {
        this.done = true;
        return null;
      }
      this.chunk = next.value;
      this.at = 0;
    }
    return this.chunk[this.at]!;
  }

  async of(leadKey: string): Promise<LeadNoticeRef[]> {
    const out: LeadNoticeRef[] = [];
    for (let ref = await this.peek(); ref !== null && ref.lead_key === leadKey; ref = await this.peek()) {
      out.push(ref);
      this.at++;
    }
    return out;
  }

  /** Check every reference was taken, and close the stream. */
  async end(): Promise<void> {
    const left = await this.peek();
    if (left !== null) throw new Error(`the notices of lead ${left.lead_key} came out of the leads' order`);
  }
}

/** A lead's previous registry entry from its `prev_*` columns (undefined: never seen). */
function previousEntry(row: LeadInput): RegistryEntry | undefined {
  if (row.prev_id === null) return undefined;
  return {
    kind: 'leads',
    key: row.lead_key,
    id: row.prev_id,
    first_seen: row.prev_first_seen!,
    last_changed: row.prev_last_changed!,
    content_hash: row.prev_content_hash!,
    removed_on: row.prev_removed_on,
  };
}
