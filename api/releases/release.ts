/**
 * Which release the API answers from. The pipeline publishes by switching the `current`
 * symlink; the manager notices (polling every `releasePollMs`), has the new release's indexes
 * built in a child process (api/engine/release-indexes.ts), loads its small tables into DuckDB
 * under a schema of their own, and only then makes it current. Each request pins
 * the release it started on (`acquire` / `release`), so a switch never fails an in-flight
 * request; an old release's tables are dropped once no request holds it.
 *
 * Before switching, every file of the release is checked against the checksums in its manifest
 * (in the index-building child, api/releases/verify-release.ts). A release that fails to load —
 * a file that does not match, or indexes or tables that cannot be built — is refused: the current
 * release keeps serving, the reason is logged and reported by `status()` (`GET /v1/meta`
 * `release_status`), and the same release is tried again only after a backoff (30 s, doubling
 * up to an hour), never on every poll. A newly published release is tried at once.
 *
 * Tables are exposed to the query builders as SQL fragments (`release.tables.leads`), so the
 * builders do not care whether a table is held in memory or read from Parquet.
 */
import { existsSync, readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { sqlIdent, sqlString, type ApiDb } from '../duckdb/db.ts';
import { loadLeadsEngine, type LeadsEngine } from '../engine/leads-engine.ts';
import { ReleaseRefusedError } from './verify-release.ts';
import { FROM_PARQUET, IN_MEMORY, type ReleaseTables, type TableName } from './tables.ts';

export interface ReleaseManifest {
  release_id: string;
  built_at: string;
  as_of: string;
  schema_version: string;
  counts: {
    tables: Record<string, number>;
    records_total: number;
    authorities: Record<string, { leads: number; latest_received: string | null }>;
  };
  [k: string]: unknown;
}

export interface Release {
  readonly id: string;
  readonly dir: string;
  readonly manifest: ReleaseManifest;
  /** SQL table expressions, e.g. `"r_20261122T053431Z"."leads"` or `read_parquet('…')`. */
  readonly tables: ReleaseTables;
  /** Absolute path of a file inside the release (Parquet, GeoJSON). */
  path(rel: string): string;
  /**
   * The release's leads engine (api/engine/leads-engine.ts): list pages (`q`, sorts, cursors,
   * totals), lead details, counts and place names, masked for the caller inside.
   */
  readonly leads: LeadsEngine;
}

/** A published release the server would not switch to, and when it tries again. */
export interface RefusedRelease {
  /** Id of the refused release (the one `current` points at). */
  release: string;
  /** Why: which files do not match the manifest, or what failed to load. */
  reason: string;
  /** When the last attempt failed (ISO 8601). */
  failed_at: string;
  /** Failed attempts at this release so far. */
  attempts: number;
  /** The earliest time it is tried again (ISO 8601). */
  next_attempt_at: string;
}

/** What the manager serves and, when the published release was refused, why. */
export interface ReleaseStatus {
  serving: string | null;
  refused: RefusedRelease | null;
}

/** First retry of a refused release after this long, doubling per failed attempt up to `RETRY_MAX_MS`. */
export const RETRY_FIRST_MS = 30_000;
export const RETRY_MAX_MS = 3_600_000;

export interface ReleaseManager {
  /** The release new requests are answered from. Throws if none is loaded. */
  current(): Release;
  /** The release served and the refused one, if any (for `GET /v1/meta`). */
  status(): ReleaseStatus;
  /** Pin the current release for one request; call the returned function when done. */
  acquire(): { release: Release; done: () => void };
  /**
   * Look for a newer release now (also runs on a timer). Resolves true when it is loaded, false
   * when there is nothing new or a refused release is still waiting for its retry; rejects when
   * loading fails (the release is then refused: see `status()`).
   */
  check(): Promise<boolean>;
  close(): Promise<void>;
}

export class NoReleaseError extends Error {}

/** Resolve `<dataDir>/current` to a release id and folder, or null. */
export function readCurrentLink(dataDir: string): { id: string; dir: string } | null {
  try {
    const target = readlinkSync(join(dataDir, 'current'));
    const id = target.split('/').pop()!;
    const dir = join(dataDir, 'releases', id);
    return existsSync(join(dir, 'manifest.json')) ? { id, dir } : null;
  } catch {
    return null;
  }
}

/** How a release's leads engine is built: `loadLeadsEngine` (tests may reuse one engine for identical files). */
export type LoadEngine = typeof loadLeadsEngine;

/**
 * Load release `id` from its folder `dir`: its indexes first, in a child process (api/engine/release-indexes.ts:
 * a failed build leaves nothing behind, and this process keeps serving the current release
 * meanwhile), then its small tables into an in-memory DuckDB schema of its own.
 */
async function loadRelease(
  db: ApiDb,
  { id, dir }: { id: string; dir: string },
  loadEngine: LoadEngine,
  log: (line: string) => void,
): Promise<{ release: Release; indexBuildMs: number }> {
  const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as ReleaseManifest;
  const started = Date.now();
  const leads = await loadEngine(id, dir, { log: (line) => log(`release ${id}: ${line}`) });
  const indexBuildMs = Date.now() - started;
  log(`release ${id}: indexes of ${leads.size} leads loaded in ${indexBuildMs} ms`);
  const tables = await attachTables(db, id, dir);
  return { release: { id, dir, manifest, tables, path: (rel: string) => join(dir, rel), leads }, indexBuildMs };
}

/** The release's IN_MEMORY tables copied into its schema (compressed), and FROM_PARQUET ones read in place. */
async function attachTables(db: ApiDb, id: string, dir: string): Promise<Record<TableName, string>> {
  const schema = sqlIdent(schemaName(id));
  await db.run(`DETACH DATABASE IF EXISTS ${schema}`);
  await db.run(`ATTACH ':memory:' AS ${schema} (COMPRESS)`);
  const tables = {} as Record<TableName, string>;
  try {
    for (const t of IN_MEMORY) {
      const file = join(dir, `${t}.parquet`);
      if (!existsSync(file)) continue;
      await db.run(
        `CREATE OR REPLACE TABLE ${schema}.${sqlIdent(t)} AS SELECT * FROM read_parquet(${sqlString(file)})`,
      );
      tables[t] = `${schema}.${sqlIdent(t)}`;
    }
    // Compression happens at checkpoint; until then the tables are held uncompressed.
    await db.run(`CHECKPOINT ${schema}`);
  } catch (e) {
    await db.run(`DETACH DATABASE IF EXISTS ${schema}`).catch(() => {});
    throw e;
  }
  for (const t of [...FROM_PARQUET, ...IN_MEMORY])
    tables[t] ??= `read_parquet(${sqlString(join(dir, `${t}.parquet`))})`;
  return tables;
}

/**
 * The refusal of release `id` that failed to load with `e` at `at`: its attempts counted on from
 * `previous` when that was the same release, and its next attempt after a doubling backoff.
 */
function refusalOf(
  e: unknown,
  link: { id: string; dir: string },
  previous: (RefusedRelease & { retryAt: number }) | null,
  at: number,
  o: { dataDir: string; retryFirstMs: number; retryMaxMs: number },
): RefusedRelease & { retryAt: number } {
  const attempts = previous?.release === link.id ? previous.attempts + 1 : 1;
  const retryAt = at + Math.min(o.retryMaxMs, o.retryFirstMs * 2 ** (attempts - 1));
  return {
    release: link.id,
    reason: refusalReason(e, link.dir, o.dataDir),
    failed_at: new Date(at).toISOString(),
    attempts,
    next_attempt_at: new Date(retryAt).toISOString(),
    retryAt,
  };
}

/** Why no release is served: the refused one and its next attempt, or none published yet. */
function noRelease(refused: RefusedRelease | null, dataDir: string): NoReleaseError {
  return new NoReleaseError(
    refused
      ? `release ${refused.release} was refused (${refused.reason}); no other release is loaded — next attempt at ${refused.next_attempt_at}`
      : `no release under ${dataDir}/current: run 'make refresh' first`,
  );
}

/** How `openReleaseManager` follows `current`. */
export interface ReleaseManagerOptions {
  pollMs: number;
  log?: (line: string) => void;
  /** Clock of the retry backoff (ms since the epoch). */
  now?: () => number;
  retryFirstMs?: number;
  retryMaxMs?: number;
  /** Called when a release becomes the one served, with how long its indexes took to build and load (metrics). */
  onServing?: (r: { id: string; indexBuildMs: number }) => void;
  /** How a release's leads engine is built (default `loadLeadsEngine`). */
  loadEngine?: LoadEngine;
}

/** Load the current release and keep following `current`. */
export async function openReleaseManager(
  db: ApiDb,
  dataDir: string,
  opts: ReleaseManagerOptions,
): Promise<ReleaseManager> {
  const log = opts.log ?? (() => {});
  const now = opts.now ?? Date.now;
  const retryFirstMs = opts.retryFirstMs ?? RETRY_FIRST_MS;
  const retryMaxMs = opts.retryMaxMs ?? RETRY_MAX_MS;
  let current: Release | null = null;
  let refused: (RefusedRelease & { retryAt: number }) | null = null;
  const holds = new Map<string, number>();
  const retired = new Set<string>();
  let checking: Promise<boolean> | null = null;

  /** Let go of a pin taken by `acquire` (once: later calls do nothing). */
  function letGo(pin: { id: string; released: boolean }): void {
    if (pin.released) return;
    pin.released = true;
    holds.set(pin.id, (holds.get(pin.id) ?? 1) - 1);
    void dropIfUnused(pin.id);
  }

  const dropIfUnused = async (id: string): Promise<void> => {
    if (current?.id === id || (holds.get(id) ?? 0) > 0 || !retired.has(id)) return;
    retired.delete(id);
    await db
      .run(`DETACH DATABASE IF EXISTS ${sqlIdent(schemaName(id))}`)
      .catch((e) => log(`dropping release ${id}: ${e}`));
    log(`release ${id} unloaded`);
  };

  const check = (): Promise<boolean> => {
    if (checking) return checking;
    checking = (async () => {
      const link = readCurrentLink(dataDir);
      if (link && link.id === current?.id) refused = null; // `current` was switched back
      if (!link || link.id === current?.id) return false;
      if (refused?.release === link.id && now() < refused.retryAt) return false;
      let next: Release;
      let indexBuildMs: number;
      try {
        ({ release: next, indexBuildMs } = await loadRelease(db, link, opts.loadEngine ?? loadLeadsEngine, log));
      } catch (e) {
        refused = refusalOf(e, link, refused, now(), { dataDir, retryFirstMs, retryMaxMs });
        log(
          `release ${link.id} refused (attempt ${refused.attempts}; still serving ${current?.id ?? 'no release'}; next attempt at ${refused.next_attempt_at}): ${refused.reason}`,
        );
        throw e;
      }
      refused = null;
      const prev = current;
      current = next;
      log(`serving release ${next.id}`);
      opts.onServing?.({ id: next.id, indexBuildMs });
      if (prev) {
        retired.add(prev.id);
        await dropIfUnused(prev.id);
      }
      return true;
    })().finally(() => {
      checking = null;
    });
    return checking;
  };

  // a refused first release leaves the server up, answering 503 no_release (the reason is logged)
  await check().catch(() => {});
  const timer = setInterval(() => {
    check().catch(() => {}); // logged (and reported by status()) where it was refused
  }, opts.pollMs);
  timer.unref();

  const currentRelease = (): Release => {
    if (!current) throw noRelease(refused, dataDir);
    return current;
  };
  return {
    current: currentRelease,
    status() {
      if (!refused) return { serving: current?.id ?? null, refused: null };
      const { retryAt: _r, ...r } = refused;
      return { serving: current?.id ?? null, refused: r };
    },
    acquire() {
      const release = currentRelease();
      holds.set(release.id, (holds.get(release.id) ?? 0) + 1);
      // `done` is `letGo` bound to this pin: an arrow written here would be named by tsx
      // (Object.defineProperty, ~0.5 µs) on every request
      return { release, done: letGo.bind(null, { id: release.id, released: false }) };
    },
    check,
    async close() {
      clearInterval(timer);
      await checking?.catch(() => false);
    },
  };
}

/** The reason a release failed to load, without the server's folder names. */
function refusalReason(e: unknown, dir: string, dataDir: string): string {
  const text = e instanceof ReleaseRefusedError ? e.reason : e instanceof Error ? e.message : String(e);
  return text
    .split(dir)
    .join('<release>')
    .split(dataDir)
    .join('<data>')
    .replace(/\s*\n\s*/g, ' | ')
    .slice(0, 1000);
}

function schemaName(id: string): string {
  return `r_${id.replace(/[^A-Za-z0-9_]/g, '_')}`;
}
