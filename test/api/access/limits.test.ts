/**
 * The day arithmetic of the access limits (api/access/limits.ts): `utcDay` and `budgetReset`
 * remember the last day they answered for, so they are checked here against a Date computed
 * afresh for every instant — across midnight both ways, back to an earlier day, far from the
 * epoch on both sides, and outside the range a Date holds.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { budgetReset, utcDay } from '../../../api/access/limits.ts';

const DAY = 86_400_000;
const dayOf = (ms: number): string => new Date(ms).toISOString().slice(0, 10);
const resetOf = (ms: number): number => {
  const d = new Date(ms);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1) / 1000;
};

test('utcDay and budgetReset: the day and the next 00:00 UTC of every instant, whatever was asked before', () => {
  const midnight = Date.UTC(2026, 10, 26);
  const instants = [
    midnight - 1,
    midnight,
    midnight + 1,
    midnight - 1,
    midnight + DAY - 1,
    midnight + DAY,
    midnight - 7 * DAY,
    midnight,
    Date.UTC(2028, 1, 29, 12),
    Date.UTC(2028, 2, 1),
    Date.UTC(2026, 11, 31, 23, 59, 59, 999),
    Date.UTC(2027, 0, 1),
    0,
    -1,
    1,
    -DAY,
    -DAY - 1,
    8.64e15,
    8.64e15 - 1,
    -8.64e15,
  ];
  for (let i = 0; i < 2000; i++) instants.push(midnight + Math.round((i - 1000) * 0.37 * DAY));
  for (const ms of instants) {
    assert.is(utcDay(ms), dayOf(ms), `utcDay(${ms})`);
    assert.equal(budgetReset(ms), resetOf(ms), `budgetReset(${ms})`); // (equal: NaN is NaN)
  }
  assert.is(utcDay(midnight), '2026-11-26');
  assert.is(budgetReset(midnight - 1), midnight / 1000);
});

test('outside the range of a Date: the same answers as a Date gives (an error, NaN), also right after a valid instant of that day', () => {
  for (const ms of [8.64e15 + 1, -8.64e15 - 1, NaN, Infinity]) {
    utcDay(8.64e15);
    budgetReset(8.64e15);
    assert.throws(() => utcDay(ms), RangeError, String(ms));
    assert.ok(Number.isNaN(budgetReset(ms)), String(ms));
  }
});

test.run();
