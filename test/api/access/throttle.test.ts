/**
 * The failed-key throttle (api/access/throttle.ts) driven directly, addresses alternating through
 * one middleware: each address (an IPv6 client by its /64) has its own count, whichever address
 * came just before. Over HTTP with real keys: test/api/access/http.test.ts and
 * test/api/middleware/client-address.test.ts.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { failedAuthThrottle } from '../../../api/access/throttle.ts';
import { ApiError } from '../../../api/http/errors.ts';
import { unauthorized } from '../../../api/middleware/auth.ts';

test('counts per address (IPv6 by its /64), addresses alternating; a blocked address is answered 429, the others 401', async () => {
  const mw = failedAuthThrottle({
    limit: 2,
    windowS: 60,
    now: () => Date.parse('2026-11-28T10:00:00Z'),
    isPublic: () => false,
  });
  /** One request from `ip` whose key the auth middleware refuses: the code of the problem it ends with. */
  const refused = async (ip: string): Promise<string> => {
    const ctx = { path: '/v1/meta', ip, get: () => 'Bearer lk_ea_' + 'x'.repeat(43) };
    try {
      await mw(ctx as never, async () => {
        throw unauthorized('unknown_key', 'this API key is not known');
      });
    } catch (e) {
      return (e as ApiError).code;
    }
    throw new Error('not refused');
  };
  const a = '198.51.100.7';
  const b = '2001:db8:1:2::5';
  const b2 = '2001:db8:1:2:ffff::9'; // the same /64 as b
  const c = '2001:db8:1:3::5'; // another /64
  assert.equal(
    [
      await refused(a),
      await refused(b),
      await refused(a),
      await refused(c),
      await refused(b2),
      await refused(a),
      await refused(b),
      await refused(c),
      await refused(c),
    ],
    [
      'unknown_key',
      'unknown_key',
      'unknown_key',
      'unknown_key',
      'unknown_key',
      'too_many_failed_attempts',
      'too_many_failed_attempts',
      'unknown_key',
      'too_many_failed_attempts',
    ],
  );
  assert.is(await refused('203.0.113.1'), 'unknown_key', 'a new address starts at zero');
});

test.run();
