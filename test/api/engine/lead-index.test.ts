/**
 * The in-memory lead index answers exactly as the SQL builders of api/query/leads-query.ts (the
 * reference semantics) on the tiny generated release: the same ids, sort values and totals for
 * every filter alone and combined, every sort, `q` with and without filters, offset pages and
 * keyset cursors.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { join } from 'node:path';
import { openApiDb, sqlString, type ApiDb } from '../../../api/duckdb/db.ts';
import { LeadIndex, type LeadIndexParts } from '../../../api/engine/lead-index.ts';
import type { Packable } from '../../../api/engine/pack.ts';
import { throughPack } from '../../helpers/through-pack.ts';
import {
  leadsCountQuery,
  leadsPageIdsQuery,
  searchAvgdlQuery,
  SORT_VALUE_COLUMN,
  LEADS_SORTS,
  type LeadsFilters,
  type LeadsPageRequest,
  type LeadsSource,
} from '../../../api/query/leads-query.ts';
import { FILTERS, type LeadFilter } from '../../../api/query/lead-filters.ts';
import { areaIds } from '../../../api/gis/geometry-ids.ts';
import { tinyRelease } from '../../helpers/api.ts';
import { tokenize } from '../../../common/search-text.ts';
import { seededRandom } from '../../helpers/random.ts';
import { rareWords } from '../../helpers/rare-words.ts';

let db: ApiDb;
let src: LeadsSource;
let ix: LeadIndex;
let dir: string;
/** The release's files the indexes are built from. */
let files: Parameters<typeof LeadIndex.load>[1];

test.before(async () => {
  dir = (await tinyRelease()).dir;
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
  // the index is built from the Parquet files, as the API builds it
  files = {
    leads: pq('leads.parquet'),
    search: { terms: pq('search_terms.parquet'), postings: pq('search_postings.parquet'), avgdl },
  };
  // … and held as the server holds it: read from a pack, its sets in the bitset kernel's memory
  // (api/engine/bitset-kernel.ts), so every comparison below runs the WebAssembly passes; the
  // JavaScript ones are compared with them in bitset-kernel.test.ts and run in the files that
  // build their index in process (search-syntax, last-changed)
  ix = new LeadIndex(
    (await throughPack((await LeadIndex.load(db, files)).parts() as unknown as Packable)) as unknown as LeadIndexParts,
  );
});

test.after(() => db.close());

/** The last reference read: its request, total, page rows and the geometry filters' ids. */
let lastRef: {
  req: LeadsPageRequest;
  total: number;
  page: Record<string, unknown>[];
  ids: number[] | undefined;
} | null = null;

/**
 * The SQL count of each count query asked (its SQL and parameters): the sorts, offsets and cursors
 * of one set of filters ask the same count, which DuckDB need answer once.
 */
const totals = new Map<string, number>();

/** The reference: the SQL page (ids and sort values) and total. */
async function reference(req: LeadsPageRequest): Promise<{ rows: string; total: number }> {
  const ids = await areaIds(db, src.leads, req.filters); // geometry filters: the ids in their areas (api/gis/geometry-ids.ts)
  const p = leadsPageIdsQuery(src, { ...req, ...(ids ? { areaIds: ids } : {}) });
  const rows = await db.all(p.sql, p.params);
  const c = leadsCountQuery(src, req.filters, ids);
  const countKey = JSON.stringify([c.sql, c.params], (_, v: unknown) => (typeof v === 'bigint' ? String(v) : v));
  let total = totals.get(countKey);
  if (total === undefined) {
    const [row] = (await db.all<{ total: number }>(c.sql, c.params)) as [{ total: number }];
    totals.set(countKey, (total = Number(row.total)));
  }
  lastRef = { req, total, page: rows, ids };
  return { rows: rows.map((r) => `${r['id']}:${r[SORT_VALUE_COLUMN]}`).join(' '), total };
}

/**
 * The SQL's row `n` of `req`'s order (the last when fewer match), to continue after with a cursor:
 * taken from the reference page just read for the same filters and sort when it holds that row,
 * else read (the SQL's first `n` rows).
 */
async function rowAt(req: LeadsPageRequest, n: number): Promise<Record<string, unknown> | undefined> {
  const r = lastRef;
  const same = r !== null && r.req.filters === req.filters && r.req.sort === req.sort && r.req.after === null;
  if (same && r.total === 0) return undefined;
  const at = same ? Math.min(n, r.total) - 1 - r.req.offset : -1;
  if (same && at >= 0 && at < r.page.length) return r.page[at];
  const ids = same ? r.ids : await areaIds(db, src.leads, req.filters);
  const p = leadsPageIdsQuery(src, { ...req, limit: n, offset: 0, after: null, ...(ids ? { areaIds: ids } : {}) });
  return (await db.all(p.sql, p.params)).at(-1);
}

async function assertSame(req: LeadsPageRequest, label: string, index: LeadIndex = ix): Promise<number> {
  const want = await reference(req);
  const got = index.page(req);
  assert.is(got.total, want.total, `${label}: total`);
  assert.is(got.rows.map((r) => `${r.id}:${r.sortValue}`).join(' '), want.rows, `${label}: page`);
  return want.total;
}

/** Values present in the release for each list filter of the table (`enum` / `multi`) and each `key` filter, to build filters that match something. */
async function values(): Promise<Record<string, string[]>> {
  const distinct = async (expr: string): Promise<string[]> =>
    (
      await db.all<{ v: string }>(
        `SELECT DISTINCT v FROM (SELECT ${expr} AS v FROM ${src.leads}) WHERE v IS NOT NULL ORDER BY v`,
      )
    ).map((r) => r.v);
  const out: Record<string, string[]> = {};
  for (const f of FILTERS) {
    if (f.kind === 'enum' || f.kind === 'multi' || f.kind === 'key')
      out[f.name] = await distinct(f.kind === 'enum' && f.listColumn ? `unnest(${f.column})` : f.column);
  }
  out['_points'] = (
    await db.all<{ p: string }>(
      `SELECT CAST(lat AS DOUBLE) || ',' || CAST(lon AS DOUBLE) AS p FROM ${src.leads} WHERE lat IS NOT NULL ORDER BY id`,
    )
  ).map((r) => r.p);
  return out;
}

/** The sorted distinct non-null values of a `range` / `date` filter's column (dates as YYYY-MM-DD). */
async function scalars(f: LeadFilter): Promise<(string | number)[]> {
  const expr = f.kind === 'date' ? `strftime(${f.column}, '%Y-%m-%d')` : `CAST(${f.column} AS DOUBLE)`;
  return (
    await db.all<{ v: string | number }>(
      `SELECT DISTINCT ${expr} AS v FROM ${src.leads} WHERE ${f.column} IS NOT NULL ORDER BY v`,
    )
  ).map((r) => r.v);
}

/**
 * A random value of every filter of the table (by kind), for the generator: list filters take
 * 1–2 values present in the release, ranges and dates a bound between the column's extremes
 * (sometimes beyond), flags a boolean, `q` a word of the descriptions.
 */
function randomValue(
  f: LeadFilter,
  rnd: () => number,
  v: Record<string, string[]>,
  s: Record<string, (string | number)[]>,
  words: string[],
): unknown {
  const pick = <T>(xs: T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  switch (f.kind) {
    case 'text':
      return pick(words);
    case 'enum':
    case 'multi':
      return rnd() < 0.5 ? [pick(v[f.name]!)] : [pick(v[f.name]!), pick(v[f.name]!)];
    case 'range': {
      const xs = s[f.name]!;
      const x = pick(xs) as number;
      return f.type === 'integer' ? Math.max(0, Math.floor(x) + (rnd() < 0.2 ? 1 : 0)) : Math.floor(x * rnd());
    }
    case 'date':
      return rnd() < 0.05 ? (f.bound === 'from' ? '2999-01-01' : '1990-01-01') : pick(s[f.name]!);
    case 'flag':
      return rnd() < 0.5;
    case 'key': {
      const k = pick(v[f.name]!);
      return rnd() < 0.3 ? `  ${k.toLowerCase()} ` : rnd() < 0.1 ? `${k}x` : k;
    }
    case 'geometry': {
      // an area around a lead of the release, from a street to a county
      const [lat, lon] = pick(v['_points']!).split(',').map(Number) as [number, number];
      const d = 0.01 + rnd() * 0.6;
      if (f.shape === 'circle')
        return { lat: lat + (rnd() - 0.5) * d, lon, radius_m: Math.round(500 + rnd() * 49_500) };
      if (f.shape === 'bbox') return [lon - d * rnd(), lat - d * rnd(), lon + d * rnd(), lat + d * rnd()];
      return {
        type: 'Polygon',
        coordinates: [
          [
            [lon - d, lat - d],
            [lon + d, lat - d * rnd()],
            [lon + d * rnd(), lat + d],
            [lon - d, lat - d],
          ],
        ],
      };
    }
  }
}

test('the index holds every lead', async () => {
  const [{ n }] = (await db.all<{ n: number }>(`SELECT count(*) AS n FROM ${src.leads}`)) as [{ n: number }];
  assert.ok(n > 500, `the tiny release has ${n} leads`);
  assert.is(ix.size, Number(n));
});

test('each filter alone, every value, newest and value sorts: same page and total as SQL', async () => {
  const v = await values();
  let nonTrivial = 0;
  for (const [name, list] of Object.entries(v)) {
    const kind = FILTERS.find((f) => f.name === name)?.kind;
    if (kind !== 'enum' && kind !== 'multi') continue; // key filters: below, with the random queries
    for (const value of list) {
      for (const sort of ['newest', 'value_asc'] as const) {
        const total = await assertSame(
          { filters: { [name]: [value] } as LeadsFilters, sort, limit: 11, offset: 0, after: null },
          `${name}=${value} ${sort}`,
        );
        if (total > 0 && total < ix.size) nonTrivial++;
      }
    }
  }
  // every range / date / flag filter of the table alone, at a few bounds
  const alone: LeadsFilters[] = [];
  for (const f of FILTERS) {
    if (f.kind === 'flag') alone.push({ [f.name]: true }, { [f.name]: false });
    if (f.kind !== 'range' && f.kind !== 'date') continue;
    const xs = await scalars(f);
    // a first release: every lead was first seen and last changed on its as-of date
    const tracking = f.column === 'first_seen' || f.column === 'last_changed';
    assert.ok(xs.length > 2 || (tracking && xs.length >= 1), `${f.name}: the release has values of ${f.column}`);
    for (const q of [0, 0.3, 0.5, 0.9]) alone.push({ [f.name]: xs[Math.floor(q * (xs.length - 1))] });
    if (tracking) alone.push({ [f.name]: '2000-01-01' }, { [f.name]: '2100-01-01' }); // all, none
  }
  for (const f of alone) {
    for (const sort of LEADS_SORTS.filter((s) => s !== 'relevance')) {
      const total = await assertSame(
        { filters: f, sort, limit: 26, offset: 0, after: null },
        `${JSON.stringify(f)} ${sort}`,
      );
      if (total > 0 && total < ix.size) nonTrivial++;
    }
  }
  assert.ok(nonTrivial > 40, `filters that select a proper subset: ${nonTrivial}`);
});

test('value sorts of selective filters at every depth (the rank-bitset path): same as SQL', async () => {
  const v = await values();
  for (const county of v.county!.slice(0, 8)) {
    const filters: LeadsFilters = { county: [county] };
    const { total } = ix.page({ filters, sort: 'value_desc', limit: 1, offset: 0, after: null });
    for (const sort of ['value_desc', 'value_asc'] as const) {
      for (const offset of [0, Math.floor(total / 2), Math.max(0, total - 5), total + 3]) {
        await assertSame({ filters, sort, limit: 7, offset, after: null }, `county=${county} ${sort} +${offset}`);
      }
    }
  }
});

test('value sorts under filters that follow the value (a minimum value, the largest schemes): every depth and cursor same as SQL', async () => {
  // min_value cuts the value walk at its bound; a filter matching only the dearest leads leaves
  // the value_asc walk's first stretch empty, past its step budget (then the rank-bitset path)
  const bounds = (await scalars(FILTERS.find((f) => f.name === 'min_value')!)) as number[];
  const v = await values();
  const dear = v.scale!.filter((x) => x === 'major' || x === 'large');
  assert.ok(dear.length > 0, `the release has major or large schemes: ${v.scale}`);
  const cases: LeadsFilters[] = [
    ...[0.2, 0.6, 0.95].map((q) => ({ min_value: bounds[Math.floor(q * (bounds.length - 1))]! }) as LeadsFilters),
    ...dear.map((x) => ({ scale: [x] }) as LeadsFilters),
    { scale: dear, min_value: bounds[Math.floor(0.5 * (bounds.length - 1))]! } as LeadsFilters,
  ];
  for (const filters of cases) {
    const { total } = ix.page({ filters, sort: 'value_asc', limit: 1, offset: 0, after: null });
    assert.ok(total > 0 && total < ix.size, `${JSON.stringify(filters)} selects a proper subset (${total})`);
    for (const sort of ['value_asc', 'value_desc'] as const) {
      for (const offset of [0, 3, Math.floor(total / 2), Math.max(0, total - 2), total + 1])
        await assertSame(
          { filters, sort, limit: 5, offset, after: null },
          `${JSON.stringify(filters)} ${sort} +${offset}`,
        );
      const last = await rowAt({ filters, sort, limit: 4, offset: 0, after: null }, 4);
      if (last)
        await assertSame(
          { filters, sort, limit: 6, offset: 0, after: [last[SORT_VALUE_COLUMN] as string, last['id'] as number] },
          `${JSON.stringify(filters)} ${sort} after the 4th`,
        );
    }
  }
});

test('combined filters, OR lists, every sort, offsets and keyset cursors: same as SQL', async () => {
  const v = await values();
  const rnd = seededRandom(12345);
  const pick = <T>(xs: T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const s: Record<string, (string | number)[]> = {};
  for (const f of FILTERS) if (f.kind === 'range' || f.kind === 'date') s[f.name] = await scalars(f);
  const words = (
    await db.all<{ w: string }>(
      `SELECT DISTINCT lower(w) AS w FROM (SELECT unnest(regexp_extract_all(description, '[A-Za-z]{5,}')) AS w FROM ${src.leads}) ORDER BY w LIMIT 40`,
    )
  ).map((r) => r.w);
  // every filter of the table takes part: each is in ~1 query of 4, so every pair meets often
  const OTHER_SHARE =
    3.5 / FILTERS.filter((d) => d.kind !== 'text' && d.kind !== 'key' && d.kind !== 'geometry').length;
  const used = new Map<string, number>();
  let matched = 0;
  const pairs = new Set<string>();
  for (let i = 0; i < 400; i++) {
    const f: Record<string, unknown> = {};
    for (const d of FILTERS) {
      // the very selective kinds less often (a reference number picks one lead), so that most queries still match;
      // ~3.5 filters of the others per query (14 × 1/4 when the table had 14), whatever its length
      if (rnd() < (d.kind === 'text' || d.kind === 'key' ? 0.1 : d.kind === 'geometry' ? 0.15 : OTHER_SHARE)) {
        f[d.name] = randomValue(d, rnd, v, s, words);
        used.set(d.name, (used.get(d.name) ?? 0) + 1);
      }
    }
    const names = Object.keys(f);
    for (const a of names) for (const b of names) if (a < b) pairs.add(`${a}+${b}`);
    const sort = pick(LEADS_SORTS.filter((s) => s !== 'relevance'));
    const offset = rnd() < 0.5 ? 0 : Math.floor(rnd() * 60);
    const total = await assertSame(
      { filters: f as LeadsFilters, sort, limit: 1 + Math.floor(rnd() * 30), offset, after: null },
      `random ${i} ${JSON.stringify(f)} ${sort} +${offset}`,
    );
    if (total > 0) matched++;
    // a cursor taken from the SQL page continues identically
    const last = await rowAt({ filters: f as LeadsFilters, sort, limit: 5, offset: 0, after: null }, 5);
    if (last)
      await assertSame(
        {
          filters: f as LeadsFilters,
          sort,
          limit: 9,
          offset: 0,
          after: [last[SORT_VALUE_COLUMN] as string, last['id'] as number],
        },
        `cursor ${i} ${sort}`,
      );
  }
  for (const d of FILTERS)
    assert.ok((used.get(d.name) ?? 0) > 20, `${d.name} is generated (${used.get(d.name) ?? 0} queries)`);
  const n = FILTERS.length;
  assert.is(pairs.size, (n * (n - 1)) / 2, 'every pair of filters is combined at least once');
  assert.ok(matched > 100, `random queries matching some lead: ${matched} of 400`);
});

test('q: relevance and other sorts, with filters, pages and cursors; no index term → nothing', async () => {
  const words = (
    await db.all<{ w: string }>(
      `SELECT DISTINCT lower(w) AS w FROM (SELECT unnest(regexp_extract_all(description, '[A-Za-z]{5,}')) AS w FROM ${src.leads}) ORDER BY w LIMIT 60`,
    )
  ).map((r) => r.w);
  assert.ok(words.length >= 20);
  let matched = 0;
  for (let i = 0; i < words.length; i++) {
    const q = i % 3 === 0 ? `${words[i]} ${words[(i * 7) % words.length]}` : words[i]!;
    for (const sort of ['relevance', 'newest', 'value_desc'] as const) {
      const filters: LeadsFilters = i % 4 === 0 ? { q, status: ['planning', 'approved'] } : { q };
      const total = await assertSame({ filters, sort, limit: 8, offset: i % 2 ? 3 : 0, after: null }, `q=${q} ${sort}`);
      if (total > 0) matched++;
      const last = await rowAt({ filters, sort, limit: 3, offset: 0, after: null }, 3);
      if (last)
        await assertSame(
          { filters, sort, limit: 6, offset: 0, after: [last[SORT_VALUE_COLUMN] as number, last['id'] as number] },
          `q=${q} ${sort} cursor`,
        );
    }
  }
  assert.ok(matched > 30, `queries with hits: ${matched}`);
  assert.is(ix.page({ filters: { q: 'the and of' }, sort: 'relevance', limit: 10, offset: 0, after: null }).total, 0);
  assert.is(ix.page({ filters: { q: 'zzqxv' }, sort: 'newest', limit: 10, offset: 0, after: null }).rows.length, 0);
});

test('q with the impact walk and MaxScore (as on large matched sets): same pages as SQL and as scoring every lead', async () => {
  // exhaustiveMax 0: every relevance page uses the strategies the default release uses for
  // matched sets above 4,096 leads (one term: impact order; several: MaxScore). On the parts
  // `load` built above: they do not depend on exhaustiveMax, only how a page is answered does.
  const walk = new LeadIndex(ix.parts(), { exhaustiveMax: 0 });
  const frequent = (
    await db.all<{ w: string }>(
      `SELECT lower(w) AS w, count(*) AS n FROM (SELECT unnest(regexp_extract_all(description, '[A-Za-z]{4,}')) AS w FROM ${src.leads}) GROUP BY 1 ORDER BY n DESC, w LIMIT 80`,
    )
  )
    .map((r) => r.w)
    .filter((w) => tokenize(w).length > 0) // not a stopword
    .slice(0, 40);
  const rare = (
    await db.all<{ w: string }>(
      `SELECT lower(w) AS w, count(*) AS n FROM (SELECT unnest(regexp_extract_all(description || ' ' || coalesce(address, ''), '[A-Za-z]{4,}')) AS w FROM ${src.leads}) GROUP BY 1 HAVING n <= 30 ORDER BY w LIMIT 80`,
    )
  ).map((r) => r.w);
  assert.ok(frequent.length >= 30 && rare.length >= 40);
  const v = await values();
  const rnd = seededRandom(99);
  const pick = <T>(xs: T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  let compared = 0;
  for (let i = 0; i < 400; i++) {
    const words = Array.from({ length: 1 + Math.floor(rnd() * 4) }, () => (rnd() < 0.7 ? pick(frequent) : pick(rare)));
    const filters: LeadsFilters = { q: words.join(' ') };
    if (rnd() < 0.3) filters.county = [pick(v.county!)];
    if (rnd() < 0.2) filters.status = [pick(v.status!)];
    const req: LeadsPageRequest = {
      filters,
      sort: 'relevance',
      limit: 1 + Math.floor(rnd() * 30),
      offset: rnd() < 0.5 ? 0 : Math.floor(rnd() * 40),
      after: null,
    };
    const a = walk.page(req);
    const b = ix.page(req);
    assert.is(a.total, b.total, `q=${filters.q}: total`);
    assert.equal(a.rows, b.rows, `q=${filters.q} ${JSON.stringify(filters)} +${req.offset}: page`);
    compared++;
    if (i % 4 === 0) {
      await assertSame(req, `walk q=${filters.q}`, walk);
      const last = await rowAt(req, 4);
      if (last)
        await assertSame(
          { ...req, offset: 0, after: [last[SORT_VALUE_COLUMN] as number, last['id'] as number] },
          `walk q=${filters.q} cursor`,
          walk,
        );
    }
  }
  assert.is(compared, 400);
  // a whole result set by relevance cursor with the walk: every matched lead once, in order
  const q = `${frequent[0]} ${frequent[3]}`;
  const { total } = walk.page({ filters: { q }, sort: 'relevance', limit: 1, offset: 0, after: null });
  assert.ok(total > 100, `${q} matches ${total} leads`);
  const seen: string[] = [];
  let after: [number, number] | null = null;
  for (;;) {
    const { rows } = walk.page({ filters: { q }, sort: 'relevance', limit: 37, offset: 0, after });
    for (const r of rows) seen.push(`${r.id}:${r.sortValue}`);
    if (rows.length < 37) break;
    after = [rows.at(-1)!.sortValue as number, rows.at(-1)!.id];
  }
  const all = ix
    .page({ filters: { q }, sort: 'relevance', limit: total, offset: 0, after: null })
    .rows.map((r) => `${r.id}:${r.sortValue}`);
  assert.equal(seen, all);
});

test('q of rare words (their postings walked, each looked up in the others and the filters): same as SQL', async () => {
  // words on at most a few leads: below n/128 leads the rarest word's postings are walked and
  // looked up in the other word's (a gallop when it has no stored set) and in the filters
  const rare = (await rareWords(db, src.leads)).filter((w) => tokenize(w).length > 0);
  assert.ok(rare.length >= 10, `rare words: ${rare.length}`);
  const v = await values();
  let found = 0;
  for (let i = 0; i < rare.length; i++) {
    const one = await assertSame(
      { filters: { q: rare[i]! }, sort: 'relevance', limit: 10, offset: 0, after: null },
      `q=${rare[i]}`,
    );
    found += one;
    await assertSame(
      {
        filters: { q: rare[i]!, county: [v.county![i % v.county!.length]!] },
        sort: 'newest',
        limit: 10,
        offset: 0,
        after: null,
      },
      `q=${rare[i]} in a county`,
    );
    for (let j = i + 1; j < rare.length; j++)
      await assertSame(
        { filters: { q: `${rare[i]} ${rare[j]}` }, sort: 'relevance', limit: 10, offset: 0, after: null },
        `q=${rare[i]} ${rare[j]}`,
      );
  }
  assert.ok(found > 0, 'the rare words are found');
});

test('paging the whole set by cursor visits every lead once, in order', () => {
  for (const sort of ['newest', 'oldest', 'value_desc', 'value_asc'] as const) {
    const seen = new Set<number>();
    let after: [string | number, number] | null = null;
    for (;;) {
      const { rows } = ix.page({ filters: {}, sort, limit: 97, offset: 0, after });
      for (const r of rows) {
        assert.not.ok(seen.has(r.id), `${sort}: ${r.id} twice`);
        seen.add(r.id);
      }
      if (rows.length < 97) break;
      after = [rows.at(-1)!.sortValue, rows.at(-1)!.id];
    }
    assert.is(seen.size, ix.size, sort);
  }
});

test.run();
