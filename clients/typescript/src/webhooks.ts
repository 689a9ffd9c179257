/**
 * Webhook signature verification (docs/webhooks.md "Signatures", the Standard Webhooks scheme):
 * `webhook-signature` holds `v1,<base64 HMAC-SHA256(key, "<webhook-id>.<webhook-timestamp>.<raw body>")>`
 * per valid secret (space-separated during a rotation), the key being the base64 part after `whsec_`.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export interface VerifyOptions {
  /** Unix seconds to check the timestamp against (default: now). */
  nowS?: number;
  /** Largest accepted distance between the timestamp and now (default 300 s). */
  toleranceS?: number;
}

const keyOf = (secret: string): Buffer => Buffer.from(secret.startsWith('whsec_') ? secret.slice(6) : secret, 'base64');
const same = (a: string, b: string): boolean => {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
};
const header = (h: Headers | Record<string, string | string[] | undefined>, name: string): string => {
  const v = h instanceof Headers ? h.get(name) : (h[name] ?? h[name.toLowerCase()]);
  return (Array.isArray(v) ? v[0] : v) ?? '';
};

/**
 * True when `rawBody` (the exact bytes received, before any JSON parsing) carries a valid
 * signature for `secret` and a timestamp within the tolerance. Headers as a fetch `Headers` or
 * Node's lower-cased `req.headers`.
 *
 * @example
 *   if (!verifyWebhook(process.env.WEBHOOK_SECRET!, rawBody, req.headers)) return res.writeHead(400).end();
 */
export function verifyWebhook(
  secret: string,
  rawBody: string | Uint8Array,
  headers: Headers | Record<string, string | string[] | undefined>,
  opts: VerifyOptions = {},
): boolean {
  const id = header(headers, 'webhook-id');
  const ts = header(headers, 'webhook-timestamp');
  const now = opts.nowS ?? Math.floor(Date.now() / 1000);
  if (!id || !/^\d+$/.test(ts) || Math.abs(now - Number(ts)) > (opts.toleranceS ?? 300)) return false;
  const expected = 'v1,' + createHmac('sha256', keyOf(secret)).update(`${id}.${ts}.`).update(rawBody).digest('base64');
  return header(headers, 'webhook-signature')
    .split(' ')
    .some((s) => same(s, expected));
}
