/**
 * The release's row store (`loadRowStore`): every lead of the tiny release round-trips to the
 * same values `ApiDb.all` reads from DuckDB, in `LEAD_COLUMNS` order, in each column encoding
 * (all raw, dictionaries where they pay, dictionaries everywhere they fit); the bytes it writes
 * are exactly `JSON.stringify` of the record `maskRecord` serves, for every scope; unknown ids
 * give null.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { join } from 'node:path';
import { openApiDb, sqlString, type ApiDb } from '../../../api/duckdb/db.ts';
import { LEAD_COLUMNS } from '../../../api/query/leads-query.ts';
import {
  CsvColumn,
  LONG_SPAN,
  loadRowStore,
  positionsOf,
  prefixPays,
  RowStore,
  RowStoreBuilder,
  type PrefixStats,
} from '../../../api/engine/row-store.ts';
import { ByteWriter } from '../../../api/render/bytes.ts';
import { columnMask, maskingFor, maskRecord } from '../../../api/access/masking.ts';
import { SCOPES } from '../../../api/access/scopes.ts';
import { tinyRelease } from '../../helpers/api.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { writeFileSync } from 'node:fs';

let db: ApiDb;
let stores: Record<'raw' | 'default' | 'dictionaries', RowStore>;
let expected: Record<string, unknown>[];

test.before(async () => {
  const rel = await tinyRelease();
  db = await openApiDb({ connections: 1, threads: 1, memoryLimit: '128MB' });
  await db.run(`CREATE TABLE leads AS SELECT * FROM read_parquet(${sqlString(join(rel.dir, 'leads.parquet'))})`);
  stores = {
    raw: await loadRowStore(db, 'leads', { dictionaryMax: 0 }),
    default: await loadRowStore(db, 'leads'),
    // every column with ≤ 65,535 values as a dictionary: the tiny release then has 2-byte codes too
    dictionaries: new RowStoreBuilderAll(await db.all(`SELECT ${LEAD_COLUMNS.join(', ')} FROM leads`)).store,
  };
  expected = await db.all(`SELECT ${LEAD_COLUMNS.join(', ')} FROM leads`);
});
test.after(() => db.close());

/** A store where every column is a dictionary (the build's half-the-rows rule is bypassed by announcing twice the rows). */
class RowStoreBuilderAll {
  store: RowStore;
  constructor(rows: Record<string, unknown>[]) {
    // 300 distinct values of a made-up column force 2-byte codes
    const columns = [...LEAD_COLUMNS, 'extra'];
    const doubled: Record<string, unknown>[] = [...rows, ...rows].map((r, i) => ({ ...r, extra: `v${i % 300}` }));
    const distinct = columns.map((c) => new Set(doubled.map((r) => JSON.stringify(r[c]))).size);
    const b = new RowStoreBuilder(columns, doubled.length, distinct);
    doubled.forEach((r, i) =>
      b.add(
        i,
        columns.map((c) => r[c]),
      ),
    );
    this.store = b.finish();
  }
}

test('positionsOf: each id to its position, -1 for any other value, by table (dense ids) or Map (sparse ids)', () => {
  for (const ids of [Int32Array.of(5, 1, 3, 2), Int32Array.of(7, 900_000_000, 12), new Int32Array(0)]) {
    const at = positionsOf(ids);
    ids.forEach((id, pos) => assert.is(at(id), pos, `id ${id}`));
    for (const other of [0, 4, 6, 8, 13, -1, 2.5, 1e10, Number.NaN, null as unknown as number])
      if (!ids.includes(other)) assert.is(at(other), -1, `not an id: ${other}`);
  }
});

test('every lead round-trips in every encoding: same values and column order as the DuckDB row', () => {
  assert.ok(expected.length > 100, 'a few hundred leads');
  for (const [name, store] of Object.entries(stores)) {
    if (name === 'dictionaries') continue;
    assert.is(store.size, expected.length, name);
    for (const row of expected) {
      const got = store.get(row['id'] as number);
      assert.equal(got, row, `${name}: lead ${row['id']}`);
      assert.equal(Object.keys(got!), [...LEAD_COLUMNS], name);
    }
  }
  assert.ok(
    stores.default.bytes < stores.raw.bytes,
    `dictionaries pay: ${stores.default.bytes} < ${stores.raw.bytes} bytes`,
  );
  assert.is(stores.default.encodingOf('public_url'), 'prefixed', "an authority's URLs share a prefix");
  assert.is(stores.default.encodingOf('content_hash'), 'raw', 'hashes share none');
  assert.is(stores.raw.encodingOf('public_url'), 'raw', 'no dictionaries, no prefixes');
  assert.ok(
    expected.some((r) => Array.isArray(r['verticals']) && (r['verticals'] as unknown[]).length > 0),
    'lists are covered',
  );
  assert.ok(
    expected.some((r) => typeof r['received_date'] === 'string'),
    'dates are covered',
  );
  assert.ok(
    expected.some((r) => Buffer.byteLength(JSON.stringify(r['description'])) >= 128),
    'raw texts of 128 bytes or more (2-byte lengths) are covered',
  );
});

test('1- and 2-byte dictionary codes round-trip', () => {
  const s = stores.dictionaries;
  for (let i = 0; i < s.size; i += 7) {
    const row = expected[i % expected.length]!;
    assert.equal(s.get(i), { ...row, extra: `v${i % 300}` });
  }
});

test('the bytes written are JSON.stringify of the masked record, for every scope', () => {
  for (const store of Object.values(stores)) {
    for (const scope of SCOPES) {
      const { nulled, complete } = columnMask('lead', store.columns, maskingFor(scope));
      assert.ok(complete, 'the lead has no enriched field inside a column');
      const out = new ByteWriter(64);
      for (const row of expected.slice(0, 200)) {
        const slot = store.slotOf(row['id'] as number);
        if (store.columns.length !== LEAD_COLUMNS.length) continue;
        out.len = 0;
        store.writeJson(out, slot, nulled);
        assert.is(out.toString(), JSON.stringify(maskRecord('lead', row, scope).record), `${scope}: lead ${row['id']}`);
      }
    }
  }
  assert.ok(
    columnMask('lead', LEAD_COLUMNS, maskingFor('commonwealth')).nulled!.includes(1),
    'commonwealth has masked columns',
  );
  assert.is(columnMask('lead', LEAD_COLUMNS, maskingFor('ent_api')).nulled, null);
});

test('values of every length copy exactly: short spans and long ones (LONG_SPAN), raw and dictionary, at any output offset, into a growing buffer', () => {
  // JSON texts of 1 byte (a digit) to LONG_SPAN + 40 bytes, multi-byte characters included
  const chars = 'abcdefghijklmnopqrstuvwxyz0123456789ÉéÁáÓó"\\/€';
  const values: unknown[] = [null, 0, 7, 42, 'x'];
  for (let len = 0; len <= LONG_SPAN + 40; len++)
    values.push(Array.from({ length: len }, (_, i) => chars[(i * 7 + len) % chars.length]).join(''));
  const lengths = values.map((v) => Buffer.byteLength(JSON.stringify(v)));
  assert.ok(Math.min(...lengths) === 1 && Math.max(...lengths) > LONG_SPAN + 8, 'both sides of the threshold');
  const build = (dictionaryMax: number | undefined, copies: number): RowStore => {
    const rows = values.length * copies;
    const b = new RowStoreBuilder(
      ['id', 'x'],
      rows,
      [rows, values.length],
      dictionaryMax === undefined ? {} : { dictionaryMax },
    );
    for (let r = 0; r < rows; r++) b.add(r + 1, [r + 1, values[r % values.length]]);
    return b.finish();
  };
  // raw: no dictionaries; dictionary: each value on three rows, so `x` pays as one
  for (const [name, store] of [
    ['raw', build(0, 1)],
    ['dictionary', build(undefined, 3)],
  ] as const) {
    const out = new ByteWriter(16);
    let expected = '';
    for (let slot = 0; slot < store.size; slot++) {
      const prefix = '.'.repeat(slot % 9); // every offset modulo 8
      out.ascii(prefix);
      store.writeJson(out, slot, null);
      expected += prefix + JSON.stringify({ id: slot + 1, x: values[slot % values.length] });
    }
    assert.is(out.toString(), expected, name);
    const nulled = new Uint8Array([0, 1]);
    out.len = 0;
    store.writeJson(out, 5, nulled);
    assert.is(out.toString(), JSON.stringify({ id: 6, x: null }), `${name}: masked`);
  }
});

test('distinct lists the values of a column, in every encoding', () => {
  for (const [name, store] of Object.entries(stores)) {
    for (const c of ['county', 'planning_authority', 'id', 'verticals', 'applicant_org']) {
      const want = [...new Set(expected.map((r) => JSON.stringify(r[c] ?? null)))].sort();
      const got = store
        .distinct(c)
        .map((v) => JSON.stringify(v))
        .sort();
      assert.equal(got, want, `${name}: ${c}`);
    }
  }
});

test('value reads one column of a row', () => {
  for (const store of [stores.raw, stores.default]) {
    for (const row of expected.slice(0, 50)) {
      const slot = store.slotOf(row['id'] as number);
      for (const c of LEAD_COLUMNS) assert.equal(store.value(slot, c), row[c], `${row['id']}.${c}`);
    }
  }
  assert.throws(() => stores.default.value(0, 'nope'), /no column nope/);
});

test('getMany keeps the order asked for, repeats included; unknown ids give null', () => {
  const store = stores.default;
  const ids = [expected.at(-1)!['id'], expected[0]!['id'], expected[57]!['id'], expected[0]!['id']] as number[];
  assert.equal(store.getMany(ids), [expected.at(-1), expected[0], expected[57], expected[0]]);
  const maxId = Math.max(...expected.map((r) => r['id'] as number));
  assert.is(store.get(maxId + 1), null);
  assert.is(store.get(-1), null);
  assert.is(store.get(1.5), null);
  assert.is(store.slotOf(maxId + 1), -1);
  assert.equal(store.getMany([maxId + 1, ids[0]!]), [null, expected.at(-1)]);
});

test('rows are fresh objects: changing one does not change the store', () => {
  const id = expected[3]!['id'] as number;
  const a = stores.default.get(id)!;
  a['description'] = 'changed';
  assert.equal(stores.default.get(id), expected[3]);
});

test('a prefixed column: its prefix (up to the first digit) kept once, the rest raw; null, no prefix, masking and value', () => {
  const urls = [
    'https://www.eplanning.ie/ClareCC/AppFileRefDetails/25/0831/0',
    'https://www.eplanning.ie/ClareCC/AppFileRefDetails/24/1200/0',
    'https://planning.dlrcoco.ie/swiftlg/apas/run/WPHAPPDETAIL.DisplayUrl?theApnID=D25A/1204',
    null,
    '2025/77 starts with a digit',
    'no digit at all, "quoted" and Éire',
  ];
  const rows = Array.from({ length: 60 }, (_, i) => [i + 1, urls[i % urls.length]!, `v${i}`]);
  const stats: PrefixStats = { distinct: 5, bytes: 60 * 50, distinctBytes: 200 };
  assert.ok(prefixPays(stats, 60));
  assert.not.ok(prefixPays({ distinct: 5, bytes: 60 * 6, distinctBytes: 30 }, 60), 'saves under 4 bytes a row');
  assert.not.ok(prefixPays({ distinct: 40_000, bytes: 1e9, distinctBytes: 1e6 }, 1e6), 'too many prefixes');
  // (60 distinct announced, a bound above the truth: too many for a dictionary of 60 rows)
  const b = new RowStoreBuilder(['id', 'public_url', 'x'], rows.length, [60, 60, 60], {
    prefixes: [null, stats, null],
  });
  for (const r of rows) b.add(r[0] as number, r);
  const store = b.finish();
  assert.is(store.encodingOf('public_url'), 'prefixed');
  assert.is(store.encodingOf('x'), 'raw');
  const out = new ByteWriter(16);
  for (const [id, url, x] of rows) {
    const slot = store.slotOf(id as number);
    assert.equal(store.get(id as number), { id, public_url: url, x });
    assert.is(store.value(slot, 'public_url'), url);
    for (const nulled of [null, Uint8Array.of(0, 1, 0)]) {
      out.len = 0;
      store.writeJson(out, slot, nulled);
      assert.is(out.toString(), JSON.stringify({ id, public_url: nulled ? null : url, x }));
    }
  }
  assert.equal(new Set(store.distinct('public_url')), new Set(urls));
});

test("writeCsv writes DuckDB's CSV writer's bytes: escapes, quotes, line breaks, lists, whole doubles, dates and nulls, in every encoding, masked or not", async () => {
  const texts = [
    'plain',
    'with "quotes"',
    'line\nbreak',
    'tab\there',
    'back\\slash',
    'Éire ☘ 1',
    '',
    null,
    'semi;colon',
    'comma, here',
  ];
  const doubles = [1, 1.5, 0.1, -2, 0, 53.349805, -6.260273, 123456789.125, 0.0001, null];
  const days = ['2025-01-31', null, '2026-12-06'];
  const lists = [['a', 'b'], [], null, ['x"y', 'semi;colon'], ['a', null, 'b'], ['line\nbreak'], ['solo']];
  const urls = [
    'https://x.ie/AppFileRefDetails/25/0831/0',
    'no digit "quoted"',
    'back\\slash 1',
    null,
    'https://x.ie/AppFileRefDetails/24/1/0',
  ];
  const rows = Array.from({ length: 70 }, (_, i) => ({
    id: i + 1,
    t: texts[i % texts.length]!,
    d: doubles[i % doubles.length]!,
    day: days[i % days.length]!,
    l: lists[i % lists.length]!,
    b: i % 3 === 0 ? null : i % 3 === 1,
    p: urls[i % urls.length]!,
  }));
  const columns = ['id', 't', 'd', 'day', 'l', 'b', 'p'];
  const forms = Uint8Array.of(
    CsvColumn.plain,
    CsvColumn.text,
    CsvColumn.double,
    CsvColumn.date,
    CsvColumn.list,
    CsvColumn.plain,
    CsvColumn.text,
  );
  const file = join(tempDir('row-store-csv-'), 'rows.json');
  writeFileSync(file, rows.map((r) => JSON.stringify(r)).join('\n'));
  const source = `read_json(${sqlString(file)}, format = 'newline_delimited', columns = {id: 'BIGINT', t: 'VARCHAR', d: 'DOUBLE', day: 'DATE', l: 'VARCHAR[]', b: 'BOOLEAN', p: 'VARCHAR'})`;
  const duckdbCsv = async (masked: string | null): Promise<string> => {
    const select = columns
      .map((c) => (c === masked ? `CAST(NULL AS VARCHAR) AS ${c}` : c === 'l' ? `array_to_string(l, ';') AS l` : c))
      .join(', ');
    const out = join(tempDir('row-store-csv-'), 'duckdb.csv');
    await db.run(
      `COPY (SELECT ${select} FROM ${source} ORDER BY id) TO ${sqlString(out)} (FORMAT CSV, HEADER false, NEW_LINE '\r\n', FORCE_QUOTE (t, l, p))`,
    );
    return (await import('node:fs')).readFileSync(out, 'utf8');
  };
  const stats: PrefixStats = { distinct: 5, bytes: 70 * 50, distinctBytes: 200 };
  const build = (distinct: number[], opts: ConstructorParameters<typeof RowStoreBuilder>[3] = {}): RowStore => {
    const b = new RowStoreBuilder(columns, rows.length, distinct, opts);
    for (const r of rows)
      b.add(
        r.id,
        columns.map((c) => (r as Record<string, unknown>)[c]),
      );
    return b.finish();
  };
  const encodings = {
    raw: build([70, 70, 70, 70, 70, 70, 70], { dictionaryMax: 0 }),
    dictionaries: build([70, 11, 11, 4, 8, 3, 6]),
    prefixed: build([70, 70, 70, 70, 70, 70, 70], { prefixes: [null, null, null, null, null, null, stats] }),
  };
  assert.is(encodings.dictionaries.encodingOf('t'), 'dictionary');
  assert.is(encodings.prefixed.encodingOf('p'), 'prefixed');
  for (const [masked, nulled] of [
    [null, null],
    ['t', Uint8Array.of(0, 1, 0, 0, 0, 0, 0)],
    ['l', Uint8Array.of(0, 0, 0, 0, 1, 0, 0)],
  ] as const) {
    const want = await duckdbCsv(masked);
    for (const [name, store] of Object.entries(encodings)) {
      const out = new ByteWriter(16); // grows: every path that may replace the buffer runs
      for (const r of rows) {
        store.writeCsv(out, store.slotOf(r.id), nulled, forms);
        out.ascii('\r\n');
      }
      const got = out.toString();
      if (got !== want) {
        const g = got.split('\r\n');
        const at = want.split('\r\n').findIndex((l, i) => l !== g[i]);
        assert.fixture(g[at] ?? '', want.split('\r\n')[at]!, `${name}, masked ${masked}: line ${at}`);
      }
    }
  }
});

test('a build that meets more distinct values than announced fails instead of writing wrong codes', () => {
  // one distinct value announced: room for it and null
  const b = new RowStoreBuilder(['id', 'x'], 6, [6, 1]);
  b.add(1, [1, 'a']);
  b.add(2, [2, null]);
  assert.throws(() => b.add(3, [3, 'b']), /column x has more distinct values than counted/);
  const short = new RowStoreBuilder(['id'], 3, [3]);
  short.add(1, [1]);
  assert.throws(() => short.finish(), /told 3 rows and got 1/);
});

test.run();
