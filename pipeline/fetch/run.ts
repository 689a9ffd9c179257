/**
 * `leads fetch`: download each source's files from its publisher into `<raw>/<source>/`, one file
 * at a time, and keep the fetch log (`<raw>/fetch-log.json`). A file that fails keeps its
 * previous copy (and its previous log fields, with the error) and does not stop the others; the
 * refresh's quality gates then decide whether a release is published.
 *
 * @example
 *   const summary = await runFetch({ rawDir: 'data/raw', sources: ['planning'], full: false, env: process.env }, defaultFetchDeps());
 */
import { createHash } from 'node:crypto';
import { createWriteStream, existsSync } from 'node:fs';
import { mkdir, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { finished } from 'node:stream/promises';
import { fetchArcgisLayer, mergeFeatures, windowWhere } from './arcgis.ts';
import { downloadFile, type ClientDeps, type HttpClient } from './http.ts';
import { publicUrl, readFetchLog, writeFetchLog, type FetchLog, type FetchLogEntry } from './log.ts';
import { loadSourcesFile, resolveTargets, type FetchTarget, type SourcesFile } from './sources.ts';

export interface FetchOptions {
  rawDir: string;
  /** Sources to fetch (folder names); empty: every source with a download. */
  sources: readonly string[];
  /** Ignore incremental windows: fetch every ArcGIS record again. */
  full: boolean;
  /** Where the `FETCH_URL_*` overrides are read. */
  env: Record<string, string | undefined>;
  /** The declarations (default: pipeline/fetch/sources.json). */
  sourcesFile?: SourcesFile;
}

export type FetchDeps = ClientDeps;

export interface FetchSummary {
  /** This run's entries, in declaration order. */
  downloads: FetchLogEntry[];
  counts: Record<FetchLogEntry['status'], number>;
}

/** The real clock, `setTimeout` sleep, `Math.random` jitter and a stderr log. */
export function defaultFetchDeps(log: (line: string) => void = (l) => void process.stderr.write(l + '\n')): FetchDeps {
  return { now: () => new Date(), sleep: (ms) => new Promise((r) => setTimeout(r, ms)), random: Math.random, log };
}

/** Fetch every target of the chosen sources; returns what happened to each (never throws for a failed download). */
export async function runFetch(opts: FetchOptions, deps: FetchDeps): Promise<FetchSummary> {
  const file = opts.sourcesFile ?? loadSourcesFile();
  const targets = resolveTargets(file, opts.env, deps.now(), opts.sources);
  const client: HttpClient = { userAgent: file.userAgent, policy: file.client, deps };
  const previous = readFetchLog(opts.rawDir);
  const log: FetchLog = {
    origin: previous && previous.origin !== 'fetched' ? 'mixed' : 'fetched',
    updated_at: deps.now().toISOString(),
    ...(previous?.generator ? { generator: previous.generator } : {}),
    downloads: { ...(previous?.downloads ?? {}) },
  };
  const downloads: FetchLogEntry[] = [];
  for (const t of targets) {
    const entry = await fetchTarget(client, t, opts, log.downloads[t.id] ?? null);
    downloads.push(entry);
    log.downloads[t.id] = entry;
    log.updated_at = deps.now().toISOString();
    await writeFetchLog(opts.rawDir, log); // after each file: a crash loses nothing already fetched
  }
  const counts = { fetched: 0, not_modified: 0, failed: 0, skipped: 0 };
  for (const d of downloads) counts[d.status]++;
  return { downloads, counts };
}

/** One target: its new log entry. */
async function fetchTarget(
  client: HttpClient,
  t: FetchTarget,
  opts: FetchOptions,
  prev: FetchLogEntry | null,
): Promise<FetchLogEntry> {
  const checkedAt = client.deps.now().toISOString();
  const dest = join(opts.rawDir, t.source, t.file);
  const inPlace = prev !== null && existsSync(dest);
  const base: FetchLogEntry = {
    source: t.source,
    file: t.file,
    protocol: t.protocol,
    url: t.url === null ? null : publicUrl(t.url),
    status: 'skipped',
    checked_at: checkedAt,
    fetched_at: inPlace ? prev.fetched_at : null,
    etag: inPlace ? prev.etag : null,
    last_modified: inPlace ? prev.last_modified : null,
    bytes: inPlace ? prev.bytes : null,
    sha256: inPlace ? prev.sha256 : null,
    ...(t.protocol === 'arcgis-featureserver'
      ? { records: inPlace ? (prev.records ?? null) : null, window: inPlace ? (prev.window ?? null) : null }
      : {}),
    error: null,
  };
  if (t.url === null) {
    client.deps.log(`${t.id}: skipped (no URL configured: set ${t.urlEnv})`);
    return { ...base, error: `no URL configured (set ${t.urlEnv})` };
  }
  client.deps.log(`${t.id} ← ${publicUrl(t.url)}`);
  try {
    await mkdir(join(opts.rawDir, t.source), { recursive: true });
    if (t.protocol === 'arcgis-featureserver') {
      return { ...base, ...(await fetchArcgisTarget(client, t, dest, inPlace && !opts.full ? prev : null, checkedAt)) };
    }
    const r = await downloadFile(
      client,
      t.url,
      dest,
      inPlace ? { etag: prev.etag, lastModified: prev.last_modified } : null,
    );
    if (r.status === 'not_modified') {
      client.deps.log(`  not modified (304): keeping the copy of ${prev?.fetched_at ?? 'before'}`);
      return { ...base, status: 'not_modified' };
    }
    client.deps.log(
      `  ${r.bytes!.toLocaleString('en-IE')} bytes${r.resumed ? ' (resumed)' : ''}, sha256 ${r.sha256!.slice(0, 12)}…`,
    );
    return {
      ...base,
      status: 'fetched',
      fetched_at: checkedAt,
      etag: r.etag,
      last_modified: r.lastModified,
      bytes: r.bytes,
      sha256: r.sha256,
    };
  } catch (e) {
    const error = `${t.source}: ${publicMessage(e, opts.rawDir)}`;
    client.deps.log(`  FAILED ${error} (the previous copy is kept)`);
    return { ...base, status: 'failed', error };
  }
}

/** An error message fit for the published log: URLs made public, the raw folder's path hidden. */
function publicMessage(e: unknown, rawDir: string): string {
  const msg = e instanceof Error ? e.message : String(e);
  return msg
    .replace(/https?:\/\/[^\s)]+/g, (u) => publicUrl(u))
    .split(rawDir)
    .join('<raw>');
}

/** ArcGIS: the whole layer, or (with a previous fetch) the incremental window merged into the stored document. */
async function fetchArcgisTarget(
  client: HttpClient,
  t: FetchTarget,
  dest: string,
  prev: FetchLogEntry | null,
  checkedAt: string,
): Promise<Partial<FetchLogEntry>> {
  const spec = t.arcgis!;
  const stored = spec.incremental && prev?.window?.until ? await readStoredLayer(dest) : null;
  let where = '1=1';
  if (stored && spec.incremental) {
    const since = new Date(Date.parse(prev!.window!.until) - spec.incremental.overlapDays * 86_400_000);
    where = windowWhere(spec.incremental.where, since);
  }
  client.deps.log(`  where ${where}`);
  const layer = await fetchArcgisLayer(client, t.url!, spec, where);
  const features = stored ? mergeFeatures(stored.features, layer.features, spec.keyFields) : layer.features;
  const spatialReference = layer.spatialReference ?? stored?.spatialReference ?? { wkid: spec.outSr };
  const { bytes, sha256 } = await writeLayer(dest, spatialReference, features);
  client.deps.log(
    `  ${layer.features.length.toLocaleString('en-IE')} features in ${layer.pages} pages → ${features.length.toLocaleString('en-IE')} stored, ${bytes.toLocaleString('en-IE')} bytes`,
  );
  return {
    status: 'fetched',
    fetched_at: checkedAt,
    etag: null,
    last_modified: null,
    bytes,
    sha256,
    records: features.length,
    window: { where, incremental: stored !== null, until: checkedAt },
  };
}

/** The stored ArcGIS document, or null when it is missing or unreadable (then the whole layer is fetched). */
async function readStoredLayer(path: string): Promise<{ features: unknown[]; spatialReference: unknown } | null> {
  try {
    const doc = JSON.parse((await readFile(path, 'utf8')).replace(/^\uFEFF/, '')) as {
      features?: unknown;
      spatialReference?: unknown;
    };
    return Array.isArray(doc.features)
      ? { features: doc.features, spatialReference: doc.spatialReference ?? null }
      : null;
  } catch {
    return null;
  }
}

/** Write `{ spatialReference, features }` feature by feature to a part file, then move it into place. */
async function writeLayer(
  dest: string,
  spatialReference: unknown,
  features: readonly unknown[],
): Promise<{ bytes: number; sha256: string }> {
  const part = `${dest}.part`;
  const out = createWriteStream(part);
  const h = createHash('sha256');
  let bytes = 0;
  const put = async (s: string): Promise<void> => {
    const b = Buffer.from(s, 'utf8');
    h.update(b);
    bytes += b.length;
    if (!out.write(b)) await new Promise<void>((r) => out.once('drain', () => r()));
  };
  try {
    await put(`{"spatialReference":${JSON.stringify(spatialReference)},"features":[`);
    for (let i = 0; i < features.length; i++) await put((i ? ',\n' : '\n') + JSON.stringify(features[i]));
    await put('\n]}\n');
    out.end();
    await finished(out);
    await rename(part, dest);
  } catch (e) {
    out.destroy();
    await rm(part, { force: true });
    throw e;
  }
  return { bytes, sha256: h.digest('hex') };
}
