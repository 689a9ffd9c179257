/**
 * Which release the API answers from. The pipeline publishes by switching the `current`
 * symlink; the manager notices (polling every `releasePollMs`), loads the new release's tables
 * into DuckDB under a schema of their own, and only then makes it current. Each request pins
 * the release it started on (`acquire` / `release`), so a switch never fails an in-flight
 * request; an old release's tables are dropped once no request holds it.
 *
 * Tables are exposed to the query builders as SQL fragments (`release.tables.leads`), so the
 * builders do not care whether a table is held in memory or read from Parquet.
 */
import { existsSync, readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { sqlIdent, sqlString, type ApiDb } from './db.ts';

/**
 * Tables loaded into DuckDB memory (small or hot); the rest are read from Parquet. Each release
 * gets its own in-memory catalog attached with `COMPRESS` and checkpointed after loading, so the
 * tables are held compressed (leads 184 → 31 MB, search_postings 113 → 13 MB); `DETACH` frees
 * them when the release is dropped. Tables keep their Parquet order (leads newest first, which
 * the newest-first top-N prunes by).
 */
const IN_MEMORY = ['leads', 'infrastructure', 'lead_neighbours', 'suppliers', 'companies', 'search_terms', 'search_postings'] as const;
const FROM_PARQUET = ['filings', 'sales', 'changes'] as const;
export type TableName = (typeof IN_MEMORY)[number] | (typeof FROM_PARQUET)[number];

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
  readonly tables: Readonly<Record<TableName, string>>;
  /** Absolute path of a file inside the release (Parquet, GeoJSON). */
  path(rel: string): string;
}

export interface ReleaseManager {
  /** The release new requests are answered from. Throws if none is loaded. */
  current(): Release;
  /** Pin the current release for one request; call the returned function when done. */
  acquire(): { release: Release; done: () => void };
  /** Look for a newer release now (also runs on a timer). Resolves when it is loaded. */
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

/** Load the current release and keep following `current`. */
export async function openReleaseManager(
  db: ApiDb,
  dataDir: string,
  opts: { pollMs: number; log?: (line: string) => void },
): Promise<ReleaseManager> {
  const log = opts.log ?? (() => {});
  let current: Release | null = null;
  const holds = new Map<string, number>();
  const retired = new Set<string>();
  let checking: Promise<boolean> | null = null;

  const load = async (id: string, dir: string): Promise<Release> => {
    const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as ReleaseManifest;
    const schema = sqlIdent(schemaName(id));
    await db.run(`DETACH DATABASE IF EXISTS ${schema}`);
    await db.run(`ATTACH ':memory:' AS ${schema} (COMPRESS)`);
    const tables = {} as Record<TableName, string>;
    for (const t of IN_MEMORY) {
      const file = join(dir, `${t}.parquet`);
      if (!existsSync(file)) continue;
      await db.run(`CREATE OR REPLACE TABLE ${schema}.${sqlIdent(t)} AS SELECT * FROM read_parquet(${sqlString(file)})`);
      tables[t] = `${schema}.${sqlIdent(t)}`;
    }
    // Compression happens at checkpoint; until then the tables are held uncompressed.
    await db.run(`CHECKPOINT ${schema}`);
    for (const t of [...FROM_PARQUET, ...IN_MEMORY]) tables[t] ??= `read_parquet(${sqlString(join(dir, `${t}.parquet`))})`;
    return { id, dir, manifest, tables, path: (rel: string) => join(dir, rel) };
  };

  const dropIfUnused = async (id: string): Promise<void> => {
    if (current?.id === id || (holds.get(id) ?? 0) > 0 || !retired.has(id)) return;
    retired.delete(id);
    await db.run(`DETACH DATABASE IF EXISTS ${sqlIdent(schemaName(id))}`).catch((e) => log(`dropping release ${id}: ${e}`));
    log(`release ${id} unloaded`);
  };

  const check = (): Promise<boolean> => {
    if (checking) return checking;
    checking = (async () => {
      const link = readCurrentLink(dataDir);
      if (!link || link.id === current?.id) return false;
      const next = await load(link.id, link.dir);
      const prev = current;
      current = next;
      log(`serving release ${next.id}`);
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

  await check();
  const timer = setInterval(() => {
    check().catch((e) => log(`release check failed: ${(e as Error).message}`));
  }, opts.pollMs);
  timer.unref();

  const currentRelease = (): Release => {
    if (!current) throw new NoReleaseError(`no release under ${dataDir}/current: run 'make refresh' first`);
    return current;
  };
  return {
    current: currentRelease,
    acquire() {
      const release = currentRelease();
      holds.set(release.id, (holds.get(release.id) ?? 0) + 1);
      let released = false;
      return {
        release,
        done: () => {
          if (released) return;
          released = true;
          holds.set(release.id, (holds.get(release.id) ?? 1) - 1);
          void dropIfUnused(release.id);
        },
      };
    },
    check,
    async close() {
      clearInterval(timer);
      await checking?.catch(() => false);
    },
  };
}

function schemaName(id: string): string {
  return `r_${id.replace(/[^A-Za-z0-9_]/g, '_')}`;
}
