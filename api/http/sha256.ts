/**
 * SHA-256 of a UTF-8 string as 64 hex digits, the one helper for it: the hashes taken on every
 * request (the key's hash in auth, the ETag, the filters hash of a cursor), and the stored hashes
 * of session secrets and licence claim tokens: `crypto.hash`, one native call (~0.4 µs
 * for a short text), where the runtime has it (Node ≥ 20.12), else `createHash` (~1 µs: a Hash
 * object per call). The same digest either way.
 *
 * @example sha256Hex('abc') // 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'
 */
import * as crypto from 'node:crypto';

export const sha256Hex: (text: string) => string =
  typeof crypto.hash === 'function'
    ? (text) => crypto.hash('sha256', text, 'hex')
    : (text) => crypto.createHash('sha256').update(text, 'utf8').digest('hex');
