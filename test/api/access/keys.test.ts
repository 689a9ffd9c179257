/** Key generation, hashing and Authorization header parsing. */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createHash } from 'node:crypto';
import { generateKey, hashKey, KEY_PATTERN, parseBearer } from '../../../api/access/keys.ts';
import { KEY_PREFIX, SCOPES } from '../../../api/access/scopes.ts';

test('generateKey: scope prefix, 256 random bits, sha256 hash, public id and display prefix', () => {
  for (const scope of SCOPES) {
    const k = generateKey(scope);
    assert.ok(k.raw.startsWith(KEY_PREFIX[scope]), k.raw.slice(0, 6));
    assert.match(k.raw, KEY_PATTERN);
    assert.is(Buffer.from(k.raw.slice(KEY_PREFIX[scope].length), 'base64url').length, 32);
    assert.is(k.hash, createHash('sha256').update(k.raw).digest('hex'));
    assert.match(k.id, /^key_[0-9a-f]{16}$/);
    assert.is(k.displayPrefix, k.raw.slice(0, KEY_PREFIX[scope].length + 4));
  }
});

test('generateKey: no two keys or ids alike', () => {
  const keys = Array.from({ length: 200 }, () => generateKey('ent_api'));
  assert.is(new Set(keys.map((k) => k.raw)).size, 200);
  assert.is(new Set(keys.map((k) => k.id)).size, 200);
});

test('hashKey is sha256 hex', () => {
  assert.is(hashKey('abc'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
});

test('parseBearer', () => {
  const good = generateKey('custom').raw;
  const cases: [string | undefined, string][] = [
    [undefined, 'missing'],
    ['', 'missing'],
    ['   ', 'missing'],
    [`Bearer ${good}`, good],
    [`bearer ${good}`, good],
    [`Bearer  ${good} `, good],
    [good, 'malformed'],
    [`Basic ${good}`, 'malformed'],
    ['Bearer', 'malformed'],
    ['Bearer abc', 'malformed'],
    [`Bearer ${good}x`, 'malformed'],
    [`Bearer ${good.replace('lk_cu_', 'lk_xx_')}`, 'malformed'],
    [`Bearer ${good} extra`, 'malformed'],
  ];
  for (const [h, want] of cases) assert.is(parseBearer(h), want, String(h));
});

test.run();
