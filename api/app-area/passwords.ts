/**
 * Passwords of the account area, hashed with scrypt (memory-hard; Node's `crypto.scrypt`, run
 * on libuv's thread pool so the event loop keeps serving). Parameters follow OWASP's password
 * storage guidance for scrypt: N = 2^17, r = 8, p = 1 (128 MiB and a few hundred ms per hash), a
 * 16-byte random salt per password and a 32-byte key. They are written into each stored hash
 * (`scrypt$17$8$1$<salt>$<key>`, base64url), so raising them later leaves old hashes readable.
 * Verification compares in constant time (`timingSafeEqual`). The cost is a parameter only so that
 * the tests' servers can hash at a cheaper one (`AppDeps.passwordCost`); the server's command line
 * and environment never set it.
 */
import { randomBytes, scrypt as scryptCb, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/** Shortest password accepted (NIST SP 800-63B asks for at least 8; we ask for 12). */
export const PASSWORD_MIN_LENGTH = 12;
/** Longest password accepted (a bound on the work an attacker can make one request cost). */
export const PASSWORD_MAX_LENGTH = 1024;

/** The scrypt parameters new hashes are made with: N = 2^logN, r, p. */
export const SCRYPT = { logN: 17, r: 8, p: 1, keyBytes: 32, saltBytes: 16 } as const;

/** The cost part of scrypt's parameters (N = 2^logN, r, p): `SCRYPT`'s unless a test server sets another. */
export interface ScryptCost {
  readonly logN: number;
  readonly r: number;
  readonly p: number;
}

const scrypt = (password: string, salt: Buffer, keyBytes: number, o: ScryptOptions): Promise<Buffer> =>
  new Promise((resolve, reject) =>
    scryptCb(password.normalize('NFC'), salt, keyBytes, o, (e, key) => (e ? reject(e) : resolve(key))),
  );

const options = (logN: number, r: number, p: number): ScryptOptions => ({
  N: 2 ** logN,
  r,
  p,
  maxmem: 2 * 128 * r * 2 ** logN + 1024 * 1024,
});

/** Why a new password is refused, or null when it is acceptable. */
export function passwordRefusal(password: string): string | null {
  if ([...password].length < PASSWORD_MIN_LENGTH) return `a password needs at least ${PASSWORD_MIN_LENGTH} characters`;
  if (password.length > PASSWORD_MAX_LENGTH) return `a password may have at most ${PASSWORD_MAX_LENGTH} characters`;
  return null;
}

/** Hash a password for storage: `scrypt$logN$r$p$salt$key`, at `SCRYPT`'s cost unless `cost` says otherwise. */
export async function hashPassword(password: string, cost: ScryptCost = SCRYPT): Promise<string> {
  const salt = randomBytes(SCRYPT.saltBytes);
  const key = await scrypt(password, salt, SCRYPT.keyBytes, options(cost.logN, cost.r, cost.p));
  return ['scrypt', cost.logN, cost.r, cost.p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

const STORED = /^scrypt\$(\d{1,2})\$(\d{1,2})\$(\d{1,2})\$([A-Za-z0-9_-]+)\$([A-Za-z0-9_-]+)$/;

/** Whether `password` matches `stored` (constant-time comparison of the derived keys). */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const m = STORED.exec(stored);
  if (!m || password.length > PASSWORD_MAX_LENGTH) return false;
  const expected = Buffer.from(m[5]!, 'base64url');
  const key = await scrypt(
    password,
    Buffer.from(m[4]!, 'base64url'),
    expected.length,
    options(Number(m[1]), Number(m[2]), Number(m[3])),
  );
  return key.length === expected.length && timingSafeEqual(key, expected);
}

/**
 * A hash to verify against when the account does not exist, so that answer takes as long as a
 * wrong password: one per cost (the server's new hashes' cost), made on first use.
 */
const dummies = new Map<string, Promise<string>>();
export function dummyPasswordHash(cost: ScryptCost = SCRYPT): Promise<string> {
  const key = `${cost.logN}$${cost.r}$${cost.p}`;
  let dummy = dummies.get(key);
  if (!dummy) dummies.set(key, (dummy = hashPassword(randomBytes(16).toString('hex'), cost)));
  return dummy;
}
