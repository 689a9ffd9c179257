/**
 * The deployment of docs/deploy.md with real processes: nginx running deploy/nginx.conf in front
 * of two API replicas (child processes of api/server.ts) sharing one release folder and one
 * PostgreSQL schema (created here, dropped at the end), under steady load through nginx — cursor
 * walks of /v1/leads and /v1/export/applications and /v1/meta polls — while
 *   1. a new release is published (both replicas switch; no request fails; no export walk mixes
 *      releases; no leads walk serves a lead twice);
 *   2. replica A is stopped with SIGTERM and started again (no request fails);
 *   3. replica B is killed with SIGKILL and started again (only requests in flight at the kill
 *      may fail; nginx retries GETs on A — counted from its access log);
 *   4. an hourly limit and a daily row budget are spent through nginx across both replicas
 *      (exactly the limit succeeds; rows charged = the budget counter = the ledger);
 *   5. a webhook is delivered by the two dispatchers exactly once per delivery id, plus one retry
 *      of the delivery the receiver refused first.
 * Prints the counts. Skips, with the reason, without nginx or PostgreSQL. `make test-deploy`.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { generateKey } from '../../api/access/keys.ts';
import { utcDay } from '../../api/access/limits.ts';
import { CAPABILITIES, type Scope } from '../../api/access/scopes.ts';
import { openPostgresStore, type PostgresStateStore } from '../../api/state/postgres.ts';
import { skipFile } from '../helpers/skip.ts';
import { REPO_ROOT, tempDir } from '../helpers/tmp.ts';
import { twoReleases } from '../helpers/two-releases.ts';
import { waitUntil } from '../helpers/wait.ts';
import { startReceiver } from '../helpers/webhook-receiver.ts';
import {
  freePort,
  localSite,
  mainConf,
  startNginx,
  startReplica,
  which,
  writeIn,
  type Replica,
} from '../helpers/topology.ts';

const PG_BASE =
  process.env['TEST_DATABASE_URL'] ??
  `postgres://${encodeURIComponent(process.env['PGUSER'] ?? userInfo().username)}@127.0.0.1:5432/test`;
const SCHEMA = `leads_deploy_${randomBytes(4).toString('hex')}`;
const DATABASE_URL = `${PG_BASE}${PG_BASE.includes('?') ? '&' : '?'}schema=${SCHEMA}`;
const NGINX = which('nginx');
const SECRET_TAIL = randomBytes(16).toString('hex');

async function pgReason(): Promise<string | null> {
  const c = new pg.Client({ connectionString: PG_BASE, connectionTimeoutMillis: 3000 });
  try {
    await c.connect();
    await c.query('select 1');
    return null;
  } catch (e) {
    return `PostgreSQL is unreachable at ${PG_BASE} (${(e as Error).message}); set TEST_DATABASE_URL`;
  } finally {
    await c.end().catch(() => {});
  }
}

/** One request of the load: when, what, how it ended. */
interface Sent {
  n: number;
  path: string;
  status: number | null;
  error: string | null;
  release: string | null;
}

/** The load through nginx: a few clients looping GETs until `stop()`. */
function startLoad(base: string, key: string) {
  const done: Sent[] = [];
  const inFlight = new Map<number, string>();
  const leadsWalks: { releases: string[]; ids: number[] }[] = [];
  const exportWalks: { releases: string[] }[] = [];
  let n = 0;
  let stopped = false;
  const get = async (path: string): Promise<{ sent: Sent; body: any }> => {
    const sent: Sent = { n: ++n, path, status: null, error: null, release: null };
    inFlight.set(sent.n, path);
    let body: any = null;
    try {
      const res = await fetch(base + path, {
        headers: { Authorization: `Bearer ${key}` },
        signal: AbortSignal.timeout(30_000),
      });
      sent.status = res.status;
      body = await res.json();
      sent.release = body?._meta?.release ?? null;
    } catch (e) {
      sent.error = (e as Error).message;
    } finally {
      inFlight.delete(sent.n);
      done.push(sent);
    }
    return { sent, body };
  };
  const ok = (s: Sent): boolean => s.status === 200 && s.error === null;
  /** Walk every page of a cursor endpoint; a failed page ends the walk (counted as failed). */
  const walk = async (first: string, record: (releases: string[], body: any) => void): Promise<void> => {
    const releases: string[] = [];
    let path: string | null = first;
    while (path && !stopped) {
      const { sent, body } = await get(path);
      if (!ok(sent)) return;
      releases.push(sent.release!);
      record(releases, body);
      path = body.next_cursor ? `${first}&cursor=${encodeURIComponent(body.next_cursor)}` : null;
    }
  };
  const loops = [
    async () => {
      while (!stopped) {
        const w = { releases: [] as string[], ids: [] as number[] };
        leadsWalks.push(w);
        await walk(
          '/v1/leads?page_size=40',
          (r, body) => ((w.releases = r), w.ids.push(...body.results.map((l: { id: number }) => l.id))),
        );
      }
    },
    async () => {
      while (!stopped) {
        const w = { releases: [] as string[] };
        exportWalks.push(w);
        await walk('/v1/export/applications?limit=150', (r) => (w.releases = r));
      }
    },
    async () => {
      while (!stopped) await get('/v1/meta');
    },
    async () => {
      while (!stopped) await get('/v1/leads?page_size=5&sort=value_desc');
    },
  ].map((f) => f());
  return {
    done,
    leadsWalks,
    exportWalks,
    ok,
    /** Request numbers in flight right now. */
    inFlightNow: (): Set<number> => new Set(inFlight.keys()),
    /** Resolves once `count` more requests have completed. */
    async more(count: number): Promise<void> {
      const target = done.length + count;
      await waitUntil(`${count} more load requests completed`, () => done.length >= target, {
        attempts: 1500,
        intervalMs: 20,
      });
    },
    async stop(): Promise<void> {
      stopped = true;
      await Promise.all(loops);
    },
  };
}

/** GET `path` through nginx with `key`; status, body and the rate-limit reset header. */
async function keyed(
  base: string,
  path: string,
  key: string,
): Promise<{ status: number; body: any; reset: string | null }> {
  const res = await fetch(base + path, { headers: { Authorization: `Bearer ${key}` } });
  return { status: res.status, body: await res.json(), reset: res.headers.get('x-ratelimit-reset') };
}

if (!NGINX) skipFile(test, 'deploy/topology.test.ts', 'nginx (Debian nginx) is not installed');
else {
  const pgSkip = await pgReason();
  if (pgSkip) skipFile(test, 'deploy/topology.test.ts', pgSkip);
  else
    test(
      'two replicas behind nginx: release switch, SIGTERM, SIGKILL, exact limits, one delivery per webhook event',
      topology,
    );
}

async function topology(): Promise<void> {
  const rel = await twoReleases();
  rel.switchTo(rel.first);
  const dir = tempDir('leads-topology-');
  const stoppers: (() => Promise<unknown>)[] = [];
  let store: PostgresStateStore | null = null;
  try {
    store = await openPostgresStore(DATABASE_URL); // creates the schema and applies the migrations once
    const s = store;
    const makeKey = async (account: string, scope: Scope): Promise<{ id: string; raw: string; accountId: number }> => {
      const a = (await s.getAccountByName(account)) ?? (await s.createAccount(account, 'premium'));
      const k = generateKey(scope);
      await s.insertKey({
        id: k.id,
        account_id: a.id,
        scope,
        name: `${account} ${scope}`,
        display_prefix: k.displayPrefix,
        hash: k.hash,
      });
      return { id: k.id, raw: k.raw, accountId: a.id };
    };
    const load = await makeKey('load', 'custom');
    const hooks = await makeKey('hooks', 'ent_api');

    const rx = await startReceiver();
    stoppers.push(() => rx.close());
    // the first request the receiver gets is refused (500): that delivery is retried
    rx.script('/hook', (_r, n) => ({ status: n === 1 ? 500 : 204 }));

    const nginxPort = await freePort();
    const env = (port: number): Record<string, string> => ({
      PORT: String(port),
      DATA_DIR: rel.dataDir,
      DATABASE_URL,
      PUBLIC_BASE_URL: `http://127.0.0.1:${nginxPort}/v1`,
      TRUST_PROXY: '1',
      CURSOR_SECRET: 'c'.repeat(16) + SECRET_TAIL,
      GIS_TOKEN_SECRET: 'g'.repeat(16) + SECRET_TAIL,
      RELEASE_POLL_MS: '100',
      WEBHOOK_INTERVAL_MS: '300',
      WEBHOOK_POLL_MS: '200',
      WEBHOOK_BATCH_MAX: '1',
      WEBHOOK_ALLOW_HOSTS: '127.0.0.1',
      DUCKDB_CONNECTIONS: '2',
    });
    const replicas: Replica[] = [];
    const start = async (i: number, port: number): Promise<Replica> => {
      const r = await startReplica(env(port));
      replicas[i] = r;
      await waitUntil(
        `replica ${i} is ready`,
        async () => (await fetch(`${r.origin}/readyz`).catch(() => null))?.status === 200,
        { attempts: 300, intervalMs: 50 },
      );
      return r;
    };
    stoppers.push(async () => Promise.all(replicas.map((r) => r?.stop('SIGTERM'))));
    await Promise.all([start(0, 0), start(1, 0)]);
    const [portA, portB] = [replicas[0]!.port, replicas[1]!.port];

    const accessLog = join(dir, 'access.log');
    const site = writeIn(
      dir,
      'site.conf',
      localSite(readFileSync(join(REPO_ROOT, 'deploy/nginx.conf'), 'utf8'), {
        port: nginxPort,
        replicaPorts: [portA, portB],
        accessLog,
      }),
    );
    const nginx = await startNginx(NGINX!, dir, writeIn(dir, 'nginx.conf', mainConf(dir, site)), nginxPort, accessLog);
    stoppers.push(() => nginx.stop());
    const base = `http://127.0.0.1:${nginxPort}`;
    const releaseOf = async (r: Replica): Promise<string> =>
      (await keyed(r.origin, '/v1/meta', load.raw)).body.release.id;

    // the webhook, created through nginx before the new release (its watermark: release 1's last lead)
    const created = await fetch(`${base}/v1/webhooks`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${hooks.raw}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ url: rx.url('/hook') }),
    });
    assert.is(created.status, 201, await created.clone().text());
    const webhookId = ((await created.json()) as { id: string }).id;

    const loadRun = startLoad(base, load.raw);
    stoppers.push(() => loadRun.stop());
    await loadRun.more(40);

    // 1. publish release 2: both replicas switch, seen directly on each
    rel.switchTo(rel.second);
    for (const r of replicas)
      await waitUntil(`replica on ${r.port} serves ${rel.second}`, async () => (await releaseOf(r)) === rel.second, {
        attempts: 600,
        intervalMs: 50,
      });
    await loadRun.more(40);
    const failedBefore = (upTo: number): Sent[] => loadRun.done.filter((x) => x.n <= upTo && !loadRun.ok(x));
    assert.equal(failedBefore(Infinity), [], 'no request failed during the release switch');

    // 2. SIGTERM replica A (graceful), start it again on its port
    const exitA = await replicas[0]!.stop('SIGTERM');
    assert.equal(exitA, { code: 0, signal: null }, `replica A stops cleanly on SIGTERM:\n${replicas[0]!.tail()}`);
    await loadRun.more(20);
    const logAtRestart = readFileSync(accessLog, 'utf8').length;
    await start(0, portA);
    // nginx takes A back after fail_timeout: wait until it answers through nginx again before killing B
    await waitUntil(
      'nginx sends requests to the restarted replica A',
      () => readFileSync(accessLog, 'utf8').slice(logAtRestart).includes(`upstream="127.0.0.1:${portA}" ustatus="200"`),
      { attempts: 400, intervalMs: 50 },
    );
    assert.equal(failedBefore(Infinity), [], 'no request failed while replica A restarted (SIGTERM)');

    // 3. SIGKILL replica B: only requests in flight at the kill may fail
    const lastBeforeKill = loadRun.done.length === 0 ? 0 : Math.max(...loadRun.done.map((x) => x.n));
    const inFlightAtKill = loadRun.inFlightNow();
    const exitB = await replicas[1]!.stop('SIGKILL');
    assert.is(exitB.signal, 'SIGKILL');
    await loadRun.more(30);
    await start(1, portB);
    await loadRun.more(30);
    const failedAfterKill = loadRun.done.filter((x) => x.n > lastBeforeKill && !loadRun.ok(x));
    for (const f of failedAfterKill)
      assert.ok(
        inFlightAtKill.has(f.n),
        `request ${f.n} ${f.path} failed (${f.status ?? f.error}) but was not in flight at the kill`,
      );

    // 4a. hourly limit, through nginx across both replicas: in the window where refusals start,
    // exactly the limit succeeded (grouped by X-RateLimit-Reset, so a run crossing the hour spends the next window too)
    const limit = CAPABILITIES.commonwealth.requestsPerHour;
    const hk = await makeKey('hourly', 'commonwealth');
    const byWindow = new Map<string, { ok: number; refused: number; other: number }>();
    const spent = (): boolean => [...byWindow.values()].some((w) => w.refused >= 20);
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (!spent()) {
          const r = await keyed(base, '/v1/meta', hk.raw);
          const w = byWindow.get(r.reset ?? '?') ?? { ok: 0, refused: 0, other: 0 };
          byWindow.set(r.reset ?? '?', w);
          if (r.status === 200) w.ok++;
          else if (r.status === 429 && r.body.code === 'rate_limited') w.refused++;
          else w.other++;
        }
      }),
    );
    assert.ok(!byWindow.has('?'), 'every answer names its window (X-RateLimit-Reset)');
    const [window, limited] = [...byWindow].find(([, w]) => w.refused >= 20)!;
    assert.is(limited.other, 0, 'only 200 and 429 rate_limited');
    assert.is(limited.ok, limit, `exactly ${limit} requests succeed in the hour ending ${window} across both replicas`);

    // 4b. daily row budget: 30 pages of 40 rows against 1,000 rows: 25 succeed, 5 get budget_exhausted
    const budget = CAPABILITIES.commonwealth.dailyRows!;
    const bk = await makeKey('budget', 'commonwealth');
    const day = utcDay(Date.now());
    const pages = await Promise.all(Array.from({ length: 30 }, () => keyed(base, '/v1/leads?page_size=40', bk.raw)));
    assert.is(utcDay(Date.now()), day, 'the budget run stayed inside one UTC day (rerun after 00:00)');
    const served = pages.filter((p) => p.status === 200);
    const rowsServed = served.reduce((t, p) => t + p.body.results.length, 0);
    assert.ok(
      served.every((p) => p.body.results.length === 40),
      'the release has more than 40 leads',
    );
    assert.is(rowsServed, budget, 'exactly the daily budget is served');
    assert.ok(
      pages.filter((p) => p.status !== 200).every((p) => p.status === 429 && p.body.code === 'budget_exhausted'),
    );
    const q = new pg.Client({ connectionString: PG_BASE });
    await q.connect();
    stoppers.push(() => q.end());
    const counter = await q.query(
      `select rows from ${pg.escapeIdentifier(SCHEMA)}.budget_counters where key_id = $1 and day = $2`,
      [bk.id, day],
    );
    assert.is(Number(counter.rows[0]?.rows), budget, 'the budget counter holds the rows served');
    await waitUntil(
      'the ledger holds the 30 budget requests',
      async () => {
        const u = await s.accountUsage(bk.accountId, day, day);
        return u.days.reduce((t, d) => t + d.requests, 0) === 30;
      },
      { attempts: 100, intervalMs: 100 },
    );
    const ledger = (await s.accountUsage(bk.accountId, day, day)).days.reduce((t, d) => t + d.rows, 0);
    assert.is(ledger, rowsServed, 'rows in the ledger = rows charged');

    // 5. webhook deliveries: every one delivered, each sent once, the refused one once more
    await waitUntil(
      'every delivery of the webhook is delivered (the refused one retried after ~30 s)',
      async () => {
        const ds = await s.webhooks.listDeliveries(webhookId, { limit: 1000 });
        return ds.length > 0 && ds.every((d) => d.status === 'delivered');
      },
      { attempts: 500, intervalMs: 100 },
    );
    const deliveries = await s.webhooks.listDeliveries(webhookId, { limit: 1000 });
    const received = rx.requests('/hook');
    const perId = new Map<string, number>();
    for (const r of received)
      perId.set(String(r.headers['webhook-id']), (perId.get(String(r.headers['webhook-id'])) ?? 0) + 1);
    const refusedId = String(received[0]!.headers['webhook-id']);
    for (const d of deliveries)
      assert.is(perId.get(d.id), d.id === refusedId ? 2 : 1, `delivery ${d.id} received ${perId.get(d.id)} times`);
    assert.is(perId.size, deliveries.length, 'nothing else was received');
    const leadIds = new Map<number, string>();
    for (const r of received) {
      const ev = JSON.parse(r.body.toString('utf8')) as { id: string; leads: { id: number }[] };
      for (const l of ev.leads) {
        assert.ok(!leadIds.has(l.id) || leadIds.get(l.id) === ev.id, `lead ${l.id} sent in two events: planned once`);
        leadIds.set(l.id, ev.id);
      }
    }

    await loadRun.stop();
    // walks: an export walk is one release; a leads walk never serves a lead twice (its cursor carries on across a switch, docs/api.md "Paging")
    const mixed = loadRun.exportWalks.filter((w) => new Set(w.releases).size > 1);
    assert.equal(mixed, [], 'no export cursor walk mixes releases');
    for (const w of loadRun.leadsWalks)
      assert.is(new Set(w.ids).size, w.ids.length, 'a leads walk serves each lead once');
    const crossed = loadRun.leadsWalks.filter((w) => new Set(w.releases).size > 1).length;

    const log = readFileSync(accessLog, 'utf8')
      .split('\n')
      .filter((l) => l !== '');
    const retried = log.filter((l) => /upstream="[^"]*, [^"]*"/.test(l)).length;
    const failed = loadRun.done.filter((x) => !loadRun.ok(x)).length;
    assert.equal(failedBefore(lastBeforeKill).length, 0);
    console.log(
      `  topology: requests sent ${loadRun.done.length + [...byWindow.values()].reduce((t, w) => t + w.ok + w.refused + w.other, 0) + pages.length}` +
        ` (load ${loadRun.done.length}), failed ${failed} (in flight at the SIGKILL: ${inFlightAtKill.size}), retried by nginx ${retried},` +
        ` 429s ${limited.refused} rate_limited + ${pages.length - served.length} budget_exhausted, deliveries ${deliveries.length} (${received.length} sent),` +
        ` walks: leads ${loadRun.leadsWalks.length} (${crossed} carried across the switch), export ${loadRun.exportWalks.length} (0 mixed)`,
    );
  } finally {
    for (const stop of stoppers.reverse())
      await stop().catch((e: Error) => console.error(`topology cleanup: ${e.message}`));
    await store?.close();
    const admin = new pg.Client({ connectionString: PG_BASE });
    await admin.connect();
    await admin
      .query(`drop schema if exists ${pg.escapeIdentifier(SCHEMA)} cascade`)
      .catch((e: Error) => console.error(`drop schema: ${e.message}`));
    await admin.end();
  }
}

test.run();
