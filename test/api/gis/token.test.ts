/** GIS query tokens: sealed, tamper-evident, expiring, bound to the server secret. */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mintGisToken, openGisToken, tokenKey } from '../../../api/gis/token.ts';

const key = tokenKey('a'.repeat(32));
const apiKey = 'lk_ef_' + 'x'.repeat(43);

test('a token opens to its key until it expires', () => {
  const t = mintGisToken(apiKey, 1_000, key);
  assert.match(t, /^gt_[A-Za-z0-9_-]+$/);
  assert.not.ok(t.includes('xxxx'));
  assert.equal(openGisToken(t, key, 999), { apiKey });
  assert.equal(openGisToken(t, key, 1_000), { error: 'expired' });
  assert.not.equal(mintGisToken(apiKey, 1_000, key), t, 'a fresh IV each time');
});

test('a tampered, truncated, foreign or garbage token does not open', () => {
  const t = mintGisToken(apiKey, 1_000, key);
  const flip = t.slice(0, 10) + (t[10] === 'A' ? 'B' : 'A') + t.slice(11);
  assert.equal(openGisToken(flip, key, 0), { error: 'malformed' });
  assert.equal(openGisToken(t.slice(0, 20), key, 0), { error: 'malformed' });
  assert.equal(openGisToken(t, tokenKey('b'.repeat(32)), 0), { error: 'malformed' });
  assert.equal(openGisToken('lk_ef_abc', key, 0), { error: 'malformed' });
  assert.equal(openGisToken('gt_!!', key, 0), { error: 'malformed' });
});

test('rotation: a token sealed under a previous secret opens while that secret is listed', () => {
  const old = tokenKey('o'.repeat(32));
  const t = mintGisToken(apiKey, 1_000, old);
  assert.equal(openGisToken(t, [key, old], 999), { apiKey });
  assert.equal(openGisToken(t, [key, old], 1_000), { error: 'expired' });
  assert.equal(openGisToken(t, [key], 999), { error: 'malformed' });
  assert.equal(openGisToken(mintGisToken(apiKey, 1_000, key), [key, old], 999), { apiKey });
});

test.run();
