/**
 * What the application (`createApp`, api/app.ts) is made with: the services every router and
 * middleware may be handed a part of. Declared below the app and its routers, which import it.
 */
import type { ApiDb } from '../duckdb/db.ts';
import type { ReleaseManager } from '../releases/release.ts';
import type { ApiKey, StateStore } from '../state/store-interface.ts';
import type { UsageLedger } from '../access/ledger.ts';
import type { DeprecationTable } from '../access/service-terms.ts';
import type { ExportTempSpace } from '../exports/temp-space.ts';
import type { HostResolver } from '../webhooks/destination.ts';
import type { ApiMetrics } from '../observability/metrics.ts';
import type { Logger } from '../observability/log.ts';
import type { ScryptCost } from '../app-area/passwords.ts';

export interface AppDeps {
  db: ApiDb;
  releases: ReleaseManager;
  store: StateStore;
  clock: () => Date;
  /** Operational lines (release switches, ledger failures, a 500's stack…); the server's is an adapter over `logger`. */
  log: (line: string) => void;
  /** The structured (JSON) log the access log is written to; one writing JSON lines to `log` when absent. */
  logger?: Logger;
  /** The server's metrics (served at /metrics); one is made when absent. */
  metrics?: ApiMetrics;
  /** The usage ledger (the server flushes it on stop); one is made when absent. */
  ledger?: UsageLedger;
  /** The export temp space (the server prepares it at start and removes it on stop); made on first export when absent. */
  exportTemp?: ExportTempSpace;
  /** How webhook destinations are resolved (default: the system resolver); tests inject one, so no DNS query leaves the box. */
  resolveHost?: HostResolver;
  /**
   * BENCHMARKS ONLY (bench/access.ts): no key check, no limits, no ledger — every request is
   * answered as this key. Never set by the server's command line or any environment variable.
   */
  benchWithoutAccess?: ApiKey;
  /** Deprecated operations (api/access/service-terms.ts); `DEPRECATIONS` when absent. Tests inject their own. */
  deprecations?: DeprecationTable;
  /**
   * TESTS ONLY: the scrypt cost of new account-area password hashes; `SCRYPT` (N = 2^17, ~0.3 s of
   * CPU a hash) when absent. The test server sets a cheaper one (test/helpers/api.ts). Never set by
   * the server's command line or any environment variable.
   */
  passwordCost?: ScryptCost;
}
