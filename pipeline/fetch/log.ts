/**
 * The fetch log, `<raw>/fetch-log.json`: per downloaded file, where it came from, when it was
 * checked and last fetched, its validators (ETag / Last-Modified), size and SHA-256, and the
 * outcome of the last attempt (fetched, not_modified, failed + error, skipped). `leads fetch`
 * keeps it; `leads generate` resets it to say the files are generated. The refresh copies it
 * into the release manifest (`sources_freshness`) and `/v1/meta` shows it. It sits beside the
 * source folders, not in them, so no adapter reads it; it holds public URLs (credentials and
 * token-like query values redacted) and no local path.
 */
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Protocol } from './sources.ts';

export const FETCH_LOG_FILE = 'fetch-log.json';

export type DownloadStatus = 'fetched' | 'not_modified' | 'failed' | 'skipped';

/** One file's entry. `fetched_at` … `sha256` describe the copy in place (kept when a later attempt fails). */
export interface FetchLogEntry {
  source: string;
  file: string;
  protocol: Protocol;
  /** The URL asked (null when none is configured). */
  url: string | null;
  status: DownloadStatus;
  /** When the last attempt ran. */
  checked_at: string;
  /** When the copy in place was downloaded (null: never). */
  fetched_at: string | null;
  etag: string | null;
  last_modified: string | null;
  bytes: number | null;
  sha256: string | null;
  /** Features (ArcGIS) in the copy in place. */
  records?: number | null;
  /** ArcGIS: the where-clause of the last fetch and whether it was an incremental window. */
  window?: { where: string; incremental: boolean; until: string } | null;
  /** Why the last attempt failed or was skipped (null otherwise). */
  error: string | null;
}

export interface FetchLog {
  /**
   * `generated`: `leads generate` wrote the files; `fetched`: `leads fetch` wrote the files its
   * entries name; `mixed`: some sources were fetched into a generated folder (the others are
   * the generator's).
   */
  origin: 'fetched' | 'generated' | 'mixed';
  updated_at: string;
  /** For generated files: the generator's parameters. */
  generator?: { seed: number; scale: number; week: number };
  /** By `<source>/<file>`. */
  downloads: Record<string, FetchLogEntry>;
}

/** The fetch log of `rawDir`, or null when there is none (files put there by hand). */
export function readFetchLog(rawDir: string): FetchLog | null {
  const path = join(rawDir, FETCH_LOG_FILE);
  if (!existsSync(path)) return null;
  const doc = JSON.parse(readFileSync(path, 'utf8')) as FetchLog;
  if (!['fetched', 'generated', 'mixed'].includes(doc.origin))
    throw new Error(`${FETCH_LOG_FILE}: unknown origin ${String(doc.origin)}`);
  return doc;
}

/** Write the log atomically (temp file, then rename). */
export async function writeFetchLog(rawDir: string, log: FetchLog): Promise<void> {
  await mkdir(rawDir, { recursive: true });
  const path = join(rawDir, FETCH_LOG_FILE);
  await writeFile(`${path}.tmp`, JSON.stringify(log, null, 2) + '\n');
  await rename(`${path}.tmp`, path);
}

/** The log `leads generate` leaves: the files are the generator's, not any publisher's. */
export function generatedLog(now: Date, generator: { seed: number; scale: number; week: number }): FetchLog {
  return { origin: 'generated', updated_at: now.toISOString(), generator, downloads: {} };
}

/** The manifest's `sources_freshness`: the log with its downloads as a list in key order. */
export function sourcesFreshness(log: FetchLog) {
  return {
    origin: log.origin,
    updated_at: log.updated_at,
    ...(log.generator ? { generator: log.generator } : {}),
    downloads: Object.keys(log.downloads)
      .sort()
      .map((k) => log.downloads[k]!),
  };
}

export type SourcesFreshness = ReturnType<typeof sourcesFreshness>;

const SECRET_PARAM = /token|key|secret|password|passwd|sig|signature|auth|credential/i;

/** A URL fit for a log that is published: no user-info, token-like query values redacted. */
export function publicUrl(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return '(invalid URL)';
  }
  u.username = '';
  u.password = '';
  for (const k of [...u.searchParams.keys()]) if (SECRET_PARAM.test(k)) u.searchParams.set(k, 'redacted');
  return u.toString();
}
