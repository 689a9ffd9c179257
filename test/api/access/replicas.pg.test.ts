/**
 * Two real API servers (port 0) on one PostgreSQL schema, behind no proxy, hit alternately: the
 * hourly limit and the daily row budget hold exactly across both, concurrent requests included,
 * and the usage ledger adds up both replicas' counts.
 *
 * Needs the PostgreSQL server of this machine (TEST_DATABASE_URL, default
 * postgres://<user>@127.0.0.1:5432/test); fails, never skips, when it is unreachable.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { randomBytes } from 'node:crypto';
import { mkdirSync, symlinkSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { loadApiConfig } from '../../../api/config.ts';
import { generateKey } from '../../../api/access/keys.ts';
import { startServer } from '../../../api/server.ts';
import type { RunningServer } from '../../../api/startup/running-server.ts';
import { tinyRelease } from '../../helpers/api.ts';
import { tempDir } from '../../helpers/tmp.ts';

const BASE_URL =
  process.env['TEST_DATABASE_URL'] ??
  `postgres://${encodeURIComponent(process.env['PGUSER'] ?? userInfo().username)}@127.0.0.1:5432/test`;
const SCHEMA = `leads_test_replicas_${randomBytes(4).toString('hex')}`;
const T0 = Date.parse('2026-11-20T10:30:00Z');
let t = T0;

const replicas: RunningServer[] = [];
const logs: string[] = [];

test.before(async () => {
  const rel = await tinyRelease(7);
  const dataDir = tempDir('leads-replicas-');
  mkdirSync(join(dataDir, 'releases'));
  symlinkSync(rel.dir, join(dataDir, 'releases', rel.id));
  symlinkSync(`releases/${rel.id}`, join(dataDir, 'current'));
  const config = loadApiConfig(
    {},
    {
      dataDir,
      port: 0,
      host: '127.0.0.1',
      databaseUrl: `${BASE_URL}${BASE_URL.includes('?') ? '&' : '?'}schema=${SCHEMA}`,
      keyCacheMs: 0,
      duckdbConnections: 1,
    },
  );
  // started together: they migrate the new schema once between them
  replicas.push(
    ...(await Promise.all(
      [0, 1].map(() =>
        startServer(config, { log: (l) => void logs.push(l), clock: () => new Date(t), shutdownGraceMs: 2000 }),
      ),
    )),
  );
});
test.after(async () => {
  await Promise.all(replicas.map((r) => r.close()));
  const admin = new pg.Client({ connectionString: BASE_URL });
  await admin.connect();
  await admin.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(SCHEMA)} CASCADE`);
  await admin.end();
});

async function key(
  scope: 'commonwealth' | 'ent_api' | 'ent_feed',
  account: string,
): Promise<{ id: string; raw: string }> {
  const a = await replicas[0]!.store.createAccount(account, 'premium');
  const k = generateKey(scope);
  await replicas[1]!.store.insertKey({
    id: k.id,
    account_id: a.id,
    scope,
    name: null,
    display_prefix: k.displayPrefix,
    hash: k.hash,
  });
  return { id: k.id, raw: k.raw };
}

const get = (i: number, path: string, raw: string) =>
  fetch(replicas[i % 2]!.url + path, { headers: { Authorization: `Bearer ${raw}` } }).then(async (r) => ({
    status: r.status,
    headers: r.headers,
    body: (await r.json()) as any,
  }));

test('hourly limit across two replicas: alternate requests, exactly 600 pass, the 601st (either replica) is 429', async () => {
  t = T0;
  const k = await key('commonwealth', 'rate');
  // 300 one by one, alternating, then 340 concurrent, alternating
  const seq: number[] = [];
  for (let i = 0; i < 300; i++) seq.push((await get(i, '/v1/meta', k.raw)).status);
  assert.ok(seq.every((s) => s === 200));
  const burst = await Promise.all(Array.from({ length: 340 }, (_, i) => get(i, '/v1/meta', k.raw)));
  assert.is(burst.filter((r) => r.status === 200).length, 300);
  const limited = burst.filter((r) => r.status === 429);
  assert.is(limited.length, 40);
  for (const r of limited) assert.is(r.body.code, 'rate_limited');
  const remaining = burst.filter((r) => r.status === 200).map((r) => Number(r.headers.get('x-ratelimit-remaining')));
  assert.equal(
    remaining.sort((a, b) => a - b),
    Array.from({ length: 300 }, (_, i) => i),
    'every passing request saw its own count',
  );
  for (const i of [0, 1]) assert.is((await get(i, '/v1/meta', k.raw)).status, 429, `replica ${i} refuses too`);
});

test('daily budget across two replicas: alternate list pages stop at exactly 1,000 rows; nothing charged on refusal', async () => {
  t = T0;
  const k = await key('commonwealth', 'budget');
  const statuses: number[] = [];
  for (let i = 0; i < 12; i++)
    statuses.push((await get(i, `/v1/leads?page_size=90&page=${(i % 3) + 1}`, k.raw)).status);
  assert.equal(statuses, [...Array(11).fill(200), 429], '11 × 90 = 990 rows, the 12th page would pass 1,000');
  const last = await get(1, '/v1/leads?page_size=11', k.raw);
  assert.is(last.status, 429);
  assert.is(last.body.rows_remaining, 10);
  const tenth = await get(0, '/v1/leads?page_size=10', k.raw);
  assert.is(tenth.status, 200);
  assert.is(tenth.headers.get('x-budget-remaining'), '0');
  // concurrent single-record reads on both replicas once the budget is spent: all refused
  const burst = await Promise.all(Array.from({ length: 20 }, (_, i) => get(i, '/v1/leads?page_size=1', k.raw)));
  assert.ok(burst.every((r) => r.status === 429 && r.body.code === 'budget_exhausted'));
  // a fresh key, concurrent pages on both replicas: never more than the budget
  const k2 = await key('commonwealth', 'budget2');
  const race = await Promise.all(
    Array.from({ length: 24 }, (_, i) => get(i, `/v1/leads?page_size=50&page=${(i % 4) + 1}`, k2.raw)),
  );
  assert.is(race.filter((r) => r.status === 200).length, 20);
});

test('a busy ent_feed key across two replicas: counted in blocks, no request past the limit, none refused before it once both drain', async () => {
  t = T0;
  const k = await key('ent_feed', 'feed');
  const limit = 20_000;
  // as if 19,000 requests had been made this hour: 1,000 remain
  const windowStart = Math.floor(T0 / 3_600_000) * 3600;
  assert.is(await replicas[0]!.store.reserveRequests(k.id, windowStart, 19_000, limit), 19_000);
  const passed: number[] = [];
  const refusedBy = [0, 0];
  // 16 concurrent requests at a time, alternating replicas; the clock moves 0.02 ms a request, so
  // the key is busy (500 requests per 10 ms span) and both replicas count it in blocks
  for (let i = 0; refusedBy[0] === 0 || refusedBy[1] === 0; i += 16) {
    const batch = await Promise.all(
      Array.from({ length: 16 }, (_, j) => {
        t += 0.02;
        return get(i + j, '/v1/meta', k.raw);
      }),
    );
    batch.forEach((r, j) => {
      if (r.status === 200) passed.push(Number(r.headers.get('x-ratelimit-remaining')));
      else {
        assert.is(r.body.code, 'rate_limited');
        refusedBy[(i + j) % 2]!++;
      }
    });
  }
  for (const r of replicas) {
    const reservations = (await r.metrics.storeDuration.get()).values.find(
      (v) => v.labels.operation === 'reserveRequests' && v.labels.outcome === 'ok' && v.metricName?.endsWith('_count'),
    );
    assert.ok((reservations?.value ?? 0) > 0, 'each replica counted in blocks');
  }
  assert.is(passed.length, 1000, 'exactly the 1,000 that remained');
  assert.equal(
    passed.sort((a, b) => a - b),
    Array.from({ length: 1000 }, (_, i) => i),
    'every passing request had its own number',
  );
});

test('the usage ledger adds up both replicas', async () => {
  t = T0;
  const k = await key('ent_api', 'ledger');
  for (let i = 0; i < 51; i++) await get(i, i % 5 === 0 ? '/v1/leads?page_size=2' : '/v1/meta', k.raw);
  await Promise.all(replicas.map((r) => r.ledger.flush()));
  const u = await get(0, '/v1/account/usage?from=2026-11-20&to=2026-11-20', k.raw);
  assert.equal(u.body.totals, { requests: 51, errors: 0, rows: 22 });
  assert.equal(u.body.keys[0].days[0].routes, [
    { route: 'GET /v1/leads', requests: 11, errors: 0, rows: 22 },
    { route: 'GET /v1/meta', requests: 40, errors: 0, rows: 0 },
  ]);
});

test.run();
