/**
 * The API server: opens DuckDB, the release manager and the state store, builds the app and
 * listens (HTTPS with HSTS when TLS_CERT_FILE and TLS_KEY_FILE are set, else plain HTTP).
 * `node --import tsx api/server.ts` runs it; importing this module starts nothing.
 */
import http from 'node:http';
import https from 'node:https';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { createApp, type AppDeps } from './app.ts';
import { clientErrorHandler, MAX_HEADER_BYTES } from './client-error.ts';
import { ApiConfigError, loadApiConfig, type ApiConfig } from './config.ts';
import { openApiDb, type ApiDb } from './db.ts';
import { openReleaseManager, type ReleaseManager } from './release.ts';
import { openStateStore } from './state/open.ts';
import { degradable } from './state/degraded.ts';
import type { StateStore } from './state/store.ts';
import { createDispatcher, startWebhookScheduler } from './webhooks/dispatcher.ts';
import { serverLeadReader } from './webhooks/lead-reader.ts';
import { UsageLedger } from './access/ledger.ts';
import { ExportTempSpace } from './export-temp.ts';
import type { HostResolver } from './webhooks/destination.ts';

export interface RunningServer {
  /** Origin the server answers on, e.g. `http://localhost:8080` (the API is under `/v1`). */
  url: string;
  server: http.Server | https.Server;
  releases: ReleaseManager;
  store: StateStore;
  db: ApiDb;
  /** The usage ledger (counts reach the store within a second; `close` writes the rest). */
  ledger: UsageLedger;
  /** The export temp space (its folder under EXPORT_TEMP_DIR, and what the running exports hold). */
  exportTemp: ExportTempSpace;
  /** Stop accepting connections, let in-flight requests finish, write the usage ledger, then close the release manager, store and DuckDB. */
  close(): Promise<void>;
}

export interface ServerDeps {
  log: (line: string) => void;
  clock?: () => Date;
  /** Time in-flight requests get to finish on close before their connections are cut. */
  shutdownGraceMs?: number;
  /** BENCHMARKS ONLY: answer every request as this key, with no auth, limits or ledger (see AppDeps). */
  benchWithoutAccess?: AppDeps['benchWithoutAccess'];
  /** Deprecated operations (tests); the project's `DEPRECATIONS` table when absent. */
  deprecations?: AppDeps['deprecations'];
  /** TESTS: how webhook destinations are resolved (default: the system resolver). */
  resolveHost?: HostResolver;
}

/** Start the API with `config`; resolves once it is listening. */
export async function startServer(config: ApiConfig, deps: ServerDeps): Promise<RunningServer> {
  const log = deps.log;
  const clock = deps.clock ?? (() => new Date());
  // The export temp folder first: private (0700), and what a killed server left in it removed.
  const exportTemp = new ExportTempSpace({ root: config.exportTempDir, maxBytes: config.exportTempMaxMb * 1e6, waitMs: config.exportTempWaitMs, log });
  const rawStore = openStateStore(config.databaseUrl, { now: clock, busyTimeoutMs: config.stateBusyTimeoutMs });
  // An unreachable PostgreSQL (or a failed migration) fails the start, not the first request.
  await rawStore.ready.catch(async (e: unknown) => {
    await rawStore.close().catch(() => {});
    exportTemp.close();
    throw e;
  });
  // On the request path a store that cannot read or write answers 503 service_degraded (api/state/degraded.ts).
  const store = degradable(rawStore);
  const db = await openApiDb({ connections: config.duckdbConnections, threads: config.duckdbThreads, memoryLimit: config.duckdbMemoryLimit });
  let releases: ReleaseManager;
  try {
    releases = await openReleaseManager(db, config.dataDir, { pollMs: config.releasePollMs, log, now: () => clock().getTime() });
  } catch (e) {
    db.close();
    await store.close();
    exportTemp.close();
    throw e;
  }
  const ledger = new UsageLedger(rawStore, { detailDays: config.usageDetailDays, now: () => clock().getTime(), log });
  if (!config.accessLimits) log('ACCESS_LIMITS=off: no hourly rate limits and no daily row budgets (benchmarks only, never in production)');
  const resolveHost = deps.resolveHost ? { resolveHost: deps.resolveHost } : {};
  const app = createApp(config, {
    db, releases, store, clock, log, ledger, exportTemp, ...resolveHost,
    ...(deps.benchWithoutAccess ? { benchWithoutAccess: deps.benchWithoutAccess } : {}),
    ...(deps.deprecations ? { deprecations: deps.deprecations } : {}),
  });
  // Webhook scheduler (docs/webhooks.md): plans new leads every WEBHOOK_INTERVAL_MS, sends due deliveries every WEBHOOK_POLL_MS.
  const webhooks =
    config.webhookIntervalMs > 0
      ? startWebhookScheduler(createDispatcher({ store: rawStore.webhooks, accounts: rawStore, leads: serverLeadReader(db, releases), config, clock, log, ...resolveHost }), {
          intervalMs: config.webhookIntervalMs,
          pollMs: config.webhookPollMs,
          log,
        })
      : null;
  const tls = config.tlsCertFile !== null && config.tlsKeyFile !== null;
  const server = tls
    ? https.createServer({ cert: readFileSync(config.tlsCertFile!), key: readFileSync(config.tlsKeyFile!), maxHeaderSize: MAX_HEADER_BYTES }, app.callback())
    : http.createServer({ maxHeaderSize: MAX_HEADER_BYTES }, app.callback());
  server.keepAliveTimeout = 5000;
  // what the HTTP parser refuses (over-long URL, raw spaces, unknown method…) is answered as a problem too
  server.on('clientError', clientErrorHandler({ tls }));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const host = config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host.includes(':') ? `[${config.host}]` : config.host;
  const url = `${tls ? 'https' : 'http'}://${host}:${port}`;

  let closing: Promise<void> | null = null;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      await new Promise<void>((resolve) => {
        const cut = setTimeout(() => server.closeAllConnections(), deps.shutdownGraceMs ?? 10_000);
        cut.unref();
        server.close(() => {
          clearTimeout(cut);
          resolve();
        });
        server.closeIdleConnections();
      });
      await webhooks?.stop();
      // every counted request reaches the ledger table before the store closes
      await ledger.stop().catch((e: Error) => log(`usage ledger: final write failed, ${ledger.pendingRequests} requests not recorded: ${e.message}`));
      await releases.close();
      await store.close();
      db.close();
      exportTemp.close();
    })();
    return closing;
  };
  return { url, server, releases, store, db, ledger, exportTemp, close };
}

/** Command-line entry: read the environment, listen, and shut down gracefully on SIGTERM/SIGINT. */
async function runFromCommandLine(): Promise<void> {
  const log = (line: string): void => void process.stderr.write(line + '\n');
  let config: ApiConfig;
  try {
    config = loadApiConfig(process.env);
  } catch (e) {
    if (e instanceof ApiConfigError) {
      log(`configuration error: ${e.message}`);
      process.exit(2);
    }
    throw e;
  }
  const s = await startServer(config, { log });
  let current: string;
  try {
    current = `serving release ${s.releases.current().id}`;
  } catch {
    current = `no release under ${config.dataDir}/current yet: run 'make refresh' (requests get 503 until one is published)`;
  }
  // The signal handlers before the 'listening' line: a supervisor (or a test) that stops the
  // server as soon as it reads that line must get the graceful stop, not the default kill.
  const stop = (signal: string): void => {
    log(`${signal}: finishing in-flight requests, then stopping`);
    s.close().then(
      () => process.exit(0),
      (e) => {
        log(`shutdown failed: ${(e as Error).message}`);
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
  log(`leads API listening on ${s.url}/v1 (${current})`);
  log(`get a key:  npx leads accounts create --name you --plan premium && npx leads keys create --account you --scope ent_api --json`);
  log(`then:       curl -H "Authorization: Bearer <key>" ${s.url}/v1/meta`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  runFromCommandLine().catch((e) => {
    process.stderr.write(`leads API failed to start: ${(e as Error).stack ?? String(e)}\n`);
    process.exit(1);
  });
}
