/**
 * API_WORKERS > 1: the API on every core of one machine, with node:cluster.
 *
 * Why: one Node process answers on one core. With N processes a machine of N cores serves about N
 * times the requests (two processes on one release: 2,487 req/s against one process's 1,530), as
 * production Node services do. The command-line entry (api/server.ts) then calls `startCluster`
 * and becomes the cluster's *primary*: it forks API_WORKERS *workers*, each of which runs the
 * whole of `startServer()` — its own DuckDB, its own release indexes (built by its own build
 * child), its own usage ledger, key cache and failed-key throttle — over the one state store
 * (SQLite in WAL with BEGIN IMMEDIATE is multi-process by design, PostgreSQL as for replicas).
 * The primary answers no API request; `startServer()` itself stays one process (tests use it).
 *
 * - One port. The workers listen on PORT through node:cluster: the primary holds the listening
 *   socket and hands each new connection to the next worker (round-robin, Node's default but on
 *   Windows). With PORT=0 every worker gets the same port (Node keeps one socket per address and
 *   port asked for); it stays while at least one worker listens.
 * - Start. The primary prints the start lines once, after every worker listens; a worker that
 *   fails to start fails the start (the others are stopped, exit 1), as a single process does.
 * - Shared secrets. An unset CURSOR_SECRET or GIS_TOKEN_SECRET is made once, by the primary, and
 *   handed to every worker: a cursor or GIS token made by one worker works on all of them.
 * - Webhooks. The dispatcher's claims are leased, so several dispatchers are safe, but planning
 *   and polling N times over is waste: only worker 0 runs the scheduler (its replacement is
 *   worker 0 again).
 * - A worker that dies is logged and replaced after a backoff (1 s, doubling up to 10 s while
 *   workers die young). When a worker keeps dying before it listens (5 times in a row: the port
 *   taken, the store unreachable…) the primary stops the others and exits 1.
 * - Stop. SIGTERM / SIGINT to the primary stops every worker the way a single server stops
 *   (in-flight requests finish, the usage ledger is written), then the primary exits 0 — 1 when a
 *   worker's stop failed. A worker that loses its primary (SIGKILLed) sees the IPC channel close
 *   ('disconnect') and stops the same way, so no worker outlives it. A worker sent SIGTERM by
 *   itself stops gracefully and is replaced.
 * - Metrics. Each worker keeps its own registry; a scrape — of the primary's METRICS_PORT
 *   listener, or of `/metrics` on the API port, which the worker answering asks the primary for —
 *   sums every listening worker's metrics (and the primary's process metrics) with prom-client's
 *   cluster aggregation (api/observability/metrics.ts), so it reports the whole server. What a dead
 *   worker had counted by its last scrape stays in the totals. prom-client's own `clusterMetrics()`
 *   is not used: it asks every connected worker, also one still starting that cannot answer yet,
 *   and a worker dying mid-scrape fails the scrape after 5 s; here only listening workers are asked.
 *
 * The IPC messages are `ToWorker` / `ToPrimary` below, each `{ t: 'leads:…' }`.
 */
import cluster, { type Worker } from 'node:cluster';
import { randomBytes } from 'node:crypto';
import type http from 'node:http';
import type { ApiConfig } from '../config.ts';
import { lineLog, type Logger } from '../observability/log.ts';
import {
  aggregateMetrics,
  ApiMetrics,
  ClusterMetrics,
  cumulativeMetrics,
  mergeSnapshots,
  type MetricsSnapshot,
  type Scrape,
} from '../observability/metrics.ts';
import { listenMetrics, originOf } from '../observability/metrics-listener.ts';
import { checkPortFree } from './port-check.ts';
import type { RunningServer, ServerDeps } from './running-server.ts';

/** The environment variable carrying a worker's index (0…N-1) from the primary; its presence marks our workers. */
export const WORKER_INDEX_ENV = 'LEADS_API_WORKER_INDEX';

/** Deaths in a row before listening after which the primary gives up. */
export const START_FAILURES_MAX = 5;
/** The first wait before a dead worker is replaced; doubled while workers die young, at most `BACKOFF_MAX_MS`. */
export const BACKOFF_FIRST_MS = 1000;
const BACKOFF_MAX_MS = 10_000;
/** A worker that lived less than this died young. */
const YOUNG_MS = 30_000;
/** How long a scrape waits for a worker's metrics. */
const SNAPSHOT_WAIT_MS = 5000;
/** How long a worker's `/metrics` waits for the primary's answer. */
const SCRAPE_WAIT_MS = 10_000;
/** How long past the workers' grace period the primary waits for them to stop before it kills them. */
const STOP_EXTRA_MS = 20_000;

/** Primary → worker. */
type ToWorker =
  | { t: 'leads:stop' }
  | { t: 'leads:snapshot'; id: number }
  | { t: 'leads:scraped'; id: number; scrape?: Scrape; error?: string };

/** Worker → primary. */
type ToPrimary =
  | { t: 'leads:ready'; url: string; release: string | null }
  | { t: 'leads:snapshot'; id: number; metrics?: MetricsSnapshot; error?: string }
  | { t: 'leads:scrape'; id: number };

/** Whether this process is a worker forked by `startCluster` (not one another cluster manager, e.g. PM2, forked). */
export function isClusterWorker(): boolean {
  return cluster.isWorker && process.env[WORKER_INDEX_ENV] !== undefined;
}

export interface ClusterDeps {
  /** Operational lines of the primary. */
  log: (line: string) => void;
  /** Called once the cluster has given up (workers kept dying before listening) and every worker has stopped; the caller exits 1. */
  onGiveUp: (reason: string) => void;
  /** The workers' grace period on stop (ServerDeps.shutdownGraceMs; 10 s). */
  shutdownGraceMs?: number;
}

export interface RunningCluster {
  /** Origin every worker answers on (the API is under `/v1`). */
  url: string;
  /** Origin of the primary's METRICS_PORT listener, or null when there is none. */
  metricsUrl: string | null;
  /** The release the workers served when they started; null when none was loaded. */
  release: string | null;
  /** API_WORKERS. */
  workers: number;
  /** Pids of the worker processes running now. */
  pids(): number[];
  /** The whole server's metrics (every worker's, aggregated). */
  scrape(): Promise<Scrape>;
  /** Stop every worker gracefully; rejects, naming them, when a worker's stop failed. */
  close(): Promise<void>;
}

interface Slot {
  readonly index: number;
  worker: Worker | null;
  /** The worker has reported that it listens. */
  ready: boolean;
  url: string | null;
  release: string | null;
  bornAt: number;
  /** Deaths in a row before listening. */
  startFailures: number;
  backoffMs: number;
  timer: NodeJS.Timeout | null;
  /** The worker's metrics at the last scrape. */
  last: MetricsSnapshot | null;
}

/** `exited with code 1` / `was killed by SIGKILL`. */
function howItEnded(code: number | null, signal: string | null): string {
  return signal ? `was killed by ${signal}` : `exited with code ${code}`;
}

/** Send `m` to worker `w`; `onError` when it is gone or the send fails. */
function sendTo(w: Worker, m: ToWorker, onError: () => void = () => {}): void {
  if (!w.isConnected()) return onError();
  w.send(m, undefined, (e) => e && onError());
}

/**
 * The cluster primary: forks a worker per slot, restarts the ones that die (with backoff),
 * answers metrics scrapes for them all, and stops them. `startCluster` runs one.
 */
class ClusterPrimary {
  private readonly config: ApiConfig;
  private readonly deps: ClusterDeps;
  private readonly metrics = new ClusterMetrics();
  private readonly sharedEnv: Record<string, string>;
  private readonly slots: Slot[];
  private phase: 'starting' | 'running' | 'stopping' = 'starting';
  private url: string | null = null;
  /** The counters of dead workers (as of their last scrape), merged now and then. */
  private retired: MetricsSnapshot[] = [];
  private merging = false;
  private readonly asked = new Map<number, { slot: Slot; done: (s: MetricsSnapshot | null, e?: Error) => void }>();
  private nextId = 0;
  private started!: { resolve: () => void; reject: (e: Error) => void };
  private readonly listening = new Promise<void>((resolve, reject) => (this.started = { resolve, reject }));
  private readonly stopFailures: string[] = [];
  private stopped: (() => void) | null = null;
  private closing: Promise<void> | null = null;
  private metricsServer: http.Server | null = null;

  constructor(config: ApiConfig, deps: ClusterDeps) {
    this.config = config;
    this.deps = deps;
    this.sharedEnv = {
      CURSOR_SECRET: config.cursorSecret,
      GIS_TOKEN_SECRET: config.gisTokenSecret || randomBytes(32).toString('hex'),
    };
    this.slots = Array.from({ length: config.apiWorkers }, (_, index) => ({
      index,
      worker: null,
      ready: false,
      url: null,
      release: null,
      bornAt: 0,
      startFailures: 0,
      backoffMs: 0,
      timer: null,
      last: null,
    }));
  }

  /** Check the ports, listen for metrics, fork every worker; resolves once every worker listens. */
  async start(): Promise<RunningCluster> {
    const { config, slots } = this;
    // the ports first: a port taken fails the start before any worker is forked (and builds its indexes)
    await checkPortFree('PORT', config.port, config.host);
    this.metricsServer =
      config.metricsPort === null
        ? null
        : await listenMetrics(() => this.scrape(), config.metricsPort, config.metricsHost);
    const metricsUrl = this.metricsServer ? originOf(this.metricsServer, config.metricsHost, false) : null;
    for (const s of slots) this.fork(s);
    await this.listening;
    this.phase = 'running';
    const url = (this.url = slots[0]!.url!);
    for (const s of slots)
      if (s.url !== url) this.deps.log(`worker ${s.index} listens on ${s.url}, worker 0 on ${url}`);
    return {
      url,
      metricsUrl,
      release: slots[0]!.release,
      workers: slots.length,
      pids: () => slots.flatMap((s) => (s.worker?.process.pid !== undefined ? [s.worker.process.pid] : [])),
      scrape: () => this.scrape(),
      close: () => this.close(),
    };
  }

  /** The whole server's metrics: the primary's own, the dead workers', and every live worker's. */
  async scrape(): Promise<Scrape> {
    const live = this.slots.filter((s) => s.ready && s.worker?.isConnected());
    const got = await Promise.all(live.map((s) => this.snapshotOf(s, s.worker!)));
    const own = await this.metrics.registry.getMetricsAsJSON();
    return aggregateMetrics([own, ...this.retired, ...got.filter((s): s is MetricsSnapshot => s !== null)]);
  }

  /** Stop every worker gracefully (killed after the grace time), then the metrics listener. */
  close(): Promise<void> {
    this.closing ??= new Promise<void>((resolve, reject) => {
      const { slots } = this;
      this.phase = 'stopping';
      for (const s of slots) {
        if (s.timer) clearTimeout(s.timer);
        s.timer = null;
      }
      const force = setTimeout(
        () => {
          for (const s of slots) {
            if (!s.worker) continue;
            this.deps.log(`worker ${s.index} (pid ${s.worker.process.pid}) did not stop in time: killing it`);
            s.worker.process.kill('SIGKILL');
          }
        },
        (this.deps.shutdownGraceMs ?? 10_000) + STOP_EXTRA_MS,
      );
      this.stopped = () => {
        clearTimeout(force);
        const done = (): void =>
          this.stopFailures.length ? reject(new Error(`${this.stopFailures.join('; ')} while stopping`)) : resolve();
        const metricsServer = this.metricsServer;
        if (!metricsServer) return done();
        metricsServer.close(() => done());
        metricsServer.closeAllConnections();
      };
      for (const s of slots) {
        const w = s.worker;
        if (w) sendTo(w, { t: 'leads:stop' }, () => w.process.kill('SIGTERM'));
      }
      if (slots.every((s) => s.worker === null)) this.stopped();
    });
    return this.closing;
  }

  private readyCount(): number {
    return this.slots.filter((s) => s.ready).length;
  }

  /** One worker's metrics, or null when it went away meanwhile. */
  private snapshotOf(slot: Slot, w: Worker): Promise<MetricsSnapshot | null> {
    return new Promise((resolve, reject) => {
      const id = this.nextId++;
      const timer = setTimeout(
        () =>
          done(
            null,
            new Error(
              `worker ${slot.index} (pid ${w.process.pid}) did not send its metrics within ${SNAPSHOT_WAIT_MS / 1000} s`,
            ),
          ),
        SNAPSHOT_WAIT_MS,
      );
      const done = (s: MetricsSnapshot | null, e?: Error): void => {
        if (!this.asked.delete(id)) return;
        clearTimeout(timer);
        if (e) reject(e);
        else resolve(s);
      };
      this.asked.set(id, { slot, done });
      sendTo(w, { t: 'leads:snapshot', id }, () => done(null));
    });
  }

  /** Keep a dead worker's counters; merge the kept ones when there are two or more. */
  private retire(last: MetricsSnapshot): void {
    this.retired.push(cumulativeMetrics(last));
    if (this.retired.length < 2 || this.merging) return;
    this.merging = true;
    const n = this.retired.length;
    mergeSnapshots(this.retired.slice(0, n))
      .then(
        (merged) => (this.retired = [merged, ...this.retired.slice(n)]),
        (e: Error) => this.deps.log(`metrics of dead workers could not be merged: ${e.message}`),
      )
      .finally(() => (this.merging = false));
  }

  private fork(slot: Slot): void {
    slot.timer = null;
    slot.ready = false;
    slot.bornAt = Date.now();
    const w = cluster.fork({ [WORKER_INDEX_ENV]: String(slot.index), ...this.sharedEnv });
    slot.worker = w;
    w.on('message', (m: ToPrimary) => this.onMessage(slot, w, m));
    w.on('exit', (code, signal) => this.onExit(slot, w, code, signal));
    w.on('error', (e) => this.deps.log(`worker ${slot.index} (pid ${w.process.pid}): ${e.message}`));
  }

  private onMessage(slot: Slot, w: Worker, m: ToPrimary): void {
    if (typeof m !== 'object' || m === null || typeof m.t !== 'string') return;
    if (m.t === 'leads:ready') this.onReady(slot, w, m);
    else if (m.t === 'leads:snapshot') {
      const a = this.asked.get(m.id);
      if (!a) return;
      if (m.metrics) slot.last = m.metrics;
      a.done(m.metrics ?? null, m.error !== undefined ? new Error(`worker ${slot.index}: ${m.error}`) : undefined);
    } else if (m.t === 'leads:scrape') {
      this.scrape().then(
        (s) => sendTo(w, { t: 'leads:scraped', id: m.id, scrape: s }),
        (e: Error) => sendTo(w, { t: 'leads:scraped', id: m.id, error: e.message }),
      );
    }
  }

  /** A worker listens: the start resolves when it was the last one. */
  private onReady(slot: Slot, w: Worker, m: Extract<ToPrimary, { t: 'leads:ready' }>): void {
    if (slot.worker !== w) return;
    slot.ready = true;
    slot.url = m.url;
    slot.release = m.release;
    slot.startFailures = 0;
    this.metrics.workers.set(this.readyCount());
    this.deps.log(`worker ${slot.index} (pid ${w.process.pid}) listening`);
    if (this.phase === 'running' && m.url !== this.url)
      this.deps.log(
        `worker ${slot.index} listens on ${m.url}, not on ${this.url} (PORT=0 and every worker had died): restart the server`,
      );
    if (this.phase === 'starting' && this.slots.every((s) => s.ready)) this.started.resolve();
  }

  /**
   * A worker died: while stopping, count it; while starting, stop the others and fail the start;
   * while running, start a new one after a backoff (or give up after START_FAILURES_MAX deaths
   * in a row before listening).
   */
  private onExit(slot: Slot, w: Worker, code: number | null, signal: string | null): void {
    const { log } = this.deps;
    if (slot.worker !== w) return;
    const wasReady = slot.ready;
    slot.worker = null;
    slot.ready = false;
    this.metrics.workers.set(this.readyCount());
    for (const a of this.asked.values()) if (a.slot === slot) a.done(null);
    if (slot.last) this.retire(slot.last);
    slot.last = null;
    const how = `worker ${slot.index} (pid ${w.process.pid}) ${howItEnded(code, signal)}`;
    if (this.phase === 'stopping') {
      if (code !== 0) this.stopFailures.push(how);
      if (this.slots.every((s) => s.worker === null)) this.stopped?.();
      return;
    }
    if (this.phase === 'starting') {
      log(`${how} before it listened: stopping the others`);
      this.close()
        .catch(() => {})
        .finally(() => this.started.reject(new Error(`${how} before it listened (its log says why)`)));
      return;
    }
    this.metrics.restarts.inc();
    if (!wasReady && ++slot.startFailures >= START_FAILURES_MAX) {
      const reason = `${how} before it listened, ${slot.startFailures} times in a row: giving up, stopping the other workers`;
      log(reason);
      this.close()
        .catch(() => {})
        .finally(() => this.deps.onGiveUp(reason));
      return;
    }
    const young = !wasReady || Date.now() - slot.bornAt < YOUNG_MS;
    slot.backoffMs = young && slot.backoffMs > 0 ? Math.min(BACKOFF_MAX_MS, slot.backoffMs * 2) : BACKOFF_FIRST_MS;
    log(
      `${how}${wasReady ? '' : ` before it listened (${slot.startFailures} of ${START_FAILURES_MAX} in a row)`}; a new worker ${slot.index} starts in ${slot.backoffMs / 1000} s`,
    );
    slot.timer = setTimeout(() => this.fork(slot), slot.backoffMs);
  }
}

/**
 * Become the cluster primary of `config.apiWorkers` workers (see the module comment); resolves
 * once every worker listens, rejects (every worker stopped) when one fails to start.
 */
export async function startCluster(config: ApiConfig, deps: ClusterDeps): Promise<RunningCluster> {
  return new ClusterPrimary(config, deps).start();
}

/**
 * What worker `index` runs with: no METRICS_PORT listener (the primary's answers for all), and
 * the webhook scheduler in worker 0 only.
 */
export function workerConfig(config: ApiConfig, index: number): ApiConfig {
  return Object.freeze({ ...config, metricsPort: null, webhookIntervalMs: index === 0 ? config.webhookIntervalMs : 0 });
}

export interface ClusterWorkerDeps {
  /** The JSON log; every line of the worker carries `worker: <index>`. */
  logger: Logger;
  /** `startServer` (api/server.ts). */
  start: (config: ApiConfig, deps: ServerDeps) => Promise<RunningServer>;
  /** End the process with `code` once the log is written. */
  exit: (code: number) => void;
}

/**
 * Run one worker of `startCluster`: the whole server (without a METRICS_PORT listener, which the
 * primary runs, and without the webhook scheduler unless it is worker 0); resolves once it
 * listens and has told the primary. Stops on the primary's word, on SIGTERM / SIGINT, or when the
 * primary is gone.
 */
export async function runClusterWorker(config: ApiConfig, deps: ClusterWorkerDeps): Promise<void> {
  const index = Number(process.env[WORKER_INDEX_ENV]);
  const logger = deps.logger.child({ worker: index });
  const log = lineLog(logger);
  const send = (m: ToPrimary): void => {
    if (process.connected) process.send!(m, undefined, {}, () => {});
  };
  const asked = new Map<number, { resolve: (s: Scrape) => void; reject: (e: Error) => void; timer: NodeJS.Timeout }>();
  let nextId = 0;
  const metrics = new ApiMetrics({
    // `/metrics` on the API port reports the whole server: the primary aggregates every worker's
    scrape: () =>
      new Promise<Scrape>((resolve, reject) => {
        if (!process.connected) return reject(new Error('the cluster primary is gone'));
        const id = nextId++;
        const timer = setTimeout(() => {
          asked.delete(id);
          reject(new Error(`the cluster primary did not answer within ${SCRAPE_WAIT_MS / 1000} s`));
        }, SCRAPE_WAIT_MS);
        asked.set(id, { resolve, reject, timer });
        send({ t: 'leads:scrape', id });
      }),
  });
  let started: Promise<RunningServer> | null = null;
  let listening = false;
  let stopping = false;
  const stop = (why: string, primaryGone = false): void => {
    if (stopping) return;
    stopping = true;
    log(`${why}: finishing in-flight requests, then stopping`);
    // Not listening yet and the primary gone: nothing was served, and the listen (which asks the
    // primary) would never complete.
    if (!listening && primaryGone) return deps.exit(1);
    // a start that fails is reported (and exits 1) by the caller
    started?.then(
      (s) =>
        s.close().then(
          () => deps.exit(0),
          (e: Error) => {
            log(`shutdown failed: ${e.message}`);
            deps.exit(1);
          },
        ),
      () => {},
    );
  };
  process.on('message', (m: ToWorker) => {
    if (typeof m !== 'object' || m === null) return;
    if (m.t === 'leads:stop') stop('stop (the cluster primary is stopping)');
    else if (m.t === 'leads:snapshot') {
      metrics.registry.getMetricsAsJSON().then(
        (ms) => send({ t: 'leads:snapshot', id: m.id, metrics: ms }),
        (e: Error) => send({ t: 'leads:snapshot', id: m.id, error: e.message }),
      );
    } else if (m.t === 'leads:scraped') {
      const a = asked.get(m.id);
      if (!a) return;
      asked.delete(m.id);
      clearTimeout(a.timer);
      if (m.scrape) a.resolve(m.scrape);
      else a.reject(new Error(m.error ?? 'no answer'));
    }
  });
  // Node ends a worker whose IPC channel closes at once (process.exit(0)) unless
  // `exitedAfterDisconnect` is set: set it, and stop gracefully instead.
  cluster.worker!.on('disconnect', () => {
    cluster.worker!.exitedAfterDisconnect = true;
    stop('the cluster primary is gone', true);
  });
  // e.g. a listen asked of a primary that is gone (EPIPE): logged, not a crash
  cluster.worker!.on('error', (e: Error) => log(`cluster channel: ${e.message}`));
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
  started = deps.start(workerConfig(config, index), { log, logger, metrics });
  const s = await started;
  listening = true;
  let release: string | null = null;
  try {
    release = s.releases.current().id;
  } catch {
    /* no release yet */
  }
  send({ t: 'leads:ready', url: s.url, release });
}
