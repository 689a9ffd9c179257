/**
 * The in-memory indexes a release is answered from (`GET /v1/leads` and `GET /v1/leads/{id}`):
 * the row store, the lead index (filters, sorts, search) and the detail index — the parts of the
 * release's leads engine (api/engine/leads-engine.ts), the only thing outside api/engine/ that
 * sees them.
 *
 * The server builds them in a child process (`loadReleaseIndexes`, entry api/engine/build-child.ts)
 * that reads the release's Parquet files with its own DuckDB, builds, and sends the finished
 * typed arrays back as one pack over a pipe (api/engine/pack.ts). So the server holds only the
 * result — the build's garbage, DuckDB's buffers and the allocator's fragmentation stay in the
 * child and go when it exits (at default scale ~200 MB of arrays against ~450 MB of RSS when
 * built in the server) — and its event loop keeps serving the previous release while the next
 * one builds, at a lower CPU priority.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { setPriority } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { sqlString, type ApiDb } from '../duckdb/db.ts';
import { searchAvgdlQuery } from '../query/leads-query.ts';
import { DetailIndex, type DetailIndexParts } from './detail-index.ts';
import { LeadIndex, type LeadIndexParts } from './lead-index.ts';
import { readPack, type Packable } from './pack.ts';
import { RowStore, loadRowStore, rowSearchText, type RowStoreParts } from './row-store.ts';
import { ReleaseRefusedError, REFUSED_EXIT } from '../releases/verify-release.ts';
import { loaderArgs } from '../startup/loader-args.ts';

export interface ReleaseIndexes {
  rows: RowStore;
  index: LeadIndex;
  detail: DetailIndex;
  /** Mean document length of the search index (its Parquet metadata), null when the release has none. */
  avgdl: number | null;
}

const CHILD = fileURLToPath(new URL('./build-child.ts', import.meta.url));

/** Build a release's indexes in this process, from the Parquet files in `dir`. */
export async function buildReleaseIndexes(db: ApiDb, dir: string): Promise<ReleaseIndexes> {
  const pq = (t: string): string => `read_parquet(${sqlString(join(dir, `${t}.parquet`))})`;
  const rows = await loadRowStore(db, pq('leads'));
  const terms = join(dir, 'search_terms.parquet');
  let avgdl: number | null = null;
  if (existsSync(terms)) {
    const aq = searchAvgdlQuery(terms);
    avgdl = (await db.all<{ avgdl: number | null }>(aq.sql, aq.params))[0]?.avgdl ?? null;
  }
  const index = await LeadIndex.load(
    db,
    {
      leads: pq('leads'),
      search: avgdl !== null ? { terms: pq('search_terms'), postings: pq('search_postings'), avgdl } : null,
    },
    { text: rowSearchText(rows) },
  );
  const detail = await DetailIndex.load(
    db,
    {
      lead_neighbours: pq('lead_neighbours'),
      suppliers: pq('suppliers'),
      companies: pq('companies'),
      filings: pq('filings'),
    },
    join(dir, 'sales.parquet'),
  );
  return { rows, index, detail, avgdl };
}

/** The indexes as one packable tree of typed arrays, Maps and JSON values. */
export function packIndexes(ix: ReleaseIndexes): Packable {
  return {
    rows: ix.rows.parts(),
    index: ix.index.parts(),
    detail: ix.detail.parts(),
    avgdl: ix.avgdl,
  } as unknown as Packable;
}

/** The indexes back from `packIndexes`' tree. */
export function unpackIndexes(tree: Packable): ReleaseIndexes {
  const t = tree as unknown as {
    rows: RowStoreParts;
    index: LeadIndexParts;
    detail: DetailIndexParts;
    avgdl: number | null;
  };
  const rows = new RowStore(t.rows);
  return {
    rows,
    index: new LeadIndex(t.index, { text: rowSearchText(rows) }),
    detail: new DetailIndex(t.detail),
    avgdl: t.avgdl,
  };
}

/**
 * Build the indexes of the release in `dir` in a child process and receive them. The child first
 * checks the release's files against its manifest: a mismatch rejects with a ReleaseRefusedError
 * (its `reason` names the files). Rejects (with the child's last error lines) when the child fails
 * or is killed; nothing is half-loaded.
 */
export async function loadReleaseIndexes(
  dir: string,
  opts: { log?: (line: string) => void } = {},
): Promise<ReleaseIndexes> {
  const child = spawn(process.execPath, [...loaderArgs(), CHILD, dir], { stdio: ['ignore', 'ignore', 'pipe', 'pipe'] });
  try {
    setPriority(child.pid!, 10); // the server's requests come first
  } catch {
    /* not permitted here: the child runs at normal priority */
  }
  let stderr = '';
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (d: string) => {
    stderr = (stderr + d).slice(-4000);
    for (const line of d.split('\n')) if (line.startsWith('indexes: ')) opts.log?.(line.slice('indexes: '.length));
  });
  // 'close', not 'exit': every line the child wrote on stderr has arrived by then
  const exited = new Promise<number | string>((resolve) =>
    child.once('close', (code, signal) => resolve(code ?? signal ?? 'unknown')),
  );
  const spawned = new Promise<Error | null>((resolve) => {
    child.once('spawn', () => resolve(null));
    child.once('error', resolve);
  });
  const failedToStart = await spawned;
  if (failedToStart) throw new Error(`could not start the index builder for ${dir}: ${failedToStart.message}`);
  const [tree, code] = await Promise.all([readPack(child.stdio[3] as Readable).catch((e: Error) => e), exited]);
  if (code === REFUSED_EXIT) {
    const line = stderr.split('\n').find((l) => l.startsWith('refused: '));
    if (line) throw new ReleaseRefusedError(line.slice('refused: '.length));
  }
  if (code !== 0 || tree instanceof Error) {
    const why = tree instanceof Error ? tree.message : '';
    throw new Error(
      `building the indexes of ${dir} failed (exit ${code})${why ? `: ${why}` : ''}\n${stderr.trim().split('\n').slice(-8).join('\n')}`,
    );
  }
  return unpackIndexes(tree);
}
