/**
 * `make bench` section `events` (issue 28): a full week's walk of the event feed
 * (`GET /v1/events`, pages of 1,000 following `next_cursor`) against the JSON Lines export of the
 * same release in the same run — rows per second each, over HTTP, on an API child process with an
 * ent_feed key (no row budget).
 *
 * Its data: two consecutive weeks generated at the run's scale and refreshed one after the other
 * into `data/bench-<scale>-weeks/` (built once, reused while there), so week 2's release holds a
 * week of events. A smoke run: `node --import tsx bench/run.ts --only events --scale tiny`.
 */
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { openDb, sqlString } from '../pipeline/lib/duckdb.ts';
import { generateRaw } from '../pipeline/synth/generate.ts';
import { generateKey } from '../api/access/keys.ts';
import { openStateStore } from '../api/state/open.ts';
import { cli, startChild, stopChild, type BenchRow } from './api.ts';

export interface EventsBenchOptions {
  root: string;
  /** The folder of the two weekly releases, e.g. data/bench-default-weeks. */
  dataDir: string;
  scale: number;
  log?: (line: string) => void;
}

/** Week 1 then week 2, each generated and refreshed (by the CLI, as an operator runs it) unless already there. */
async function twoWeeks(o: EventsBenchOptions, log: (l: string) => void): Promise<void> {
  const events = join(o.dataDir, 'current', 'events.parquet');
  if (existsSync(events)) {
    const db = await openDb();
    const [{ n }] = (await db.all<{ n: number }>(
      `SELECT count(*)::BIGINT AS n FROM read_parquet(${sqlString(events)})`,
    )) as [{ n: number }];
    db.close();
    if (n > 0) return;
  }
  rmSync(o.dataDir, { recursive: true, force: true });
  mkdirSync(o.dataDir, { recursive: true });
  for (const week of [1, 2]) {
    const raw = join(o.dataDir, `raw-week${week}`);
    const t = performance.now();
    await generateRaw({ outDir: raw, scale: o.scale, seed: 1, week });
    await cli(o.root, ['refresh', '--json', '--quiet'], { DATA_DIR: o.dataDir, RAW_DIR: raw });
    log(`week ${week}: generated and refreshed in ${((performance.now() - t) / 1000).toFixed(1)} s`);
    if (week === 1) await new Promise((r) => setTimeout(r, 1100)); // release ids are per second
  }
}

export async function eventsBench(o: EventsBenchOptions): Promise<BenchRow[]> {
  const log = o.log ?? ((l: string) => void process.stderr.write(l + '\n'));
  await twoWeeks(o, log);
  const tmp = join(o.root, '.tmp', 'bench-events');
  mkdirSync(tmp, { recursive: true });
  const stateFile = join(tmp, 'state.sqlite');
  for (const suffix of ['', '-wal', '-shm']) rmSync(stateFile + suffix, { force: true });
  const env = { DATA_DIR: o.dataDir, DATABASE_URL: `file:${stateFile}` };
  await cli(o.root, ['accounts', 'create', '--name', 'bench', '--plan', 'premium', '--json'], env);
  const store = openStateStore(env.DATABASE_URL);
  const k = generateKey('ent_feed');
  try {
    const account = (await store.getAccountByName('bench'))!;
    await store.insertKey({
      id: k.id,
      account_id: account.id,
      scope: 'ent_feed',
      name: 'bench',
      display_prefix: k.displayPrefix,
      hash: k.hash,
    });
  } finally {
    await store.close();
  }
  const headers = { Authorization: `Bearer ${k.raw}`, 'Accept-Encoding': 'identity' };
  const api = await startChild(
    o.root,
    ['bench/exports-server.ts'],
    { ...env, PORT: '0', HOST: '127.0.0.1' },
    /listening on (\S+)\/v1/,
  );
  const origin = api.match[1]!;
  try {
    await fetch(`${origin}/v1/events?page_size=10`, { headers }); // warm-up
    // the feed: every event of the log, pages of 1,000
    let url: string | null = `${origin}/v1/events?page_size=1000`;
    let events = 0;
    let pages = 0;
    const t0 = performance.now();
    while (url) {
      const res = await fetch(url, { headers });
      if (res.status !== 200) throw new Error(`${url} → ${res.status}: ${(await res.text()).slice(0, 300)}`);
      const body = (await res.json()) as { results: unknown[]; next_cursor: string; has_more: boolean };
      events += body.results.length;
      pages++;
      url = body.has_more ? `${origin}/v1/events?page_size=1000&after=${encodeURIComponent(body.next_cursor)}` : null;
    }
    const feedMs = performance.now() - t0;
    // the JSON Lines export of the same release
    const t1 = performance.now();
    const res = await fetch(`${origin}/v1/export/applications.jsonl`, { headers });
    const text = await res.text();
    const exportMs = performance.now() - t1;
    const rows = text.split('\n').filter((l) => l !== '').length;
    log(
      `events: ${events} in ${pages} pages, ${(feedMs / 1000).toFixed(2)} s; jsonl export: ${rows} rows, ${(exportMs / 1000).toFixed(2)} s`,
    );
    return [
      {
        metric: 'events feed walk rows/s (vs JSONL export)',
        value: events / (feedMs / 1000),
        unit: 'rows/s',
        baseline: rows / (exportMs / 1000),
      },
      { metric: 'events in a week (feed pages)', value: events, unit: 'rows', baseline: pages },
      { metric: 'events feed walk time (vs JSONL export)', value: feedMs / 1000, unit: 's', baseline: exportMs / 1000 },
    ];
  } finally {
    await stopChild(api.child);
  }
}
