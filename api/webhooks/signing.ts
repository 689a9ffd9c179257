/**
 * Webhook signing (docs/webhooks.md). A secret is `whsec_` + base64 of 32 random bytes (the
 * Standard Webhooks convention); the HMAC key is the base64-decoded part. Every delivery carries:
 *
 *   X-Service-Signature: sha256=<hex HMAC-SHA256(key, raw body)>
 *   X-Service-Timestamp: <unix seconds of this attempt>
 *   webhook-id:          <event id, the same on every redelivery>
 *   webhook-timestamp:   <unix seconds of this attempt>
 *   webhook-signature:   v1,<base64 HMAC-SHA256(key, "<webhook-id>.<webhook-timestamp>.<raw body>")>
 *
 * During a secret rotation's overlap window each signature header carries one signature per
 * valid secret, newest first (`sha256=<new>, sha256=<old>`; `v1,<new> v1,<old>`), so receivers
 * still holding the old secret keep verifying.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export const SECRET_PREFIX = 'whsec_';
export const SECRET_PATTERN = /^whsec_[A-Za-z0-9+/]{43}=$/;

/** A new signing secret: `whsec_` + base64 of 32 random bytes. */
export function generateSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64');
}

/** The HMAC key of a secret (base64-decoded bytes after `whsec_`). */
export function secretKey(secret: string): Buffer {
  const b64 = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  const key = Buffer.from(b64, 'base64');
  if (key.length === 0) throw new Error('empty webhook secret');
  return key;
}

/** `sha256=<hex>`: HMAC-SHA256 of the raw body (the X-Service-Signature value for one secret). */
export function serviceSignature(secret: string, body: string | Buffer): string {
  return 'sha256=' + createHmac('sha256', secretKey(secret)).update(body).digest('hex');
}

/** `v1,<base64>`: the Standard Webhooks signature of `<id>.<timestamp>.<body>` for one secret. */
export function standardSignature(secret: string, id: string, timestamp: number, body: string | Buffer): string {
  const h = createHmac('sha256', secretKey(secret));
  h.update(`${id}.${timestamp}.`);
  h.update(body);
  return 'v1,' + h.digest('base64');
}

/**
 * The signing headers of one attempt. `secrets` newest first (the previous secret too while its
 * rotation overlap lasts).
 *
 * @example signatureHeaders({ id: 'evt_1', timestamp: 1767225600, body: '{}', secrets: [secret] })
 */
export function signatureHeaders(o: {
  id: string;
  timestamp: number;
  body: string;
  secrets: string[];
}): Record<string, string> {
  return {
    'X-Service-Signature': o.secrets.map((s) => serviceSignature(s, o.body)).join(', '),
    'X-Service-Timestamp': String(o.timestamp),
    'webhook-id': o.id,
    'webhook-timestamp': String(o.timestamp),
    'webhook-signature': o.secrets.map((s) => standardSignature(s, o.id, o.timestamp, o.body)).join(' '),
  };
}

/** Constant-time string comparison (false on different lengths without comparing). */
export function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * Receiver-side check, as docs/webhooks.md shows it: true when one of the `webhook-signature`
 * entries matches for `secret` and the timestamp is within `toleranceSeconds` of `nowSeconds`.
 */
export function verifyStandard(
  secret: string,
  headers: { id: string; timestamp: string; signature: string },
  body: string | Buffer,
  nowSeconds: number,
  toleranceSeconds = 300,
): boolean {
  const ts = Number(headers.timestamp);
  if (!Number.isInteger(ts) || Math.abs(nowSeconds - ts) > toleranceSeconds) return false;
  const expected = standardSignature(secret, headers.id, ts, body);
  return headers.signature.split(' ').some((s) => safeEqual(s, expected));
}

/** Receiver-side check of X-Service-Signature: one of its `sha256=` entries matches for `secret`. */
export function verifyService(secret: string, header: string, body: string | Buffer): boolean {
  const expected = serviceSignature(secret, body);
  return header.split(',').some((s) => safeEqual(s.trim(), expected));
}
