/**
 * An ArcGIS FeatureServer layer, paged: `f=json`, `where`, `orderByFields=<OBJECTID>`,
 * `resultOffset` / `resultRecordCount`, following `exceededTransferLimit` until the last page.
 * The pages are joined into one ArcGIS JSON document (`{ spatialReference, features }`), the form
 * the planning adapter reads (pipeline/sources/planning.ts), so there is one adapter per format.
 * An incremental fetch asks only for the window's records and merges them into the stored
 * document by the layer's key fields. Query building and merging are pure; `fetchArcgisLayer`
 * does the I/O.
 */
import { getJson, FetchError, RetryableError, type HttpClient } from './http.ts';
import type { ArcgisSpec } from './sources.ts';

/** The query URL of one page (pure). */
export function arcgisQueryUrl(
  layerUrl: string,
  spec: Pick<ArcgisSpec, 'orderBy' | 'outSr'>,
  where: string,
  offset: number,
  count: number,
): string {
  const u = new URL(layerUrl); // a query string of the layer URL (e.g. a token) is kept
  u.pathname = u.pathname.replace(/\/+$/, '') + '/query';
  const params: [string, string][] = [
    ['f', 'json'],
    ['where', where],
    ['outFields', '*'],
    ['returnGeometry', 'true'],
    ['outSR', String(spec.outSr)],
    ['orderByFields', `${spec.orderBy} ASC`],
    ['resultOffset', String(offset)],
    ['resultRecordCount', String(count)],
  ];
  for (const [k, v] of params) u.searchParams.set(k, v);
  return u.toString();
}

/** `{since}` of the incremental where-clause: the window start less the overlap, as `YYYY-MM-DD HH:MM:SS` (UTC). */
export function windowWhere(template: string, since: Date): string {
  return template.replaceAll('{since}', since.toISOString().slice(0, 19).replace('T', ' '));
}

/** One page as the server answered it, checked. */
interface Page {
  features: unknown[];
  exceededTransferLimit: boolean;
  spatialReference: unknown;
}

/** Check a page: an ArcGIS `error` body or a page without `features` is an error (retryable when the server says 429 / 5xx, or the body is malformed). */
export function checkPage(doc: unknown): Page {
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc))
    throw new RetryableError('malformed page: not a JSON object');
  const d = doc as {
    error?: { code?: unknown; message?: unknown };
    features?: unknown;
    exceededTransferLimit?: unknown;
    spatialReference?: unknown;
  };
  if (d.error) {
    const code = typeof d.error.code === 'number' ? d.error.code : 0;
    const msg = `ArcGIS error ${code}: ${typeof d.error.message === 'string' ? d.error.message : 'no message'}`;
    if (code === 429 || code >= 500) throw new RetryableError(msg);
    throw new Error(msg); // withRetries turns it into a FetchError naming the URL
  }
  if (!Array.isArray(d.features)) throw new RetryableError('malformed page: no features array');
  return {
    features: d.features,
    exceededTransferLimit: d.exceededTransferLimit === true,
    spatialReference: d.spatialReference ?? null,
  };
}

export interface LayerResult {
  features: unknown[];
  spatialReference: unknown;
  pages: number;
  /** Attempts over all pages (1 per page when nothing was retried). */
  attempts: number;
}

/** Pages above this many mean the server keeps saying "more" without moving: stop. */
const MAX_PAGES = 100_000;

/**
 * Every feature matching `where`, page by page in `orderBy` order. The offset advances by the
 * features received (the server may cap a page below `pageSize`). A page that claims more while
 * holding no features is an error.
 */
export async function fetchArcgisLayer(
  client: HttpClient,
  layerUrl: string,
  spec: ArcgisSpec,
  where: string,
): Promise<LayerResult> {
  const features: unknown[] = [];
  let spatialReference: unknown = null;
  let attempts = 0;
  for (let pages = 1, offset = 0; pages <= MAX_PAGES; pages++) {
    const url = arcgisQueryUrl(layerUrl, spec, where, offset, spec.pageSize);
    const { value: page, attempts: a } = await getJson(client, url, checkPage);
    attempts += a;
    spatialReference ??= page.spatialReference;
    for (const f of page.features) features.push(f);
    if (!page.exceededTransferLimit) return { features, spatialReference, pages, attempts };
    if (page.features.length === 0)
      throw new FetchError(`malformed page from ${url}: exceededTransferLimit with no features`, url, a);
    offset += page.features.length;
    client.deps.log(`  ${features.length.toLocaleString('en-IE')} features so far`);
  }
  throw new FetchError(`more than ${MAX_PAGES} pages from ${layerUrl}`, layerUrl, attempts);
}

/** The key of a feature: its `keyFields` attributes, trimmed and upper-cased; null without attributes. */
export function featureKey(feature: unknown, keyFields: readonly string[]): string | null {
  const attrs = (feature as { attributes?: Record<string, unknown> } | null)?.attributes;
  if (typeof attrs !== 'object' || attrs === null) return null;
  return keyFields
    .map((k) =>
      String(attrs[k] ?? '')
        .trim()
        .replace(/\s+/g, ' ')
        .toUpperCase(),
    )
    .join('\u0000');
}

/**
 * Merge an incremental window into the stored features (pure): a stored feature whose key is in
 * the window is replaced (in its place) by the window's; the window's other features are appended
 * in order. Features of the window are kept as published, duplicates included (the adapter
 * accounts them).
 */
export function mergeFeatures(
  stored: readonly unknown[],
  fresh: readonly unknown[],
  keyFields: readonly string[],
): unknown[] {
  const byKey = new Map<string, unknown[]>();
  const keyless: unknown[] = [];
  for (const f of fresh) {
    const k = featureKey(f, keyFields);
    if (k === null) keyless.push(f);
    else {
      const list = byKey.get(k);
      if (list) list.push(f);
      else byKey.set(k, [f]);
    }
  }
  const out: unknown[] = [];
  const placed = new Set<string>();
  for (const f of stored) {
    const k = featureKey(f, keyFields);
    if (k === null || !byKey.has(k)) out.push(f);
    else if (!placed.has(k)) {
      placed.add(k);
      for (const g of byKey.get(k)!) out.push(g);
    }
  }
  for (const f of fresh) {
    const k = featureKey(f, keyFields);
    if (k !== null && !placed.has(k)) {
      placed.add(k);
      for (const g of byKey.get(k)!) out.push(g);
    }
  }
  for (const f of keyless) out.push(f);
  return out;
}
