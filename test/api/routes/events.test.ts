/**
 * `GET /v1/events`, `GET /v1/leads/{id}/history` and the `changed_since` / `created_since` filters
 * over four weekly releases built by the generator and the pipeline (test/helpers/weekly-releases.ts).
 * The feed is checked against an independent DuckDB diff of the releases' Parquet files
 * (test/helpers/parquet-diff.ts), and a mirror made of week 1's export plus the events through
 * week 4 against week 4's export, for a commonwealth and an ent_api key.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { join } from 'node:path';
import { addKey, assertProblem, startTestApi, type TestApi } from '../../helpers/api.ts';
import { diffLeads, flattenEvents } from '../../helpers/parquet-diff.ts';
import { weeklyReleases, type WeeklyReleases } from '../../helpers/weekly-releases.ts';
import { enrichedFields } from '../../../api/access/masking.ts';

let api: TestApi;
let w: WeeklyReleases;

test.before(async () => {
  w = await weeklyReleases();
  w.switchTo(w.ids.at(-1)!);
  api = await startTestApi({ config: { dataDir: w.dataDir } });
});
test.after(async () => {
  await api?.close();
});

async function at(id: string): Promise<void> {
  w.switchTo(id);
  await api.checkRelease();
  assert.is(api.release(), id);
}

/** Every event from `query` on, following `next_cursor` while `has_more`; returns them and the last cursor. */
async function walk(
  query: string,
  key: string,
  pageSize = 7,
): Promise<{ events: any[]; cursor: string; pages: number }> {
  const events: any[] = [];
  let url = `/v1/events?page_size=${pageSize}${query ? `&${query}` : ''}`;
  let pages = 0;
  for (;;) {
    const res = await api.request(url, { key });
    assert.is(res.status, 200, res.text.slice(0, 400));
    events.push(...res.body.results);
    pages++;
    if (!res.body.has_more) return { events, cursor: res.body.next_cursor, pages };
    assert.ok(res.headers.get('link')?.includes('rel="next"'));
    url = `/v1/events?page_size=${pageSize}&after=${encodeURIComponent(res.body.next_cursor)}${query ? `&${query}` : ''}`;
  }
}

test('the feed equals an independent DuckDB diff of consecutive releases: counts per type and every changed field', async () => {
  const { events, pages } = await walk('', api.keys.ent_feed);
  assert.ok(pages > 3, `${pages} pages`);
  assert.equal(
    events.map((e) => e.id),
    events.map((_, i) => i + 1),
    'ids in order, none skipped',
  );
  for (let i = 1; i < w.ids.length; i++) {
    const id = w.ids[i]!;
    const diff = await diffLeads(join(w.dir(w.ids[i - 1]!), 'leads.parquet'), join(w.dir(id), 'leads.parquet'));
    const mine = events.filter((e) => e.release_id === id);
    const per = (rows: { type: string; lead_id: number }[]) => {
      const m: Record<string, Set<number>> = {};
      for (const r of rows) (m[r.type] ??= new Set()).add(r.lead_id);
      return Object.fromEntries(
        Object.entries(m)
          .map(([t, s]) => [t, s.size])
          .sort(),
      );
    };
    assert.equal(per(mine), per(diff), `${id}: events per type`);
    assert.equal(flattenEvents(mine), diff, `${id}: before / after of every changed field`);
  }
  const types = new Set(events.map((e) => e.type));
  assert.equal([...types].sort(), ['lead.created', 'lead.removed', 'lead.stage_changed', 'lead.updated']);
});

test("a cursor survives a refresh: the walk of week 3 resumes with exactly week 4's events; an altered cursor is refused", async () => {
  await at(w.ids[2]!);
  const upTo3 = await walk('', api.keys.ent_feed, 50);
  assert.ok(upTo3.events.every((e) => e.release_id <= w.ids[2]!));
  await at(w.ids[3]!);
  const res = await api.request(`/v1/events?after=${encodeURIComponent(upTo3.cursor)}&page_size=1000`);
  assert.is(res.status, 200);
  assert.ok(res.body.results.length > 0);
  assert.ok(
    res.body.results.every((e: any) => e.release_id === w.ids[3]!),
    'only week 4',
  );
  assert.is(res.body.has_more, false);
  // the end of the walk: nothing new, the same place
  const again = await api.request(`/v1/events?after=${encodeURIComponent(res.body.next_cursor)}`);
  assert.equal(again.body.results, []);
  const tampered = upTo3.cursor.replace(/^./, (c) => (c === 'e' ? 'f' : 'e'));
  assertProblem(await api.request(`/v1/events?after=${encodeURIComponent(tampered)}`), 400, 'invalid_parameter');
  // a cursor of other types is refused; after + after_release together too
  assertProblem(
    await api.request(`/v1/events?types=lead.removed&after=${encodeURIComponent(res.body.next_cursor)}`),
    400,
    'invalid_parameter',
  );
  assertProblem(
    await api.request(`/v1/events?after_release=${w.ids[0]}&after=${encodeURIComponent(res.body.next_cursor)}`),
    400,
    'invalid_parameter',
  );
  assertProblem(await api.request('/v1/events?types=lead.deleted'), 400, 'invalid_parameter');
});

test('after_release starts after a release; types and lead filters narrow the feed (lead.removed passes lead filters)', async () => {
  const all = (await walk('', api.keys.ent_feed, 500)).events;
  const after2 = (await walk(`after_release=${w.ids[1]}`, api.keys.ent_feed, 500)).events;
  assert.equal(
    after2.map((e) => e.id),
    all.filter((e) => e.release_id > w.ids[1]!).map((e) => e.id),
  );
  const stage = (await walk('types=lead.stage_changed', api.keys.ent_feed, 500)).events;
  assert.equal(
    stage.map((e) => e.id),
    all.filter((e) => e.type === 'lead.stage_changed').map((e) => e.id),
  );
  const cork = (await walk('county=Cork', api.keys.ent_feed, 500)).events;
  const corkLeads = new Set(
    (await api.request('/v1/export/applications?county=Cork&limit=10000', { key: api.keys.ent_feed })).body.results.map(
      (l: any) => l.id,
    ),
  );
  assert.equal(
    cork.map((e) => e.id),
    all.filter((e) => e.type === 'lead.removed' || corkLeads.has(e.lead_id)).map((e) => e.id),
  );
  assert.ok(cork.length < all.length);
});

test("masking: an enriched field's before / after are null for commonwealth, same keys as ent_api", async () => {
  const full = (await walk('', api.keys.ent_feed, 500)).events;
  const cw = (await walk('', api.keys.commonwealth, 500)).events;
  const enriched = enrichedFields('lead');
  assert.is(cw.length, full.length);
  let seen = 0;
  for (let i = 0; i < full.length; i++) {
    assert.equal(Object.keys(cw[i].changes), Object.keys(full[i].changes), 'same shape');
    for (const f of enriched) {
      if (!(f in cw[i].changes)) continue;
      assert.equal(cw[i].changes[f], { before: null, after: null });
      if (full[i].changes[f].after !== null || full[i].changes[f].before !== null) seen++;
    }
  }
  assert.ok(seen > 0, 'some enriched value was hidden');
});

test('history: a lead that moved to commencing shows its stages with dates; the detail links to it', async () => {
  const all = (await walk('types=lead.stage_changed', api.keys.ent_feed, 500)).events;
  const moved = all.find((e) => e.changes.lead_readiness?.after === 'commencing');
  assert.ok(moved, 'a lead moved to commencing');
  const res = await api.request(`/v1/leads/${moved.lead_id}/history`);
  assert.is(res.status, 200, res.text);
  assert.ok(res.body.published);
  const stages = res.body.stages.map((s: any) => s.lead_readiness);
  assert.ok(stages.indexOf('granted') < stages.indexOf('commencing'), JSON.stringify(stages));
  const c = res.body.stages.find((s: any) => s.lead_readiness === 'commencing');
  assert.is(c.occurred_at, moved.occurred_at);
  assert.is(c.event_id, moved.id);
  const detail = await api.request(`/v1/leads/${moved.lead_id}`);
  assert.match(detail.headers.get('link') ?? '', `</v1/leads/${moved.lead_id}/history>; rel="history"`);
  const removed = (await walk('types=lead.removed', api.keys.ent_feed, 500)).events[0];
  const gone = await api.request(`/v1/leads/${removed.lead_id}/history`);
  assert.is(gone.status, 200);
  assert.is(gone.body.published, false);
  assert.is(gone.body.stages.at(-1).lead_readiness, null);
  assertProblem(await api.request('/v1/leads/99999999/history'), 404, 'not_found');
});

test('changed_since / created_since (and the GIS spellings) on /leads, search, exports, OGC items and feeds', async () => {
  const request = api.request;
  api.request = (path, o = {}) => request(path, { key: api.keys.ent_feed, ...o });
  try {
    const since = w.ids[2]!.slice(0, 4) + '-' + w.ids[2]!.slice(4, 6) + '-' + w.ids[2]!.slice(6, 8);
    const all = (await api.request('/v1/export/applications?limit=10000')).body.results;
    const changed = all
      .filter((l: any) => l.last_changed >= since)
      .map((l: any) => l.id)
      .sort((a: number, b: number) => a - b);
    const created = all
      .filter((l: any) => l.first_seen >= since)
      .map((l: any) => l.id)
      .sort((a: number, b: number) => a - b);
    assert.ok(changed.length > created.length && created.length > 0);
    const sorted = (xs: any[]) => xs.map((l) => l.id).sort((a: number, b: number) => a - b);
    for (const [param, want] of [
      ['changed_since', changed],
      ['updated_since', changed],
      ['created_since', created],
      ['since', created],
    ] as const) {
      const page = await api.request(`/v1/leads?${param}=${since}&page_size=100`);
      assert.is(page.status, 200, page.text);
      assert.is(page.body.total, want.length, `/leads ${param}`);
      const search = await api.request('/v1/leads/search', {
        method: 'POST',
        body: { [param]: since, page_size: 100 },
      });
      assert.is(search.body.total, want.length, `search ${param}`);
      assert.equal(
        sorted((await api.request(`/v1/export/applications?${param}=${since}&limit=10000`)).body.results),
        want,
        `export ${param}`,
      );
      const jsonl = await api.request(`/v1/export/applications.jsonl?${param}=${since}`);
      assert.equal(
        sorted(
          jsonl.text
            .trim()
            .split('\n')
            .map((l) => JSON.parse(l)),
        ),
        want,
        `jsonl ${param}`,
      );
      const csv = await api.request(`/v1/export/applications.csv?${param}=${since}`);
      assert.is(csv.text.trim().split('\n').length - 1, want.length, `csv ${param}`);
      const ogc = await api.request(`/v1/ogc/collections/leads/items?${param}=${since}&limit=1000`, {
        key: api.keys.ent_feed,
      });
      assert.is(ogc.status, 200, ogc.text.slice(0, 300));
      const located = all.filter((l: any) => want.includes(l.id) && l.lat !== null).length;
      assert.is(ogc.body.numberMatched, located, `ogc ${param}`);
      const feed = await api.request(`/v1/feeds/leads.geojson?${param}=${since}&page_size=1000`, {
        key: api.keys.ent_feed,
      });
      assert.is(feed.body.numberMatched, located, `feed ${param}`);
    }
    assertProblem(
      await api.request(`/v1/leads?changed_since=${since}&updated_since=2020-01-01`),
      400,
      'invalid_parameter',
    );
    assertProblem(await api.request('/v1/leads?changed_since=yesterday'), 400, 'invalid_parameter');
  } finally {
    api.request = request;
  }
});

test('sort=last_changed pages by cursor, most recent change first; last_changed_asc the reverse; the same leads as changed_since', async () => {
  await at(w.ids.at(-1)!);
  const key = api.keys.ent_feed;
  const walkSort = async (query: string): Promise<any[]> => {
    const rows: any[] = [];
    let res = await api.request(`/v1/leads?${query}&page_size=100`, { key });
    for (;;) {
      assert.is(res.status, 200, res.text.slice(0, 300));
      rows.push(...res.body.results);
      if (!res.body.next_cursor) return rows;
      res = await api.request(`/v1/leads?${query}&page_size=100&cursor=${res.body.next_cursor}`, { key });
    }
  };
  const since = w.ids[1]!.replace(/^(\d{4})(\d{2})(\d{2}).*/, '$1-$2-$3');
  const desc = await walkSort(`sort=last_changed&changed_since=${since}`);
  const total = (await api.request(`/v1/leads?changed_since=${since}&page_size=1`, { key })).body.total;
  assert.is(desc.length, total, 'the walk visits every changed lead');
  assert.ok(new Set(desc.map((r) => r.last_changed)).size >= 2, 'changes of several weeks');
  for (let i = 1; i < desc.length; i++) {
    const [a, b] = [desc[i - 1], desc[i]];
    assert.ok(
      a.last_changed > b.last_changed || (a.last_changed === b.last_changed && a.id > b.id),
      `row ${i}: (last_changed, id) descending`,
    );
  }
  const asc = await walkSort(`sort=last_changed_asc&changed_since=${since}`);
  assert.equal(
    asc.map((r) => r.id),
    desc.map((r) => r.id).reverse(),
  );
  const bad = await api.request('/v1/leads?sort=last_changed_desc', { key });
  assertProblem(bad, 400, 'invalid_parameter');
});

/** Every record of a cursor-paged export (`/v1/export/applications`), by id. */
async function exportAll(query: string, key: string): Promise<Map<number, Record<string, unknown>>> {
  const out = new Map<number, Record<string, unknown>>();
  let url = `/v1/export/applications?limit=500${query ? `&${query}` : ''}`;
  for (;;) {
    const res = await api.request(url, { key });
    assert.is(res.status, 200, res.text.slice(0, 300));
    for (const r of res.body.results) out.set(r.id, r);
    if (!res.body.next_cursor) return out;
    url = `/v1/export/applications?limit=500&cursor=${encodeURIComponent(res.body.next_cursor)}${query ? `&${query}` : ''}`;
  }
}

/** Apply events to a mirror (id → record), as docs/sync.md says. */
function apply(mirror: Map<number, Record<string, unknown>>, events: any[]): void {
  for (const e of events) {
    if (e.type === 'lead.removed') {
      mirror.delete(e.lead_id);
      continue;
    }
    const rec = e.type === 'lead.created' ? {} : mirror.get(e.lead_id);
    if (!rec) continue; // a change of a lead this mirror does not hold
    for (const [f, c] of Object.entries<any>(e.changes)) (rec as Record<string, unknown>)[f] = c.after;
    mirror.set(e.lead_id, rec);
  }
}

/** One mirror a customer keeps: its key, filters, records by id, cursor, and rows charged per week. */
interface Mirror {
  name: string;
  key: string;
  query: string;
  records: Map<number, Record<string, unknown>>;
  cursor: string;
  charged: number[];
}

// One pass over the weeks (each switch rebuilds the release's indexes) for three mirrors: the
// whole release for ent_api, Dublin + Cork for commonwealth (masked; its 1,000-row day holds
// them), and Cork for ent_api counting the rows charged per week against a full re-pull.
test("the mirror: week 1's export plus the events through week 4 equals week 4's export, field by field (commonwealth, ent_api); a county kept in sync within the 5,000-row budget", async () => {
  const ent = await api.store.createAccount('sync-county', 'premium');
  const k = await addKey(api.store, ent.id, 'ent_api', 'county sync');
  const mirrors: Mirror[] = [
    {
      name: 'commonwealth',
      key: api.keys.commonwealth,
      query: 'county=Dublin,Cork',
      records: new Map(),
      cursor: '',
      charged: [],
    },
    { name: 'ent_api', key: api.keys.ent_api, query: '', records: new Map(), cursor: '', charged: [] },
    { name: 'county', key: k.raw, query: 'county=Cork', records: new Map(), cursor: '', charged: [] },
  ];
  const remaining = async (key: string): Promise<number> =>
    Number((await api.request('/v1/meta', { key })).headers.get('x-budget-remaining'));
  const repull: number[] = [];
  for (const [week, id] of w.ids.entries()) {
    await at(id);
    for (const m of mirrors) {
      const before = await remaining(m.key);
      if (week === 0) m.records = await exportAll(m.query, m.key);
      else {
        const start = m.cursor ? `after=${encodeURIComponent(m.cursor)}` : `after_release=${w.ids[0]}`;
        const step = await walk([start, m.query].filter(Boolean).join('&'), m.key, 1000);
        assert.ok(
          step.events.every((e) => e.release_id === id),
          `${m.name}: each week brings that week's events`,
        );
        apply(m.records, step.events);
        m.cursor = step.cursor;
        if (m.name === 'county') assert.is(before - (await remaining(m.key)), step.events.length, 'one row per event');
      }
      m.charged.push(before - (await remaining(m.key)));
    }
    repull.push(
      (await api.request('/v1/export/applications.csv?county=Cork&dry_run=1', { key: k.raw })).body.rows as number,
    );
  }
  for (const m of mirrors) {
    const want = await exportAll(m.query, api.keys[m.name === 'commonwealth' ? 'commonwealth' : 'ent_feed']);
    assert.ok(want.size > 50);
    assert.equal(
      [...m.records.keys()].sort((a, b) => a - b),
      [...want.keys()].sort((a, b) => a - b),
      `${m.name}: the same leads`,
    );
    for (const [lead, rec] of want) assert.equal(m.records.get(lead), rec, `${m.name}: lead ${lead}`);
    if (m.name === 'commonwealth')
      assert.ok(
        [...want.values()].every((r) => r['applicant_org'] === null),
        'masked',
      );
  }
  const county = mirrors[2]!;
  for (let i = 1; i < w.ids.length; i++)
    assert.ok(
      county.charged[i]! < repull[i]! / 5,
      `week ${i + 1}: ${county.charged[i]} rows against a re-pull of ${repull[i]}`,
    );
  assert.ok(county.charged.reduce((a, b) => a + b, 0) <= 5_000);
  console.log(
    `  county=Cork (tiny scale): rows charged per week ${JSON.stringify(county.charged)} against full re-pulls of ${JSON.stringify(repull)}`,
  );
});

test.run();
