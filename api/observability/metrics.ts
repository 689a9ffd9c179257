/**
 * The server's Prometheus metrics (prom-client), one registry per server — never prom-client's
 * global default, so several servers in one process (tests, replicas) do not share counters.
 * Every metric is declared here once; docs/operations.md lists them.
 *
 * Request metrics are labelled by route template (`GET /v1/leads/{id}`, the usage ledger's route
 * names; `other` for paths no router has — never the raw path) and status class (`2xx`…`5xx`).
 * Gauges that describe state held elsewhere (release age, the webhook queue, the usage ledger's
 * backlog) are read when scraped, through the `sources` given to `observe`.
 *
 * With API_WORKERS > 1 (api/startup/cluster.ts) each worker keeps its own registry and a scrape answers
 * for the whole server: the cluster primary collects every worker's metrics and sums them with
 * prom-client's cluster aggregation (`aggregateMetrics`). Each metric says how it is combined
 * (prom-client's `aggregator`): counters, histograms and per-process amounts are summed; a value
 * every worker reads alike (release age, the shared webhook queue) or a worst case (ledger lag)
 * takes the largest.
 */
import { AggregatorRegistry, collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/** Prefix of every metric the API defines (the default process metrics get it too). */
export const METRIC_PREFIX = 'leads_api_';

/** What the scrape-time gauges read. Each one is optional: an app built without it reports nothing for it. */
export interface MetricSources {
  /** The release served: id and `built_at` of its manifest; null while none is loaded. */
  release?: () => { id: string; builtAt: string } | null;
  /** The usage ledger's backlog: requests counted but not yet written, and how long the oldest has waited. */
  ledger?: () => { pendingRequests: number; lagMs: number };
  /** The webhook queue (shared by every replica of the store). */
  webhookQueue?: () => Promise<{ queued: number; held: number; oldestQueuedAt: string | null }>;
  /** The clock (ms since the epoch) ages are measured on. */
  now: () => number;
}

/** Seconds buckets of request latency (5 ms … 30 s: pages are milliseconds, exports seconds). */
const REQUEST_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
/** Seconds buckets of one state-store operation (a key lookup is ~0.1 ms on SQLite). */
const STORE_BUCKETS = [0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5];

/** One scrape: the Prometheus text exposition and its content type. */
export interface Scrape {
  body: string;
  contentType: string;
}

/** A registry's metrics as data (`registry.getMetricsAsJSON()`): what workers send the cluster primary. */
export type MetricsSnapshot = Awaited<ReturnType<Registry['getMetricsAsJSON']>>;

/**
 * One exposition of several processes' snapshots, each metric combined by its `aggregator`
 * (prom-client's `AggregatorRegistry.aggregate`: `sum` unless the metric says otherwise).
 */
export async function aggregateMetrics(snapshots: readonly MetricsSnapshot[]): Promise<Scrape> {
  const registry = AggregatorRegistry.aggregate(snapshots as MetricsSnapshot[]);
  return { body: await registry.metrics(), contentType: registry.contentType };
}

/**
 * The counters and histograms of a snapshot (what only grows). The cluster primary keeps them of
 * a worker that died, as of its last scrape, in the server's totals: the sums never go down
 * (Prometheus would read a drop as a counter reset). Its gauges go with it.
 */
export function cumulativeMetrics(snapshot: MetricsSnapshot): MetricsSnapshot {
  return snapshot.filter((m) => (m.type as unknown) === 'counter' || (m.type as unknown) === 'histogram');
}

/** Several snapshots summed into one (each metric by its `aggregator`), e.g. the counts of every dead worker. */
export function mergeSnapshots(snapshots: readonly MetricsSnapshot[]): Promise<MetricsSnapshot> {
  return AggregatorRegistry.aggregate(snapshots as MetricsSnapshot[]).getMetricsAsJSON();
}

/** `2xx` for 204, `4xx` for 429… */
export function statusClass(status: number): string {
  return `${Math.floor(status / 100)}xx`;
}

export interface ApiMetricsOptions {
  /**
   * Where `scrape()` reads: this server's own registry when absent; a cluster worker's asks the
   * primary for the whole server's (api/startup/cluster.ts).
   */
  scrape?: () => Promise<Scrape>;
}

/** The metrics of one server. */
export class ApiMetrics {
  readonly registry = new Registry();
  readonly requests: Counter<'route' | 'status_class'>;
  readonly requestDuration: Histogram<'route' | 'status_class'>;
  readonly rowsServed: Counter<'route'>;
  readonly tooManyRequests: Counter<'reason'>;
  readonly exportsRunning: Gauge;
  readonly releaseIndexBuild: Gauge;
  readonly storeDuration: Histogram<'operation' | 'outcome'>;
  private sources: MetricSources | null = null;
  private readonly scrapeFrom: (() => Promise<Scrape>) | null;

  constructor(opts: ApiMetricsOptions = {}) {
    this.scrapeFrom = opts.scrape ?? null;
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, prefix: METRIC_PREFIX });
    this.requests = new Counter({
      name: `${METRIC_PREFIX}http_requests_total`,
      help: 'HTTP requests answered, by route template and status class',
      labelNames: ['route', 'status_class'] as const,
      registers,
    });
    this.requestDuration = new Histogram({
      name: `${METRIC_PREFIX}http_request_duration_seconds`,
      help: 'Time from the request to the last byte of its response, by route template and status class',
      labelNames: ['route', 'status_class'] as const,
      buckets: REQUEST_BUCKETS,
      registers,
    });
    this.rowsServed = new Counter({
      name: `${METRIC_PREFIX}rows_served_total`,
      help: 'Records charged to daily row budgets (what the responses returned), by route template',
      labelNames: ['route'] as const,
      registers,
    });
    this.tooManyRequests = new Counter({
      name: `${METRIC_PREFIX}http_429_total`,
      help: 'Requests answered 429, by reason (the problem code: rate_limited, budget_exhausted, too_many_failed_attempts)',
      labelNames: ['reason'] as const,
      registers,
    });
    this.exportsRunning = new Gauge({
      name: `${METRIC_PREFIX}exports_running`,
      help: 'File exports (CSV, JSON Lines, Parquet) being written or sent now',
      registers,
    });
    this.releaseIndexBuild = new Gauge({
      name: `${METRIC_PREFIX}release_index_build_seconds`,
      help: 'How long the in-memory indexes of the release served took to build and load',
      aggregator: 'max', // each worker builds its own: the slowest
      registers,
    });
    this.storeDuration = new Histogram({
      name: `${METRIC_PREFIX}state_store_operation_duration_seconds`,
      help: 'Time of one state-store operation (its queries, in its transaction), by operation and outcome (ok or error)',
      labelNames: ['operation', 'outcome'] as const,
      buckets: STORE_BUCKETS,
      registers,
    });
    const self = this;
    new Gauge({
      name: `${METRIC_PREFIX}release_age_seconds`,
      help: 'Age of the release served (now minus its manifest built_at), labelled with its id; absent while no release is loaded',
      labelNames: ['release'] as const,
      aggregator: 'max', // the same age in every worker serving that release, not their sum
      registers,
      collect() {
        this.reset();
        const r = self.sources?.release?.();
        if (r) this.set({ release: r.id }, (self.sources!.now() - Date.parse(r.builtAt)) / 1000);
      },
    });
    new Gauge({
      name: `${METRIC_PREFIX}usage_ledger_pending_requests`,
      help: 'Requests counted in memory and not yet written to the usage ledger',
      registers,
      collect() {
        const l = self.sources?.ledger?.();
        if (l) this.set(l.pendingRequests);
      },
    });
    new Gauge({
      name: `${METRIC_PREFIX}usage_ledger_flush_lag_seconds`,
      help: 'How long the oldest count not yet written to the usage ledger has waited (0 when all are written; grows while the store cannot be written)',
      aggregator: 'max',
      registers,
      collect() {
        const l = self.sources?.ledger?.();
        if (l) this.set(l.lagMs / 1000);
      },
    });
    // one query per scrape fills both queue gauges (prom-client collects the metrics concurrently)
    let reading: ReturnType<NonNullable<MetricSources['webhookQueue']>> | null = null;
    const readQueue = async (): Promise<Awaited<ReturnType<NonNullable<MetricSources['webhookQueue']>>> | null> => {
      const read = self.sources?.webhookQueue;
      if (!read) return null;
      reading ??= read().finally(() => (reading = null));
      // the store does not answer (see /readyz): no value rather than a stale one
      return reading.catch(() => null);
    };
    new Gauge({
      name: `${METRIC_PREFIX}webhook_queue_depth`,
      help: 'Webhook deliveries not yet delivered or dead: queued (active webhooks) or held (suspended webhooks); shared by every replica',
      labelNames: ['state'] as const,
      aggregator: 'max', // the shared queue: every worker reads the same rows
      registers,
      async collect() {
        const q = await readQueue();
        this.reset();
        if (!q) return;
        this.set({ state: 'queued' }, q.queued);
        this.set({ state: 'held' }, q.held);
      },
    });
    new Gauge({
      name: `${METRIC_PREFIX}webhook_oldest_pending_seconds`,
      help: 'Age of the oldest queued webhook delivery (since its event was created); 0 when none is queued',
      aggregator: 'max',
      registers,
      async collect() {
        const q = await readQueue();
        if (q)
          this.set(
            q.oldestQueuedAt === null ? 0 : Math.max(0, (self.sources!.now() - Date.parse(q.oldestQueuedAt)) / 1000),
          );
      },
    });
  }

  /** Where the scrape-time gauges read from (set once the server has opened them). */
  observe(sources: MetricSources): void {
    this.sources = sources;
  }

  /**
   * The server has closed: the scrape-time gauges stop reading its parts. prom-client's default
   * metrics leave a process-wide GC observer holding this registry (it has no way to stop it), and
   * through the gauges' sources it held the whole closed server: in a process that starts many
   * (the test workers, test/runner/worker.ts) every server it ever started stayed in the heap.
   */
  unobserve(): void {
    this.sources = null;
  }

  /** One answered request. */
  request(route: string, status: number, seconds: number, rows: number, problemCode: string | null): void {
    const labels = { route, status_class: statusClass(status) };
    this.requests.inc(labels);
    this.requestDuration.observe(labels, seconds);
    if (rows > 0) this.rowsServed.inc({ route }, rows);
    if (status === 429) this.tooManyRequests.inc({ reason: problemCode ?? 'unknown' });
  }

  /** The Prometheus text exposition of every metric (of the whole server, in a cluster worker), and its content type. */
  async scrape(): Promise<Scrape> {
    if (this.scrapeFrom) return this.scrapeFrom();
    return { body: await this.registry.metrics(), contentType: this.registry.contentType };
  }
}

/**
 * The cluster primary's own metrics (API_WORKERS > 1): its process metrics (added to the
 * workers': the server's CPU and memory are all of its processes'), how many workers serve and
 * how many were replaced.
 */
export class ClusterMetrics {
  readonly registry = new Registry();
  readonly workers: Gauge;
  readonly restarts: Counter;

  constructor() {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, prefix: METRIC_PREFIX });
    this.workers = new Gauge({
      name: `${METRIC_PREFIX}cluster_workers`,
      help: 'Worker processes listening now (API_WORKERS when all are up)',
      registers,
    });
    this.restarts = new Counter({
      name: `${METRIC_PREFIX}cluster_worker_restarts_total`,
      help: 'Workers that died (killed, crashed, stopped on their own) and were replaced',
      registers,
    });
  }
}
