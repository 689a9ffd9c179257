/**
 * Unsubscribe links of alert e-mails, which work without signing in: the token is the search's
 * id and an HMAC-SHA256 of it under the search's own `unsubscribe_key` (32 random bytes kept in
 * the state store, api/state/search-store.ts), so it is unguessable, checked in constant time,
 * needs no server-wide secret (the CLI that sends and every replica that answers read the same
 * key) and dies with the search. It only turns that search's alert off.
 *
 * @example unsubscribeToken({ id: 'ss_4f…', unsubscribe_key: '…' }) // 'ss_4f….Zx3…' (URL-safe)
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** A search id and its signature: `ss_<24 hex>.<43 base64url>`. */
export const UNSUBSCRIBE_TOKEN = /^(ss_[0-9a-f]{24})\.([A-Za-z0-9_-]{43})$/;

/** A new per-search key (stored with the search). */
export const newUnsubscribeKey = (): string => randomBytes(32).toString('base64url');

const sign = (id: string, key: string): Buffer => createHmac('sha256', key).update(`unsubscribe:${id}`).digest();

/** The token of a search's unsubscribe link. */
export function unsubscribeToken(s: { id: string; unsubscribe_key: string }): string {
  return `${s.id}.${sign(s.id, s.unsubscribe_key).toString('base64url')}`;
}

/** The search id a well-formed token names, or null (then nothing is looked up). */
export function tokenSearchId(token: string): string | null {
  return UNSUBSCRIBE_TOKEN.exec(token)?.[1] ?? null;
}

/** Whether `token` was signed for `s` (constant time). */
export function tokenValid(token: string, s: { id: string; unsubscribe_key: string }): boolean {
  const m = UNSUBSCRIBE_TOKEN.exec(token);
  if (!m || m[1] !== s.id) return false;
  // compared as text: the one encoding of the signature (base64url's last character has spare bits)
  const given = Buffer.from(m[2]!, 'latin1');
  const want = Buffer.from(sign(s.id, s.unsubscribe_key).toString('base64url'), 'latin1');
  return given.length === want.length && timingSafeEqual(given, want);
}
