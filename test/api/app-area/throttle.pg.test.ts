/**
 * Sign-in throttling: the sliding-window arithmetic (table-driven), then over real HTTP on both
 * state stores — SQLite and the local PostgreSQL (a schema of its own, dropped at the end; fails,
 * never skips, when the server is unreachable): ten wrong passwords throttle the account (from
 * any address) and the address (for any account), with 429 and Retry-After, until the window
 * slides past; passkey sign-in is held only by the address.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { randomBytes } from 'node:crypto';
import { userInfo } from 'node:os';
import pg from 'pg';
import { slidingWindow } from '../../../api/app-area/throttle.ts';
import { issueInvitation } from '../../../api/app-area/invitations.ts';
import { assertProblem, startTestApi, type TestApi } from '../../helpers/api.ts';
import { AppAgent, csrfOf } from './agent.ts';

const arithmetic = suite('sign-in throttle: sliding window');
arithmetic('estimate and Retry-After', () => {
  const cases: [Parameters<typeof slidingWindow>[0], { count: number; retryAfterS: number }][] = [
    [
      { limit: 10, windowS: 100, nowS: 140, prev: 10, cur: 5 },
      { count: 11, retryAfterS: 11 },
    ],
    [
      { limit: 10, windowS: 100, nowS: 150, prev: 10, cur: 4 },
      { count: 9, retryAfterS: 0 },
    ],
    [
      { limit: 10, windowS: 100, nowS: 110, prev: 0, cur: 10 },
      { count: 10, retryAfterS: 91 },
    ],
    [
      { limit: 10, windowS: 100, nowS: 110, prev: 0, cur: 20 },
      { count: 20, retryAfterS: 141 },
    ],
    [
      { limit: 10, windowS: 100, nowS: 199, prev: 0, cur: 9 },
      { count: 9, retryAfterS: 0 },
    ],
    [
      { limit: 10, windowS: 900, nowS: 900, prev: 10, cur: 0 },
      { count: 10, retryAfterS: 1 },
    ],
  ];
  for (const [input, out] of cases) {
    const r = slidingWindow(input);
    assert.equal({ count: Math.round(r.count * 1e9) / 1e9, retryAfterS: r.retryAfterS }, out, JSON.stringify(input));
    if (r.retryAfterS > 0) {
      // at the instant given, the estimate has fallen below the limit (and not a second earlier)
      const later = (s: number) => {
        const start = Math.floor(input.nowS / input.windowS) * input.windowS;
        const t = input.nowS + s;
        const crossed = t >= start + input.windowS;
        return slidingWindow({
          ...input,
          nowS: t,
          prev: crossed ? input.cur : input.prev,
          cur: crossed ? 0 : input.cur,
        }).count;
      };
      assert.ok(
        later(r.retryAfterS) < input.limit,
        `below the limit after ${r.retryAfterS}s: ${JSON.stringify(input)}`,
      );
      if (r.retryAfterS > 1)
        assert.ok(later(r.retryAfterS - 1) >= input.limit - 1e-9, `not long before: ${JSON.stringify(input)}`);
    }
  }
});
arithmetic.run();

const PG_BASE =
  process.env['TEST_DATABASE_URL'] ??
  `postgres://${encodeURIComponent(process.env['PGUSER'] ?? userInfo().username)}@127.0.0.1:5432/test`;
const PG_SCHEMA = `leads_appthrottle_${randomBytes(4).toString('hex')}`;

for (const backend of ['sqlite', 'postgres'] as const) {
  const test = suite(`sign-in throttle over HTTP: ${backend}`);
  const T0 = Date.parse('2026-11-20T10:00:00Z');
  let t = T0;
  const clock = () => new Date(t);
  let api: TestApi;
  const PASSWORD = 'the right passphrase';

  test.before(async () => {
    api = await startTestApi({
      clock,
      // X-Forwarded-For from the loopback proxy picks the client address per request
      config: {
        trustProxy: true,
        ...(backend === 'postgres'
          ? { databaseUrl: `${PG_BASE}${PG_BASE.includes('?') ? '&' : '?'}schema=${PG_SCHEMA}` }
          : {}),
      },
    });
  });
  test.after(async () => {
    await api?.close();
    if (backend === 'postgres') {
      const admin = new pg.Pool({ connectionString: PG_BASE, max: 1 });
      await admin
        .query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(PG_SCHEMA)} CASCADE`)
        .catch((e: Error) => console.error(`throttle.pg.test.ts cleanup: ${e.message}`));
      await admin.end();
    }
  });

  const from = (ip: string) => ({ 'X-Forwarded-For': ip });
  const attempt = async (account: string, password: string, ip: string) => {
    const agent = new AppAgent(api.baseUrl);
    const page = await agent.get('/app/sign-in');
    return agent.post('/app/sign-in', { form: { account, password, _csrf: csrfOf(page.text) }, headers: from(ip) });
  };

  test('ten wrong passwords for an account, from ten addresses, throttle it everywhere; the window slides past', async () => {
    t = T0;
    const a = await api.store.createAccount('target', 'pro');
    const inv = await issueInvitation(api.store, api.config, a, { now: clock() });
    assert.is((await new AppAgent(api.baseUrl).acceptWithPassword(inv.url, PASSWORD)).status, 200);
    for (let i = 1; i <= 10; i++)
      assert.is((await attempt('target', `wrong guess ${i}`, `198.51.100.${i}`)).status, 401, `guess ${i}`);
    const blocked = await attempt('target', PASSWORD, '203.0.113.77');
    assert.is(blocked.status, 429, 'even the right password, from a new address');
    assert.match(blocked.text, 'Too many failed sign-ins');
    const retry = Number(blocked.headers.get('retry-after'));
    assert.ok(retry > 0 && retry <= 2 * 900, `Retry-After ${retry}`);
    // the log: ten failures and the moment it throttled; no password anywhere
    const log = await api.store.app.listActivity(a.id, { limit: 100 });
    assert.is(log.filter((e) => e.event === 'sign_in_failed').length, 10);
    assert.is(log.filter((e) => e.event === 'sign_in_throttled').length, 1);
    assert.not.match(JSON.stringify(log), 'wrong guess');
    // the window slides: after Retry-After the right password works again
    t += retry * 1000;
    assert.is((await attempt('target', PASSWORD, '203.0.113.77')).status, 303);
  });

  test('ten failures from one address (any account names) throttle that address, for passkeys too; other addresses are fine', async () => {
    t = T0 + 86_400_000;
    const b = await api.store.createAccount('bystander', 'pro');
    const inv = await issueInvitation(api.store, api.config, b, { now: clock() });
    assert.is((await new AppAgent(api.baseUrl).acceptWithPassword(inv.url, PASSWORD)).status, 200);
    for (let i = 1; i <= 10; i++) assert.is((await attempt(`nobody-${i}`, 'whatever it is', '192.0.2.66')).status, 401);
    assert.is((await attempt('bystander', PASSWORD, '192.0.2.66')).status, 429, 'the address is held');
    const agent = new AppAgent(api.baseUrl);
    const csrf = csrfOf((await agent.get('/app/sign-in')).text);
    const passkey = await agent.post('/app/sign-in/passkey/options', {
      json: {},
      headers: { ...from('192.0.2.66'), 'X-CSRF-Token': csrf },
    });
    assertProblem(passkey as never, 429, 'sign_in_throttled');
    assert.ok(Number(passkey.headers.get('retry-after')) > 0);
    assert.is((await attempt('bystander', PASSWORD, '192.0.2.67')).status, 303, 'another address signs in');
    // the account itself was not throttled by strangers' unknown names
    assert.equal(
      (await api.store.app.listActivity(b.id)).filter((e) => e.event.startsWith('sign_in_')),
      [],
    );
  });

  test.run();
}
