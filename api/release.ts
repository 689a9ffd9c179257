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
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { sqlIdent, sqlString, type ApiDb } from './db.ts';
import { LEAD_COLUMNS, searchAvgdlQuery } from './query/leads-query.ts';
import { LeadIndex } from './index/lead-index.ts';
import { DetailIndex } from './index/detail-index.ts';

/**
 * Tables loaded into DuckDB memory (small and queried per request); the rest are read from
 * Parquet. Each release gets its own in-memory catalog attached with `COMPRESS` and checkpointed
 * after loading; `DETACH` frees it when the release is dropped. The leads, the search index and
 * the company-360 tables are not held in DuckDB: list pages and lead details are answered from
 * the release's in-memory indexes (`Release.index`, `Release.detail`, `Release.rows`), built from
 * the Parquet files at load.
 */
const IN_MEMORY = ['infrastructure'] as const;
const FROM_PARQUET = [
  'leads', 'lead_neighbours', 'suppliers', 'companies', 'search_terms', 'search_postings', 'filings', 'sales', 'changes',
  'price_index', 'yields', 'emerging_zones', 'material_costs',
] as const;
export type TableName = (typeof IN_MEMORY)[number] | (typeof FROM_PARQUET)[number];
/** Every table of a release. */
export const TABLE_NAMES: readonly TableName[] = [...IN_MEMORY, ...FROM_PARQUET];

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
  /** The release's leads as served by `GET /v1/leads` (see `RowStore`). */
  readonly rows: RowStore;
  /** Filters, sorts, counts and pages leads, `q` included (api/index/lead-index.ts). */
  readonly index: LeadIndex;
  /** The company-360 sections of a lead detail (api/index/detail-index.ts). */
  readonly detail: DetailIndex;
}

/**
 * The full lead rows of a release, held compressed in the Node process so a list page needs
 * only the ids from DuckDB (a wide 52-column fetch costs DuckDB ~10 ms a page; reading 26 rows
 * here ~1 ms). Rows are JSON arrays of `LEAD_COLUMNS` (as DuckDB's `json_array` writes them,
 * which round-trips to the same values as `ApiDb.all`), grouped in blocks of `ROW_BLOCK` rows in
 * table order (newest first) and each block deflated with a dictionary sampled from the rows:
 * 201,300 leads → ~31 MB, built in ~6 s. Per-row deflate would be 20–60% larger and cost ~100 µs
 * a row to build (zlib's per-call setup), i.e. ~20 s.
 */
export interface RowStore {
  readonly size: number;
  /** Compressed bytes held (blocks + dictionary). */
  readonly bytes: number;
  /** The lead with this id (a fresh object, columns in `LEAD_COLUMNS` order), or null. */
  get(id: number): Record<string, unknown> | null;
  /** Several leads in the order given, decoding each block once. */
  getMany(ids: readonly number[]): (Record<string, unknown> | null)[];
}

/** Rows per compressed block: 8 balances build time (fewer zlib calls) against read cost. */
const ROW_BLOCK = 8;
const DICTIONARY_BYTES = 32 * 1024;

/** Read every lead of `leadsTable` as JSON, in file order, and build its `RowStore`. */
export async function buildRowStore(db: ApiDb, leadsTable: string): Promise<RowStore> {
  const cols = LEAD_COLUMNS.map((c) => `l.${sqlIdent(c)}`).join(', ');
  const ids: number[] = [];
  const blocks = new BlockWriter();
  let dictionary: Buffer | null = null;
  let pending: string[] = [];
  const flush = (): void => {
    if (pending.length === 0) return;
    blocks.push(deflateRawSync(pending.join('\n'), { dictionary: dictionary!, level: 6 }));
    pending = [];
  };
  await db.columns(
    // File order (the pipeline writes leads newest first); an ORDER BY here would make DuckDB
    // hold every wide row at once (~300 MB).
    `SELECT CAST(l.id AS INTEGER), json_array(${cols})::VARCHAR FROM ${leadsTable} AS l`,
    [],
    (c, n) => {
      const json = c[1] as string[];
      dictionary ??= sampleDictionary(json.slice(0, n));
      for (let i = 0; i < n; i++) {
        ids.push(c[0]![i] as number);
        pending.push(json[i]!); // JSON escapes newlines inside strings: '\n' separates rows safely
        if (pending.length === ROW_BLOCK) flush();
      }
    },
  );
  flush();
  return rowStoreOf(ids, blocks.finish(), dictionary ?? Buffer.alloc(0));
}

/**
 * Compressed blocks copied into one growing buffer: a zlib result is a view of a 16 KB output
 * chunk, so keeping the results themselves would hold ~16 KB per block (~400 MB at 201,300 leads).
 */
class BlockWriter {
  private data = Buffer.allocUnsafe(1 << 20);
  private offsets: number[] = [0];
  push(block: Buffer): void {
    const end = this.offsets.at(-1)!;
    if (end + block.length > this.data.length) {
      const bigger = Buffer.allocUnsafe(Math.max(this.data.length * 2, end + block.length));
      this.data.copy(bigger, 0, 0, end);
      this.data = bigger;
    }
    block.copy(this.data, end);
    this.offsets.push(end + block.length);
  }
  finish(): { data: Buffer; offsets: Uint32Array } {
    const end = this.offsets.at(-1)!;
    // Copy only when more than an eighth would be wasted (a copy doubles the peak for a moment).
    const data = this.data.length - end > this.data.length / 8 ? Buffer.from(this.data.subarray(0, end)) : this.data.subarray(0, end);
    return { data, offsets: Uint32Array.from(this.offsets) };
  }
}

/** Up to 32 KB of sample rows, spread over `rows` (zlib prefers the most useful bytes last). */
function sampleDictionary(rows: readonly string[]): Buffer {
  const parts: string[] = [];
  let len = 0;
  const step = Math.max(1, Math.floor(rows.length / 512));
  for (let i = 0; i < rows.length && len < DICTIONARY_BYTES; i += step) {
    parts.push(rows[i]!);
    len += Buffer.byteLength(rows[i]!);
  }
  const all = Buffer.from(parts.join('\n'));
  return Buffer.from(all.subarray(Math.max(0, all.length - DICTIONARY_BYTES)));
}

function rowStoreOf(ids: readonly number[], { data, offsets }: { data: Buffer; offsets: Uint32Array }, dictionary: Buffer): RowStore {
  // A slot (row number) per id: a typed array indexed by id when ids are dense, else a Map.
  let maxId = -1;
  let dense = true;
  for (const id of ids) {
    if (!Number.isSafeInteger(id) || id < 0) dense = false;
    else if (id > maxId) maxId = id;
  }
  dense &&= maxId < 4 * ids.length + 1024;
  const table = dense ? new Int32Array(maxId + 1).fill(-1) : null;
  const map = dense ? null : new Map<number, number>();
  ids.forEach((id, i) => (table ? (table[id] = i) : map!.set(id, i)));
  const slotOf = (id: number): number => (table ? (Number.isInteger(id) && id >= 0 && id <= maxId ? table[id]! : -1) : (map!.get(id) ?? -1));
  const block = (b: number): Buffer => inflateRawSync(data.subarray(offsets[b]!, offsets[b + 1]!), { dictionary });
  /** Line `i` of an inflated block, decoded alone (the block's other rows stay bytes). */
  const line = (bytes: Buffer, i: number): string => {
    let start = 0;
    for (let k = 0; k < i; k++) start = bytes.indexOf(10, start) + 1;
    const end = bytes.indexOf(10, start);
    return bytes.toString('utf8', start, end < 0 ? bytes.length : end);
  };
  const toRecord = (json: string): Record<string, unknown> => {
    const values = JSON.parse(json) as unknown[];
    const out: Record<string, unknown> = {};
    for (let c = 0; c < LEAD_COLUMNS.length; c++) out[LEAD_COLUMNS[c]!] = values[c];
    return out;
  };
  const getMany = (want: readonly number[]): (Record<string, unknown> | null)[] => {
    const decoded = new Map<number, Buffer>();
    return want.map((id) => {
      const slot = slotOf(id);
      if (slot < 0) return null;
      const b = Math.floor(slot / ROW_BLOCK);
      let bytes = decoded.get(b);
      if (!bytes) decoded.set(b, (bytes = block(b)));
      return toRecord(line(bytes, slot % ROW_BLOCK));
    });
  };
  return {
    size: ids.length,
    bytes: data.length + dictionary.length,
    get: (id) => getMany([id])[0]!,
    getMany,
  };
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
    const started = Date.now();
    const rows = await buildRowStore(db, tables.leads);
    const aq = searchAvgdlQuery(join(dir, 'search_terms.parquet'));
    const [avg] = existsSync(join(dir, 'search_terms.parquet')) ? await db.all<{ avgdl: number | null }>(aq.sql, aq.params) : [];
    const index = await LeadIndex.load(db, {
      leads: tables.leads,
      search: avg?.avgdl != null ? { terms: tables.search_terms, postings: tables.search_postings, avgdl: avg.avgdl } : null,
    });
    const detail = await DetailIndex.load(db, tables, join(dir, 'sales.parquet'));
    log(`release ${id}: row store of ${rows.size} leads (${(rows.bytes / 1e6).toFixed(1)} MB) and indexes built in ${Date.now() - started} ms`);
    return { id, dir, manifest, tables, path: (rel: string) => join(dir, rel), rows, index, detail };
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
