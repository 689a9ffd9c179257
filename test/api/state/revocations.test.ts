/**
 * The SQLite change stamp (api/state/revocations.ts `sqliteChangeStamp`) on real files: it moves
 * exactly when another connection (another process, the CLI) has committed since it was last
 * read — never for this connection's own commits — and `PRAGMA data_version` is read only when
 * the WAL index header has moved. (Revocation over HTTP across connections and processes:
 * revocations.pg.test.ts, test/api/cli/main.test.ts.)
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { sqliteChangeStamp } from '../../../api/state/revocations.ts';
import { openSqliteStore } from '../../../api/state/sqlite.ts';
import { tempDir } from '../../helpers/tmp.ts';

const fileIn = (): string => join(tempDir('leads-stamp-'), 'state.sqlite');

test('the stamp moves exactly when another connection committed since the last read, never for its own commits', async () => {
  const file = fileIn();
  const mine = openSqliteStore(file);
  const other = openSqliteStore(file);
  try {
    let seed = 7;
    const random = (): number => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    let stamp = mine.keyChangeStamp();
    for (let i = 0; i < 400; i++) {
      const r = random();
      const by = r < 0.45 ? mine : r < 0.7 ? other : null; // some rounds commit nothing
      if (by) await by.hitRateLimit(`key_${i % 3}`, 0, '2026-01-01');
      const now = mine.keyChangeStamp();
      if (by === other) assert.is.not(now, stamp, `round ${i}: another connection committed`);
      else assert.is(now, stamp, `round ${i}: ${by ? 'only this connection committed' : 'nothing committed'}`);
      stamp = now;
    }
  } finally {
    await mine.close();
    await other.close();
  }
});

test('a commit of another process moves the stamp by the time that process has exited', async () => {
  const file = fileIn();
  const mine = openSqliteStore(file);
  try {
    const stamp = mine.keyChangeStamp();
    const child = spawnSync(
      process.execPath,
      [
        '-e',
        `const D = require('better-sqlite3'); const d = new D(${JSON.stringify(file)}); d.exec("UPDATE rate_counters SET count = count WHERE key_id = 'none'"); d.exec("INSERT INTO rate_counters (key_id, window_start, count) VALUES ('key_p', 0, 1)"); d.close();`,
      ],
      { cwd: process.cwd(), encoding: 'utf8' },
    );
    assert.is(child.status, 0, child.stderr);
    assert.is.not(mine.keyChangeStamp(), stamp);
  } finally {
    await mine.close();
  }
});

test('PRAGMA data_version is read only when the WAL index header has moved', () => {
  const file = fileIn();
  const db = new Database(file);
  const other = new Database(file);
  try {
    db.pragma('journal_mode = WAL');
    db.exec('CREATE TABLE t (x)');
    let reads = 0;
    const prepare = db.prepare.bind(db);
    db.prepare = ((sql: string) => {
      const s = prepare(sql);
      if (sql.includes('data_version')) {
        const get = s.get.bind(s);
        s.get = ((...a: unknown[]) => (reads++, get(...a))) as typeof s.get;
      }
      return s;
    }) as typeof db.prepare;
    const stamp = sqliteChangeStamp(db);
    const first = stamp();
    for (let i = 0; i < 100; i++) assert.is(stamp(), first);
    assert.is(reads, 1, 'one read while nothing changed');
    db.exec('INSERT INTO t VALUES (1)');
    assert.is(stamp(), first, 'its own commit: the header moved, the pragma did not');
    assert.is(reads, 2);
    other.exec('INSERT INTO t VALUES (2)');
    assert.is.not(stamp(), first, "another connection's commit");
    assert.is(reads, 3);
    stamp.close();
  } finally {
    other.close();
    db.close();
  }
});

test('without a WAL index (another journal mode) the pragma is read on every call, and still right', () => {
  const file = fileIn();
  const db = new Database(file);
  const other = new Database(file);
  try {
    db.exec('CREATE TABLE t (x)');
    const stamp = sqliteChangeStamp(db);
    const first = stamp();
    db.exec('INSERT INTO t VALUES (1)');
    assert.is(stamp(), first);
    other.exec('INSERT INTO t VALUES (2)');
    assert.is.not(stamp(), first);
    stamp.close();
  } finally {
    other.close();
    db.close();
  }
});

test.run();
