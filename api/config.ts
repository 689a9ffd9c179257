/**
 * Typed, read-only API configuration. `loadApiConfig(env)` reads the environment once and fails
 * fast on bad values; the result is passed to `createApp` and never read from a global.
 */
import { randomBytes } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { CidrList } from './http/ip-address.ts';

export interface ApiConfig {
  /** Root holding `current` → the release to serve (env DATA_DIR). */
  readonly dataDir: string;
  readonly port: number;
  readonly host: string;
  /**
   * Server processes answering on `port` (env API_WORKERS: 1…64, or `auto` = one per core,
   * `os.availableParallelism()`): above 1 the command-line entry runs a node:cluster primary
   * forking that many workers, each a whole server (api/startup/cluster.ts). `startServer` itself is
   * always one process.
   */
  readonly apiWorkers: number;
  /** State store: `file:/path/state.sqlite` (default `<dataDir>/state.sqlite`) or `postgres://…`. */
  readonly databaseUrl: string;
  /** HTTPS when both are set (PEM files); HSTS is then sent on every response. */
  readonly tlsCertFile: string | null;
  readonly tlsKeyFile: string | null;
  /** Trust X-Forwarded-For / X-Forwarded-Proto from a reverse proxy (one in `trustedProxies`). */
  readonly trustProxy: boolean;
  /**
   * Networks of the reverse proxies (CIDRs, normalised): with `trustProxy`, X-Forwarded-* headers
   * are read only from these peers, and the client is the right-most X-Forwarded-For address not
   * in them (api/middleware/client-address.ts).
   */
  readonly trustedProxies: readonly string[];
  /** Public base of the API including /v1, used in links (`next`, record pages). */
  readonly publicBaseUrl: string;
  /**
   * Origins whose pages may call the API from a browser (CORS, api/middleware/cors.ts): `['*']`
   * (any), a list of origins (`https://app.example.ie`), or `[]` (no CORS).
   */
  readonly corsAllowOrigins: readonly string[];
  /**
   * Answers of a compressible type at least this long (bytes) are sent gzip- or brotli-encoded
   * when the client accepts it (api/middleware/compression.ts); null (`off`) = never.
   */
  readonly compressMinBytes: number | null;
  /** Default and maximum `page_size` of list endpoints. */
  readonly pageSizeDefault: number;
  readonly pageSizeMax: number;
  /** Deepest `page` number served by offset paging; deeper pages must use `cursor`. */
  readonly pageMax: number;
  /** How often the `current` release link is checked for a newer release. */
  readonly releasePollMs: number;
  /** DuckDB connections in the pool (concurrent queries). */
  readonly duckdbConnections: number;
  readonly duckdbThreads: number;
  readonly duckdbMemoryLimit: string;
  /** How long an authenticated key is cached in memory (a revocation or plan change empties the cache at once: api/state/revocations.ts). */
  readonly keyCacheMs: number;
  /** Webhooks (docs/webhooks.md): how often new leads are batched (0 = no scheduler in the server). */
  readonly webhookIntervalMs: number;
  /** How often due deliveries and retries are sent by the server's scheduler. */
  readonly webhookPollMs: number;
  /** Most leads in one `lead.new` delivery; larger sets are split. */
  readonly webhookBatchMax: number;
  readonly webhookTimeoutMs: number;
  /** Attempts before a delivery goes to the dead-letter list. */
  readonly webhookMaxAttempts: number;
  /** Deliveries sent at the same time by one dispatcher. */
  readonly webhookConcurrency: number;
  /** Hosts (or addresses) that may be private or loopback, and may use http. */
  readonly webhookAllowHosts: readonly string[];
  /** Default time the previous secret keeps signing after a rotation. */
  readonly webhookRotationOverlapMs: number;
  /** Hourly rate limits and daily row budgets (bench only: `off` measures the API without them). */
  readonly accessLimits: boolean;
  /** Failed key attempts allowed per client address and window before it gets 429s. */
  readonly authFailLimit: number;
  readonly authFailWindowS: number;
  /** Days of per-route usage detail kept (per-key daily totals are kept forever). */
  readonly usageDetailDays: number;
  /** Secret sealing the GIS query tokens (`access_token`); empty = a random one per process (tokens die with it). */
  readonly gisTokenSecret: string;
  /** Private (0700) folder of the export temp files (default `<dataDir>/export-tmp`); leftovers are removed at start. */
  readonly exportTempDir: string;
  /** Temp space the exports of this server may hold at once, MB; past it new exports wait, then get 503. */
  readonly exportTempMaxMb: number;
  /** How long a new export waits for temp space before its 503. */
  readonly exportTempWaitMs: number;
  /** Earlier GIS token secrets, still accepted (tokens they sealed open until they expire) after a rotation. */
  readonly gisTokenSecretsPrevious: readonly string[];
  /** Secret signing the paging cursors (HMAC); unset = a random one per process (cursors then stop working at restart). */
  readonly cursorSecret: string;
  /** Earlier cursor secrets, still accepted (not used to sign) after a rotation. */
  readonly cursorSecretsPrevious: readonly string[];
  /** How long a state-store operation waits for a lock another process or session holds (SQLite and PostgreSQL) before the request gets 503 `service_degraded`. */
  readonly stateBusyTimeoutMs: number;
  /**
   * Bearer token of `GET /metrics` on the main port (≥ 32 characters); empty = no `/metrics` on
   * the main port (404). Compared in constant time.
   */
  readonly metricsToken: string;
  /** Port of a separate metrics listener (`GET /metrics`, no token) on `metricsHost`; null = none (0 = any free port, tests). */
  readonly metricsPort: number | null;
  /** Address the metrics listener binds to (default 127.0.0.1: reachable from the host only). */
  readonly metricsHost: string;
  /** Least level written to the structured (JSON) log: trace, debug, info, warn, error, fatal or silent. */
  readonly logLevel: LogLevel;
  // — the account area (/app, docs/app.md) —
  /** How long an invitation link (`leads accounts invite`) can be used. */
  readonly inviteTtlHours: number;
  /** `smtp://` or `smtps://` URL of the mail server invitations are e-mailed through; empty = print the link only. */
  readonly smtpUrl: string;
  /** Sender of invitation e-mails; empty = `no-reply@<host of PUBLIC_BASE_URL>`. */
  readonly smtpFrom: string;
  /** A signed-in session ends after this long without a request. */
  readonly appSessionIdleMinutes: number;
  /** A session ends this long after sign-in, however active. */
  readonly appSessionMaxHours: number;
  /** Failed sign-ins allowed per account and per client address in a sliding window before sign-in is throttled (429). */
  readonly appSigninFailLimit: number;
  readonly appSigninFailWindowS: number;
  /** WebAuthn relying-party id (passkeys are bound to it); empty = the host name of PUBLIC_BASE_URL. */
  readonly webauthnRpId: string;
}

/** The levels of the structured log (pino's). */
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Default `TRUSTED_PROXIES`: a proxy on the same host (nginx in front of `HOST=127.0.0.1`). */
export const TRUSTED_PROXIES_DEFAULT: readonly string[] = ['127.0.0.0/8', '::1/128'];

/** Defaults with the environment variable and a help line per key (documented in docs/api.md). */
export const API_DEFAULTS: { [K in keyof ApiConfig]: { value: ApiConfig[K]; env: string; help: string } } = {
  dataDir: { value: 'data', env: 'DATA_DIR', help: 'folder holding current → the release to serve' },
  port: { value: 8080, env: 'PORT', help: 'TCP port' },
  host: { value: '0.0.0.0', env: 'HOST', help: 'listen address' },
  apiWorkers: {
    value: 1,
    env: 'API_WORKERS',
    help: 'server processes sharing PORT (node:cluster workers, each a whole server): 1…64, or auto = one per core',
  },
  databaseUrl: {
    value: '',
    env: 'DATABASE_URL',
    help: 'state store: file:/path/state.sqlite (default <DATA_DIR>/state.sqlite) or postgres://…',
  },
  tlsCertFile: { value: null, env: 'TLS_CERT_FILE', help: 'PEM certificate; with TLS_KEY_FILE serves HTTPS with HSTS' },
  tlsKeyFile: { value: null, env: 'TLS_KEY_FILE', help: 'PEM private key' },
  trustProxy: {
    value: false,
    env: 'TRUST_PROXY',
    help: 'trust X-Forwarded-* headers from a reverse proxy in TRUSTED_PROXIES (1/0)',
  },
  trustedProxies: {
    value: TRUSTED_PROXIES_DEFAULT,
    env: 'TRUSTED_PROXIES',
    help: 'comma-separated networks (CIDRs or addresses, IPv4 and IPv6) of the reverse proxies; with TRUST_PROXY the client is the right-most X-Forwarded-For address outside them',
  },
  publicBaseUrl: {
    value: 'http://localhost:8080/v1',
    env: 'PUBLIC_BASE_URL',
    help: 'public base URL including /v1; unset: Location headers name the origin the request came to',
  },
  corsAllowOrigins: {
    value: ['*'],
    env: 'CORS_ALLOW_ORIGINS',
    help: 'origins whose browser pages may call /v1 with a key (CORS): * (any), comma-separated origins such as https://app.example.ie (the matching Origin is echoed, with Vary: Origin), or none',
  },
  compressMinBytes: {
    value: 1024,
    env: 'COMPRESS_MIN_BYTES',
    help: 'answers of a compressible type (JSON, GeoJSON, CSV, JSON Lines, tiles, HTML) at least this many bytes are gzip- or brotli-encoded for clients that accept it; off = never',
  },
  pageSizeDefault: { value: 25, env: 'PAGE_SIZE_DEFAULT', help: 'default page_size' },
  pageSizeMax: { value: 100, env: 'PAGE_SIZE_MAX', help: 'maximum page_size' },
  pageMax: { value: 100, env: 'PAGE_MAX', help: 'deepest page served by page numbers (use cursor beyond)' },
  releasePollMs: { value: 1000, env: 'RELEASE_POLL_MS', help: 'how often to look for a new release' },
  duckdbConnections: { value: 4, env: 'DUCKDB_CONNECTIONS', help: 'DuckDB connection pool size' },
  duckdbThreads: { value: 1, env: 'DUCKDB_THREADS', help: 'DuckDB worker threads' },
  duckdbMemoryLimit: { value: '256MB', env: 'API_DUCKDB_MEMORY_LIMIT', help: 'DuckDB memory limit of the server' },
  keyCacheMs: {
    value: 5000,
    env: 'KEY_CACHE_MS',
    help: 'how long a looked-up API key is cached; a revocation or plan change anywhere empties the cache at once (0 = no cache)',
  },
  webhookIntervalMs: {
    value: 3_600_000,
    env: 'WEBHOOK_INTERVAL_MS',
    help: 'how often the server batches new leads for webhooks (0 = no scheduler)',
  },
  webhookPollMs: {
    value: 10_000,
    env: 'WEBHOOK_POLL_MS',
    help: 'how often the server sends due webhook deliveries and retries',
  },
  webhookBatchMax: { value: 100, env: 'WEBHOOK_BATCH_MAX', help: 'most leads in one lead.new delivery' },
  webhookTimeoutMs: { value: 10_000, env: 'WEBHOOK_TIMEOUT_MS', help: 'time a destination gets to answer a delivery' },
  webhookMaxAttempts: {
    value: 8,
    env: 'WEBHOOK_MAX_ATTEMPTS',
    help: 'attempts before a delivery goes to the dead-letter list',
  },
  webhookConcurrency: { value: 8, env: 'WEBHOOK_CONCURRENCY', help: 'deliveries sent at once by one dispatcher' },
  webhookAllowHosts: {
    value: [],
    env: 'WEBHOOK_ALLOW_HOSTS',
    help: 'comma-separated hosts or addresses that may be private/loopback (and use http), e.g. 127.0.0.1',
  },
  webhookRotationOverlapMs: {
    value: 86_400_000,
    env: 'WEBHOOK_ROTATION_OVERLAP_MS',
    help: 'default time the previous secret keeps signing after rotate-secret',
  },
  accessLimits: {
    value: true,
    env: 'ACCESS_LIMITS',
    help: 'on: hourly rate limits and daily row budgets; off: BENCH ONLY, no limits (the ledger still counts)',
  },
  authFailLimit: {
    value: 20,
    env: 'AUTH_FAIL_LIMIT',
    help: 'failed key attempts per client address per window before 429',
  },
  authFailWindowS: { value: 600, env: 'AUTH_FAIL_WINDOW_S', help: 'window of AUTH_FAIL_LIMIT, seconds' },
  usageDetailDays: {
    value: 90,
    env: 'USAGE_DETAIL_DAYS',
    help: 'days of per-route usage detail kept (daily totals per key are kept forever)',
  },
  gisTokenSecret: {
    value: '',
    env: 'GIS_TOKEN_SECRET',
    help: 'secret (≥ 32 characters) sealing GIS access_token values; unset = random per process, so tokens stop working at restart and differ between replicas',
  },
  exportTempDir: {
    value: '',
    env: 'EXPORT_TEMP_DIR',
    help: 'private folder (0700) of the export temp files, default <DATA_DIR>/export-tmp; leftovers of dead servers are removed at start',
  },
  exportTempMaxMb: {
    value: 2048,
    env: 'EXPORT_TEMP_MAX_MB',
    help: 'temp space the running exports of one server may hold, MB; past it a new export waits EXPORT_TEMP_WAIT_MS, then gets 503 export_busy; one export past it alone gets 507 export_too_large, or is stopped while written',
  },
  exportTempWaitMs: {
    value: 5000,
    env: 'EXPORT_TEMP_WAIT_MS',
    help: 'how long a new export waits for temp space before its 503',
  },
  gisTokenSecretsPrevious: {
    value: [],
    env: 'GIS_TOKEN_SECRETS_PREVIOUS',
    help: 'comma-separated earlier GIS_TOKEN_SECRET values still accepted after a rotation (tokens they sealed keep working until they expire; new ones are sealed with GIS_TOKEN_SECRET)',
  },
  cursorSecret: {
    value: '',
    env: 'CURSOR_SECRET',
    help: 'secret (≥ 32 characters) signing paging cursors (next_cursor, GIS next links); unset = random per process, so cursors stop working at restart and differ between replicas',
  },
  cursorSecretsPrevious: {
    value: [],
    env: 'CURSOR_SECRETS_PREVIOUS',
    help: 'comma-separated earlier CURSOR_SECRET values still accepted after a rotation (cursors they signed keep working; new ones are signed with CURSOR_SECRET)',
  },
  stateBusyTimeoutMs: {
    value: 5000,
    env: 'STATE_BUSY_TIMEOUT_MS',
    help: 'state store: how long an operation waits for a lock another process or session holds (SQLite: the write lock, waited for on timers without blocking the server; PostgreSQL: lock_timeout, statement_timeout and the wait for a pooled connection) before the request gets 503 service_degraded',
  },
  metricsToken: {
    value: '',
    env: 'METRICS_TOKEN',
    help: 'Bearer token (≥ 32 characters) of GET /metrics on the main port; unset = /metrics is not served there (404)',
  },
  metricsPort: {
    value: null,
    env: 'METRICS_PORT',
    help: 'port of a separate listener serving GET /metrics without a token on METRICS_HOST; unset = none',
  },
  metricsHost: { value: '127.0.0.1', env: 'METRICS_HOST', help: 'address the METRICS_PORT listener binds to' },
  logLevel: {
    value: 'info',
    env: 'LOG_LEVEL',
    help: 'least level of the JSON log on stderr: trace, debug, info, warn, error, fatal or silent',
  },
  inviteTtlHours: {
    value: 72,
    env: 'INVITE_TTL_HOURS',
    help: 'account area: how long an invitation link (leads accounts invite) can be used, hours',
  },
  smtpUrl: {
    value: '',
    env: 'SMTP_URL',
    help: 'account area: smtp:// or smtps:// URL (user:password@host:port) invitations are e-mailed through; unset = the link is only printed',
  },
  smtpFrom: {
    value: '',
    env: 'SMTP_FROM',
    help: 'account area: sender address of invitation e-mails; unset = no-reply@<host of PUBLIC_BASE_URL>',
  },
  appSessionIdleMinutes: {
    value: 30,
    env: 'APP_SESSION_IDLE_MINUTES',
    help: 'account area: a session ends after this many minutes without a request',
  },
  appSessionMaxHours: {
    value: 12,
    env: 'APP_SESSION_MAX_HOURS',
    help: 'account area: a session ends this many hours after sign-in, however active',
  },
  appSigninFailLimit: {
    value: 10,
    env: 'APP_SIGNIN_FAIL_LIMIT',
    help: 'account area: failed sign-ins per account and per client address within APP_SIGNIN_FAIL_WINDOW_S before sign-in answers 429',
  },
  appSigninFailWindowS: {
    value: 900,
    env: 'APP_SIGNIN_FAIL_WINDOW_S',
    help: 'account area: the sliding window of APP_SIGNIN_FAIL_LIMIT, seconds',
  },
  webauthnRpId: {
    value: '',
    env: 'WEBAUTHN_RP_ID',
    help: 'account area: WebAuthn relying-party id passkeys are bound to (a registrable domain of the app origin); unset = the host name of PUBLIC_BASE_URL',
  },
};

export class ApiConfigError extends Error {}

/** The networks of TRUSTED_PROXIES, normalised (`127.0.0.0/8`); the default when none are given. */
function trustedProxies(entries: readonly string[]): readonly string[] {
  if (entries.length === 0) return TRUSTED_PROXIES_DEFAULT;
  try {
    return new CidrList(entries).networks;
  } catch (e) {
    throw new ApiConfigError(`TRUSTED_PROXIES: ${(e as Error).message}`);
  }
}

/** CORS_ALLOW_ORIGINS: `*`, `none` or comma-separated origins (`scheme://host[:port]`, normalised as browsers send them). */
export function corsOrigins(v: string | undefined): readonly string[] {
  const t = (v ?? '*').trim();
  if (t === '*') return Object.freeze(['*']);
  if (t.toLowerCase() === 'none') return Object.freeze([]);
  const out: string[] = [];
  for (const entry of t
    .split(',')
    .map((o) => o.trim())
    .filter((o) => o !== '')) {
    let url: URL | null = null;
    try {
      url = new URL(entry);
    } catch {
      // reported below
    }
    if (
      !url ||
      !/^https?:$/.test(url.protocol) ||
      url.username !== '' ||
      url.password !== '' ||
      url.pathname !== '/' ||
      url.search !== '' ||
      url.hash !== ''
    ) {
      throw new ApiConfigError(
        `CORS_ALLOW_ORIGINS must be *, none or comma-separated origins such as https://app.example.ie (scheme, host and port only), got ${entry}`,
      );
    }
    out.push(url.origin);
  }
  if (out.length === 0)
    throw new ApiConfigError('CORS_ALLOW_ORIGINS must be *, none or comma-separated origins, got an empty list');
  return Object.freeze(out);
}

/** LOG_LEVEL, checked. */
function logLevel(v: string): LogLevel {
  if ((LOG_LEVELS as readonly string[]).includes(v)) return v as LogLevel;
  throw new ApiConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got ${v}`);
}

/** Most API_WORKERS (and the cap of `auto`). */
export const API_WORKERS_MAX = 64;

/** API_WORKERS: a whole number 1…64, or `auto` (one per core the process may use, at most 64). */
function apiWorkers(v: string | undefined): number {
  if (v === undefined) return API_DEFAULTS.apiWorkers.value;
  if (v.trim().toLowerCase() === 'auto') return Math.min(API_WORKERS_MAX, Math.max(1, availableParallelism()));
  const n = Number(v);
  if (/^\s*\d+\s*$/.test(v) && n >= 1 && n <= API_WORKERS_MAX) return n;
  throw new ApiConfigError(`API_WORKERS must be a whole number between 1 and ${API_WORKERS_MAX} or auto, got ${v}`);
}

/** Read the configuration from the environment; throws ApiConfigError naming the variable. */
export function loadApiConfig(
  env: Record<string, string | undefined> = process.env,
  overrides: Partial<ApiConfig> = {},
): ApiConfig {
  const r = new EnvReader(env, overrides);
  const store = storeSettings(r);
  const pageSizeMax = r.int('pageSizeMax', 1, 10_000);
  const config: ApiConfig = {
    dataDir: store.dataDir,
    ...listenSettings(r),
    databaseUrl: store.databaseUrl,
    tlsCertFile: store.tlsCertFile,
    tlsKeyFile: store.tlsKeyFile,
    ...httpSettings(r, pageSizeMax),
    ...engineSettings(r),
    ...webhookSettings(r),
    ...accessSettings(r),
    ...secretAndExportSettings(r, store.dataDir),
    ...observabilitySettings(r),
    ...accountAreaSettings(r),
  };
  checkMetricsToken(config);
  checkSmtpUrl(config);
  checkWebauthnRpId(config);
  checkSecretLengths(config);
  return Object.freeze(config);
}

/** Reads one key from the environment (its variable in API_DEFAULTS), an override winning, the default otherwise. */
class EnvReader {
  private readonly env: Record<string, string | undefined>;
  readonly overrides: Partial<ApiConfig>;
  constructor(env: Record<string, string | undefined>, overrides: Partial<ApiConfig>) {
    this.env = env;
    this.overrides = overrides;
  }

  /** The variable's text; unset or empty: undefined. */
  raw<K extends keyof ApiConfig>(k: K): string | undefined {
    const v = this.env[API_DEFAULTS[k].env];
    return v === undefined || v === '' ? undefined : v;
  }

  /** An integer between `min` and `max`. */
  int<K extends keyof ApiConfig>(k: K, min: number, max: number): number {
    if (this.overrides[k] !== undefined) return this.overrides[k] as number;
    const r = this.raw(k);
    const v = r === undefined ? (API_DEFAULTS[k].value as number) : Number(r);
    if (!Number.isInteger(v) || v < min || v > max) {
      throw new ApiConfigError(`${API_DEFAULTS[k].env} must be an integer between ${min} and ${max}, got ${r}`);
    }
    return v;
  }

  /** on/1/true/yes or off/0/false/no (the override is not consulted: callers do). */
  onOff<K extends keyof ApiConfig>(k: K): boolean {
    const r = (this.raw(k) ?? '').toLowerCase();
    if (r === '') return API_DEFAULTS[k].value as boolean;
    if (['on', '1', 'true', 'yes'].includes(r)) return true;
    if (['off', '0', 'false', 'no'].includes(r)) return false;
    throw new ApiConfigError(`${API_DEFAULTS[k].env} must be on or off, got ${this.raw(k)}`);
  }

  str<K extends keyof ApiConfig>(k: K): string {
    return (this.overrides[k] as string | undefined) ?? this.raw(k) ?? (API_DEFAULTS[k].value as string);
  }

  /** The variable's comma-separated entries, trimmed, empty ones left out (overrides not consulted). */
  csv<K extends keyof ApiConfig>(k: K): string[] {
    return (this.raw(k) ?? '')
      .split(',')
      .map((h) => h.trim())
      .filter((h) => h !== '');
  }

  /** A frozen comma-separated list (or a frozen copy of the override's list). */
  list(k: 'cursorSecretsPrevious' | 'gisTokenSecretsPrevious' | 'webhookAllowHosts'): readonly string[] {
    const o = this.overrides[k];
    return Object.freeze(o ? [...o] : this.csv(k));
  }
}

/** DATA_DIR, DATABASE_URL (default: a SQLite file in DATA_DIR) and the TLS files, checked. */
function storeSettings(r: EnvReader) {
  const dataDir = resolve(r.str('dataDir'));
  const databaseUrl = r.str('databaseUrl') || `file:${resolve(dataDir, 'state.sqlite')}`;
  if (!/^(file:|postgres(ql)?:\/\/)/.test(databaseUrl)) {
    throw new ApiConfigError(`DATABASE_URL must start with file: or postgres://, got ${databaseUrl}`);
  }
  const tlsCertFile = r.overrides.tlsCertFile ?? r.raw('tlsCertFile') ?? null;
  const tlsKeyFile = r.overrides.tlsKeyFile ?? r.raw('tlsKeyFile') ?? null;
  if ((tlsCertFile === null) !== (tlsKeyFile === null)) {
    throw new ApiConfigError('TLS_CERT_FILE and TLS_KEY_FILE must be set together');
  }
  return { dataDir, databaseUrl, tlsCertFile, tlsKeyFile };
}

/** Where and in how many processes the server listens. */
function listenSettings(r: EnvReader) {
  return {
    port: r.int('port', 0, 65_535),
    host: r.str('host'),
    apiWorkers: r.overrides.apiWorkers ?? apiWorkers(r.raw('apiWorkers')),
  };
}

/** Proxies, links, CORS, compression and paging. */
function httpSettings(r: EnvReader, pageSizeMax: number) {
  return {
    trustProxy: r.overrides.trustProxy ?? ['1', 'true', 'yes'].includes((r.raw('trustProxy') ?? '').toLowerCase()),
    trustedProxies: trustedProxies(r.overrides.trustedProxies ?? r.csv('trustedProxies')),
    publicBaseUrl: r.str('publicBaseUrl').replace(/\/+$/, ''),
    compressMinBytes: compressMinBytes(r),
    corsAllowOrigins: r.overrides.corsAllowOrigins
      ? Object.freeze([...r.overrides.corsAllowOrigins])
      : corsOrigins(r.raw('corsAllowOrigins')),
    pageSizeDefault: r.int('pageSizeDefault', 1, pageSizeMax),
    pageSizeMax,
    pageMax: r.int('pageMax', 1, 1_000_000),
  };
}

/** COMPRESS_MIN_BYTES: bytes, or `off` (null). */
function compressMinBytes(r: EnvReader): number | null {
  if (r.overrides.compressMinBytes !== undefined) return r.overrides.compressMinBytes;
  if ((r.raw('compressMinBytes') ?? '').trim().toLowerCase() === 'off') return null;
  return r.int('compressMinBytes', 0, 1_073_741_824);
}

/** Release polling, DuckDB and the key cache. */
function engineSettings(r: EnvReader) {
  return {
    releasePollMs: r.int('releasePollMs', 50, 3_600_000),
    duckdbConnections: r.int('duckdbConnections', 1, 64),
    duckdbThreads: r.int('duckdbThreads', 1, 64),
    duckdbMemoryLimit: r.str('duckdbMemoryLimit'),
    keyCacheMs: r.int('keyCacheMs', 0, 300_000),
  };
}

function webhookSettings(r: EnvReader) {
  return {
    webhookIntervalMs: r.int('webhookIntervalMs', 0, 7 * 86_400_000),
    webhookPollMs: r.int('webhookPollMs', 100, 3_600_000),
    webhookBatchMax: r.int('webhookBatchMax', 1, 1_000),
    webhookTimeoutMs: r.int('webhookTimeoutMs', 100, 120_000),
    webhookMaxAttempts: r.int('webhookMaxAttempts', 1, 20),
    webhookConcurrency: r.int('webhookConcurrency', 1, 256),
    webhookAllowHosts: r.list('webhookAllowHosts'),
    webhookRotationOverlapMs: r.int('webhookRotationOverlapMs', 0, 30 * 86_400_000),
  };
}

/** Rate limits, budgets, failed-key throttling and usage detail. */
function accessSettings(r: EnvReader) {
  return {
    accessLimits: r.overrides.accessLimits ?? r.onOff('accessLimits'),
    authFailLimit: r.int('authFailLimit', 1, 1_000_000),
    authFailWindowS: r.int('authFailWindowS', 1, 86_400),
    usageDetailDays: r.int('usageDetailDays', 1, 3_650),
  };
}

/** The GIS and cursor secrets, export temp space and the state store's lock wait. */
function secretAndExportSettings(r: EnvReader, dataDir: string) {
  return {
    gisTokenSecret: r.str('gisTokenSecret'),
    exportTempDir: resolve(r.str('exportTempDir') || resolve(dataDir, 'export-tmp')),
    exportTempMaxMb: r.int('exportTempMaxMb', 1, 1_048_576),
    exportTempWaitMs: r.int('exportTempWaitMs', 0, 600_000),
    gisTokenSecretsPrevious: r.list('gisTokenSecretsPrevious'),
    cursorSecret: r.str('cursorSecret') || randomBytes(32).toString('hex'),
    cursorSecretsPrevious: r.list('cursorSecretsPrevious'),
    stateBusyTimeoutMs: r.int('stateBusyTimeoutMs', 0, 600_000),
  };
}

/** Metrics endpoint and listener, log level. */
function observabilitySettings(r: EnvReader) {
  return {
    metricsToken: r.str('metricsToken'),
    metricsPort: metricsPort(r),
    metricsHost: r.str('metricsHost'),
    logLevel: logLevel(r.str('logLevel')),
  };
}

/** METRICS_PORT: a port, or unset (null: no metrics listener). */
function metricsPort(r: EnvReader): number | null {
  if (r.overrides.metricsPort !== undefined) return r.overrides.metricsPort;
  if (r.raw('metricsPort') === undefined) return null;
  return r.int('metricsPort', 0, 65_535);
}

/** The account area (/app, docs/app.md): invitations, mail, sessions, sign-in throttling, passkeys. */
function accountAreaSettings(r: EnvReader) {
  return {
    inviteTtlHours: r.int('inviteTtlHours', 1, 24 * 30),
    smtpUrl: r.str('smtpUrl'),
    smtpFrom: r.str('smtpFrom'),
    appSessionIdleMinutes: r.int('appSessionIdleMinutes', 1, 24 * 60),
    appSessionMaxHours: r.int('appSessionMaxHours', 1, 24 * 30),
    appSigninFailLimit: r.int('appSigninFailLimit', 1, 10_000),
    appSigninFailWindowS: r.int('appSigninFailWindowS', 10, 86_400),
    webauthnRpId: r.str('webauthnRpId'),
  };
}

function checkMetricsToken(config: ApiConfig): void {
  if (config.metricsToken !== '' && config.metricsToken.length < 32) {
    throw new ApiConfigError('METRICS_TOKEN must be at least 32 characters');
  }
}

/** SMTP_URL must be smtp:// or smtps:// (the error hides any credentials in it). */
function checkSmtpUrl(config: ApiConfig): void {
  if (config.smtpUrl !== '' && !/^smtps?:\/\/[^/]/.test(config.smtpUrl))
    throw new ApiConfigError(
      `SMTP_URL must start with smtp:// or smtps://, got ${config.smtpUrl.replace(/\/\/[^@/]*@/, '//…@')}`,
    );
}

/** PUBLIC_BASE_URL must be absolute; WEBAUTHN_RP_ID, when set, its host name or a domain that host belongs to. */
function checkWebauthnRpId(config: ApiConfig): void {
  let publicHost: string;
  try {
    publicHost = new URL(config.publicBaseUrl).hostname;
  } catch {
    throw new ApiConfigError(`PUBLIC_BASE_URL must be an absolute URL, got ${config.publicBaseUrl}`);
  }
  const rpId = config.webauthnRpId.toLowerCase();
  if (rpId !== '' && publicHost !== rpId && !publicHost.endsWith('.' + rpId)) {
    throw new ApiConfigError(
      `WEBAUTHN_RP_ID must be the host name of PUBLIC_BASE_URL (${publicHost}) or a domain it belongs to, got ${config.webauthnRpId}`,
    );
  }
}

/** Every GIS and cursor secret, current and previous, is at least 32 characters. */
function checkSecretLengths(config: ApiConfig): void {
  if (config.gisTokenSecret !== '' && config.gisTokenSecret.length < 32) {
    throw new ApiConfigError('GIS_TOKEN_SECRET must be at least 32 characters');
  }
  for (const [name, secret] of [
    ['CURSOR_SECRET', config.cursorSecret],
    ...config.cursorSecretsPrevious.map((p) => ['CURSOR_SECRETS_PREVIOUS', p] as const),
    ...config.gisTokenSecretsPrevious.map((p) => ['GIS_TOKEN_SECRETS_PREVIOUS', p] as const),
  ] as const) {
    if (secret.length < 32) throw new ApiConfigError(`${name} must hold secrets of at least 32 characters`);
  }
}
