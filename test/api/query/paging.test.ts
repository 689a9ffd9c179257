/**
 * Signed cursors (issue 13, 3.4): a cursor is `<payload>.<HMAC tag>`; a tampered payload, a
 * forged tag, a cursor of another server or an unsigned one is a 400 on `cursor`; a cursor signed
 * with a previous secret still opens after a rotation, and stops when that secret is dropped.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ApiError } from '../../../api/errors.ts';
import { decodeCursor, encodeCursor, filtersHash } from '../../../api/query/paging.ts';

const OLD = { cursorSecret: 'the-old-cursor-secret-0123456789abcdef', cursorSecretsPrevious: [] as string[] };
const NEW = { cursorSecret: 'the-new-cursor-secret-fedcba9876543210', cursorSecretsPrevious: [OLD.cursorSecret] };
const h = filtersHash('leads', { county: ['Cork'] }, 'newest');
const isCursorError = (e: unknown): boolean => e instanceof ApiError && e.status === 400 && e.code === 'invalid_parameter' && e.errors![0]!.name === 'cursor';

test('round trip; the tag is checked before the payload is read', () => {
  const c = encodeCursor(['2026-11-01', 7], 'R1', h, OLD);
  assert.match(c, /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{22}$/);
  assert.equal(decodeCursor(c, h, OLD), { key: ['2026-11-01', 7], release: 'R1' });
  // another release named in the payload, re-encoded without the secret: refused
  const [payload, sig] = c.split('.') as [string, string];
  const forged = Buffer.from(JSON.stringify({ k: ['2026-11-01', 7], r: 'R0', f: h }), 'utf8').toString('base64url');
  assert.throws(() => decodeCursor(`${forged}.${sig}`, h, OLD), isCursorError);
  // one character of the payload or the tag changed
  const flip = (s: string, i: number): string => s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1);
  assert.throws(() => decodeCursor(`${flip(payload, 3)}.${sig}`, h, OLD), isCursorError);
  assert.throws(() => decodeCursor(`${payload}.${flip(sig, 0)}`, h, OLD), isCursorError);
  // an unsigned cursor (the old format) and one signed by another server
  assert.throws(() => decodeCursor(payload, h, OLD), isCursorError);
  assert.throws(() => decodeCursor(encodeCursor(['2026-11-01', 7], 'R1', h, { cursorSecret: 'another-server-secret-0123456789abcdef', cursorSecretsPrevious: [] }), h, OLD), isCursorError);
  // no secret configured (saved filters): nothing opens
  assert.throws(() => decodeCursor(c, h, { cursorSecret: '', cursorSecretsPrevious: [] }), isCursorError);
});

test('rotation: the previous secret verifies, only the current one signs', () => {
  const before = encodeCursor([120], 'R1', h, OLD);
  assert.equal(decodeCursor(before, h, NEW), { key: [120], release: 'R1' });
  const after = encodeCursor([120], 'R1', h, NEW);
  assert.is.not(after, before);
  assert.throws(() => decodeCursor(after, h, OLD), isCursorError);
  // once the old secret is dropped from the previous list, its cursors stop working
  assert.throws(() => decodeCursor(before, h, { cursorSecret: NEW.cursorSecret, cursorSecretsPrevious: [] }), isCursorError);
});

test.run();
