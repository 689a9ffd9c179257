/**
 * Signed cursors (issue 13, 3.4): a cursor is `<payload>.<HMAC tag>`; a tampered payload, a
 * forged tag, a cursor of another server or an unsigned one is a 400 on `cursor`; a cursor signed
 * with a previous secret still opens after a rotation, and stops when that secret is dropped.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ApiError } from '../../../api/http/errors.ts';
import { decodeCursor, encodeCursor, filtersHash } from '../../../api/query/paging.ts';

const OLD = { cursorSecret: 'the-old-cursor-secret-0123456789abcdef', cursorSecretsPrevious: [] as string[] };
const NEW = { cursorSecret: 'the-new-cursor-secret-fedcba9876543210', cursorSecretsPrevious: [OLD.cursorSecret] };
const h = filtersHash('leads', { county: ['Cork'] }, 'newest');
const isCursorError = (e: unknown): boolean =>
  e instanceof ApiError && e.status === 400 && e.code === 'invalid_parameter' && e.errors![0]!.name === 'cursor';

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
  assert.throws(
    () =>
      decodeCursor(
        encodeCursor(['2026-11-01', 7], 'R1', h, {
          cursorSecret: 'another-server-secret-0123456789abcdef',
          cursorSecretsPrevious: [],
        }),
        h,
        OLD,
      ),
    isCursorError,
  );
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
  assert.throws(
    () => decodeCursor(before, h, { cursorSecret: NEW.cursorSecret, cursorSecretsPrevious: [] }),
    isCursorError,
  );
});

test("filtersHash: the same hashes as every release before (cursors in clients' hands keep working), whatever the key order; undefined members left out", () => {
  // pinned from the implementation cursors were first made with
  const pinned: [string, unknown, string, string][] = [
    ['leads', {}, 'newest', 'e7740795a76fbd95'],
    [
      'leads',
      { county: ['Cork', 'Kerry'], q: 'solar "roof" – Dún', est_value_min: 250000.5 },
      'value_desc',
      '1074f16519008017',
    ],
    [
      'leads',
      { near: { lat: 53.35, lon: -6.26, radius_m: 1000 }, has_contact: true, status: undefined },
      'distance',
      '8fb1e6b2275bec76',
    ],
    [
      'gis/leads',
      {
        polygon: {
          type: 'Polygon',
          coordinates: [
            [
              [-7, 53],
              [-6, 53],
              [-6, 54],
              [-7, 53],
            ],
          ],
        },
        bbox: [-7, 53, -6, 54],
      },
      'id',
      'ae2b0c331b4e7f7b',
    ],
    [
      'export/applications',
      { b: null, a: [1, [2, null]], c: { z: 1, y: { x: undefined, w: 'v' } } },
      'id',
      '9424b0e0eb9b41bd',
    ],
  ];
  for (const [endpoint, filters, sort, want] of pinned)
    assert.is(filtersHash(endpoint, filters, sort), want, JSON.stringify(filters));
  assert.is(
    filtersHash('leads', { has_contact: true, near: { radius_m: 1000, lon: -6.26, lat: 53.35 } }, 'distance'),
    '8fb1e6b2275bec76',
    'key order',
  );
  assert.is.not(
    filtersHash('leads', { county: ['Kerry', 'Cork'] }, 'newest'),
    filtersHash('leads', { county: ['Cork', 'Kerry'] }, 'newest'),
    'list order counts (the parser sorts lists)',
  );
  assert.is.not(filtersHash('leads', {}, 'oldest'), pinned[0]![3], 'the sort counts');
});

test('filtersHash of a frozen value (a remembered polygon) equals that of an equal unfrozen one, also on later calls', () => {
  const polygon = () => ({
    type: 'Polygon',
    coordinates: [
      [
        [-6.3, 53.3],
        [-6.2, 53.3],
        [-6.2, 53.4],
        [-6.3, 53.3],
      ],
    ],
  });
  const frozen = polygon();
  for (const ring of frozen.coordinates) for (const p of ring) Object.freeze(p);
  frozen.coordinates.forEach((r) => Object.freeze(r));
  Object.freeze(frozen.coordinates);
  Object.freeze(frozen);
  const want = filtersHash('leads', { polygon: polygon(), county: ['Dublin'] }, 'newest');
  assert.is(filtersHash('leads', { county: ['Dublin'], polygon: frozen }, 'newest'), want);
  assert.is(filtersHash('leads', { county: ['Dublin'], polygon: frozen }, 'newest'), want, 'from the remembered text');
  assert.is.not(filtersHash('leads', { county: ['Cork'], polygon: frozen }, 'newest'), want);
});

test.run();
