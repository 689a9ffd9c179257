/**
 * The client: one API key, typed GETs over every operation of the OpenAPI document, auto-paging
 * async iterators over every paged list, retries of 429 / 503 that honour `Retry-After` and the
 * rate-limit window, RFC 9457 problems thrown as `LeadsProblem`, the budget headers of every
 * answer, quotes (`dry_run=1`) and exports streamed to a file. Runtime dependencies: none (fetch,
 * node:fs, node:stream).
 *
 * @example
 *   const client = new LeadsClient({ apiKey: process.env.LEADS_API_KEY!, baseUrl: 'https://api.example.ie/v1' });
 *   for await (const lead of client.paginate('/leads', { query: { county: ['Cork'] } })) console.log(lead.id);
 */
import { createWriteStream } from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { limitsOf, retryDelayMs, type Limits } from './limits.ts';
import { LeadsProblem, problemOf } from './problem.ts';
import type { BudgetQuote, GetPath, ItemOf, JsonOf, PagedPath, PathParamsOf, QueryOf } from './types.ts';

export interface ClientOptions {
  /** The API key (`lk_…`), sent as `Authorization: Bearer`. */
  apiKey: string;
  /** The API's base URL including `/v1`, e.g. `https://api.example.ie/v1`. */
  baseUrl: string;
  /** Retries of a 429 / 503 before its problem is thrown (default 3). */
  maxRetries?: number;
  /** A 429 / 503 asking for a longer wait than this is thrown at once (default 120 s: a spent daily budget waits until 00:00 UTC). */
  maxRetryWaitMs?: number;
  /** The fetch to use (default the global one). */
  fetch?: typeof fetch;
  /** How to wait before a retry (default a timer). */
  sleep?: (ms: number) => Promise<void>;
}

/** Query values as the API reads them: lists comma-separated (OR within a filter), booleans `true` / `false`. */
export type QueryValue = string | number | boolean | readonly (string | number)[] | null | undefined;
type Query = Record<string, QueryValue>;
type RequestOpts<P extends GetPath> = { query?: QueryOf<P> } & (PathParamsOf<P> extends never
  ? { path?: never }
  : { path: PathParamsOf<P> });

/** A decoded answer and the limits it reported. */
export interface Answer<T> {
  data: T;
  limits: Limits;
  status: number;
  headers: Headers;
}

/** The formats of `exportToFile` (`/export/applications.<format>`). */
export type ExportFormat = 'csv' | 'jsonl' | 'parquet';

/** A query string: lists joined with commas, undefined / null left out. */
export function queryString(query: Query = {}): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) {
    if (v === undefined || v === null) continue;
    q.set(k, Array.isArray(v) ? v.join(',') : String(v));
  }
  const s = q.toString();
  return s ? `?${s}` : '';
}

/** `/leads/{id}` with `{ id: 7 }` → `/leads/7`. */
function fillPath(template: string, params: Record<string, unknown> = {}): string {
  return template.replace(/\{([^}]+)\}/g, (_, name: string) => {
    if (params[name] === undefined) throw new TypeError(`missing path parameter ${name} of ${template}`);
    return encodeURIComponent(String(params[name]));
  });
}

/** The query of the next page from `Link: <…>; rel="next"` (any paged list, whatever its cursor parameter is called). */
function nextFromLink(link: string | null): URLSearchParams | null {
  for (const part of (link ?? '').split(',')) {
    const m = /<([^>]+)>\s*;\s*rel="?next"?/.exec(part);
    if (m) return new URL(m[1]!, 'http://x').searchParams;
  }
  return null;
}

export class LeadsClient {
  readonly baseUrl: string;
  /** The limits of the latest answer (rate-limit window, row budget). */
  lastLimits: Limits | null = null;
  readonly #key: string;
  readonly #fetch: typeof fetch;
  readonly #sleep: (ms: number) => Promise<void>;
  readonly #maxRetries: number;
  readonly #maxWaitMs: number;

  constructor(opts: ClientOptions) {
    if (!opts.apiKey) throw new TypeError('apiKey is required');
    this.baseUrl = opts.baseUrl.replace(/\/+$/, '');
    this.#key = opts.apiKey;
    this.#fetch = opts.fetch ?? fetch;
    this.#sleep = opts.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms)));
    this.#maxRetries = opts.maxRetries ?? 3;
    this.#maxWaitMs = opts.maxRetryWaitMs ?? 120_000;
  }

  /**
   * One request with retries: a 429 or 503 is retried after `Retry-After` (else the rate-limit
   * reset) while the wait is at most `maxRetryWaitMs`; any other non-2xx throws its `LeadsProblem`.
   * `path` is relative to the base URL (`/leads?county=Cork`). The body is left unread.
   */
  async send(path: string, init: RequestInit = {}): Promise<Response> {
    for (let attempt = 0; ; attempt++) {
      const headers = new Headers(init.headers);
      headers.set('Authorization', `Bearer ${this.#key}`);
      const res = await this.#fetch(this.baseUrl + path, { ...init, headers });
      const limits = limitsOf(res.headers);
      this.lastLimits = limits;
      if (res.ok || res.status === 304) return res;
      const wait = res.status === 429 || res.status === 503 ? retryDelayMs(res.headers, Date.now()) : null;
      if (wait !== null && wait <= this.#maxWaitMs && attempt < this.#maxRetries) {
        await res.body?.cancel();
        await this.#sleep(wait);
        continue;
      }
      throw await problemOf(res, limits, wait === null ? null : Math.ceil(wait / 1000));
    }
  }

  /** `GET path` (a path of the OpenAPI document, typed), its JSON body and limits. */
  async get<P extends GetPath>(
    path: P,
    ...[opts]: PathParamsOf<P> extends never ? [RequestOpts<P>?] : [RequestOpts<P>]
  ): Promise<Answer<JsonOf<P>>> {
    return this.getAny<JsonOf<P>>(
      fillPath(path, (opts as { path?: Record<string, unknown> } | undefined)?.path),
      (opts?.query ?? {}) as Query,
    );
  }

  /** `GET` of any path, untyped: for operations newer than this SDK's generated types. */
  async getAny<T = unknown>(path: string, query: Query = {}): Promise<Answer<T>> {
    const res = await this.send(path + queryString(query), { headers: { Accept: 'application/json' } });
    return { data: (await res.json()) as T, limits: limitsOf(res.headers), status: res.status, headers: res.headers };
  }

  /** What `GET path` would cost against the daily row budget (`dry_run=1`): charges nothing. */
  async quote<P extends GetPath>(
    path: P,
    ...[opts]: PathParamsOf<P> extends never ? [RequestOpts<P>?] : [RequestOpts<P>]
  ): Promise<Answer<BudgetQuote>> {
    const p = fillPath(path, (opts as { path?: Record<string, unknown> } | undefined)?.path);
    return this.getAny<BudgetQuote>(p, { ...((opts?.query ?? {}) as Query), dry_run: 1 });
  }

  /** Every page of a paged list, in order, until the server says there is no next page. */
  pages<P extends PagedPath>(path: P, opts: { query?: QueryOf<P> } = {}): AsyncGenerator<Answer<JsonOf<P>>> {
    return this.pagesAny<JsonOf<P>>(path, (opts.query ?? {}) as Query);
  }

  /** Every item of a paged list (`results` of each page), fetched page by page as the loop asks. */
  async *paginate<P extends PagedPath>(path: P, opts: { query?: QueryOf<P> } = {}): AsyncGenerator<ItemOf<P>> {
    for await (const page of this.pages(path, opts)) yield* (page.data as { results: ItemOf<P>[] }).results;
  }

  /**
   * Pages of any paged list, untyped (e.g. a feed newer than the generated types): the next page
   * is the `Link: rel="next"` query when the server sends one, else the body's `next_cursor`
   * as `cursor` with the same query (and no `page`); a body saying `has_more: false` is the last
   * (the events feed keeps a `next_cursor` at its end, to resume from next time).
   */
  async *pagesAny<T = { results: unknown[]; next_cursor: string | null }>(
    path: string,
    query: Query = {},
  ): AsyncGenerator<Answer<T>> {
    let q: Query = query;
    for (;;) {
      const page = await this.getAny<T>(path, q);
      yield page;
      const link = nextFromLink(page.headers.get('link'));
      const { next_cursor: cursor, has_more: more } = page.data as { next_cursor?: string | null; has_more?: boolean };
      if (more === false) return;
      if (link) q = Object.fromEntries(link);
      else if (cursor) {
        const { page: _page, ...rest } = q;
        q = { ...rest, cursor };
      } else return;
    }
  }

  /**
   * Stream `/export/applications.<format>` (the whole filtered set) to `file` without holding it in
   * memory. Resolves with the bytes written, the file name the server proposed and the limits.
   */
  async exportToFile(
    format: ExportFormat,
    file: string,
    opts: { query?: QueryOf<'/export/applications.csv'> } = {},
  ): Promise<{ bytes: number; filename: string | null; limits: Limits }> {
    const res = await this.send(`/export/applications.${format}${queryString((opts.query ?? {}) as Query)}`);
    if (!res.body) throw new Error('export answered without a body');
    const out = createWriteStream(file);
    await pipeline(Readable.fromWeb(res.body as WebReadableStream<Uint8Array>), out);
    const filename = /filename="?([^";]+)"?/.exec(res.headers.get('content-disposition') ?? '')?.[1] ?? null;
    return { bytes: out.bytesWritten, filename, limits: limitsOf(res.headers) };
  }
}

export { LeadsProblem };
