/**
 * What `startServer` (api/server.ts) takes and gives back: its dependencies and the running
 * server. Declared here, below both the entry point and the cluster (api/startup/cluster.ts),
 * which starts servers in its workers through an injected `startServer`.
 */
import type http from 'node:http';
import type https from 'node:https';
import type { AppDeps } from '../http/app-deps.ts';
import type { ApiDb } from '../duckdb/db.ts';
import type { LoadEngine, ReleaseManager } from '../releases/release.ts';
import type { StateStore } from '../state/store-interface.ts';
import type { UsageLedger } from '../access/ledger.ts';
import type { ExportTempSpace } from '../exports/temp-space.ts';
import type { HostResolver } from '../webhooks/destination.ts';
import type { ApiMetrics } from '../observability/metrics.ts';
import type { Logger } from '../observability/log.ts';

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
  /** The server's metrics (its own registry). */
  metrics: ApiMetrics;
  /** Origin of the METRICS_PORT listener (`http://127.0.0.1:9464`, serving `/metrics`), or null when there is none. */
  metricsUrl: string | null;
  /** Stop accepting connections, let in-flight requests finish, write the usage ledger, then close the release manager, store and DuckDB. */
  close(): Promise<void>;
}

export interface ServerDeps {
  /** Operational lines (`deps.log(line)` throughout the API). */
  log: (line: string) => void;
  /** The structured JSON log (access log); when absent, one at LOG_LEVEL writing its JSON lines to `log`. */
  logger?: Logger;
  clock?: () => Date;
  /** Time in-flight requests get to finish on close before their connections are cut. */
  shutdownGraceMs?: number;
  /** BENCHMARKS ONLY: answer every request as this key, with no auth, limits or ledger (see AppDeps). */
  benchWithoutAccess?: AppDeps['benchWithoutAccess'];
  /** Deprecated operations (tests); the project's `DEPRECATIONS` table when absent. */
  deprecations?: AppDeps['deprecations'];
  /** TESTS: how webhook destinations are resolved (default: the system resolver). */
  resolveHost?: HostResolver;
  /** The server's metrics; a new `ApiMetrics` when absent (a cluster worker's scrapes the whole cluster: api/startup/cluster.ts). */
  metrics?: ApiMetrics;
  /** TESTS: how a release's leads engine is built (default `loadLeadsEngine`, its indexes in a child process). */
  loadEngine?: LoadEngine;
  /** TESTS: the scrypt cost of new password hashes (see AppDeps; `SCRYPT` when absent). */
  passwordCost?: AppDeps['passwordCost'];
}
