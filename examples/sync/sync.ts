/**
 * Keep a local SQLite mirror of the leads exact: a first full export, then the event feed.
 * Node 20+ and `better-sqlite3` (npm install better-sqlite3). Run it once a week, e.g.
 *
 *   LEADS_API_URL=https://leads.example.ie LEADS_API_KEY=lk_ea_… LEADS_DB=leads.sqlite \
 *   LEADS_FILTER='county=Cork' node --import tsx sync.ts
 *
 * First run (an empty database): every lead of the export `/v1/export/applications` (cursor
 * pages) and the release it was read from. Every later run: `/v1/events` after the saved cursor
 * (the first time `after_release=` that release), applied in id order — `lead.created` inserts,
 * `lead.updated` / `lead.stage_changed` set each changed field to its `after`, `lead.removed`
 * deletes — with the new cursor saved in the same transaction. The same recipe as sync.py; see
 * docs/sync.md.
 */
import Database from 'better-sqlite3';

const BASE = (process.env['LEADS_API_URL'] ?? 'http://localhost:3000').replace(/\/+$/, '');
const KEY = process.env['LEADS_API_KEY'] ?? '';
const FILTER = process.env['LEADS_FILTER'] ?? '';

type Lead = Record<string, unknown> & { id: number };
interface Event {
  id: number;
  type: 'lead.created' | 'lead.updated' | 'lead.stage_changed' | 'lead.removed';
  lead_id: number;
  changes: Record<string, { before: unknown; after: unknown }>;
}

async function get<T>(path: string, params: Record<string, string | number>): Promise<T> {
  const query = [new URLSearchParams(Object.entries(params).map(([k, v]) => [k, String(v)])).toString(), FILTER]
    .filter(Boolean)
    .join('&');
  const res = await fetch(`${BASE}/v1${path}?${query}`, { headers: { Authorization: `Bearer ${KEY}` } });
  const body = (await res.json()) as T & { code?: string; detail?: string };
  if (!res.ok) throw new Error(`${res.status} ${body.code}: ${body.detail}`);
  return body;
}

const db = new Database(process.env['LEADS_DB'] ?? 'leads.sqlite');
db.exec(
  'CREATE TABLE IF NOT EXISTS leads (id INTEGER PRIMARY KEY, county TEXT, lead_readiness TEXT, last_changed TEXT, data TEXT NOT NULL)',
);
db.exec('CREATE TABLE IF NOT EXISTS sync_state (name TEXT PRIMARY KEY, value TEXT NOT NULL)');
const state = (name: string): string | undefined =>
  (db.prepare('SELECT value FROM sync_state WHERE name = ?').get(name) as { value: string } | undefined)?.value;
const setState = db.prepare('INSERT OR REPLACE INTO sync_state VALUES (?, ?)');
const sortedJson = (o: Record<string, unknown>): string => JSON.stringify(o, Object.keys(o).sort());
const putStmt = db.prepare(
  'INSERT OR REPLACE INTO leads (id, county, lead_readiness, last_changed, data) VALUES (?, ?, ?, ?, ?)',
);
const put = (l: Lead): void =>
  void putStmt.run(l.id, l['county'] ?? null, l['lead_readiness'] ?? null, l['last_changed'] ?? null, sortedJson(l));

async function fullExport(): Promise<void> {
  let params: Record<string, string | number> = { limit: 1000 };
  let release: string | undefined;
  let rows = 0;
  for (;;) {
    const page = await get<{ results: Lead[]; next_cursor: string | null; _meta: { release: string } }>(
      '/export/applications',
      params,
    );
    release ??= page._meta.release;
    db.transaction(() => page.results.forEach(put))();
    rows += page.results.length;
    if (!page.next_cursor) break;
    params = { limit: 1000, cursor: page.next_cursor };
  }
  setState.run('release', release!);
  console.log(`full export: ${rows} leads of release ${release}`);
}

async function applyEvents(): Promise<void> {
  const cursor = state('cursor');
  let params: Record<string, string | number> = {
    page_size: 1000,
    ...(cursor ? { after: cursor } : { after_release: state('release')! }),
  };
  const counts: Record<string, number> = {};
  const read = db.prepare('SELECT data FROM leads WHERE id = ?');
  const del = db.prepare('DELETE FROM leads WHERE id = ?');
  for (;;) {
    const page = await get<{ results: Event[]; next_cursor: string; has_more: boolean }>('/events', params);
    // the events and the cursor that follows them, in one transaction
    db.transaction(() => {
      for (const e of page.results) {
        counts[e.type] = (counts[e.type] ?? 0) + 1;
        if (e.type === 'lead.removed') {
          del.run(e.lead_id);
          continue;
        }
        const row = e.type === 'lead.created' ? undefined : (read.get(e.lead_id) as { data: string } | undefined);
        if (e.type !== 'lead.created' && !row) continue; // a change of a lead this mirror does not hold
        const lead = (row ? JSON.parse(row.data) : {}) as Lead;
        for (const [field, c] of Object.entries(e.changes)) lead[field] = c.after;
        put(lead);
      }
      setState.run('cursor', page.next_cursor);
    })();
    if (!page.has_more) break;
    params = { page_size: 1000, after: page.next_cursor };
  }
  console.log(`events applied: ${JSON.stringify(Object.fromEntries(Object.entries(counts).sort()))}`);
}

if (state('release') === undefined) await fullExport();
else await applyEvents();
db.close();
