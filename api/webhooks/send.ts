/**
 * One HTTP POST of a webhook delivery: through the SSRF guard (`destination.ts`: a literal
 * address in any spelling is judged here, a name by `guardedLookup` on what the resolver returns
 * at connect time), with a total timeout, no redirects followed (a 3xx is a failed attempt), and
 * the answer's body read and discarded (at most 64 KB). Never throws: every failure is a
 * `SendResult` with `error`.
 */
import http from 'node:http';
import https from 'node:https';
import { canonicalIp } from '../http/ip-address.ts';
import {
  allowListed,
  describeAddress,
  guardedLookup,
  isPublicAddress,
  normaliseHost,
  systemResolver,
  type HostResolver,
} from './destination.ts';

export interface SendResult {
  statusCode: number | null;
  retryAfter: string | null;
  error: string | null;
  latencyMs: number;
}

export interface SendOptions {
  timeoutMs: number;
  allowHosts: readonly string[];
  /** Keep-alive agents (one pair per dispatcher). */
  agents?: { http: http.Agent; https: https.Agent };
  /** How host names are resolved (default: the system resolver). */
  resolveHost?: HostResolver;
}

const RESPONSE_BYTES_MAX = 64 * 1024;

/** Keep-alive agents for a dispatcher sending to many destinations. */
export function sendAgents(maxSockets = 16): { http: http.Agent; https: https.Agent } {
  return {
    http: new http.Agent({ keepAlive: true, maxSockets }),
    https: new https.Agent({ keepAlive: true, maxSockets }),
  };
}

/** POST `body` to `url` with `headers`; resolves with the status (or the error) and the latency. */
export function postDelivery(
  url: string,
  headers: Record<string, string>,
  body: string,
  o: SendOptions,
): Promise<SendResult> {
  const started = performance.now();
  const done = (statusCode: number | null, retryAfter: string | null, error: string | null): SendResult => ({
    statusCode,
    retryAfter,
    error,
    latencyMs: Math.round(performance.now() - started),
  });
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return Promise.resolve(done(null, null, 'invalid destination URL'));
  }
  const raw = u.hostname.replace(/^\[|\]$/g, '');
  const host = normaliseHost(raw);
  // Literal addresses never go through `lookup`: check them here, in every spelling.
  if (canonicalIp(host, true) && !isPublicAddress(host) && !allowListed(host, o.allowHosts)) {
    return Promise.resolve(
      done(
        null,
        null,
        `destination ${describeAddress(raw)} is a private or loopback address; add it to WEBHOOK_ALLOW_HOSTS to allow it`,
      ),
    );
  }
  const mod = u.protocol === 'https:' ? https : http;
  const payload = Buffer.from(body, 'utf8');
  return new Promise<SendResult>((resolve) => {
    let settled = false;
    const finish = (r: SendResult): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(r);
    };
    const req = mod.request(
      u,
      {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          'Content-Length': String(payload.length),
          'User-Agent': 'leads-webhooks/1',
          ...headers,
        },
        lookup: guardedLookup(o.allowHosts, o.resolveHost ?? systemResolver),
        agent: o.agents ? (u.protocol === 'https:' ? o.agents.https : o.agents.http) : undefined,
      },
      (res) => {
        let read = 0;
        const status = res.statusCode ?? null;
        const retryAfter = (res.headers['retry-after'] as string | undefined) ?? null;
        res.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (read > RESPONSE_BYTES_MAX) res.destroy();
        });
        res.on('end', () => finish(done(status, retryAfter, null)));
        res.on('close', () => finish(done(status, retryAfter, null)));
        res.on('error', () => finish(done(status, retryAfter, null)));
      },
    );
    const timer = setTimeout(() => {
      req.destroy(new Error(`timed out after ${o.timeoutMs} ms`));
    }, o.timeoutMs);
    req.on('error', (e: Error & { code?: string }) =>
      finish(done(null, null, e.message || e.code || 'connection error')),
    );
    req.end(payload);
  });
}
