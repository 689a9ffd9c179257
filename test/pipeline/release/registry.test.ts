import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { contentHash, trackChanges, type RegistryEntry } from '../../../pipeline/release/registry.ts';

type D = { lead_key: string; v: number; tags?: string[] };
const key = (d: D): string => d.lead_key;

test('contentHash ignores property order and changes with any value', () => {
  assert.is(contentHash({ a: 1, b: [1, 2], c: { x: null } }), contentHash({ c: { x: null }, b: [1, 2], a: 1 }));
  assert.is.not(contentHash({ a: 1, b: [1, 2] }), contentHash({ a: 1, b: [2, 1] }));
  assert.is.not(contentHash({ a: 1 }), contentHash({ a: '1' }));
  assert.match(contentHash({}), /^[0-9a-f]{16}$/);
});

test('contentHash: the flat fast path and the nested walk agree on the same canonical form', () => {
  // same content, one flat and one with a nested object whose keys are out of order
  const flat = { b: 1, a: ['x', 'y'], c: null };
  assert.is(contentHash(flat), contentHash({ c: null, a: ['x', 'y'], b: 1 }));
  assert.is(contentHash({ n: { b: 1, a: 2 } }), contentHash({ n: { a: 2, b: 1 } }));
  assert.is.not(contentHash({ n: { b: 1, a: 2 } }), contentHash({ n: { a: 1, b: 2 } }));
  // a nested record hashes like its canonical JSON text
  assert.is(contentHash({ z: [{ q: 1, p: 2 }], a: 'é' }), contentHash({ a: 'é', z: [{ p: 2, q: 1 }] }));
});

test('contentHash: unhashed fields are left out on the flat path and the nested walk alike', () => {
  assert.is(contentHash({ a: 1, since: '2026-01-01' }, ['since']), contentHash({ a: 1 }));
  assert.is(contentHash({ a: 1, since: '2026-01-01' }, ['since']), contentHash({ a: 1, since: null }, ['since']));
  assert.is.not(contentHash({ a: 1, since: '2026-01-01' }), contentHash({ a: 1 }));
  const nested = { a: [{ p: 1 }], since: '2026-01-01' };
  assert.is(contentHash(nested, ['since']), contentHash({ a: [{ p: 1 }] }));
});

test('a field added to every record, unhashed, marks none updated; a hashed one marks all', () => {
  const before = trackChanges('leads', [{ lead_key: 'a', v: 1 }], key, [], '2026-11-09');
  const add = (extra: Record<string, unknown>, unhashed: string[]) =>
    trackChanges('leads', [{ lead_key: 'a', v: 1, ...extra }], key, before.entries, '2026-11-16', unhashed).counts;
  assert.equal(add({ since: '2026-01-01' }, ['since']), { new: 0, updated: 0, removed: 0, unchanged: 1 });
  assert.equal(add({ since: '2026-01-01' }, []), { new: 0, updated: 1, removed: 0, unchanged: 0 });
});

test('first build: every record new, ids 1..n in the order given', () => {
  const t = trackChanges(
    'leads',
    [
      { lead_key: 'b', v: 1 },
      { lead_key: 'a', v: 2 },
    ],
    key,
    [],
    '2026-11-09',
  );
  assert.equal(
    t.records.map((r) => [r.lead_key, r.id, r.first_seen, r.last_changed]),
    [
      ['b', 1, '2026-11-09', '2026-11-09'],
      ['a', 2, '2026-11-09', '2026-11-09'],
    ],
  );
  assert.equal(t.counts, { new: 2, updated: 0, removed: 0, unchanged: 0 });
  assert.equal(
    t.changes.map((c) => c.change),
    ['new', 'new'],
  );
});

const cases: {
  name: string;
  build: D[];
  expect: {
    counts: object;
    ids: Record<string, number>;
    firstSeen: Record<string, string>;
    lastChanged: Record<string, string>;
  };
}[] = [
  {
    name: 'same input → same ids, nothing changed',
    build: [
      { lead_key: 'a', v: 1 },
      { lead_key: 'b', v: 2 },
      { lead_key: 'c', v: 3 },
    ],
    expect: {
      counts: { new: 0, updated: 0, removed: 0, unchanged: 3 },
      ids: { a: 1, b: 2, c: 3 },
      firstSeen: { a: '2026-11-09', b: '2026-11-09', c: '2026-11-09' },
      lastChanged: { a: '2026-11-09', b: '2026-11-09', c: '2026-11-09' },
    },
  },
  {
    name: 'one updated, one new, one removed',
    build: [
      { lead_key: 'a', v: 1 },
      { lead_key: 'b', v: 20 },
      { lead_key: 'd', v: 4 },
    ],
    expect: {
      counts: { new: 1, updated: 1, removed: 1, unchanged: 1 },
      ids: { a: 1, b: 2, d: 4 },
      firstSeen: { a: '2026-11-09', b: '2026-11-09', d: '2026-11-16' },
      lastChanged: { a: '2026-11-09', b: '2026-11-16', d: '2026-11-16' },
    },
  },
];

for (const c of cases) {
  test(`week 2: ${c.name}`, () => {
    const w1 = trackChanges(
      'leads',
      [
        { lead_key: 'a', v: 1 },
        { lead_key: 'b', v: 2 },
        { lead_key: 'c', v: 3 },
      ],
      key,
      [],
      '2026-11-09',
    );
    const w2 = trackChanges('leads', c.build, key, w1.entries, '2026-11-16');
    assert.equal(w2.counts, c.expect.counts);
    for (const r of w2.records) {
      assert.is(r.id, c.expect.ids[r.lead_key], `id of ${r.lead_key}`);
      assert.is(r.first_seen, c.expect.firstSeen[r.lead_key], `first_seen of ${r.lead_key}`);
      assert.is(r.last_changed, c.expect.lastChanged[r.lead_key], `last_changed of ${r.lead_key}`);
    }
  });
}

test('ids are never reused: a removed key keeps its id, a new key gets max+1, a returning key its old id', () => {
  const w1 = trackChanges(
    'leads',
    [
      { lead_key: 'a', v: 1 },
      { lead_key: 'b', v: 2 },
    ],
    key,
    [],
    '2026-11-09',
  );
  const w2 = trackChanges('leads', [{ lead_key: 'a', v: 1 }], key, w1.entries, '2026-11-16');
  const removed = w2.entries.find((e) => e.key === 'b') as RegistryEntry;
  assert.is(removed.removed_on, '2026-11-16');
  const w3 = trackChanges(
    'leads',
    [
      { lead_key: 'a', v: 1 },
      { lead_key: 'x', v: 9 },
      { lead_key: 'b', v: 2 },
    ],
    key,
    w2.entries,
    '2026-11-23',
  );
  assert.equal(
    w3.records.map((r) => [r.lead_key, r.id]),
    [
      ['a', 1],
      ['x', 3],
      ['b', 2],
    ],
  );
  assert.equal(w3.counts, { new: 1, updated: 1, removed: 0, unchanged: 1 });
  assert.is(w3.records.find((r) => r.lead_key === 'b')!.first_seen, '2026-11-09');
});

test('kinds are tracked independently and duplicate keys in one build are refused', () => {
  const leads = trackChanges('leads', [{ lead_key: 'a', v: 1 }], key, [], '2026-11-09');
  const infra = trackChanges('infrastructure', [{ lead_key: 'a', v: 1 }], key, leads.entries, '2026-11-09');
  assert.is(infra.records[0]!.id, 1);
  assert.is(infra.counts.new, 1);
  assert.throws(
    () =>
      trackChanges(
        'leads',
        [
          { lead_key: 'a', v: 1 },
          { lead_key: 'a', v: 2 },
        ],
        key,
        [],
        '2026-11-09',
      ),
    /duplicate leads key in build: a/,
  );
});

test.run();
