/**
 * The PPR adapter and the repeat-sale pair matcher on the real Property Price Register files in
 * ../shared/realdata/ppr/ (Dublin 2017, old header with postal districts; all counties February
 * 2023, current header with Eircodes): the pairs found are reported, and the matching rules are
 * checked on hand-picked real addresses. Skipped, with a message, when the folder is missing.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { openDb, type Db } from '../../../pipeline/lib/duckdb.ts';
import { addressKey } from '../../../pipeline/intel/address.ts';
import { pairCountsSql, pairsSql, salesFunnelSql } from '../../../pipeline/intel/pairs.ts';
import { openIntelSalesSink, readIntelSalesSql } from '../../../pipeline/intel/sales-input.ts';
import { readPpr } from '../../../pipeline/sources/ppr.ts';
import { REPO_ROOT, tempDir } from '../../helpers/tmp.ts';
import { skipFile } from '../../helpers/skip.ts';

const REAL = join(REPO_ROOT, '..', 'shared', 'realdata', 'ppr');

if (!existsSync(REAL)) {
  skipFile(test, 'pairs.realdata.test.ts', `${REAL} is missing (the real PPR samples are not on this machine)`);
} else {
  let db: Db;
  type Pair = { home: string; d1: string; d2: string; p1: number; p2: number; reason: string | null };
  let pairs: Pair[];

  test.before(async () => {
    const files = readdirSync(REAL)
      .filter((f) => f.endsWith('.csv'))
      .sort()
      .map((f) => join(REAL, f));
    const sink = openIntelSalesSink(tempDir('leads-real-pairs-'));
    const read = await readPpr(files, (row) => sink.write(row));
    sink.close();
    assert.ok(read.lines > 21_000, `${read.lines} lines read`);
    db = await openDb();
    await db.run(`CREATE TABLE s AS SELECT * FROM ${readIntelSalesSql(sink.path)}`);
    await db.run(pairsSql('s'));
    pairs = await db.all<Pair>('SELECT home, d1, d2, p1, p2, reason FROM intel_pairs ORDER BY home, d2');
  });
  test.after(() => db?.close());

  const of = (address: string): Pair[] => pairs.filter((p) => p.home.startsWith(`Dublin|${addressKey(address)}`));

  test('reports the pairs found in the real files', async () => {
    const [funnel] = await db.all(salesFunnelSql('s'));
    const outcomes = await db.all<{ outcome: string; pairs: number; homes: number }>(pairCountsSql());
    console.log(`  real PPR: ${JSON.stringify(funnel)}`);
    console.log(`  real PPR pairs: ${outcomes.map((o) => `${o.outcome} ${o.pairs} (${o.homes} homes)`).join(', ')}`);
    const used = outcomes.find((o) => o.outcome === 'used')!;
    assert.ok(used.pairs >= 20, 'real repeat sales are found');
    assert.ok(
      outcomes.some((o) => o.outcome === 'same_quarter') && outcomes.some((o) => o.outcome === 'implausible'),
      'both pair rules fire on real data',
    );
    const across = pairs.filter((p) => p.reason === null && p.d1 < '2018-01-01' && p.d2 > '2023-01-01');
    console.log(`  pairs from Dublin 2017 to February 2023: ${across.length}`);
    assert.ok(across.length >= 5, 'homes sold in 2017 and again in 2023 are paired across the two header generations');
  });

  test('old-header postal district and current-header Eircode: one home (25 Ash St, the Liberties, Dublin 8)', () => {
    assert.equal(
      of('25 Ash St, The Liberties, Dublin 8').map((p) => [p.d1, p.d2, p.p1, p.p2, p.reason]),
      [['2017-01-12', '2023-02-21', 30000000, 47000000, null]],
    );
  });

  test('a sale without a code pairs with the same address under an Eircode (83 St Patricks Crescent, Glenageary)', () => {
    assert.equal(
      of('83 St Patricks Crescent, Monkstown Farm, Glenageary').map((p) => [p.d1, p.d2, p.reason]),
      [['2017-03-22', '2023-02-02', null]],
    );
  });

  test('the same address in two postal districts is two homes: no pair (Apartment 86 Block B, Smithfield: D07 / D15)', () => {
    assert.equal(of('Apartment 86 Block B Smithfield'), []);
  });

  test('same-day and same-quarter sales are flips, not index evidence (17 Serpentine Ave; 26 Manor Street)', () => {
    assert.equal(
      of('17 Serpentine Ave, Ballsbridge, Dublin 4').map((p) => p.reason),
      ['same_quarter'],
    );
    assert.equal(
      of('26 Manor Street, Dublin 7').map((p) => p.reason),
      ['same_quarter'],
    );
  });

  test('a price that more than doubles within a year is implausible (57 Smyths Villas: €142,500 → €350,000 in 11 months)', () => {
    assert.equal(
      of('57 Smyths Villas, York Rd, Dun Laoghaire').map((p) => [p.p1, p.p2, p.reason]),
      [[14250000, 35000000, 'implausible']],
    );
  });

  test('a not-full-market-price sale never enters a pair (4 Grantham Mews: €30,000 NFMP, then €310,000)', () => {
    assert.equal(of('4 Grantham Mews, Rathmines, Dublin'), []);
  });

  test('an ordinary resale in another quarter is used (5 Elmwood Rd, Swords: €340,000 → €388,000)', () => {
    assert.equal(
      of('5 Elmwood Rd, Swords, Dublin').map((p) => [p.d1, p.d2, p.reason]),
      [['2017-01-13', '2017-12-11', null]],
    );
  });

  test.run();
}
