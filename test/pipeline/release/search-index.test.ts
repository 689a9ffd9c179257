import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { rejects } from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDb, type Db } from '../../../pipeline/lib/duckdb.ts';
import {
  POSTINGS_ROW_GROUP_SIZE,
  searchQuery,
  writeSearchIndex,
  type SearchDoc,
} from '../../../pipeline/release/search-index.ts';

const CORPUS: SearchDoc[] = [
  { id: 1, text: 'roof extension house' }, // roof extens hous
  { id: 2, text: 'Permission for roof repairs and roof extension' }, // roof repair roof extens
  { id: 3, text: 'solar panels roof' }, // solar panel roof
  { id: 4, text: 'Dún Laoghaire apartments' }, // dun laoghair apart
  { id: 5, text: 'garage conversion kitchen' }, // garag convers kitchen
];

let db: Db;
let dir: string;
let paths: { postingsPath: string; termsPath: string };

test.before(async () => {
  db = await openDb({ threads: 1 });
  dir = await mkdtemp(join(tmpdir(), 'search-index-'));
  paths = { postingsPath: join(dir, 'search_postings.parquet'), termsPath: join(dir, 'search_terms.parquet') };
});

test.after(async () => {
  db.close();
  await rm(dir, { recursive: true, force: true });
});

async function search(
  q: string,
  opts: { limit?: number; prefix?: boolean } = {},
): Promise<{ lead_id: number; score: number }[]> {
  const { sql, params } = searchQuery(q, { ...paths, limit: opts.limit ?? 10, prefix: opts.prefix ?? false });
  return db.all<{ lead_id: number; score: number }>(sql, params as string[]);
}

test('writeSearchIndex writes terms and postings and reports stats', async () => {
  const stats = await writeSearchIndex(db, CORPUS, dir);
  assert.equal(stats, { docs: 5, terms: 12, postings: 15, avgdl: 16 / 5 });
  assert.equal(
    (await readdir(dir)).sort(),
    ['search_postings.parquet', 'search_terms.parquet'],
    'staging files removed',
  );

  const terms = await db.all(`SELECT term, df, idf FROM read_parquet('${paths.termsPath}')`);
  assert.equal(
    terms.map((t) => t['term']),
    [...terms.map((t) => t['term'] as string)].sort(),
    'sorted by term',
  );
  const roof = terms.find((t) => t['term'] === 'roof')!;
  assert.is(roof['df'], 3);
  assert.ok(Math.abs((roof['idf'] as number) - Math.log(1 + (5 - 3 + 0.5) / (3 + 0.5))) < 1e-12);

  const postings = await db.all(`SELECT term, lead_id, tf, dl FROM read_parquet('${paths.postingsPath}')`);
  assert.is(postings.length, 15);
  assert.equal(
    postings.filter((p) => p['term'] === 'roof'),
    [
      { term: 'roof', lead_id: 1, tf: 1, dl: 3 },
      { term: 'roof', lead_id: 2, tf: 2, dl: 4 },
      { term: 'roof', lead_id: 3, tf: 1, dl: 3 },
    ],
  );
  const keys = postings.map((p) => `${p['term']}\u0000${String(p['lead_id']).padStart(9, '0')}`);
  assert.equal(keys, [...keys].sort(), 'sorted by term, lead_id');

  const meta = await db.all(
    `SELECT decode(key) AS k, decode(value) AS v FROM parquet_kv_metadata('${paths.termsPath}') ORDER BY k`,
  );
  assert.equal(meta, [
    { k: 'avgdl', v: String(16 / 5) },
    { k: 'n_docs', v: '5' },
  ]);
});

test('a document with the term twice ranks above one with it once; ties by lead_id', async () => {
  const rows = await search('roof');
  assert.equal(
    rows.map((r) => r.lead_id),
    [2, 1, 3],
  );
  assert.ok(rows[0]!.score > rows[1]!.score);
  assert.is(rows[1]!.score, rows[2]!.score);
});

test('rarer terms weigh more', async () => {
  const rows = await search('garage OR roof'); // every word is required unless OR says otherwise (docs/search.md)
  assert.is(rows[0]!.lead_id, 5);
  assert.equal(rows.map((r) => r.lead_id).sort(), [1, 2, 3, 5]);
});

test('BM25 score matches the formula', async () => {
  const [row] = await search('kitchen');
  const idf = Math.log(1 + (5 - 1 + 0.5) / (1 + 0.5));
  const expected = (idf * (1 * 2.2)) / (1 + 1.2 * (1 - 0.75 + (0.75 * 3) / (16 / 5)));
  assert.is(row!.lead_id, 5);
  assert.ok(Math.abs(row!.score - expected) < 1e-9, `${row!.score} vs ${expected}`);
});

test('accents and case fold on both sides; stems meet', async () => {
  const cases: [string, number[]][] = [
    ['DUN laoghaire', [4]],
    ['dún', [4]],
    ['Extensions', [1, 2]],
    ['houses', [1]],
    ['the planning permission', []],
    ['', []],
    ['nothing-matches-this', []],
  ];
  for (const [q, ids] of cases) assert.equal((await search(q)).map((r) => r.lead_id).sort(), ids, q);
});

test('prefix matches terms starting with the last query word', async () => {
  const cases: [string, boolean, number[]][] = [
    ['kitch', true, [5]],
    ['kitch', false, []],
    ['laog', true, [4]],
    ['roof ext', true, [1, 2]],
    ['garage r', true, [5]], // one-character tail is ignored
  ];
  for (const [q, prefix, ids] of cases) {
    const rows = await search(q, { prefix });
    const got =
      q === 'roof ext'
        ? rows
            .slice(0, 2)
            .map((r) => r.lead_id)
            .sort()
        : rows.map((r) => r.lead_id).sort();
    assert.equal(got, ids, `${q} prefix=${prefix}`);
  }
});

test('every word is required; OR, prefix* and phrases (which need the leads table)', async () => {
  const cases: [string, number[]][] = [
    ['roof extension', [1, 2]],
    ['roof garage', []],
    ['roof OR garage', [1, 2, 3, 5]],
    ['solar OR garage roof', [3]],
    ['kitch*', [5]],
    ['ext* roof', [1, 2]],
  ];
  for (const [q, ids] of cases) assert.equal((await search(q)).map((r) => r.lead_id).sort(), ids, q);
  assert.throws(() => searchQuery('"roof extension"', { ...paths, limit: 5 }), /leadsTable/);
});

test('limit caps the rows', async () => {
  assert.is((await search('roof', { limit: 2 })).length, 2);
});

test('searchQuery binds every query word and reads postings by term, never descriptions', () => {
  const cases: { q: string; prefix: boolean; params: unknown[]; has: string[] }[] = [
    // terms (qt), terms (hits), then per item of the query the terms it must hold (m0, m1, …)
    {
      q: 'Roof extensions',
      prefix: false,
      params: ['roof', 'extens', 'roof', 'extens', 'roof', 'extens', 7],
      has: ['term IN (?, ?)', 'bool_or(hits.term = ?) AS m1'],
    },
    { q: 'roof roofing', prefix: false, params: ['roof', 'roof', 'roof', 'roof', 7], has: ['term IN (?)'] },
    {
      q: 'solar hous',
      prefix: true,
      params: ['solar', 'hous', 'hout', 'hous', 'solar', 'hous', 'hout', 'hous', 'solar', 'hous', 7],
      has: [
        'term IN (?)',
        'starts_with(term, ?)',
        'term >= ? AND term < ?',
        'bool_or(starts_with(hits.term, ?)) AS m1',
      ],
    },
    {
      q: "x'); DROP TABLE leads; --",
      prefix: false,
      params: ['drop', 'tabl', 'lead', 'drop', 'tabl', 'lead', 'drop', 'tabl', 'lead', 7],
      has: ['term IN (?, ?, ?)'],
    },
  ];
  for (const c of cases) {
    const { sql, params } = searchQuery(c.q, {
      postingsPath: '/r/search_postings.parquet',
      termsPath: '/r/search_terms.parquet',
      limit: 7,
      prefix: c.prefix,
    });
    assert.equal(params, c.params, c.q);
    for (const h of c.has) assert.ok(sql.includes(h), `${c.q}: ${h}`);
    assert.not.match(sql, /ILIKE|description/i);
    assert.not.match(sql, /DROP/);
    assert.match(sql, /read_parquet\('\/r\/search_postings\.parquet'\)/);
    assert.match(sql, /ORDER BY score DESC, lead_id ASC/);
  }
});

test('searchQuery quotes paths as SQL literals and rejects a bad limit', () => {
  const { sql } = searchQuery('roof', { postingsPath: "/tmp/o'brien/p.parquet", termsPath: '/t.parquet', limit: 1 });
  assert.ok(sql.includes("read_parquet('/tmp/o''brien/p.parquet')"));
  assert.throws(() => searchQuery('roof', { ...paths, limit: -1 }), /limit/);
  assert.throws(() => searchQuery('roof', { ...paths, limit: 1.5 }), /limit/);
});

test('an empty query gives a query with no rows', async () => {
  const { sql, params } = searchQuery('the of and', { ...paths, limit: 10 });
  assert.equal(params, []);
  assert.equal(await db.all(sql), []);
});

test('writeSearchIndex rejects repeated or non-integer ids and cleans up', async () => {
  const bad = await mkdtemp(join(tmpdir(), 'search-index-bad-'));
  try {
    await rejects(
      writeSearchIndex(
        db,
        [
          { id: 1, text: 'roof' },
          { id: 1, text: 'wall' },
        ],
        bad,
      ),
      /appears twice/,
    );
    await rejects(writeSearchIndex(db, [{ id: 1.5, text: 'roof' }], bad), /integer/);
    assert.equal(await readdir(bad), [], 'staging files removed');
  } finally {
    await rm(bad, { recursive: true, force: true });
  }
});

test('postings are written in sorted row groups whose term ranges do not overlap', async () => {
  const big = await mkdtemp(join(tmpdir(), 'search-index-big-'));
  try {
    const words = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel'];
    const docs = function* (): Iterable<SearchDoc> {
      for (let i = 1; i <= 50_000; i++)
        yield { id: i, text: `${words[i % 8]} ${words[(i * 3) % 8]} ${words[(i * 5) % 8]}` };
    };
    const stats = await writeSearchIndex(db, docs(), big);
    assert.ok(stats.postings > POSTINGS_ROW_GROUP_SIZE, `${stats.postings} postings`);
    const groups = await db.all<{ n: number; lo: string; hi: string }>(
      `SELECT row_group_num_rows AS n, stats_min_value AS lo, stats_max_value AS hi
       FROM parquet_metadata('${join(big, 'search_postings.parquet')}') WHERE path_in_schema = 'term' ORDER BY row_group_id`,
    );
    assert.ok(groups.length >= 2);
    // DuckDB cuts row groups at whole 2,048-row vectors.
    assert.ok(Math.abs(groups[0]!.n - POSTINGS_ROW_GROUP_SIZE) <= 2048, `${groups[0]!.n} rows in the first group`);
    for (let i = 1; i < groups.length; i++) assert.ok(groups[i - 1]!.hi <= groups[i]!.lo, 'row groups in term order');
    const codec = await db.all(
      `SELECT DISTINCT compression FROM parquet_metadata('${join(big, 'search_postings.parquet')}')`,
    );
    assert.equal(codec, [{ compression: 'ZSTD' }]);
  } finally {
    await rm(big, { recursive: true, force: true });
  }
  assert.not.ok(existsSync(big));
});

test.run();
