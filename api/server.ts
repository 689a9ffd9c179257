/**
 * The API server: opens DuckDB, the release manager and the state store, builds the app and
 * listens (HTTPS with HSTS when TLS_CERT_FILE and TLS_KEY_FILE are set, else plain HTTP).
 * `node --import tsx api/server.ts` runs it (with API_WORKERS > 1 as a node:cluster primary whose
 * workers each run `startServer`: api/startup/cluster.ts); importing this module starts nothing.
 */
import http from 'node:http';
import https from 'node:https';
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { isClusterWorker, runClusterWorker, startCluster } from './startup/cluster.ts';
import { ApiConfigError, loadApiConfig, type ApiConfig } from './config.ts';
import type { ReleaseManager } from './releases/release.ts';
import type { ApiDb } from './duckdb/db.ts';
import type { StateStore } from './state/store-interface.ts';
import type { UsageLedger } from './access/ledger.ts';
import type { ExportTempSpace } from './exports/temp-space.ts';
import { ApiMetrics } from './observability/metrics.ts';
import { removeStaleBuilds } from '../common/refresh-lock.ts';
import { checkPortFree } from './startup/port-check.ts';
import type { RunningServer, ServerDeps } from './startup/running-server.ts';
import { listenMetrics, originOf } from './observability/metrics-listener.ts';
import { createLogger, flushLog, lineLog } from './observability/log.ts';
import { withServingSettings } from './startup/serving-process.ts';

/**
 * The modules only a serving process needs, loaded by the first `startServer` rather than at the
 * top: the cluster primary (API_WORKERS > 1, api/startup/cluster.ts) runs this file but never serves,
 * and without them stays about 100 MB smaller (81 MB resident against 181 MB).
 */
async function serverModules() {
  const [app, clientError, db, release, open, degraded, dispatcher, leadReader, ledger, exportTemp, timed] =
    await Promise.all([
      import('./app.ts'),
      import('./http/client-error.ts'),
      import('./duckdb/db.ts'),
      import('./releases/release.ts'),
      import('./state/open.ts'),
      import('./state/degraded.ts'),
      import('./webhooks/dispatcher.ts'),
      import('./webhooks/lead-reader.ts'),
      import('./access/ledger.ts'),
      import('./exports/temp-space.ts'),
      import('./observability/timed-store.ts'),
    ]);
  return {
    createApp: app.createApp,
    clientErrorHandler: clientError.clientErrorHandler,
    MAX_HEADER_BYTES: clientError.MAX_HEADER_BYTES,
    openApiDb: db.openApiDb,
    openReleaseManager: release.openReleaseManager,
    openStateStore: open.openStateStore,
    degradable: degraded.degradable,
    createDispatcher: dispatcher.createDispatcher,
    startWebhookScheduler: dispatcher.startWebhookScheduler,
    serverLeadReader: leadReader.serverLeadReader,
    UsageLedger: ledger.UsageLedger,
    exportTempSpace: exportTemp.exportTempSpace,
    timedStore: timed.timedStore,
  };
}

type ServerModules = Awaited<ReturnType<typeof serverModules>>;
type Log = (line: string) => void;
type WebhookScheduler = ReturnType<ServerModules['startWebhookScheduler']>;

/** What a running server holds and closes, in the order it closes them. */
interface ServerParts {
  readonly server: http.Server | https.Server;
  readonly metricsServer: http.Server | null;
  readonly webhooks: WebhookScheduler | null;
  readonly ledger: UsageLedger;
  readonly releases: ReleaseManager;
  readonly store: StateStore;
  readonly db: ApiDb;
  readonly exportTemp: ExportTempSpace;
  readonly metrics: ApiMetrics;
}

/** Remove the build folders a killed refresh left (releases/.build-<id>), unless a refresh is running now. */
async function removeStaleBuildFolders(dataDir: string, log: Log): Promise<void> {
  const stale = await removeStaleBuilds(dataDir).catch(
    (e: Error) => (log(`could not remove stale build folders: ${e.message}`), []),
  );
  if (stale === null) log('a refresh is running: its build folder is left to it');
  else if (stale.length > 0) log(`removed ${stale.length} build folder(s) a killed refresh left: ${stale.join(', ')}`);
}

/**
 * Open the state store with every operation timed (`raw`), and the store the request path uses
 * (`store`: one that cannot read or write answers 503 service_degraded, api/state/degraded.ts).
 * An unreachable PostgreSQL (or a failed migration) fails the start, not the first request.
 */
async function openStores(
  m: ServerModules,
  config: ApiConfig,
  clock: () => Date,
  metrics: ApiMetrics,
  exportTemp: ExportTempSpace,
): Promise<{ raw: StateStore; store: StateStore }> {
  const openedStore = m.openStateStore(config.databaseUrl, { now: clock, busyTimeoutMs: config.stateBusyTimeoutMs });
  // every store operation timed (state_store_operation_duration_seconds), whoever calls it
  const raw = m.timedStore(openedStore, (operation, outcome, seconds) =>
    metrics.storeDuration.observe({ operation, outcome }, seconds),
  );
  await raw.ready.catch(async (e: unknown) => {
    await raw.close().catch(() => {});
    exportTemp.close();
    throw e;
  });
  return { raw, store: m.degradable(raw) };
}

/** The release manager over `db`; when it cannot open, what was opened before it is closed. */
async function openReleases(
  m: ServerModules,
  config: ApiConfig,
  deps: ServerDeps,
  opened: Pick<ServerParts, 'db' | 'store' | 'exportTemp'>,
  clock: () => Date,
  metrics: ApiMetrics,
): Promise<ReleaseManager> {
  try {
    return await m.openReleaseManager(opened.db, config.dataDir, {
      pollMs: config.releasePollMs,
      log: deps.log,
      now: () => clock().getTime(),
      onServing: (r) => metrics.releaseIndexBuild.set(r.indexBuildMs / 1000),
      ...(deps.loadEngine ? { loadEngine: deps.loadEngine } : {}),
    });
  } catch (e) {
    opened.db.close();
    await opened.store.close();
    opened.exportTemp.close();
    throw e;
  }
}

/**
 * The webhook scheduler (docs/webhooks.md): plans new leads every WEBHOOK_INTERVAL_MS, sends due
 * deliveries every WEBHOOK_POLL_MS; null when WEBHOOK_INTERVAL_MS is 0.
 */
function startWebhooks(
  m: ServerModules,
  config: ApiConfig,
  o: {
    raw: StateStore;
    db: ApiDb;
    releases: ReleaseManager;
    clock: () => Date;
    log: Log;
    resolveHost: Pick<ServerDeps, 'resolveHost'>;
  },
): WebhookScheduler | null {
  if (!(config.webhookIntervalMs > 0)) return null;
  const dispatcher = m.createDispatcher({
    store: o.raw.webhooks,
    accounts: o.raw,
    leads: m.serverLeadReader(o.db, o.releases),
    config,
    clock: o.clock,
    log: o.log,
    ...o.resolveHost,
  });
  return m.startWebhookScheduler(dispatcher, {
    intervalMs: config.webhookIntervalMs,
    pollMs: config.webhookPollMs,
    log: o.log,
  });
}

/** The HTTP (or, with TLS_CERT_FILE and TLS_KEY_FILE, HTTPS) server of `app`, listening. */
async function listenApp(
  m: ServerModules,
  config: ApiConfig,
  app: ReturnType<ServerModules['createApp']>,
): Promise<{ server: http.Server | https.Server; tls: boolean }> {
  const tls = config.tlsCertFile !== null && config.tlsKeyFile !== null;
  const server = tls
    ? https.createServer(
        {
          cert: readFileSync(config.tlsCertFile!),
          key: readFileSync(config.tlsKeyFile!),
          maxHeaderSize: m.MAX_HEADER_BYTES,
        },
        app.callback(),
      )
    : http.createServer({ maxHeaderSize: m.MAX_HEADER_BYTES }, app.callback());
  server.keepAliveTimeout = 5000;
  // what the HTTP parser refuses (over-long URL, raw spaces, unknown method…) is answered as a problem too
  server.on('clientError', m.clientErrorHandler({ tls, publicBaseUrl: config.publicBaseUrl }));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return { server, tls };
}

/**
 * The server's `close`: stop accepting connections and let in-flight requests finish (cut after
 * `shutdownGraceMs`, default 10 s), then stop the webhooks, write the usage ledger and close the
 * rest. Called twice, the same promise.
 */
function closer(p: ServerParts, deps: Pick<ServerDeps, 'shutdownGraceMs'>, log: Log): () => Promise<void> {
  let closing: Promise<void> | null = null;
  return () => {
    closing ??= (async () => {
      await new Promise<void>((resolve) => {
        const cut = setTimeout(() => p.server.closeAllConnections(), deps.shutdownGraceMs ?? 10_000);
        cut.unref();
        p.server.close(() => {
          clearTimeout(cut);
          resolve();
        });
        p.server.closeIdleConnections();
      });
      await new Promise<void>((resolve) => (p.metricsServer ? p.metricsServer.close(() => resolve()) : resolve()));
      await p.webhooks?.stop();
      // every counted request reaches the ledger table before the store closes
      await p.ledger
        .stop()
        .catch((e: Error) =>
          log(`usage ledger: final write failed, ${p.ledger.pendingRequests} requests not recorded: ${e.message}`),
        );
      await p.releases.close();
      await p.store.close();
      p.db.close();
      p.exportTemp.close();
      p.metrics.unobserve();
    })();
    return closing;
  };
}

/** Start the API with `config`; resolves once it is listening. */
export async function startServer(config: ApiConfig, deps: ServerDeps): Promise<RunningServer> {
  const m = await serverModules();
  const log = deps.log;
  const logger = deps.logger ?? createLogger(config.logLevel, log);
  const clock = deps.clock ?? (() => new Date());
  const metrics = deps.metrics ?? new ApiMetrics();
  // The export temp folder first: private (0700), and what a killed server left in it removed.
  const exportTemp = m.exportTempSpace(config, log);
  // the ports before the slow work (the release's index build): a port taken fails the start now
  // (a cluster worker shares the primary's port, which the primary checked before forking it)
  if (!isClusterWorker()) await checkPortFree('PORT', config.port, config.host);
  if (config.metricsPort !== null) await checkPortFree('METRICS_PORT', config.metricsPort, config.metricsHost);
  await removeStaleBuildFolders(config.dataDir, log);
  const { raw, store } = await openStores(m, config, clock, metrics, exportTemp);
  const db = await m.openApiDb({
    connections: config.duckdbConnections,
    threads: config.duckdbThreads,
    memoryLimit: config.duckdbMemoryLimit,
  });
  const releases = await openReleases(m, config, deps, { db, store, exportTemp }, clock, metrics);
  const ledger = new m.UsageLedger(raw, { detailDays: config.usageDetailDays, now: () => clock().getTime(), log });
  if (!config.accessLimits)
    log('ACCESS_LIMITS=off: no hourly rate limits and no daily row budgets (benchmarks only, never in production)');
  const resolveHost = deps.resolveHost ? { resolveHost: deps.resolveHost } : {};
  const app = m.createApp(config, {
    db,
    releases,
    store,
    clock,
    log,
    logger,
    metrics,
    ledger,
    exportTemp,
    ...resolveHost,
    ...(deps.benchWithoutAccess ? { benchWithoutAccess: deps.benchWithoutAccess } : {}),
    ...(deps.deprecations ? { deprecations: deps.deprecations } : {}),
    ...(deps.passwordCost ? { passwordCost: deps.passwordCost } : {}),
  });
  const webhooks = startWebhooks(m, config, { raw, db, releases, clock, log, resolveHost });
  const { server, tls } = await listenApp(m, config, app);
  const url = originOf(server, config.host, tls);
  const metricsServer =
    config.metricsPort === null
      ? null
      : await listenMetrics(() => metrics.scrape(), config.metricsPort, config.metricsHost).catch(
          async (e: unknown) => {
            server.close();
            await webhooks?.stop();
            await releases.close();
            await store.close();
            db.close();
            exportTemp.close();
            throw e;
          },
        );
  const metricsUrl = metricsServer ? originOf(metricsServer, config.metricsHost, false) : null;
  const parts: ServerParts = { server, metricsServer, webhooks, ledger, releases, store, db, exportTemp, metrics };
  const close = closer(parts, deps, log);
  return { url, server, releases, store, db, ledger, exportTemp, metrics, metricsUrl, close };
}

/**
 * Command-line entry: read the environment, listen, and shut down gracefully on SIGTERM/SIGINT.
 * With API_WORKERS > 1 this process is the node:cluster primary of that many workers, each of
 * which comes back here and runs `startServer` (api/startup/cluster.ts).
 */
async function runFromCommandLine(): Promise<void> {
  let config: ApiConfig;
  try {
    config = loadApiConfig(process.env);
  } catch (e) {
    if (e instanceof ApiConfigError) {
      createLogger('info', undefined, { sync: true }).fatal(`configuration error: ${e.message}`);
      process.exit(2);
    }
    throw e;
  }
  // one JSON line per entry on stderr (api/observability/log.ts); `log(line)` is an info entry;
  // with API_WORKERS > 1 the primary and its workers write the same stderr
  const logger = createLogger(config.logLevel, undefined, { sharedStderr: isClusterWorker() || config.apiWorkers > 1 });
  const exit = (code: number): void => flushLog(logger, () => process.exit(code));
  if (isClusterWorker()) {
    // one of the API_WORKERS processes (api/startup/cluster.ts): the primary prints the start lines
    await runClusterWorker(config, { logger, start: startServer, exit });
    return;
  }
  const log = lineLog(logger);
  let s: { url: string; metricsUrl: string | null; release: string | null; close(): Promise<void> };
  let workers = '';
  if (config.apiWorkers > 1) {
    s = await startCluster(config, { log, onGiveUp: () => exit(1) });
    workers = `${config.apiWorkers} workers, `;
  } else {
    const one = await startServer(config, { log, logger });
    let release: string | null = null;
    try {
      release = one.releases.current().id;
    } catch {
      /* none yet */
    }
    s = { url: one.url, metricsUrl: one.metricsUrl, release, close: () => one.close() };
  }
  const current =
    s.release !== null
      ? `serving release ${s.release}`
      : `no release under ${config.dataDir}/current yet: run 'make refresh' (requests get 503 until one is published)`;
  // The signal handlers before the 'listening' line: a supervisor (or a test) that stops the
  // server as soon as it reads that line must get the graceful stop, not the default kill.
  const stop = (signal: string): void => {
    log(`${signal}: finishing in-flight requests, then stopping`);
    s.close().then(
      () => exit(0),
      (e) => {
        log(`shutdown failed: ${(e as Error).message}`);
        exit(1);
      },
    );
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
  log(`leads API listening on ${s.url}/v1 (${workers}${current})`);
  log(
    `get a key:  npx leads accounts create --name you --plan premium && npx leads keys create --account you --scope ent_api --json`,
  );
  log(`then:       curl -H "Authorization: Bearer <key>" ${s.url}/v1/meta`);
  log(`health:     ${s.url}/healthz (alive), ${s.url}/readyz (release loaded, state store answering)`);
  if (s.metricsUrl) log(`metrics:    ${s.metricsUrl}/metrics`);
  else if (config.metricsToken) log(`metrics:    ${s.url}/metrics (Authorization: Bearer <METRICS_TOKEN>)`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  withServingSettings();
  runFromCommandLine().catch((e) => {
    process.stderr.write(`leads API failed to start: ${(e as Error).stack ?? String(e)}\n`);
    process.exit(1);
  });
}
