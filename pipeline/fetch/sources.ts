/**
 * The publishers' endpoints `leads fetch` downloads from, read from `pipeline/fetch/sources.json`
 * (data, not code) and checked once. `resolveTargets` applies the environment overrides
 * (`url_env`), expands per-year files (`years_from`, `{year}`) and PxStat tables (`{table}`),
 * and returns one `FetchTarget` per file to write under `<raw>/<source>/`.
 */
import { readFileSync } from 'node:fs';
import { SOURCE_NAMES, type SourceName } from '../sources/formats.ts';

export type Protocol = 'arcgis-featureserver' | 'http-file' | 'pxstat';
const PROTOCOLS: readonly Protocol[] = ['arcgis-featureserver', 'http-file', 'pxstat'];

/** Paging and the incremental window of an ArcGIS FeatureServer layer. */
export interface ArcgisSpec {
  /** Field the pages are ordered by (stable paging). */
  orderBy: string;
  /** `resultRecordCount` asked for; the server may answer fewer (its maxRecordCount). */
  pageSize: number;
  /** Spatial reference the geometry is asked in (`outSR`). */
  outSr: number;
  /** Fields identifying a record: an incremental page replaces the stored record with the same key. */
  keyFields: string[];
  /** Where-clause of the incremental window; `{since}` becomes `YYYY-MM-DD HH:MM:SS` (UTC). */
  incremental: { where: string; overlapDays: number } | null;
}

/** One download as declared in sources.json. */
export interface DownloadSpec {
  source: SourceName;
  /** File name under `<raw>/<source>/`; may hold `{year}`. */
  file: string;
  protocol: Protocol;
  publisher: string;
  /** Default URL (the publisher's); null when there is no known stable direct link. */
  url: string | null;
  /** Environment variable that overrides `url`. */
  urlEnv: string;
  /** PxStat table code, substituted for `{table}` in the URL. */
  table?: string;
  /** One file per year from this year to the current one (`{year}` in file and URL). */
  yearsFrom?: number;
  arcgis?: ArcgisSpec;
}

/** Retry and timeout policy of the HTTP client. */
export interface ClientPolicy {
  attempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** A `Retry-After` longer than this makes the client give up rather than wait. */
  maxRetryAfterMs: number;
  /** Whole-request limit of one attempt. */
  timeoutMs: number;
}

export interface SourcesFile {
  userAgent: string;
  client: ClientPolicy;
  downloads: DownloadSpec[];
}

/** One file to fetch: the spec with its URL resolved (null: not configured) and its final name. */
export interface FetchTarget {
  /** `<source>/<file>`: the key of the fetch log. */
  id: string;
  source: SourceName;
  file: string;
  protocol: Protocol;
  url: string | null;
  urlEnv: string;
  arcgis?: ArcgisSpec;
}

export class SourcesFileError extends Error {}

const SOURCES_JSON = new URL('./sources.json', import.meta.url);

/** Read and check `pipeline/fetch/sources.json` (or another file of the same shape). */
export function loadSourcesFile(path: URL | string = SOURCES_JSON): SourcesFile {
  return parseSourcesFile(JSON.parse(readFileSync(path, 'utf8')) as unknown);
}

/** Check the parsed sources file and turn it into typed specs; throws `SourcesFileError` naming the bad field. */
export function parseSourcesFile(doc: unknown): SourcesFile {
  const o = obj(doc, 'sources file');
  const c = obj(o.client, 'client');
  const client: ClientPolicy = {
    attempts: int(c.attempts, 'client.attempts', 1, 20),
    baseDelayMs: int(c.base_delay_ms, 'client.base_delay_ms', 0, 3_600_000),
    maxDelayMs: int(c.max_delay_ms, 'client.max_delay_ms', 0, 3_600_000),
    maxRetryAfterMs: int(c.max_retry_after_ms, 'client.max_retry_after_ms', 0, 86_400_000),
    timeoutMs: int(c.timeout_ms, 'client.timeout_ms', 1_000, 86_400_000),
  };
  if (!Array.isArray(o.downloads)) throw new SourcesFileError('downloads must be an array');
  const downloads = o.downloads.map((d, i) => parseDownload(d, `downloads[${i}]`));
  const seen = new Set<string>();
  for (const d of downloads) {
    const id = `${d.source}/${d.file}`;
    if (seen.has(id)) throw new SourcesFileError(`${id} is declared twice`);
    seen.add(id);
  }
  return { userAgent: str(o.user_agent, 'user_agent'), client, downloads };
}

function parseDownload(doc: unknown, at: string): DownloadSpec {
  const d = obj(doc, at);
  const source = str(d.source, `${at}.source`);
  if (!(SOURCE_NAMES as readonly string[]).includes(source))
    throw new SourcesFileError(`${at}.source must be one of ${SOURCE_NAMES.join(', ')}, got ${source}`);
  const protocol = str(d.protocol, `${at}.protocol`) as Protocol;
  if (!PROTOCOLS.includes(protocol))
    throw new SourcesFileError(`${at}.protocol must be one of ${PROTOCOLS.join(', ')}, got ${protocol}`);
  const file = str(d.file, `${at}.file`);
  if (!/^[A-Za-z0-9._{}-]+\.(csv|json)$/.test(file))
    throw new SourcesFileError(`${at}.file must be a plain .csv or .json file name, got ${file}`);
  const urlEnv = str(d.url_env, `${at}.url_env`);
  if (!/^FETCH_URL_[A-Z0-9_]+$/.test(urlEnv))
    throw new SourcesFileError(`${at}.url_env must look like FETCH_URL_NAME, got ${urlEnv}`);
  const spec: DownloadSpec = {
    source: source as SourceName,
    file,
    protocol,
    publisher: str(d.publisher, `${at}.publisher`),
    url: d.url === null ? null : str(d.url, `${at}.url`),
    urlEnv,
  };
  if (d.table !== undefined) spec.table = str(d.table, `${at}.table`);
  if (protocol === 'pxstat' && !spec.table) throw new SourcesFileError(`${at}: a pxstat download needs a table`);
  if (d.years_from !== undefined) {
    spec.yearsFrom = int(d.years_from, `${at}.years_from`, 1900, 2100);
    if (!file.includes('{year}')) throw new SourcesFileError(`${at}: years_from needs {year} in the file name`);
  }
  if (protocol === 'arcgis-featureserver') {
    const a = obj(d.arcgis, `${at}.arcgis`);
    const keyFields = Array.isArray(a.key_fields)
      ? a.key_fields.map((k, i) => str(k, `${at}.arcgis.key_fields[${i}]`))
      : [];
    if (keyFields.length === 0) throw new SourcesFileError(`${at}.arcgis.key_fields must list at least one field`);
    let incremental: ArcgisSpec['incremental'] = null;
    if (a.incremental !== undefined && a.incremental !== null) {
      const inc = obj(a.incremental, `${at}.arcgis.incremental`);
      const where = str(inc.where, `${at}.arcgis.incremental.where`);
      if (!where.includes('{since}')) throw new SourcesFileError(`${at}.arcgis.incremental.where must contain {since}`);
      incremental = { where, overlapDays: int(inc.overlap_days, `${at}.arcgis.incremental.overlap_days`, 0, 365) };
    }
    spec.arcgis = {
      orderBy: str(a.order_by, `${at}.arcgis.order_by`),
      pageSize: int(a.page_size, `${at}.arcgis.page_size`, 1, 100_000),
      outSr: int(a.out_sr, `${at}.arcgis.out_sr`, 1, 1_000_000),
      keyFields,
      incremental,
    };
    if (!file.endsWith('.json')) throw new SourcesFileError(`${at}: an ArcGIS download is written as .json`);
  }
  return spec;
}

/**
 * The files to fetch: every download of the chosen sources (all when `only` is empty), with the
 * URL from `env[url_env]` when set, else the default; per-year downloads expanded up to the year
 * of `now`. Throws `SourcesFileError` for an unknown source in `only`.
 */
export function resolveTargets(
  file: SourcesFile,
  env: Record<string, string | undefined>,
  now: Date,
  only: readonly string[] = [],
): FetchTarget[] {
  const known = new Set(file.downloads.map((d) => d.source));
  for (const s of only) {
    if (!known.has(s as SourceName))
      throw new SourcesFileError(`unknown source '${s}' (sources with downloads: ${[...known].join(', ')})`);
  }
  const out: FetchTarget[] = [];
  for (const d of file.downloads) {
    if (only.length && !only.includes(d.source)) continue;
    const override = env[d.urlEnv]?.trim();
    const base = override ? override : d.url;
    const url = base === null ? null : base.replaceAll('{table}', encodeURIComponent(d.table ?? ''));
    const years = d.yearsFrom === undefined ? [null] : range(d.yearsFrom, now.getUTCFullYear());
    for (const y of years) {
      const name = y === null ? d.file : d.file.replaceAll('{year}', String(y));
      const target: FetchTarget = {
        id: `${d.source}/${name}`,
        source: d.source,
        file: name,
        protocol: d.protocol,
        url: url === null ? null : y === null ? url : url.replaceAll('{year}', String(y)),
        urlEnv: d.urlEnv,
      };
      if (d.arcgis) target.arcgis = d.arcgis;
      out.push(target);
    }
  }
  return out;
}

const range = (from: number, to: number): number[] =>
  Array.from({ length: Math.max(0, to - from + 1) }, (_, i) => from + i);

function obj(v: unknown, at: string): Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new SourcesFileError(`${at} must be an object`);
  return v as Record<string, unknown>;
}

function str(v: unknown, at: string): string {
  if (typeof v !== 'string' || v === '') throw new SourcesFileError(`${at} must be a non-empty string`);
  return v;
}

function int(v: unknown, at: string, min: number, max: number): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max)
    throw new SourcesFileError(`${at} must be a whole number between ${min} and ${max}`);
  return v;
}
