import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { openDb } from '../../../pipeline/lib/duckdb.ts';
import {
  EVENT_RETENTION_WEEKS,
  eventsSpec,
  leadEvent,
  numberEvents,
  retentionStart,
  writeEventsSql,
  type LeadEvent,
} from '../../../pipeline/release/events.ts';
import { diffLeads, flattenEvents } from '../../helpers/parquet-diff.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { weeklyReleases } from '../../helpers/weekly-releases.ts';

const FIELDS = ['id', 'lead_key', 'lead_readiness', 'status', 'est_value', 'commencement_date', 'applicant_org'];
const REL = { id: '20261116T060000Z', asOf: '2026-11-16' };
const lead = (o: Record<string, unknown> = {}) => ({
  id: 9,
  lead_key: 'cork-city/1/26',
  lead_readiness: 'granted',
  status: 'approved',
  est_value: 100,
  commencement_date: null,
  applicant_org: null,
  ...o,
});

test('leadEvent: created carries every field with before null and the received date', () => {
  const e = leadEvent(null, lead({ received_date: '2026-11-10' }), [...FIELDS, 'received_date'], REL);
  assert.is(e.type, 'lead.created');
  assert.is(e.occurred_at, '2026-11-10');
  assert.equal(Object.keys(e.changes), [...FIELDS, 'received_date']);
  assert.equal(e.changes['est_value'], { before: null, after: 100 });
  assert.equal(e.changes['applicant_org'], { before: null, after: null });
});

test('leadEvent: a move to commencing is a stage change dated by the commencement notice, with its other fields', () => {
  const e = leadEvent(
    lead(),
    lead({ lead_readiness: 'commencing', status: 'active', commencement_date: '2026-11-12', est_value: 120 }),
    FIELDS,
    REL,
  );
  assert.is(e.type, 'lead.stage_changed');
  assert.is(e.occurred_at, '2026-11-12');
  assert.equal(e.changes, {
    lead_readiness: { before: 'granted', after: 'commencing' },
    status: { before: 'approved', after: 'active' },
    est_value: { before: 100, after: 120 },
    commencement_date: { before: null, after: '2026-11-12' },
  });
});

test('leadEvent: a value change alone is an update without a source date; a lead gone is removed with its last values', () => {
  const u = leadEvent(lead(), lead({ est_value: 150 }), FIELDS, REL);
  assert.is(u.type, 'lead.updated');
  assert.is(u.occurred_at, null);
  assert.equal(u.changes, { est_value: { before: 100, after: 150 } });
  const r = leadEvent(lead(), null, FIELDS, REL);
  assert.is(r.type, 'lead.removed');
  assert.is(r.reason, 'gone_from_source');
  assert.equal(r.changes['est_value'], { before: 100, after: null });
  // lists compare by value, not identity
  assert.is(
    leadEvent(lead({ v: ['a'] }), lead({ v: ['a'], est_value: 1 }), ['v', 'est_value'], REL).changes['v'],
    undefined,
  );
});

test('numberEvents: ids from the first id, created → stage → updated → removed, then by lead id', () => {
  const d = (type: LeadEvent['type'], lead_id: number) => ({
    ...leadEvent(lead({ id: lead_id }), lead({ id: lead_id, est_value: 2 }), FIELDS, REL),
    type,
  });
  const n = numberEvents([d('lead.removed', 1), d('lead.updated', 3), d('lead.created', 5), d('lead.updated', 2)], 41);
  assert.equal(
    n.map((e) => [e.id, e.type, e.lead_id]),
    [
      [41, 'lead.created', 5],
      [42, 'lead.updated', 2],
      [43, 'lead.updated', 3],
      [44, 'lead.removed', 1],
    ],
  );
});

test(`retention: ${EVENT_RETENTION_WEEKS} weekly releases are kept, the one before is dropped`, async () => {
  assert.ok(EVENT_RETENTION_WEEKS >= 52);
  const asOf = '2027-11-08';
  const from = retentionStart(asOf);
  const weeksAgo = (w: number): string =>
    new Date(Date.parse(`${asOf}T00:00:00Z`) - w * 7 * 86_400_000).toISOString().slice(0, 10);
  assert.ok(weeksAgo(EVENT_RETENTION_WEEKS - 1) >= from, 'the 52nd release back is kept');
  assert.ok(weeksAgo(EVENT_RETENTION_WEEKS) < from, 'the 53rd is dropped');
  // the SQL keeps exactly that, and numbers the fresh events after the carried ones
  const dir = tempDir('leads-events-');
  const db = await openDb();
  const spec = eventsSpec();
  const ev = (id: number, observed_at: string) => ({
    id,
    type: 'lead.updated',
    lead_id: id,
    lead_key: 'x/1',
    release_id: '20261116T060000Z',
    observed_at,
    occurred_at: null,
    reason: null,
    changes: { a: { before: 1, after: 2 } },
  });
  writeFileSync(
    join(dir, 'old.ndjson'),
    [ev(1, weeksAgo(EVENT_RETENTION_WEEKS)), ev(2, weeksAgo(EVENT_RETENTION_WEEKS - 1))]
      .map((r) => JSON.stringify(r))
      .join('\n') + '\n',
  );
  await db.run(writeEventsSql(spec, join(dir, 'old.ndjson'), null, '2000-01-01', join(dir, 'prev.parquet')));
  writeFileSync(join(dir, 'new.ndjson'), JSON.stringify(ev(3, asOf)) + '\n');
  await db.run(
    writeEventsSql(spec, join(dir, 'new.ndjson'), join(dir, 'prev.parquet'), from, join(dir, 'events.parquet')),
  );
  const rows = await db.all<{ id: number; changes: string }>(
    `SELECT id, changes FROM read_parquet('${join(dir, 'events.parquet')}') ORDER BY id`,
  );
  db.close();
  assert.equal(
    rows.map((r) => r.id),
    [2, 3],
  );
  assert.equal(JSON.parse(rows[1]!.changes), { a: { before: 1, after: 2 } });
});

async function readEvents(file: string): Promise<LeadEvent[]> {
  const db = await openDb();
  const rows = await db.all<Record<string, unknown> & { changes: string }>(
    `SELECT * FROM read_parquet('${file}') ORDER BY id`,
  );
  db.close();
  return rows.map((r) => ({ ...r, changes: JSON.parse(r.changes) }) as unknown as LeadEvent);
}

test("weeks 1–4: each release's events equal an independent DuckDB diff of its leads.parquet and the previous one's", async () => {
  const w = await weeklyReleases();
  const last = await readEvents(join(w.dir(w.ids.at(-1)!), 'events.parquet'));
  assert.is(
    (await readEvents(join(w.dir(w.ids[0]!), 'events.parquet'))).length,
    0,
    'the first release is the baseline: no events',
  );
  const seen = new Set<string>();
  for (let i = 1; i < w.ids.length; i++) {
    const id = w.ids[i]!;
    const diff = await diffLeads(join(w.dir(w.ids[i - 1]!), 'leads.parquet'), join(w.dir(id), 'leads.parquet'));
    const events = last.filter((e) => e.release_id === id);
    const count = (rows: { type: string; lead_id: number }[]) => {
      const per: Record<string, Set<number>> = {};
      for (const r of rows) (per[r.type] ??= new Set()).add(r.lead_id);
      return Object.fromEntries(
        Object.entries(per)
          .map(([t, s]) => [t, s.size])
          .sort(),
      );
    };
    assert.equal(count(events), count(diff), `${id}: events per type`);
    assert.equal(flattenEvents(events), diff, `${id}: every changed field's before / after`);
    for (const e of events) seen.add(e.type);
    // carried forward unchanged: this release's own log holds the same events with the same ids
    assert.equal(
      await readEvents(join(w.dir(id), 'events.parquet')),
      last.filter((e) => e.id <= Math.max(0, ...events.map((x) => x.id))),
    );
  }
  assert.equal([...seen].sort(), ['lead.created', 'lead.removed', 'lead.stage_changed', 'lead.updated']);
  assert.ok(
    last.some(
      (e) =>
        e.type === 'lead.stage_changed' &&
        e.changes['lead_readiness']?.before === 'granted' &&
        e.changes['lead_readiness']?.after === 'commencing' &&
        e.occurred_at !== null,
    ),
    'a commencement notice arrived',
  );
  assert.ok(
    last.some((e) => e.changes['lead_readiness']?.after === 'withdrawn'),
    'a withdrawal',
  );
  assert.ok(
    last.some((e) => e.type === 'lead.updated' && e.changes['est_value']),
    'a value update',
  );
  assert.equal(
    last.map((e) => e.id),
    last.map((_, i) => i + 1),
    'ids increase by one across releases',
  );
});

test('the manifest lists events.parquet with its checksum and row count', async () => {
  const w = await weeklyReleases();
  const { readFileSync } = await import('node:fs');
  const m = JSON.parse(readFileSync(join(w.dir(w.ids.at(-1)!), 'manifest.json'), 'utf8'));
  assert.ok(m.files['events.parquet']?.sha256, JSON.stringify(Object.keys(m.files)));
  assert.ok(m.counts.tables.events > 0);
});

test.run();
