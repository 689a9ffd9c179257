/**
 * Typed, read-only API configuration. `loadApiConfig(env)` reads the environment once and fails
 * fast on bad values; the result is passed to `createApp` and never read from a global.
 */
import { resolve } from 'node:path';

export interface ApiConfig {
  /** Root holding `current` → the release to serve (env DATA_DIR). */
  readonly dataDir: string;
  readonly port: number;
  readonly host: string;
  /** State store: `file:/path/state.sqlite` (default `<dataDir>/state.sqlite`) or `postgres://…`. */
  readonly databaseUrl: string;
  /** HTTPS when both are set (PEM files); HSTS is then sent on every response. */
  readonly tlsCertFile: string | null;
  readonly tlsKeyFile: string | null;
  /** Trust X-Forwarded-For / X-Forwarded-Proto from a reverse proxy. */
  readonly trustProxy: boolean;
  /** Public base of the API including /v1, used in links (`next`, record pages). */
  readonly publicBaseUrl: string;
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
  /** How long an authenticated key is cached in memory; a revoked key stops working within this time. */
  readonly keyCacheMs: number;
  /** Secret sealing the GIS query tokens (`access_token`); empty = a random one per process (tokens die with it). */
  readonly gisTokenSecret: string;
}

/** Defaults with the environment variable and a help line per key (documented in docs/api.md). */
export const API_DEFAULTS: { [K in keyof ApiConfig]: { value: ApiConfig[K]; env: string; help: string } } = {
  dataDir: { value: 'data', env: 'DATA_DIR', help: 'folder holding current → the release to serve' },
  port: { value: 8080, env: 'PORT', help: 'TCP port' },
  host: { value: '0.0.0.0', env: 'HOST', help: 'listen address' },
  databaseUrl: { value: '', env: 'DATABASE_URL', help: 'state store: file:/path/state.sqlite (default <DATA_DIR>/state.sqlite) or postgres://…' },
  tlsCertFile: { value: null, env: 'TLS_CERT_FILE', help: 'PEM certificate; with TLS_KEY_FILE serves HTTPS with HSTS' },
  tlsKeyFile: { value: null, env: 'TLS_KEY_FILE', help: 'PEM private key' },
  trustProxy: { value: false, env: 'TRUST_PROXY', help: 'trust X-Forwarded-* headers from a reverse proxy (1/0)' },
  publicBaseUrl: { value: 'http://localhost:8080/v1', env: 'PUBLIC_BASE_URL', help: 'public base URL including /v1' },
  pageSizeDefault: { value: 25, env: 'PAGE_SIZE_DEFAULT', help: 'default page_size' },
  pageSizeMax: { value: 100, env: 'PAGE_SIZE_MAX', help: 'maximum page_size' },
  pageMax: { value: 100, env: 'PAGE_MAX', help: 'deepest page served by page numbers (use cursor beyond)' },
  releasePollMs: { value: 1000, env: 'RELEASE_POLL_MS', help: 'how often to look for a new release' },
  duckdbConnections: { value: 4, env: 'DUCKDB_CONNECTIONS', help: 'DuckDB connection pool size' },
  duckdbThreads: { value: 1, env: 'DUCKDB_THREADS', help: 'DuckDB worker threads' },
  duckdbMemoryLimit: { value: '256MB', env: 'API_DUCKDB_MEMORY_LIMIT', help: 'DuckDB memory limit of the server' },
  keyCacheMs: { value: 5000, env: 'KEY_CACHE_MS', help: 'how long a looked-up API key is cached; revocation takes effect within this time (0 = no cache)' },
  gisTokenSecret: { value: '', env: 'GIS_TOKEN_SECRET', help: 'secret (≥ 32 characters) sealing GIS access_token values; unset = random per process, so tokens stop working at restart and differ between replicas' },
};

export class ApiConfigError extends Error {}

/** Read the configuration from the environment; throws ApiConfigError naming the variable. */
export function loadApiConfig(env: Record<string, string | undefined> = process.env, overrides: Partial<ApiConfig> = {}): ApiConfig {
  const raw = <K extends keyof ApiConfig>(k: K): string | undefined => {
    const v = env[API_DEFAULTS[k].env];
    return v === undefined || v === '' ? undefined : v;
  };
  const int = <K extends keyof ApiConfig>(k: K, min: number, max: number): number => {
    if (overrides[k] !== undefined) return overrides[k] as number;
    const r = raw(k);
    const v = r === undefined ? (API_DEFAULTS[k].value as number) : Number(r);
    if (!Number.isInteger(v) || v < min || v > max) {
      throw new ApiConfigError(`${API_DEFAULTS[k].env} must be an integer between ${min} and ${max}, got ${r}`);
    }
    return v;
  };
  const str = <K extends keyof ApiConfig>(k: K): string => (overrides[k] as string | undefined) ?? raw(k) ?? (API_DEFAULTS[k].value as string);
  const dataDir = resolve(str('dataDir'));
  const databaseUrl = str('databaseUrl') || `file:${resolve(dataDir, 'state.sqlite')}`;
  if (!/^(file:|postgres(ql)?:\/\/)/.test(databaseUrl)) {
    throw new ApiConfigError(`DATABASE_URL must start with file: or postgres://, got ${databaseUrl}`);
  }
  const tlsCertFile = overrides.tlsCertFile ?? raw('tlsCertFile') ?? null;
  const tlsKeyFile = overrides.tlsKeyFile ?? raw('tlsKeyFile') ?? null;
  if ((tlsCertFile === null) !== (tlsKeyFile === null)) {
    throw new ApiConfigError('TLS_CERT_FILE and TLS_KEY_FILE must be set together');
  }
  const pageSizeMax = int('pageSizeMax', 1, 10_000);
  const config: ApiConfig = {
    dataDir,
    port: int('port', 0, 65_535),
    host: str('host'),
    databaseUrl,
    tlsCertFile,
    tlsKeyFile,
    trustProxy: overrides.trustProxy ?? ['1', 'true', 'yes'].includes((raw('trustProxy') ?? '').toLowerCase()),
    publicBaseUrl: str('publicBaseUrl').replace(/\/+$/, ''),
    pageSizeDefault: int('pageSizeDefault', 1, pageSizeMax),
    pageSizeMax,
    pageMax: int('pageMax', 1, 1_000_000),
    releasePollMs: int('releasePollMs', 50, 3_600_000),
    duckdbConnections: int('duckdbConnections', 1, 64),
    duckdbThreads: int('duckdbThreads', 1, 64),
    duckdbMemoryLimit: str('duckdbMemoryLimit'),
    keyCacheMs: int('keyCacheMs', 0, 300_000),
    gisTokenSecret: str('gisTokenSecret'),
  };
  if (config.gisTokenSecret !== '' && config.gisTokenSecret.length < 32) {
    throw new ApiConfigError('GIS_TOKEN_SECRET must be at least 32 characters');
  }
  return Object.freeze(config);
}
