/**
 * Keyset cursors shared by the list endpoints. A cursor is base64url JSON of
 * `{ k: sort key of the last row served, r: release id, f: hash of the filters and sort }`,
 * signed: `<payload>.<HMAC-SHA256 tag>` under `CURSOR_SECRET` (previous secrets in
 * `CURSOR_SECRETS_PREVIOUS` still verify, so a rotation does not break a walk in progress).
 * It is opaque to clients; a forged or altered cursor, or one made for another filter set or
 * sort, is rejected with a 400 `invalid_parameter` on `cursor` — never read. A cursor from an older release stays usable: ids and sort
 * keys are stable across releases, so the walk simply continues on the new data.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { ApiConfig } from '../config.ts';
import { invalidParams, type ApiError } from '../http/errors.ts';
import { sha256Hex } from '../http/sha256.ts';

export interface DecodedCursor {
  /** Sort key of the last row of the previous page. */
  key: unknown[];
  /** Release the previous page was served from. */
  release: string;
}

/**
 * JSON with object keys sorted at every level (so equal filters hash equally); members whose value
 * is undefined are left out; a frozen object's text is remembered. Written as loops over the keys (no arrays of parts per level): the
 * filters hash is taken for most list pages (every next_cursor).
 */
function stableJson(v: unknown): string {
  if (v !== null && typeof v === 'object' && Object.isFrozen(v)) {
    // a frozen value cannot change: its text is kept (a remembered polygon, api/gis/geometry.ts `parsePolygonText`)
    let text = frozenTexts.get(v);
    if (text === undefined) frozenTexts.set(v, (text = flattened(stableText(v))));
    return text;
  }
  return stableText(v);
}
const frozenTexts = new WeakMap<object, string>();

/**
 * `s`, made one piece in memory: V8 keeps a string built with `+=` as a tree of its pieces (a
 * polygon's text: ~1,000 of them), which every later copy walks again — each request's hash input
 * holds the remembered text, and walking its tree cost ~30 µs of the ~35 µs the hash took.
 * Reading a character flattens the tree in place (the string stays equal, only its layout changes).
 */
function flattened(s: string): string {
  s.charCodeAt(0);
  return s;
}

function stableText(v: unknown): string {
  if (Array.isArray(v)) {
    let s = '[';
    for (let i = 0; i < v.length; i++) {
      if (i > 0) s += ',';
      s += stableJson(v[i]) ?? ''; // (as Array.join writes an element JSON has no text for)
    }
    return s + ']';
  }
  if (v !== null && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    const keys = Object.keys(o).sort();
    let s = '{';
    for (const k of keys) {
      const x = o[k];
      if (x === undefined) continue;
      if (s.length > 1) s += ',';
      s += `${JSON.stringify(k)}:${stableJson(x)}`;
    }
    return s + '}';
  }
  return JSON.stringify(v);
}

/**
 * Hash (16 hex) of everything that decides a result order: the endpoint, the parsed filters and
 * the sort. Two requests get the same hash exactly when a cursor of one is valid for the other.
 *
 * @example filtersHash('infrastructure', { vertical: ['wind'] }, 'id')
 */
export function filtersHash(endpoint: string, filters: unknown, sort: string): string {
  return sha256Hex(stableJson({ endpoint, filters, sort })).slice(0, 16);
}

/** The secrets cursors are signed with: the current one signs and verifies, the previous ones (a rotation) only verify. */
export type CursorSecrets = Pick<ApiConfig, 'cursorSecret' | 'cursorSecretsPrevious'>;

const hmacKeys = new Map<string, Buffer>();
/** The HMAC key derived from a secret (cached; a secret is never used as a key directly). */
function hmacKey(secret: string): Buffer {
  let k = hmacKeys.get(secret);
  if (!k) {
    if (hmacKeys.size > 64) hmacKeys.clear();
    hmacKeys.set(secret, (k = createHash('sha256').update('leads-cursor\u0000').update(secret).digest()));
  }
  return k;
}

/** The 128-bit tag of a cursor's payload (base64url). */
const tag = (payload: string, secret: string): string =>
  createHmac('sha256', hmacKey(secret)).update(payload).digest().subarray(0, 16).toString('base64url');

const notOurs = (): ApiError =>
  invalidParams([
    {
      name: 'cursor',
      reason:
        'not a valid cursor of this API (it was changed, or made by another server); pass next_cursor unchanged, or start again without cursor',
    },
  ]);

/**
 * Encode the cursor that continues after the row with sort key `key`: `<payload>.<tag>`, the
 * payload base64url JSON, the tag an HMAC-SHA256 (128 bits) of it under the current secret.
 */
export function encodeCursor(key: readonly unknown[], releaseId: string, hash: string, secrets: CursorSecrets): string {
  const payload = Buffer.from(JSON.stringify({ k: key, r: releaseId, f: hash }), 'utf8').toString('base64url');
  return `${payload}.${tag(payload, secrets.cursorSecret)}`;
}

/**
 * Decode a client's cursor; throws 400 `invalid_parameter` naming `cursor` when its tag is not
 * one of the current or a previous secret's (forged, tampered with, or from another server), when
 * it is not one of ours, or when it was made for other filters or another sort (`hash` differs).
 */
export function decodeCursor(cursor: string, hash: string, secrets: CursorSecrets): DecodedCursor {
  const m = /^([A-Za-z0-9_-]{1,4096})\.([A-Za-z0-9_-]{22})$/.exec(cursor);
  if (!m || secrets.cursorSecret === '') throw notOurs();
  const [, payload, given] = m as unknown as [string, string, string];
  const givenBuf = Buffer.from(given, 'base64url');
  const signed = [secrets.cursorSecret, ...secrets.cursorSecretsPrevious].some((secret) => {
    const want = Buffer.from(tag(payload, secret), 'base64url');
    return want.length === givenBuf.length && timingSafeEqual(want, givenBuf);
  });
  if (!signed) throw notOurs();
  let p: unknown;
  try {
    p = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    throw notOurs();
  }
  const o = p as { k?: unknown; r?: unknown; f?: unknown };
  if (!o || typeof o !== 'object' || !Array.isArray(o.k) || typeof o.r !== 'string' || typeof o.f !== 'string')
    throw notOurs();
  if (o.f !== hash) {
    throw invalidParams([
      {
        name: 'cursor',
        reason:
          'the cursor was made for other filters or another sort; repeat the filters of the request that returned it',
      },
    ]);
  }
  return { key: o.k, release: o.r };
}
