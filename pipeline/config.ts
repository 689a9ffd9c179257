/**
 * Typed, read-only pipeline configuration. One `loadPipelineConfig(env, overrides)` reads the
 * environment, applies CLI overrides and fails fast on bad values; the result is passed down
 * explicitly, never read from a global.
 */
import { resolve } from 'node:path';

export interface PipelineConfig {
  /** Root of everything the pipeline writes: raw/, releases/, current (env DATA_DIR). */
  readonly dataDir: string;
  /** Folder of raw source files, one sub-folder per source (default <dataDir>/raw; --raw DIR). */
  readonly rawDir: string;
  /** Release folders are kept this many weeks after they stop being current. */
  readonly releaseRetentionWeeks: number;
  /** A source whose published rows shrink by more than this share against the last release blocks the publish. */
  readonly gateMaxShrinkRatio: number;
  /** A source that rejects more than this share of its lines blocks the publish. */
  readonly gateMaxRejectRatio: number;
  /** Publish even when a quality gate fails (recorded in the manifest). */
  readonly force: boolean;
  /** DuckDB memory limit for the build, e.g. "1GB". */
  readonly duckdbMemoryLimit: string;
  /** Rows per Parquet row group for the leads table (small enough to prune, large enough to compress). */
  readonly leadsRowGroupRows: number;
  /** Print progress lines (stage, rows, rows/s) to stderr. */
  readonly progress: boolean;
}

/** Defaults with the help line per key, shown by `leads help config` and documented in docs/operations.md. */
export const PIPELINE_DEFAULTS: {
  [K in keyof PipelineConfig]: { value: PipelineConfig[K]; env?: string; help: string };
} = {
  dataDir: { value: 'data', env: 'DATA_DIR', help: 'root of raw/, releases/ and current' },
  rawDir: { value: '', env: 'RAW_DIR', help: 'raw source folder (default <dataDir>/raw)' },
  releaseRetentionWeeks: { value: 8, env: 'RELEASE_RETENTION_WEEKS', help: 'weeks an old release is kept' },
  gateMaxShrinkRatio: {
    value: 0.2,
    env: 'GATE_MAX_SHRINK_RATIO',
    help: 'max share a source may shrink vs the last release',
  },
  gateMaxRejectRatio: {
    value: 0.01,
    env: 'GATE_MAX_REJECT_RATIO',
    help: "max share of a source's lines that may be rejected",
  },
  force: { value: false, help: 'publish despite failed gates (--force)' },
  duckdbMemoryLimit: { value: '512MB', env: 'DUCKDB_MEMORY_LIMIT', help: 'DuckDB memory limit during a build' },
  leadsRowGroupRows: { value: 20_000, env: 'LEADS_ROW_GROUP_ROWS', help: 'rows per Parquet row group of leads' },
  progress: { value: true, help: 'progress lines on stderr (--quiet turns off)' },
};

export class ConfigError extends Error {}

/** Build the config from the environment plus explicit overrides (CLI flags win). */
export function loadPipelineConfig(
  env: Record<string, string | undefined> = process.env,
  overrides: Partial<PipelineConfig> = {},
): PipelineConfig {
  const num = (key: keyof PipelineConfig, min: number, max: number): number => {
    const spec = PIPELINE_DEFAULTS[key];
    const raw = spec.env ? env[spec.env] : undefined;
    const v = overrides[key] ?? (raw !== undefined && raw !== '' ? Number(raw) : spec.value);
    if (typeof v !== 'number' || !Number.isFinite(v) || v < min || v > max) {
      throw new ConfigError(`${spec.env ?? key} must be a number between ${min} and ${max}, got ${String(raw ?? v)}`);
    }
    return v;
  };
  const str = (key: 'dataDir' | 'rawDir' | 'duckdbMemoryLimit'): string => {
    const spec = PIPELINE_DEFAULTS[key];
    return overrides[key] ?? (spec.env ? env[spec.env] : undefined) ?? spec.value;
  };
  const dataDir = resolve(str('dataDir'));
  const rawDir = str('rawDir') ? resolve(str('rawDir')) : resolve(dataDir, 'raw');
  const memory = str('duckdbMemoryLimit');
  if (!/^\d+(\.\d+)?\s*(KB|MB|GB|TB|KiB|MiB|GiB)$/i.test(memory)) {
    throw new ConfigError(`DUCKDB_MEMORY_LIMIT must look like 1GB or 512MB, got ${memory}`);
  }
  return Object.freeze({
    dataDir,
    rawDir,
    releaseRetentionWeeks: num('releaseRetentionWeeks', 0, 520),
    gateMaxShrinkRatio: num('gateMaxShrinkRatio', 0, 1),
    gateMaxRejectRatio: num('gateMaxRejectRatio', 0, 1),
    force: overrides.force ?? false,
    duckdbMemoryLimit: memory,
    leadsRowGroupRows: num('leadsRowGroupRows', 1_000, 1_000_000),
    progress: overrides.progress ?? true,
  });
}
