import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parseCsv } from '../../../pipeline/lib/csv.ts';
import { parseDate } from '../../../pipeline/lib/dates.ts';
import { AUTHORITIES, resolveAuthority } from '../../../pipeline/reference/authorities.ts';
import {
  ABP_CASE_COLUMNS,
  AUCTION_COLUMNS,
  COMMENCEMENT_COLUMNS,
  CRO_COMPANY_COLUMNS,
  CRO_FILING_COLUMNS,
  DATA_CENTRE_COLUMNS,
  GRID_CONNECTION_COLUMNS,
  PLANNING_COLUMNS,
  PPR_COLUMNS_CURRENT,
  PPR_COLUMNS_OLD,
} from '../../../pipeline/sources/formats.ts';
import { type GenerateSummary, SCALES, generateRaw, snapshotDate } from '../../../pipeline/synth/generate.ts';

const root = mkdtempSync(join(tmpdir(), 'synth-test-'));
const runs = new Map<string, { dir: string; summary: GenerateSummary }>();

/** Generate (once per test file) a tiny dataset for a (seed, week). */
async function run(name: string, seed: number, week: number): Promise<{ dir: string; summary: GenerateSummary }> {
  let r = runs.get(name);
  if (!r) {
    const dir = join(root, name);
    r = { dir, summary: await generateRaw({ outDir: dir, scale: SCALES.tiny, seed, week }) };
    runs.set(name, r);
  }
  return r;
}

function listFiles(dir: string): string[] {
  const out: string[] = [];
  for (const src of readdirSync(dir).sort())
    for (const f of readdirSync(join(dir, src)).sort()) out.push(`${src}/${f}`);
  return out;
}

function hashDir(dir: string): string {
  const h = createHash('sha256');
  for (const f of listFiles(dir)) h.update(f).update(readFileSync(join(dir, f)));
  return h.digest('hex');
}

function rows(dir: string, file: string, encoding: 'utf-8' | 'windows-1252' = 'utf-8'): string[][] {
  // stream mode: Node 20's one-shot windows-1252 decode drops bytes 0x80–0x9F (the euro sign)
  const decoder = new TextDecoder(encoding);
  const text = decoder.decode(readFileSync(join(dir, file)), { stream: true }) + decoder.decode();
  return parseCsv(text).map((r) => r.fields);
}

function byKey(dir: string): Map<string, string> {
  const recs = parseCsv(new TextDecoder().decode(readFileSync(join(dir, 'planning/planning-applications.csv'))));
  const m = new Map<string, string>();
  for (const r of recs.slice(1)) {
    if (r.fields.length !== PLANNING_COLUMNS.length || !r.fields[2]) continue;
    // duplicates: keep the last (newest) copy, as the adapter does
    m.set(`${r.fields[1]}|${r.fields[2]}`, r.fields.join('\u0001'));
  }
  return m;
}

test.after(() => rmSync(root, { recursive: true, force: true }));

test('snapshotDate: week 1 is 2026-11-09, then weekly', () => {
  const cases: [number, string][] = [
    [1, '2026-11-09'],
    [2, '2026-11-16'],
    [8, '2026-12-28'],
    [9, '2027-01-04'],
  ];
  for (const [week, date] of cases) assert.is(snapshotDate(week), date, `week ${week}`);
  for (const bad of [0, -1, 1.5, Number.NaN]) assert.throws(() => snapshotDate(bad), RangeError, `week ${bad}`);
});

test('SCALES: the documented multipliers', () => {
  assert.equal(SCALES, { tiny: 0.005, small: 0.05, default: 1, stress: 10 });
});

test('generateRaw: rejects bad options', async () => {
  const bad = [
    { outDir: join(root, 'x'), scale: 0, seed: 1, week: 1 },
    { outDir: join(root, 'x'), scale: 1, seed: -1, week: 1 },
    { outDir: join(root, 'x'), scale: 1, seed: 1.5, week: 1 },
    { outDir: join(root, 'x'), scale: 1, seed: 1, week: 0 },
    { outDir: '', scale: 1, seed: 1, week: 1 },
  ];
  for (const opts of bad) {
    await generateRaw(opts).then(
      () => assert.unreachable(`accepted ${JSON.stringify(opts)}`),
      (e: unknown) => assert.instance(e, Error),
    );
  }
});

test('determinism: same (seed, scale, week) → identical bytes; another seed → different bytes', async () => {
  const a = await run('a', 42, 1);
  const b = await run('b', 42, 1);
  const c = await run('c', 43, 1);
  assert.is(hashDir(a.dir), hashDir(b.dir));
  assert.equal(a.summary, { ...b.summary, files: b.summary.files });
  assert.is.not(hashDir(a.dir), hashDir(c.dir));
  const planning = 'planning/planning-applications.csv';
  assert.is.not(readFileSync(join(a.dir, planning)).toString(), readFileSync(join(c.dir, planning)).toString());
});

test('summary: lists every file with its data rows and bytes', async () => {
  const { dir, summary } = await run('a', 42, 1);
  assert.is(summary.week, 1);
  assert.is(summary.snapshotDate, '2026-11-09');
  assert.equal(summary.files.map((f) => f.path).sort(), listFiles(dir));
  for (const f of summary.files) {
    const buf = readFileSync(join(dir, f.path));
    assert.is(f.bytes, buf.length, f.path);
    const enc = f.path.startsWith('ppr/') ? 'windows-1252' : 'utf-8';
    assert.is(f.rows, rows(dir, f.path, enc).length - 1, f.path);
  }
});

test('headers: every file has its exact column list', async () => {
  const { dir } = await run('a', 42, 1);
  const cases: [string, readonly string[]][] = [
    ['planning/planning-applications.csv', PLANNING_COLUMNS],
    ['commencements/bcms-commencement-notices.csv', COMMENCEMENT_COLUMNS],
    ['companies/cro-companies.csv', CRO_COMPANY_COLUMNS],
    ['companies/cro-filings.csv', CRO_FILING_COLUMNS],
    ['infrastructure/abp-cases.csv', ABP_CASE_COLUMNS],
    ['infrastructure/ress-auction-results.csv', AUCTION_COLUMNS],
    ['infrastructure/grid-connections.csv', GRID_CONNECTION_COLUMNS],
    ['infrastructure/data-centres.csv', DATA_CENTRE_COLUMNS],
    ['ppr/PPR-2010.csv', PPR_COLUMNS_OLD],
    ['ppr/PPR-2018.csv', PPR_COLUMNS_OLD],
    ['ppr/PPR-2019.csv', PPR_COLUMNS_CURRENT],
    ['ppr/PPR-2026.csv', PPR_COLUMNS_CURRENT],
  ];
  for (const [file, cols] of cases) {
    const enc = file.startsWith('ppr/') ? 'windows-1252' : 'utf-8';
    assert.equal(rows(dir, file, enc)[0], [...cols], file);
  }
  const years = readdirSync(join(dir, 'ppr')).sort();
  assert.equal(
    years,
    Array.from({ length: 17 }, (_, i) => `PPR-${2010 + i}.csv`),
  );
});

test('planning: UTF-8 BOM, CRLF line ends, all 31 authorities, mixed date formats', async () => {
  const { dir } = await run('a', 42, 1);
  const buf = readFileSync(join(dir, 'planning/planning-applications.csv'));
  assert.equal([...buf.subarray(0, 3)], [0xef, 0xbb, 0xbf]);
  const text = buf.toString('utf8');
  assert.is(text.split('\r\n').length, text.split('\n').length, 'every LF is preceded by CR');
  const data = rows(dir, 'planning/planning-applications.csv').slice(1);
  const authorities = new Set(data.map((r) => resolveAuthority(r[1])?.name).filter(Boolean));
  assert.is(authorities.size, AUTHORITIES.length);
  const styles = new Set(data.map((r) => r[20]!.replace(/\d/g, '9')));
  for (const s of ['9999-99-99', '99/99/9999', '9999/99/99 99:99:99', '9999-99-99T99:99:99Z'])
    assert.ok(styles.has(s), s);
});

test('planning: bad and duplicate rows stay well under 1 %', async () => {
  const { dir } = await run('a', 42, 1);
  const data = rows(dir, 'planning/planning-applications.csv').slice(1);
  let bad = 0;
  const seen = new Set<string>();
  let dups = 0;
  for (const r of data) {
    const ok =
      r.length === PLANNING_COLUMNS.length &&
      r[2] &&
      resolveAuthority(r[1]) &&
      parseDate(r[20]) &&
      !(Number(r[6]) > 1_000_000);
    if (!ok) bad++;
    const k = `${r[1]}|${r[2]}`;
    if (seen.has(k)) dups++;
    seen.add(k);
  }
  assert.ok(bad >= 1 && bad / data.length < 0.006, `bad ${bad} of ${data.length}`);
  assert.ok(dups >= 1 && dups / data.length < 0.006, `duplicates ${dups} of ${data.length}`);
});

test('week 2: new applications added, untouched rows byte-identical, changed rows carry a newer ETL_DATE', async () => {
  const w1 = await run('a', 42, 1);
  const w2 = await run('w2', 42, 2);
  assert.is(w2.summary.snapshotDate, '2026-11-16');
  const a = byKey(w1.dir);
  const b = byKey(w2.dir);
  let same = 0;
  let changed = 0;
  let takenDown = 0;
  for (const [k, row] of a) {
    const next = b.get(k);
    if (next === undefined) {
      // taken down by its authority (pipeline/synth/revisions.ts): never granted
      takenDown++;
      assert.is(row.split('\u0001')[24], '', `week 2 lost ${k}, which was granted`);
      continue;
    }
    if (next === row) {
      same++;
      continue;
    }
    changed++;
    const etl1 = row.split('\u0001')[34]!;
    const etl2 = next.split('\u0001')[34]!;
    assert.ok(etl2 > etl1 && etl2 <= '2026-11-16' && etl2 > '2026-11-09', `${k}: ${etl1} → ${etl2}`);
  }
  const added = [...b.keys()].filter((k) => !a.has(k));
  assert.ok(changed > 0, 'some applications changed');
  assert.ok(takenDown <= Math.ceil(a.size * 0.01), `${takenDown} of ${a.size} taken down`);
  assert.ok(same > 0.9 * a.size, `${same} of ${a.size} unchanged`);
  assert.ok(added.length >= 3 && added.length <= 6, `added ${added.length} (≈ 800 × 0.005)`);
  for (const k of added) {
    const received = parseDate(b.get(k)!.split('\u0001')[20]);
    assert.ok(received! >= '2026-11-09' && received! < '2026-11-16', `${k} received ${received}`);
  }
  // the other sources: week 1 files are not identical to week 2's, past PPR years are
  assert.is.not(hashDir(w1.dir), hashDir(w2.dir));
  assert.ok(readFileSync(join(w1.dir, 'ppr/PPR-2020.csv')).equals(readFileSync(join(w2.dir, 'ppr/PPR-2020.csv'))));
  assert.ok(
    rows(w2.dir, 'ppr/PPR-2026.csv', 'windows-1252').length > rows(w1.dir, 'ppr/PPR-2026.csv', 'windows-1252').length,
  );
});

test('ppr: Windows-1252 bytes (€ is 0x80, no UTF-8 sequences), LF endings, prices like €458,150.00', async () => {
  const { dir } = await run('a', 42, 1);
  for (const f of ['ppr/PPR-2012.csv', 'ppr/PPR-2023.csv']) {
    const buf = readFileSync(join(dir, f));
    assert.ok(buf.includes(0x80), `${f} has 0x80`);
    assert.not.ok(buf.includes(Buffer.from('€', 'utf8')), `${f} has no UTF-8 euro`);
    assert.not.ok(buf.includes(0x0d), `${f} has no CR`);
  }
  const data = rows(dir, 'ppr/PPR-2023.csv', 'windows-1252').slice(1);
  const priced = data.filter((r) => /^€\d{1,3}(,\d{3})*\.\d\d$/.test(r[4]!));
  assert.ok(priced.length > 0.99 * data.length);
  const withCode = data.filter((r) => r[3]).length / data.length;
  assert.ok(withCode > 0.55 && withCode < 0.85, `eircode share ${withCode}`);
});

test('volumes: tiny counts ≈ 0.005 × the default volumes', async () => {
  const { summary } = await run('a', 42, 1);
  const count = (prefix: string): number =>
    summary.files.filter((f) => f.path.startsWith(prefix)).reduce((s, f) => s + f.rows, 0);
  // [files, default volume, allowed relative error, allowed absolute error]
  const cases: [string, number, number, number][] = [
    ['planning/', 201_300 * 1.005, 0.03, 0],
    ['commencements/', 75_000, 0.15, 0],
    ['ppr/', 790_000, 0.06, 0],
    ['companies/cro-companies', 12_000, 0.1, 0],
    ['companies/cro-filings', 60_000, 0.2, 0],
    ['infrastructure/abp-cases', 700, 0, 3],
    ['infrastructure/ress-auction', 350, 0, 3],
    ['infrastructure/grid-connections', 950, 0, 3],
    ['infrastructure/data-centres', 160, 0, 2],
  ];
  for (const [prefix, volume, rel, abs] of cases) {
    const expected = volume * SCALES.tiny;
    const got = count(prefix);
    assert.ok(got >= 1, `${prefix} has rows`);
    assert.ok(Math.abs(got - expected) <= Math.max(rel * expected, abs), `${prefix}: ${got} vs ${expected.toFixed(1)}`);
  }
});
test.run();
