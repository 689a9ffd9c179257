/** The retry schedule, Retry-After parsing and attempt outcomes (pure; clock and random injected). */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { attemptOutcome, parseRetryAfter, retryDelayMs } from '../../../api/webhooks/retry.ts';

const now = new Date('2026-11-20T10:00:00Z');

test('schedule: 30 s × 4^(n−1), capped at 12 h, plus up to 25% jitter', () => {
  assert.equal(
    [1, 2, 3, 4, 5, 6, 7, 8].map((n) => retryDelayMs(n, () => 0) / 1000),
    [30, 120, 480, 1920, 7680, 30720, 43200, 43200],
  );
  assert.is(
    retryDelayMs(1, () => 0.5),
    33_750,
  );
  assert.ok(retryDelayMs(3, () => 0.999999) < 480_000 * 1.25);
  assert.is(
    retryDelayMs(2, () => 0.9999999),
    149_999,
    'the top of the jitter stays below 1.25 × base',
  );
  for (let i = 0; i < 100; i++) {
    const d = retryDelayMs(2);
    assert.ok(d >= 120_000 && d < 150_000, String(d));
  }
});

test('Retry-After: seconds or HTTP date, capped at 24 h; junk ignored', () => {
  assert.is(parseRetryAfter('120', now), 120_000);
  assert.is(parseRetryAfter(new Date(now.getTime() + 90_000).toUTCString(), now), 90_000);
  assert.is(parseRetryAfter('Wed, 01 Jan 2020 00:00:00 GMT', now), 0);
  assert.is(parseRetryAfter('999999', now), 24 * 3600_000);
  assert.is(parseRetryAfter('soon', now), null);
  assert.is(parseRetryAfter(null, now), null);
});

test('outcomes: 2xx delivered, 410 dead, last attempt dead, else retry at max(schedule, Retry-After)', () => {
  const o = { attempts: 1, maxAttempts: 8, now, random: () => 0 };
  assert.equal(attemptOutcome({ statusCode: 202, retryAfter: null, error: null }, o), { status: 'delivered' });
  assert.is(attemptOutcome({ statusCode: 410, retryAfter: null, error: null }, o).status, 'dead');
  assert.equal(attemptOutcome({ statusCode: 500, retryAfter: null, error: null }, o), {
    status: 'pending',
    next_attempt_at: new Date(now.getTime() + 30_000),
  });
  assert.equal(attemptOutcome({ statusCode: 429, retryAfter: '600', error: null }, o), {
    status: 'pending',
    next_attempt_at: new Date(now.getTime() + 600_000),
  });
  assert.equal(
    attemptOutcome({ statusCode: 503, retryAfter: '1', error: null }, o),
    { status: 'pending', next_attempt_at: new Date(now.getTime() + 30_000) },
    'never earlier than the schedule',
  );
  assert.equal(
    attemptOutcome({ statusCode: 301, retryAfter: null, error: null }, o).status,
    'pending',
    'redirects are failures',
  );
  assert.equal(
    attemptOutcome({ statusCode: null, retryAfter: null, error: 'timed out after 10000 ms' }, { ...o, attempts: 8 }),
    { status: 'dead', reason: 'failed 8 attempts; last: timed out after 10000 ms' },
  );
});

test.run();
