/** Password hashing of the account area: scrypt with the documented parameters, per-password salt, constant-time verify. */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { scryptSync } from 'node:crypto';
import {
  hashPassword,
  passwordRefusal,
  PASSWORD_MIN_LENGTH,
  SCRYPT,
  verifyPassword,
} from '../../../api/app-area/passwords.ts';

test('hashes carry their parameters and a fresh salt; they verify the password and nothing else', async () => {
  const h1 = await hashPassword('correct horse battery staple');
  // what does not depend on the cost is checked on hashes at a cheaper one (~0.3 s of CPU less each)
  const lowCost = { logN: 10, r: 8, p: 1 };
  const c1 = await hashPassword('correct horse battery staple', lowCost);
  const c2 = await hashPassword('correct horse battery staple', lowCost);
  const [kdf, logN, r, p, salt, key] = h1.split('$');
  assert.equal([kdf, Number(logN), Number(r), Number(p)], ['scrypt', SCRYPT.logN, SCRYPT.r, SCRYPT.p]);
  assert.equal([SCRYPT.logN, SCRYPT.r, SCRYPT.p], [17, 8, 1], 'the documented parameters (docs/app.md)');
  assert.is(Buffer.from(salt!, 'base64url').length, 16);
  assert.equal(c1.split('$').slice(0, 4), ['scrypt', '10', '8', '1'], 'a cost given is the one written');
  assert.is.not(c1.split('$')[4], c2.split('$')[4], 'a salt per password');
  assert.is.not(c1.split('$')[4], salt, 'a salt per password');
  // an independent derivation with the stored parameters gives the stored key
  const expected = scryptSync('correct horse battery staple', Buffer.from(salt!, 'base64url'), 32, {
    N: 2 ** 17,
    r: 8,
    p: 1,
    maxmem: 256 * 1024 * 1024,
  });
  assert.is(expected.toString('base64url'), key);
  assert.ok(await verifyPassword('correct horse battery staple', h1));
  assert.ok(await verifyPassword('correct horse battery staple', c1));
  assert.not.ok(await verifyPassword('correct horse battery stapler', c1));
  assert.not.ok(await verifyPassword('', c1));
  assert.not.ok(await verifyPassword('correct horse battery staple', 'plain text'));
  // hashes made with other (e.g. older, cheaper) parameters still verify
  const cheap = scryptSync('old password!', Buffer.from('salt'), 32, { N: 1024, r: 8, p: 1 }).toString('base64url');
  assert.ok(
    await verifyPassword('old password!', `scrypt$10$8$1$${Buffer.from('salt').toString('base64url')}$${cheap}`),
  );
});

test('new passwords: at least 12 characters (counted as characters, not bytes), at most 1024', () => {
  assert.is(PASSWORD_MIN_LENGTH, 12);
  assert.match(passwordRefusal('eleven char')!, /at least 12/);
  assert.is(passwordRefusal('twelve chars'), null);
  assert.match(passwordRefusal('ééééééééééé')!, /at least 12/);
  assert.match(passwordRefusal('x'.repeat(1025))!, /at most 1024/);
});

test.run();
