/**
 * Keyset cursors shared by the list endpoints. A cursor is base64url JSON of
 * `{ k: sort key of the last row served, r: release id, f: hash of the filters and sort }`.
 * It is opaque to clients; a cursor made for another filter set or sort is rejected with a 400
 * `invalid_parameter` on `cursor`. A cursor from an older release stays usable: ids and sort
 * keys are stable across releases, so the walk simply continues on the new data.
 */
import { createHash } from 'node:crypto';
import { invalidParams } from '../errors.ts';

export interface DecodedCursor {
  /** Sort key of the last row of the previous page. */
  key: unknown[];
  /** Release the previous page was served from. */
  release: string;
}

/** JSON with object keys sorted at every level (so equal filters hash equally). */
function stableJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(stableJson).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o)
      .filter((k) => o[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stableJson(o[k])}`)
      .join(',')}}`;
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
  return createHash('sha256').update(stableJson({ endpoint, filters, sort })).digest('hex').slice(0, 16);
}

/** Encode the cursor that continues after the row with sort key `key`. */
export function encodeCursor(key: readonly unknown[], releaseId: string, hash: string): string {
  return Buffer.from(JSON.stringify({ k: key, r: releaseId, f: hash }), 'utf8').toString('base64url');
}

/**
 * Decode a client's cursor; throws 400 `invalid_parameter` naming `cursor` when it is not one of
 * ours, or was made for other filters or another sort (`hash` differs).
 */
export function decodeCursor(cursor: string, hash: string): DecodedCursor {
  let p: unknown;
  try {
    if (!/^[A-Za-z0-9_-]+$/.test(cursor)) throw new Error('not base64url');
    p = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalidParams([{ name: 'cursor', reason: 'not a valid cursor; pass next_cursor unchanged' }]);
  }
  const o = p as { k?: unknown; r?: unknown; f?: unknown };
  if (!o || typeof o !== 'object' || !Array.isArray(o.k) || typeof o.r !== 'string' || typeof o.f !== 'string') {
    throw invalidParams([{ name: 'cursor', reason: 'not a valid cursor; pass next_cursor unchanged' }]);
  }
  if (o.f !== hash) {
    throw invalidParams([{ name: 'cursor', reason: 'the cursor was made for other filters or another sort; repeat the filters of the request that returned it' }]);
  }
  return { key: o.k, release: o.r };
}
