/**
 * `GET /v1/account/usage`'s query (api/routes/account.ts `parseUsageQuery`): `from` / `to` through
 * the one query parser against schemas/account-usage-query.schema.json, in this endpoint's own
 * wording and order of errors (pinned: the answers did not change when it moved onto parseQuery);
 * the defaults and the range rules stay the route's. Over HTTP: test/api/access/http.test.ts and
 * test/api/small-print.test.ts.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ApiError } from '../../../api/http/errors.ts';
import {
  DEFAULT_USAGE_DAYS,
  MAX_USAGE_DAYS,
  parseUsageQuery,
  USAGE_QUERY_SCHEMA,
} from '../../../api/query/usage-query.ts';
import type { RawQuery } from '../../../api/query/parse-query.ts';

const TODAY = '2026-11-20';
const notDay = (v: string) => `must be a calendar date YYYY-MM-DD (1970 or later), got ${JSON.stringify(v)}`;

/** The problem `parseUsageQuery` throws: code and errors. */
function problem(q: RawQuery): { code: string; errors: unknown } {
  try {
    parseUsageQuery(q, TODAY);
  } catch (e) {
    assert.instance(e, ApiError);
    const err = e as ApiError;
    assert.is(err.status, 400);
    return { code: err.code, errors: err.errors };
  }
  throw new Error(`no error for ${JSON.stringify(q)}`);
}

test('the schema declares from and to (calendar dates), nothing else', () => {
  assert.equal(Object.keys(USAGE_QUERY_SCHEMA.properties), ['from', 'to']);
  assert.is(USAGE_QUERY_SCHEMA.additionalProperties, false);
  for (const p of ['from', 'to'])
    assert.equal([USAGE_QUERY_SCHEMA.properties[p].type, USAGE_QUERY_SCHEMA.properties[p].format], ['string', 'date']);
});

test('defaults: the last 30 days up to today; either end alone', () => {
  assert.equal(parseUsageQuery({}, TODAY), { from: '2026-10-22', to: TODAY });
  assert.is(DEFAULT_USAGE_DAYS, 30);
  assert.equal(parseUsageQuery({ to: '2026-02-28' }, TODAY), { from: '2026-01-30', to: '2026-02-28' });
  assert.equal(parseUsageQuery({ from: '2026-11-01' }, TODAY), { from: '2026-11-01', to: TODAY });
  assert.equal(parseUsageQuery({ from: '1970-01-01', to: '1970-01-01' }, TODAY), {
    from: '1970-01-01',
    to: '1970-01-01',
  });
});

test('a value that is not a calendar day of 1970 or later names the parameter and quotes the value (at most 40 characters)', () => {
  for (const v of ['x', '', '2026-02-30', '2026-13-01', '1969-12-31', '2026-1-01', ' 2026-11-01', '2026-11-01T00:00']) {
    assert.equal(problem({ from: v }), { code: 'invalid_parameter', errors: [{ name: 'from', reason: notDay(v) }] }, v);
  }
  const long = 'y'.repeat(60);
  assert.equal(problem({ to: long }).errors, [{ name: 'to', reason: notDay('y'.repeat(40)) }]);
  assert.equal(problem({ to: '"é' }).errors, [
    { name: 'to', reason: 'must be a calendar date YYYY-MM-DD (1970 or later), got "\\"é"' },
  ]);
});

test("errors in this endpoint's order: unknown parameters (query order), then to, then from; one per parameter", () => {
  assert.equal(problem({ from: 'a', zzz: '1', to: 'b', aaa: '' }).errors, [
    { name: 'zzz', reason: 'unknown parameter' },
    { name: 'aaa', reason: 'unknown parameter' },
    { name: 'to', reason: notDay('b') },
    { name: 'from', reason: notDay('a') },
  ]);
  assert.equal(problem({ from: ['a', 'b'], to: 'c' }).errors, [
    { name: 'to', reason: notDay('c') },
    { name: 'from', reason: 'given more than once' },
  ]);
  assert.equal(problem({ from: 'c', to: ['2026-11-01', '2026-11-02'] }).errors, [
    { name: 'to', reason: 'given more than once' },
    { name: 'from', reason: notDay('c') },
  ]);
  assert.equal(problem({ since: '2026-11-01' }), {
    code: 'unknown_parameter',
    errors: [{ name: 'since', reason: 'unknown parameter' }],
  });
  assert.equal(problem({ constructor: '1' }).errors, [{ name: 'constructor', reason: 'unknown parameter' }]);
});

test('the range rules are checked once both days are valid: from not after to, at most MAX_USAGE_DAYS days', () => {
  assert.equal(problem({ from: '2026-11-28', to: '2026-11-01' }).errors, [
    { name: 'from', reason: 'must not be after to (2026-11-01)' },
  ]);
  assert.equal(problem({ from: '2026-11-28' }).errors, [{ name: 'from', reason: `must not be after to (${TODAY})` }]);
  assert.equal(problem({ from: '1990-01-01', to: '2026-11-01' }).errors, [
    { name: 'from', reason: `the range may cover at most ${MAX_USAGE_DAYS} days` },
  ]);
  assert.equal(
    problem({ from: '1990-01-01', to: 'x' }).errors,
    [{ name: 'to', reason: notDay('x') }],
    'no range error beside a bad day',
  );
  const to = '2026-11-01';
  const from = new Date(Date.parse(to) - (MAX_USAGE_DAYS - 1) * 86_400_000).toISOString().slice(0, 10);
  assert.equal(parseUsageQuery({ from, to }, TODAY), { from, to }, 'exactly MAX_USAGE_DAYS days');
});

test.run();
