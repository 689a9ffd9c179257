/**
 * Query-parameter tokens for GIS clients that cannot send an `Authorization` header (some
 * ArcGIS / web-map setups can only add URL parameters). A token is the API key sealed with
 * AES-256-GCM under the server's `GIS_TOKEN_SECRET`, with an expiry:
 *
 *   gt_<base64url(iv ‖ ciphertext ‖ tag)>      plaintext = {"k": "<api key>", "e": <expiry, epoch s>}
 *
 * so the key itself never appears in a URL, a proxy log or a QGIS project file; a leaked token
 * stops working at its expiry (and at once when its key is revoked, as the key is checked on
 * every request). Tokens are minted by `GET /v1/feeds/token` with the Bearer header and accepted
 * as `access_token=…` on the GIS paths only (`/v1/feeds/…`, `/v1/ogc/…`), where every link the
 * API writes carries it on.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

export const GIS_TOKEN_PREFIX = 'gt_';
/** Default and maximum lifetime of a token, seconds. */
export const GIS_TOKEN_TTL_DEFAULT_S = 24 * 3600;
export const GIS_TOKEN_TTL_MAX_S = 30 * 24 * 3600;

/** The AES key derived from the configured secret. */
export function tokenKey(secret: string): Buffer {
  return createHash('sha256').update('leads-gis-token\u0000').update(secret).digest();
}

/** Seal `apiKey` into a token valid until `expiresAt` (epoch seconds). */
export function mintGisToken(apiKey: string, expiresAt: number, key: Buffer): string {
  const iv = randomBytes(12);
  const c = createCipheriv('aes-256-gcm', key, iv);
  const body = Buffer.concat([c.update(JSON.stringify({ k: apiKey, e: expiresAt }), 'utf8'), c.final()]);
  return GIS_TOKEN_PREFIX + Buffer.concat([iv, body, c.getAuthTag()]).toString('base64url');
}

/**
 * The API key sealed in `token`, or why it cannot be used. `key` may be a list: the current key
 * first, then those of previous secrets (`GIS_TOKEN_SECRETS_PREVIOUS`), so tokens minted before a
 * rotation keep working until they expire.
 */
export function openGisToken(
  token: string,
  key: Buffer | readonly Buffer[],
  nowS: number,
): { apiKey: string } | { error: 'malformed' | 'expired' } {
  if (Array.isArray(key)) {
    let r: ReturnType<typeof openGisToken> = { error: 'malformed' };
    for (const k of key as readonly Buffer[])
      if ('apiKey' in (r = openGisToken(token, k, nowS)) || r.error === 'expired') return r;
    return r;
  }
  return openWith(token, key as Buffer, nowS);
}

function openWith(token: string, key: Buffer, nowS: number): { apiKey: string } | { error: 'malformed' | 'expired' } {
  if (!token.startsWith(GIS_TOKEN_PREFIX) || !/^[A-Za-z0-9_-]+$/.test(token.slice(GIS_TOKEN_PREFIX.length)))
    return { error: 'malformed' };
  const raw = Buffer.from(token.slice(GIS_TOKEN_PREFIX.length), 'base64url');
  if (raw.length < 12 + 16 + 2) return { error: 'malformed' };
  try {
    const d = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
    d.setAuthTag(raw.subarray(raw.length - 16));
    const text = Buffer.concat([d.update(raw.subarray(12, raw.length - 16)), d.final()]).toString('utf8');
    const p = JSON.parse(text) as { k?: unknown; e?: unknown };
    if (typeof p.k !== 'string' || typeof p.e !== 'number') return { error: 'malformed' };
    if (p.e <= nowS) return { error: 'expired' };
    return { apiKey: p.k };
  } catch {
    return { error: 'malformed' };
  }
}
