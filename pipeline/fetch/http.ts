/**
 * The polite HTTP client of `leads fetch` (`node:http` / `node:https`): a `User-Agent` naming the
 * service, conditional requests (`If-None-Match` / `If-Modified-Since`; a 304 keeps the previous
 * file), retries with exponential backoff and jitter on 429, 5xx and dropped connections,
 * honouring `Retry-After`, resume of a broken download with `Range` / `If-Range` where the server
 * supports ranges, a size check against `Content-Length`, and the file moved into place only when
 * complete. The clock, sleep and random source are injected so tests never wait real seconds.
 */
import { createHash } from 'node:crypto';
import { closeSync, createReadStream, openSync, writeSync } from 'node:fs';
import { rename, rm, stat } from 'node:fs/promises';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { ClientPolicy } from './sources.ts';

/** What the client needs from the outside world (injected; tests pass a fake sleep and clock). */
export interface ClientDeps {
  now: () => Date;
  /** Wait before a retry. */
  sleep: (ms: number) => Promise<void>;
  /** Uniform in [0, 1): the jitter. */
  random: () => number;
  /** Progress and retry lines (stderr by default). */
  log: (line: string) => void;
}

export interface HttpClient {
  readonly userAgent: string;
  readonly policy: ClientPolicy;
  readonly deps: ClientDeps;
}

/** The client gave up on a URL: the message says why, after how many attempts. */
export class FetchError extends Error {
  readonly url: string;
  readonly attempts: number;
  constructor(message: string, url: string, attempts: number) {
    super(message);
    this.url = url;
    this.attempts = attempts;
  }
}

/** A failure worth another attempt (429, 5xx, connection dropped, truncated or malformed body). */
export class RetryableError extends Error {
  /** From `Retry-After`, when the server said how long to wait. */
  readonly retryAfterMs: number | null;
  constructor(message: string, retryAfterMs: number | null = null) {
    super(message);
    this.retryAfterMs = retryAfterMs;
  }
}

/**
 * Delay before the attempt after attempt `n` (1-based): exponential, capped, with "equal jitter":
 * half the step fixed, half random, so many clients do not retry in step.
 */
export function backoffMs(
  n: number,
  policy: Pick<ClientPolicy, 'baseDelayMs' | 'maxDelayMs'>,
  random: () => number,
): number {
  const step = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (n - 1));
  return Math.round(step / 2 + random() * (step / 2));
}

/** `Retry-After` as milliseconds from `now`: delta-seconds or an HTTP date; null when absent or unreadable. */
export function parseRetryAfter(value: string | null, now: Date): number | null {
  if (value === null) return null;
  const v = value.trim();
  if (/^\d+$/.test(v)) return Number(v) * 1000;
  const t = Date.parse(v);
  return Number.isNaN(t) ? null : Math.max(0, t - now.getTime());
}

/**
 * Run `attempt` until it succeeds, retrying `RetryableError`s after the server's `Retry-After`
 * or the jittered backoff; any other error ends at once. Throws `FetchError` naming the URL and
 * the attempts made.
 */
export async function withRetries<T>(
  client: HttpClient,
  url: string,
  attempt: (n: number) => Promise<T>,
): Promise<{ value: T; attempts: number }> {
  const { policy, deps } = client;
  for (let n = 1; ; n++) {
    try {
      return { value: await attempt(n), attempts: n };
    } catch (e) {
      if (!(e instanceof RetryableError)) {
        if (e instanceof FetchError) throw e;
        throw new FetchError(`${(e as Error).message} (${url})`, url, n);
      }
      if (n >= policy.attempts) throw new FetchError(`gave up on ${url} after ${n} attempts: ${e.message}`, url, n);
      if (e.retryAfterMs !== null && e.retryAfterMs > policy.maxRetryAfterMs) {
        throw new FetchError(
          `gave up on ${url}: ${e.message}, asked to retry after ${Math.ceil(e.retryAfterMs / 1000)} s (more than the ${policy.maxRetryAfterMs / 1000} s limit)`,
          url,
          n,
        );
      }
      const delay = e.retryAfterMs ?? backoffMs(n, policy, deps.random);
      deps.log(`  ${e.message}; attempt ${n + 1} of ${policy.attempts} in ${(delay / 1000).toFixed(1)} s`);
      await deps.sleep(delay);
    }
  }
}

/**
 * A response of `node:http(s)`: status, headers, and the body consumed in flowing mode, so every
 * byte that arrived before a dropped connection reaches the caller (and can be resumed from).
 */
class Reply {
  /** Chunks that arrived before `consume` was called. */
  private queue: Buffer[] = [];
  private sink: ((chunk: Buffer) => void) | null = null;
  private failed: Error | null = null;
  /** Settles when the connection closes: resolved when the body was complete. */
  private readonly done: Promise<void>;

  private readonly res: IncomingMessage;
  constructor(res: IncomingMessage) {
    this.res = res;
    // listen at once: a connection dropped before the caller reads must not lose bytes or the close
    res.on('data', (chunk: Buffer) => {
      if (this.failed) return;
      if (!this.sink) return void this.queue.push(chunk);
      try {
        this.sink(chunk);
      } catch (e) {
        this.failed = e as Error;
        res.destroy();
      }
    });
    this.done = new Promise((resolve, reject) => {
      res.on('error', (e) => (this.failed ??= e));
      res.on('close', () => {
        if (this.failed) reject(this.failed);
        else if (!res.complete) reject(new Error('connection closed before the body was complete'));
        else resolve();
      });
    });
    this.done.catch(() => undefined); // observed by consume(); a discarded body's end is of no interest
  }
  get status(): number {
    return this.res.statusCode ?? 0;
  }
  get statusText(): string {
    return this.res.statusMessage ?? '';
  }
  header(name: string): string | null {
    const v = this.res.headers[name.toLowerCase()];
    return v === undefined ? null : Array.isArray(v) ? v.join(', ') : v;
  }
  /** Throw the body away (the socket is closed). */
  discard(): void {
    this.failed ??= new Error('discarded');
    this.res.destroy();
  }
  /** Call `onChunk` for every chunk, in order; rejects when the connection ends before the body is complete. */
  async consume(onChunk: (chunk: Buffer) => void): Promise<void> {
    for (const c of this.queue.splice(0)) onChunk(c);
    this.sink = onChunk;
    await this.done;
  }
  async text(): Promise<string> {
    const parts: Buffer[] = [];
    await this.consume((c) => void parts.push(c));
    return Buffer.concat(parts).toString('utf8');
  }
}

const MAX_REDIRECTS = 5;

/** One GET (following redirects); a failure to connect or an idle socket is retryable. */
async function get(client: HttpClient, url: string, headers: Record<string, string>, redirects = 0): Promise<Reply> {
  const res = await new Promise<IncomingMessage>((resolve, reject) => {
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      reject(new FetchError(`invalid URL: ${url}`, url, 1));
      return;
    }
    const send = u.protocol === 'https:' ? httpsRequest : u.protocol === 'http:' ? httpRequest : null;
    if (!send) {
      reject(new FetchError(`unsupported URL scheme ${u.protocol} (${url})`, url, 1));
      return;
    }
    const req = send(
      u,
      { method: 'GET', headers: { 'user-agent': client.userAgent, 'accept-encoding': 'identity', ...headers } },
      resolve,
    );
    req.setTimeout(client.policy.timeoutMs, () =>
      req.destroy(Object.assign(new Error('timed out'), { code: 'ETIMEDOUT' })),
    );
    req.on('error', (e) => reject(new RetryableError(`connection failed: ${describe(e)}`)));
    req.end();
  });
  const location = res.headers.location;
  if (res.statusCode && [301, 302, 303, 307, 308].includes(res.statusCode) && location) {
    res.destroy();
    if (redirects >= MAX_REDIRECTS) throw new FetchError(`more than ${MAX_REDIRECTS} redirects from ${url}`, url, 1);
    return get(client, new URL(location, url).toString(), headers, redirects + 1);
  }
  return new Reply(res);
}

/** Throw for a status that is not a success: 429 and 5xx are retryable, other statuses are not. */
function checkStatus(res: Reply, client: HttpClient): void {
  if (res.status === 429 || res.status >= 500) {
    res.discard();
    throw new RetryableError(
      `HTTP ${res.status}${res.statusText ? ' ' + res.statusText : ''}`,
      parseRetryAfter(res.header('retry-after'), client.deps.now()),
    );
  }
}

/** The network error's most telling part: its code (ECONNRESET, ECONNREFUSED…), else its message. */
function describe(e: unknown): string {
  const err = e as { message?: string; code?: string };
  return err.code ?? err.message ?? String(e);
}

/**
 * GET a JSON document and check it with `check` (which throws `RetryableError` for a body worth
 * asking again, any other error to stop); 429, 5xx, dropped connections and malformed JSON are
 * retried with the same budget.
 */
export async function getJson<T>(
  client: HttpClient,
  url: string,
  check: (doc: unknown) => T,
): Promise<{ value: T; attempts: number }> {
  return withRetries(client, url, async () => {
    const res = await get(client, url, { accept: 'application/json' });
    checkStatus(res, client);
    if (res.status !== 200) {
      res.discard();
      throw new FetchError(`HTTP ${res.status} from ${url}`, url, 1);
    }
    let text: string;
    try {
      text = await res.text();
    } catch (e) {
      throw new RetryableError(`connection dropped mid-body: ${describe(e)}`);
    }
    let doc: unknown;
    try {
      doc = JSON.parse(text) as unknown;
    } catch {
      throw new RetryableError(`malformed JSON (${text.length} characters)`);
    }
    return check(doc);
  });
}

/** Validators of the copy already on disk: sent as `If-None-Match` / `If-Modified-Since`. */
export interface Validators {
  etag: string | null;
  lastModified: string | null;
}

export interface DownloadResult {
  status: 'fetched' | 'not_modified';
  attempts: number;
  /** A broken transfer was continued with a range request. */
  resumed: boolean;
  etag: string | null;
  lastModified: string | null;
  /** Size and SHA-256 of the file now in place (null for a 304). */
  bytes: number | null;
  sha256: string | null;
}

/** One download across its attempts: what it asks for and how much of the part file it has. */
interface DownloadState {
  client: HttpClient;
  url: string;
  part: string;
  previous: Validators | null;
  /** The request may be conditional: validators were given and `dest` exists. */
  conditional: boolean;
  /** Bytes in the part file. */
  have: number;
  /** The `If-Range` value for resuming the part file; null when it cannot be resumed. */
  resumeWith: string | null;
  resumed: boolean;
  etag: string | null;
  lastModified: string | null;
}

/** Start the part file over: nothing to resume from. */
async function restartPart(s: DownloadState): Promise<void> {
  s.have = 0;
  s.resumeWith = null;
  await rm(s.part, { force: true });
}

/** The headers of an attempt: a range from the part file's end, else (starting over) the validators. */
async function attemptHeaders(s: DownloadState, resuming: boolean): Promise<Record<string, string>> {
  const headers: Record<string, string> = {};
  if (resuming) {
    headers.range = `bytes=${s.have}-`;
    headers['if-range'] = s.resumeWith!;
  } else {
    await restartPart(s);
    if (s.conditional) {
      if (s.previous!.etag) headers['if-none-match'] = s.previous!.etag;
      if (s.previous!.lastModified) headers['if-modified-since'] = s.previous!.lastModified;
    }
  }
  return headers;
}

/**
 * Take the reply of an attempt or throw: 429 and 5xx (retryable), a range the server cannot
 * satisfy (start over), any other status but 200 and 206, an HTML page instead of the file.
 */
async function checkDownloadReply(s: DownloadState, res: Reply, resuming: boolean): Promise<void> {
  const { client, url } = s;
  checkStatus(res, client);
  if (res.status === 416 && resuming) {
    res.discard();
    await restartPart(s);
    throw new RetryableError('range not satisfiable; restarting the download', 0);
  }
  if (res.status !== 200 && res.status !== 206) {
    res.discard();
    throw new FetchError(`HTTP ${res.status}${res.statusText ? ' ' + res.statusText : ''} from ${url}`, url, 1);
  }
  if ((res.header('content-type') ?? '').toLowerCase().includes('text/html')) {
    res.discard();
    throw new FetchError(`${url} answered an HTML page, not the data file`, url, 1);
  }
}

/**
 * Where the body goes and how long the file is (null when not said): a 206 continues the part
 * file when it starts where the part file ends (else start over); a 200 is the whole file, and
 * its validators say whether a broken transfer can be resumed.
 */
async function acceptBody(s: DownloadState, res: Reply, resuming: boolean): Promise<number | null> {
  let expected = contentLength(res.header('content-length'));
  if (res.status === 206) {
    const range = /^bytes (\d+)-(\d+)\/(\d+|\*)$/.exec(res.header('content-range') ?? '');
    if (!resuming || !range || Number(range[1]) !== s.have) {
      res.discard();
      await restartPart(s);
      throw new RetryableError('unexpected partial content; restarting the download', 0);
    }
    expected = range[3] === '*' ? null : Number(range[3]);
    s.resumed = true;
  } else {
    await restartPart(s); // a 200 is the whole file, whatever was asked
    s.etag = res.header('etag');
    s.lastModified = res.header('last-modified');
  }
  if (res.status === 200) {
    const strongEtag = s.etag && !s.etag.startsWith('W/') ? s.etag : null;
    s.resumeWith = /\bbytes\b/i.test(res.header('accept-ranges') ?? '') ? (strongEtag ?? s.lastModified) : null;
  }
  return expected;
}

/**
 * Append the body to the part file. A dropped connection or a short body is retryable, the part
 * file kept when it can be resumed; a body longer than said starts over.
 */
async function writePart(s: DownloadState, res: Reply, expected: number | null): Promise<void> {
  let dropped: RetryableError | null = null;
  const fd = openSync(s.part, res.status === 206 ? 'a' : 'w');
  try {
    await res.consume((chunk) => {
      writeSync(fd, chunk);
      s.have += chunk.length;
    });
  } catch (e) {
    dropped = new RetryableError(
      `connection dropped after ${s.have} bytes${expected !== null ? ` of ${expected}` : ''}: ${describe(e)}`,
    );
  } finally {
    closeSync(fd);
  }
  if (dropped) {
    if (s.resumeWith === null) await restartPart(s);
    throw dropped;
  }
  if (expected !== null && s.have !== expected) {
    const msg = `truncated body: ${s.have} of ${expected} bytes`;
    if (s.have > expected || s.resumeWith === null) await restartPart(s);
    throw new RetryableError(msg);
  }
}

/** One attempt: true when the server answered 304 (the copy on disk is current). */
async function downloadAttempt(s: DownloadState): Promise<boolean> {
  const resuming = s.have > 0 && s.resumeWith !== null;
  const headers = await attemptHeaders(s, resuming);
  const res = await get(s.client, s.url, headers);
  if (res.status === 304 && s.conditional && !resuming) {
    res.discard();
    return true;
  }
  await checkDownloadReply(s, res, resuming);
  const expected = await acceptBody(s, res, resuming);
  await writePart(s, res, expected);
  return false;
}

/**
 * Download `url` to `dest`: the body goes to `dest.part` and is renamed onto `dest` only when
 * complete (its size matches `Content-Length`). With `previous` validators and an existing
 * `dest`, the request is conditional and a 304 leaves `dest` untouched. A transfer broken part
 * way (dropped connection, truncated body) is continued with `Range` + `If-Range` when the server
 * advertised `Accept-Ranges: bytes` and a validator, else restarted. Throws `FetchError` when it
 * gives up; `dest` is then unchanged and the part file removed.
 */
export async function downloadFile(
  client: HttpClient,
  url: string,
  dest: string,
  previous: Validators | null,
): Promise<DownloadResult> {
  const part = `${dest}.part`;
  await rm(part, { force: true });
  const conditional =
    previous !== null && (previous.etag !== null || previous.lastModified !== null) && (await exists(dest));
  const s: DownloadState = {
    client,
    url,
    part,
    previous,
    conditional,
    have: 0,
    resumeWith: null,
    resumed: false,
    etag: null,
    lastModified: null,
  };
  try {
    const { value: notModified, attempts } = await withRetries(client, url, () => downloadAttempt(s));
    if (notModified) {
      return {
        status: 'not_modified',
        attempts,
        resumed: false,
        etag: previous!.etag,
        lastModified: previous!.lastModified,
        bytes: null,
        sha256: null,
      };
    }
    const sha256 = await sha256File(part);
    const bytes = (await stat(part)).size;
    await rename(part, dest);
    return {
      status: 'fetched',
      attempts,
      resumed: s.resumed,
      etag: s.etag,
      lastModified: s.lastModified,
      bytes,
      sha256,
    };
  } catch (e) {
    await rm(part, { force: true });
    throw e;
  }
}

function contentLength(v: string | null): number | null {
  return v !== null && /^\d+$/.test(v.trim()) ? Number(v) : null;
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

/** SHA-256 (hex) of a file, streamed. */
export async function sha256File(path: string): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(path)) h.update(chunk as Buffer);
  return h.digest('hex');
}
