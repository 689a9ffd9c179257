/**
 * API keys: 256-bit random secrets with a scope-revealing prefix (`lk_ea_…`), stored only as a
 * SHA-256 hash. The raw key exists once, in the output of `leads keys create`.
 */
import { randomBytes } from 'node:crypto';
import { sha256Hex } from '../http/sha256.ts';
import { KEY_PREFIX, type Scope } from './scopes.ts';

/** A raw key: `lk_` + scope code + `_` + 43 base64url characters (32 random bytes). */
export const KEY_PATTERN = /^lk_(cw|ea|ef|cu)_[A-Za-z0-9_-]{43}$/;

export interface GeneratedKey {
  /** Public key id, safe to log and show (`key_` + 16 hex). */
  id: string;
  /** The secret, shown to the user once. */
  raw: string;
  /** SHA-256 hex of `raw`, the only thing stored. */
  hash: string;
  /** Prefix plus the first 4 secret characters, for recognising the key in lists. */
  displayPrefix: string;
}

/**
 * Make a new key for a scope.
 * @example generateKey('ent_api') // { id: 'key_9f…', raw: 'lk_ea_Xb3…', hash: '5e…', displayPrefix: 'lk_ea_Xb3q' }
 */
export function generateKey(scope: Scope): GeneratedKey {
  const secret = randomBytes(32).toString('base64url');
  const raw = KEY_PREFIX[scope] + secret;
  return {
    id: 'key_' + randomBytes(8).toString('hex'),
    raw,
    hash: hashKey(raw),
    displayPrefix: KEY_PREFIX[scope] + secret.slice(0, 4),
  };
}

/** SHA-256 hex of a raw key (how keys are stored and looked up). */
export function hashKey(raw: string): string {
  return sha256Hex(raw);
}

/**
 * Extract the key from an `Authorization` header: the token, or `'missing'` when there is no
 * header, or `'malformed'` when it is not `Bearer <key>` with a well-formed key.
 */
export function parseBearer(header: string | undefined | null): string | 'missing' | 'malformed' {
  if (header === undefined || header === null || header.trim() === '') return 'missing';
  const m = /^Bearer +(\S+) *$/i.exec(header.trim());
  if (!m) return 'malformed';
  const token = m[1]!;
  return KEY_PATTERN.test(token) ? token : 'malformed';
}
