/**
 * `q`'s syntax (common/search-syntax.ts): the parser's tree and refusals, then the in-memory
 * index against the SQL builder (the reference) on the tiny generated release for every form —
 * all words required, "phrases", prefix*, OR — with filters, sorts, offsets and cursors, and the
 * meaning checked on the leads' own text (a phrase's leads hold it; AND narrows; OR widens).
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { join } from 'node:path';
import { openApiDb, sqlString, type ApiDb } from '../../../api/duckdb/db.ts';
import { LeadIndex } from '../../../api/engine/lead-index.ts';
import { loadRowStore, rowSearchText } from '../../../api/engine/row-store.ts';
import {
  leadsCountQuery,
  leadsPageIdsQuery,
  searchAvgdlQuery,
  SORT_VALUE_COLUMN,
  type LeadsFilters,
  type LeadsPageRequest,
  type LeadsSource,
} from '../../../api/query/leads-query.ts';
import { parseSearchQuery, phrasePattern, type SearchItem } from '../../../common/search-syntax.ts';
import { foldSearchText, STOPWORDS } from '../../../common/search-text.ts';
import { searchQuery, SearchSyntaxError } from '../../../common/search-query.ts';
import { tinyRelease } from '../../helpers/api.ts';
import { rareWords } from '../../helpers/rare-words.ts';

let db: ApiDb;
let src: LeadsSource;
let ix: LeadIndex;
let walk: LeadIndex;
let text: (id: number) => string;

test.before(async () => {
  const dir = (await tinyRelease()).dir;
  db = await openApiDb({ connections: 1, threads: 1, memoryLimit: '256MB' });
  const pq = (f: string): string => `read_parquet(${sqlString(join(dir, f))})`;
  const aq = searchAvgdlQuery(join(dir, 'search_terms.parquet'));
  const avgdl = (await db.all<{ avgdl: number }>(aq.sql, aq.params))[0]!.avgdl;
  // The reference reads the release's rows once into tables (the same rows and types as the
  // Parquet files), so each of its many queries does not parse the files again.
  for (const t of ['leads', 'search_terms', 'search_postings'])
    await db.all(`CREATE TABLE ref_${t} AS SELECT * FROM ${pq(`${t}.parquet`)}`);
  src = {
    leads: 'ref_leads',
    search: { termsTable: 'ref_search_terms', postingsTable: 'ref_search_postings', avgdl },
  };
  // the row store and the indexes are built from the Parquet files, as the API builds them
  const leads = pq('leads.parquet');
  text = rowSearchText(await loadRowStore(db, leads));
  const search = { terms: pq('search_terms.parquet'), postings: pq('search_postings.parquet'), avgdl };
  ix = await LeadIndex.load(db, { leads, search }, { text });
  // the impact walks and MaxScore, on the same parts (they do not depend on exhaustiveMax, only how a page is answered does)
  walk = new LeadIndex(ix.parts(), { text, exhaustiveMax: 0 });
});

test.after(() => db.close());

const shape = (it: SearchItem): string =>
  it.kind === 'prefix'
    ? `${it.prefixes.join('|')}*`
    : it.kind === 'phrase'
      ? `"${it.words.join(' ')}"→${it.terms.join('+')}`
      : it.terms.join('+');

test('the parser: AND of groups, OR binding tighter, phrases, prefixes; stopword-only words ignored', () => {
  const cases: [string, string[][]][] = [
    ['kitchen extension', [['kitchen'], ['extens']]],
    ['Solar OR wind farm', [['solar', 'wind'], ['farm']]],
    ['attic OR loft OR dormer conversion', [['attic', 'loft', 'dormer'], ['convers']]],
    ['"heat pump" installation', [['"heat pump"→heat+pump'], ['installat']]],
    ['"house of cards"', [['"house of cards"→hous+card']]],
    ['solar* panel', [['solar*'], ['panel']]],
    ['Extensions* roof', [['extensions|extens*'], ['roof']]],
    ['the kitchen', [['kitchen']]],
    ['23/1234', [['23+1234']]],
    ['the OR and', []],
    ['"to be"', []],
    ['', []],
    ['Dún*', [['dun*']]],
    ['or kitchen', [['kitchen']]], // lower-case or is a word (a stopword), not the operator
  ];
  for (const [q, want] of cases) {
    const p = parseSearchQuery(q);
    assert.is(p.error, undefined, q);
    assert.equal(
      p.ast!.groups.map((g) => g.map(shape)),
      want,
      q,
    );
  }
  assert.equal(
    parseSearchQuery('garage kitch', { lastWordPrefix: true }).ast!.groups.map((g) => g.map(shape)),
    [['garag'], ['kitch*']],
    'search as you type',
  );
  assert.is(phrasePattern(['heat', 'pump']), '(^|[^a-z0-9])heat[^a-z0-9]+pump([^a-z0-9]|$)');
});

test('the parser refuses malformed q with a reason, and the SQL builder with it', () => {
  const bad: [string, RegExp][] = [
    ['"heat pump', /unbalanced quote/],
    ['OR', /OR without a word/],
    ['solar OR', /OR without a word/],
    ['OR solar', /OR without a word/],
    ['solar OR OR wind', /OR without a word/],
    ['*', /\* without a word/],
    ['so*', /at least 3/],
    ['so*lar', /may only end a word/],
    ['sol**', /may only end a word/],
    ['"heat pump"*', /phrase cannot be a prefix/],
    ["o'br*", /letters and digits only/],
    ['""', /empty phrase/],
  ];
  for (const [q, reason] of bad) {
    const p = parseSearchQuery(q);
    assert.match(p.error ?? '', reason, q);
    assert.throws(
      () => searchQuery(q, { termsPath: '/t', postingsPath: '/p', limit: 5 }),
      (e: unknown) => e instanceof SearchSyntaxError,
      q,
    );
  }
});

/**
 * The SQL count of each count query asked (its SQL and parameters): the sorts, offsets and cursors
 * of one `q` and filters ask the same count, which DuckDB need answer once.
 */
const totals = new Map<string, Promise<number>>();

/** The SQL page and total (the reference). */
async function reference(
  req: LeadsPageRequest,
): Promise<{ rows: string; total: number; ids: number[]; page: Record<string, unknown>[] }> {
  const p = leadsPageIdsQuery(src, req);
  const rows = await db.all(p.sql, p.params);
  const c = leadsCountQuery(src, req.filters);
  const countKey = JSON.stringify([c.sql, c.params], (_, v: unknown) => (typeof v === 'bigint' ? String(v) : v));
  let counted = totals.get(countKey);
  if (!counted)
    totals.set(
      countKey,
      (counted = db.all<{ total: number }>(c.sql, c.params).then((r) => Number((r as [{ total: number }])[0].total))),
    );
  const total = await counted;
  return {
    rows: rows.map((r) => `${r['id']}:${r[SORT_VALUE_COLUMN]}`).join(' '),
    total,
    ids: rows.map((r) => Number(r['id'])),
    page: rows,
  };
}

/** Both indexes answer `req` as the reference does; the reference's total and page rows. */
async function assertSame(
  req: LeadsPageRequest,
  label: string,
): Promise<{ total: number; page: Record<string, unknown>[] }> {
  const want = await reference(req);
  for (const [name, index] of [
    ['index', ix],
    ['walk', walk],
  ] as const) {
    const got = index.page(req);
    assert.is(got.total, want.total, `${label} (${name}): total`);
    assert.is(got.rows.map((r) => `${r.id}:${r.sortValue}`).join(' '), want.rows, `${label} (${name}): page`);
  }
  return { total: want.total, page: want.page };
}

/** Every lead `q` matches, by the SQL (ids). */
async function allIds(q: string): Promise<number[]> {
  return (await reference({ filters: { q }, sort: 'relevance', limit: 100_000, offset: 0, after: null })).ids.sort(
    (a, b) => a - b,
  );
}

/** Phrases of 2–3 words taken from the leads' text (some with a stopword inside), and words. */
async function samples(): Promise<{ phrases: string[]; words: string[] }> {
  const rows = await db.all<{ id: number }>(`SELECT id FROM ${src.leads} ORDER BY hash(id) LIMIT 80`);
  const phrases = new Set<string>();
  const words = new Set<string>();
  for (const { id } of rows) {
    const ws = foldSearchText(text(id))
      .split(/[^a-z0-9]+/)
      .filter((w) => w.length > 0);
    for (let i = 0; i + 2 < ws.length && phrases.size < 40; i += 5) {
      const [a, b, c] = [ws[i]!, ws[i + 1]!, ws[i + 2]!];
      if (a.length > 3 && !STOPWORDS.has(a) && c.length > 3 && !STOPWORDS.has(c))
        phrases.add(STOPWORDS.has(b) ? `${a} ${b} ${c}` : `${a} ${b}`);
      if (/^[a-z]{5,}$/.test(a) && !STOPWORDS.has(a)) words.add(a);
    }
  }
  return { phrases: [...phrases], words: [...words].slice(0, 40) };
}

test('index = SQL for AND, phrase, prefix and OR queries: every sort, filters, offsets and cursors', async () => {
  const { phrases, words } = await samples();
  assert.ok(phrases.length >= 20 && words.length >= 20, `${phrases.length} phrases, ${words.length} words`);
  const queries: string[] = [];
  for (let i = 0; i < 20; i++) {
    const [a, b, c] = [words[i]!, words[(i * 7 + 3) % words.length]!, words[(i * 3 + 1) % words.length]!];
    queries.push(
      `${a} ${b}`,
      `"${phrases[i]}"`,
      `${a.slice(0, 3 + (i % 3))}*`,
      `${a} OR ${b}`,
      `"${phrases[i]}" OR ${c} ${b.slice(0, 4)}*`,
      `${a} OR "${phrases[(i + 5) % phrases.length]}"`,
    );
  }
  let hits = 0;
  for (const [i, q] of queries.entries()) {
    for (const sort of ['relevance', 'newest', 'value_desc'] as const) {
      const filters: LeadsFilters = i % 5 === 0 ? { q, status: ['planning', 'approved'] } : { q };
      const offset = i % 2 ? 2 : 0;
      const { total, page } = await assertSame({ filters, sort, limit: 7, offset, after: null }, `q=${q} ${sort}`);
      if (total > 0) hits++;
      // the cursor after the first 3 leads of the reference's order (the last one when fewer match):
      // that row of the page just read (row 2 of the order: page[2] at offset 0, page[0] at offset
      // 2), or the SQL's 3-row page when the page does not hold it
      const at = Math.min(3, total) - 1 - offset;
      const p = leadsPageIdsQuery(src, { filters, sort, limit: 3, offset: 0, after: null });
      const last = total === 0 ? undefined : at >= 0 ? page[at] : (await db.all(p.sql, p.params)).at(-1);
      if (last)
        await assertSame(
          { filters, sort, limit: 5, offset: 0, after: [last[SORT_VALUE_COLUMN] as number, last['id'] as number] },
          `q=${q} ${sort} cursor`,
        );
    }
  }
  assert.ok(hits > queries.length, `queries with hits: ${hits} of ${queries.length * 3}`);
});

test("meaning on the leads' text: AND narrows, OR widens, a phrase's leads hold it, a prefix finds what the word finds", async () => {
  const { phrases, words } = await samples();
  const folded = (id: number): string => ` ${foldSearchText(text(id)).replace(/[^a-z0-9]+/g, ' ')} `;
  let checked = 0;
  for (let i = 0; i < 12; i++) {
    const [a, b] = [words[i]!, words[(i * 5 + 2) % words.length]!];
    const [both, onlyA, onlyB, either] = await Promise.all([
      allIds(`${a} ${b}`),
      allIds(a),
      allIds(b),
      allIds(`${a} OR ${b}`),
    ]);
    assert.equal(
      both,
      onlyA.filter((id) => onlyB.includes(id)),
      `${a} ${b} = ${a} ∩ ${b}`,
    );
    assert.equal(
      either,
      [...new Set([...onlyA, ...onlyB])].sort((x, y) => x - y),
      `${a} OR ${b} = ${a} ∪ ${b}`,
    );
    const phrase = phrases[i]!;
    const inPhrase = await allIds(`"${phrase}"`);
    const anded = await allIds(phrase);
    assert.ok(inPhrase.length > 0, `"${phrase}" (taken from a lead) finds it`);
    for (const id of inPhrase) assert.ok(folded(id).includes(` ${phrase} `), `lead ${id} holds "${phrase}"`);
    const missed = anded.filter((id) => !inPhrase.includes(id));
    for (const id of missed)
      assert.not.ok(folded(id).includes(` ${phrase} `), `lead ${id} holds "${phrase}" but was not found`);
    checked += inPhrase.length + missed.length;
    const prefixed = await allIds(`${a.slice(0, 4)}*`);
    assert.ok(
      onlyA.every((id) => prefixed.includes(id)),
      `${a.slice(0, 4)}* finds every lead ${a} finds`,
    );
    assert.ok(prefixed.length >= onlyA.length);
  }
  assert.ok(checked > 20, `${checked} leads checked against their text`);
  assert.equal(await allIds('zzqxv'), [], 'an unknown word: nothing');
  assert.equal(await allIds(`${words[0]} zzqxv`), [], 'every word is required');
  assert.equal(
    await allIds(`${words[0]} OR zzqxv`),
    await allIds(words[0]!),
    'an unknown alternative is no alternative',
  );
  assert.equal(await allIds('zzq*'), [], 'a prefix no term starts with');
});

test('phrases of a rare word and the next (its postings walked, the other term galloped or its set read): same as SQL', async () => {
  const rare = await rareWords(db, src.leads); // [a-z] only: written into the SQL as they are
  const phrases = (
    await db.all<{ p: string }>(
      `SELECT DISTINCT regexp_extract(lower(description), '\\b(' || w || ' [a-z]{4,})\\b', 1) AS p
         FROM ${src.leads}, (SELECT unnest([${rare.map((w) => `'${w}'`).join(', ')}]) AS w)
        WHERE regexp_matches(lower(description), '\\b' || w || ' [a-z]{4,}') ORDER BY p LIMIT 12`,
    )
  ).map((r) => r.p);
  assert.ok(phrases.length >= 3, `phrases: ${phrases.join(', ')}`);
  for (const p of phrases) {
    const { total } = await assertSame(
      { filters: { q: `"${p}"` }, sort: 'relevance', limit: 10, offset: 0, after: null },
      `q="${p}"`,
    );
    assert.ok(total > 0, `"${p}" is found`);
  }
});

test.run();
