/**
 * The client address behind a reverse proxy (issue 13, 3.1): the right-most X-Forwarded-For
 * address outside TRUSTED_PROXIES, table-driven; without TRUST_PROXY the peer's own address, peers
 * alternating through one middleware; then over real HTTP with the failed-key
 * throttle: a client rotating a forged left-most entry is still throttled, a forged victim's
 * address does not lock the victim out, a valid key is never throttled, and a peer that is not a
 * trusted proxy cannot steer the address (or the scheme) with X-Forwarded-* headers.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ApiConfigError, loadApiConfig } from '../../../api/config.ts';
import { CidrList, canonicalIp, parseIPv4 } from '../../../api/http/ip-address.ts';
import { clientAddress, clientAddressMiddleware } from '../../../api/middleware/client-address.ts';
import { throttleKey } from '../../../api/access/throttle.ts';
import { generateKey } from '../../../api/access/keys.ts';
import { addKey, assertProblem, startTestApi, type TestApi } from '../../helpers/api.ts';

const unit = suite('client address (pure)');

unit('right-most address outside the trusted proxies, table-driven', () => {
  const trusted = new CidrList(['127.0.0.0/8', '::1/128', '10.0.0.0/8']);
  const cases: [peer: string, xff: string | null, expected: string, why: string][] = [
    [
      '203.0.113.9',
      '6.6.6.6',
      '203.0.113.9',
      'a peer that is not a trusted proxy is the client; its header is ignored',
    ],
    ['127.0.0.1', null, '127.0.0.1', 'a trusted peer without the header'],
    ['127.0.0.1', '198.51.100.7', '198.51.100.7', 'one proxy'],
    ['127.0.0.1', '6.6.6.6, 198.51.100.7', '198.51.100.7', 'a forged left-most entry is skipped'],
    ['127.0.0.1', '6.6.6.6, 7.7.7.7, 198.51.100.7', '198.51.100.7', 'several forged entries'],
    ['127.0.0.1', '6.6.6.6, 198.51.100.7, 10.0.0.5', '198.51.100.7', 'a chain of trusted proxies is walked'],
    ['127.0.0.1', '10.0.0.9, 10.0.0.5', '10.0.0.9', 'every entry trusted: the left-most'],
    ['::ffff:127.0.0.1', '198.51.100.7', '198.51.100.7', 'an IPv4-mapped peer is the IPv4 address'],
    ['::ffff:203.0.113.9', '6.6.6.6', '203.0.113.9', 'an untrusted IPv4-mapped peer, given as IPv4'],
    ['::1', '2001:DB8::1, [2001:db8:0::2]:443', '2001:db8::2', 'IPv6 entries, with brackets and port, canonical'],
    ['127.0.0.1', '198.51.100.7:5555', '198.51.100.7', 'an IPv4 entry with a port'],
    ['127.0.0.1', '::ffff:198.51.100.7', '198.51.100.7', 'an IPv4-mapped entry'],
    ['127.0.0.1', ' 198.51.100.7 , ', '198.51.100.7', 'spaces and empty entries'],
    ['127.0.0.1', 'unknown', '127.0.0.1', 'not an address: the last trusted hop'],
    ['127.0.0.1', '6.6.6.6, unknown, 10.0.0.5', '10.0.0.5', 'not an address behind a trusted proxy: that proxy'],
    ['127.0.0.1', '0x7f.1', '127.0.0.1', 'loose IPv4 forms are not addresses in the header'],
  ];
  for (const [peer, xff, expected, why] of cases)
    assert.is(clientAddress(peer, xff, trusted), expected, `${why}: ${peer} / ${xff}`);
});

unit(
  'TRUSTED_PROXIES: CIDRs and addresses, IPv4 and IPv6, normalised; loopback by default; bad entries stop the start',
  () => {
    assert.equal(loadApiConfig({}).trustedProxies, ['127.0.0.0/8', '::1/128']);
    assert.equal(
      loadApiConfig({ TRUSTED_PROXIES: '10.0.0.0/8, 192.168.1.5 ,FD00::/8,::ffff:172.16.0.0/108' }).trustedProxies,
      ['10.0.0.0/8', '192.168.1.5/32', 'fd00::/8', '172.16.0.0/12'],
    );
    assert.equal(
      loadApiConfig({ TRUSTED_PROXIES: '10.0.0.0/8,' }).trustedProxies,
      ['10.0.0.0/8'],
      'an empty entry is skipped',
    );
    for (const bad of ['nope', '10.0.0.0/33', '::/129', '127.1', '10.0.0.0/8/8']) {
      assert.throws(
        () => loadApiConfig({ TRUSTED_PROXIES: bad }),
        (e: unknown) => e instanceof ApiConfigError && /TRUSTED_PROXIES/.test((e as Error).message),
        bad,
      );
    }
    const list = new CidrList(['10.0.0.0/8', 'fd00::/8']);
    assert.ok(list.has('10.1.2.3') && list.has('::ffff:10.1.2.3') && list.has('FD00::1'));
    assert.not.ok(list.has('11.0.0.1') || list.has('fe80::1') || list.has('not an address'));
  },
);

unit(
  'address spellings: loose IPv4 only where asked; IPv6 canonical; throttle counts an IPv6 client by its /64',
  () => {
    assert.equal(
      [
        parseIPv4('2130706433'),
        parseIPv4('0177.0.0.1'),
        parseIPv4('0x7f.0.0.1'),
        parseIPv4('127.1'),
        parseIPv4('127.0.0.1.'),
        parseIPv4('0x7f000001'),
      ],
      Array(6).fill('127.0.0.1'),
    );
    assert.equal(
      [parseIPv4('256.0.0.1'), parseIPv4('1.2.3.4.5'), parseIPv4('08.0.0.1'), parseIPv4('example.com'), parseIPv4('')],
      [null, null, null, null, null],
    );
    assert.is(canonicalIp('127.1'), null);
    assert.equal(canonicalIp('127.1', true), { address: '127.0.0.1', family: 4 });
    assert.equal(canonicalIp('[0:0:0:0:0:FFFF:7F00:1]'), { address: '127.0.0.1', family: 4 });
    assert.equal(canonicalIp('2001:db8:0:0:1:0:0:1'), { address: '2001:db8::1:0:0:1', family: 6 });
    assert.is(throttleKey('2001:db8:1:2:3:4:5:6'), '2001:db8:1:2::/64');
    assert.is(throttleKey('2001:db8:1:2::ffff'), '2001:db8:1:2::/64');
    assert.is(throttleKey('198.51.100.7'), '198.51.100.7');
  },
);

unit(
  'without TRUST_PROXY: the canonical peer address of each request, peers alternating through one middleware',
  async () => {
    const mw = clientAddressMiddleware({ trustProxy: false, trustedProxies: [] });
    const peers: [peer: string | undefined, expected: string][] = [
      ['::ffff:127.0.0.1', '127.0.0.1'],
      ['::ffff:127.0.0.1', '127.0.0.1'],
      ['2001:DB8:0:0:1::1', '2001:db8::1:0:0:1'],
      ['::ffff:127.0.0.1', '127.0.0.1'],
      ['203.0.113.9', '203.0.113.9'],
      [undefined, ''],
      ['203.0.113.9', '203.0.113.9'],
      ['not an address', 'not an address'],
    ];
    for (const [peer, expected] of peers) {
      const ctx = { req: { socket: { remoteAddress: peer }, headers: {} }, request: { ip: 'unset' } };
      let reached = false;
      await mw(ctx as never, async () => void (reached = true));
      assert.ok(reached);
      assert.is(ctx.request.ip, expected, String(peer));
    }
  },
);

unit.run();

// — over HTTP: the test client is the proxy (127.0.0.1); X-Forwarded-For is what nginx's
//   $proxy_add_x_forwarded_for sends: whatever the client wrote, then the client's real address.
const t = Date.parse('2026-11-28T10:00:00Z');
const http = suite('client address behind a proxy, over HTTP');
let api: TestApi;
let good: string;
http.before(async () => {
  api = await startTestApi({
    clock: () => new Date(t),
    config: { trustProxy: true, keyCacheMs: 0, authFailLimit: 3, authFailWindowS: 600 },
  });
  const a = await api.store.createAccount('proxied', 'premium');
  const k = await addKey(api.store, a.id, 'ent_api');
  good = k.raw;
});
http.after(async () => {
  await api?.close();
});
const guess = (xff: string) =>
  api.request('/v1/meta', { key: generateKey('ent_api').raw, headers: { 'X-Forwarded-For': xff } });

http('a client rotating a forged left-most X-Forwarded-For is throttled by its real address', async () => {
  for (let i = 0; i < 3; i++) assertProblem(await guess(`6.6.6.${i}, 198.51.100.7`), 401, 'unknown_key');
  const blocked = await guess('6.6.6.99, 198.51.100.7');
  assertProblem(blocked, 429, 'too_many_failed_attempts');
  assert.is(blocked.headers.get('retry-after'), '600');
  assertProblem(await guess('198.51.100.7'), 429, 'too_many_failed_attempts'); // and without a forged entry
});

http("forging a victim's address does not lock the victim out", async () => {
  for (let i = 0; i < 3; i++) assertProblem(await guess('203.0.113.50, 198.51.100.8'), 401, 'unknown_key');
  assertProblem(await guess('203.0.113.50, 198.51.100.8'), 429, 'too_many_failed_attempts'); // the attacker is blocked
  // the victim, through the same proxy: its valid key works, and its own mistakes are its own
  assert.is((await api.request('/v1/meta', { key: good, headers: { 'X-Forwarded-For': '203.0.113.50' } })).status, 200);
  const own = await guess('203.0.113.50');
  assertProblem(own, 401, 'unknown_key');
  assert.is(own.headers.get('x-ratelimit-remaining'), '2', 'the first failure counted against the victim');
});

http('a valid key is never throttled, even from a throttled address', async () => {
  const from = { 'X-Forwarded-For': '198.51.100.7' }; // blocked by the first test
  assertProblem(await guess('198.51.100.7'), 429, 'too_many_failed_attempts');
  assert.is((await api.request('/v1/meta', { key: good, headers: from })).status, 200);
  assert.is((await api.request('/v1/leads?page_size=2', { key: good, headers: from })).status, 200);
  assertProblem(await api.request('/v1/meta', { key: 'lk_nonsense', headers: from }), 429, 'too_many_failed_attempts'); // malformed: refused before any lookup
  // an IPv6 client rotating through its /64 is one client
  for (let i = 1; i <= 3; i++) assertProblem(await guess(`2001:db8:7:7::${i}`), 401, 'unknown_key');
  assertProblem(await guess('2001:db8:7:7::ffff'), 429, 'too_many_failed_attempts');
});

http.run();

const untrusted = suite('a peer outside TRUSTED_PROXIES, over HTTP');
let strict: TestApi;
untrusted.before(async () => {
  strict = await startTestApi({
    clock: () => new Date(t),
    config: { trustProxy: true, trustedProxies: ['10.0.0.0/8'], keyCacheMs: 0, authFailLimit: 3, authFailWindowS: 600 },
  });
});
untrusted.after(async () => {
  await strict?.close();
});

untrusted(
  'its X-Forwarded-* headers are ignored: rotating them never escapes the throttle, nor sets the scheme; logged once',
  async () => {
    const g = (xff: string) =>
      strict.request('/v1/meta', {
        key: generateKey('ent_api').raw,
        headers: { 'X-Forwarded-For': xff, 'X-Forwarded-Proto': 'https' },
      });
    for (let i = 0; i < 3; i++) {
      const r = await g(`6.6.6.${i}`);
      assertProblem(r, 401, 'unknown_key');
      assert.is(
        r.headers.get('strict-transport-security'),
        null,
        'X-Forwarded-Proto from an untrusted peer is ignored',
      );
    }
    assertProblem(await g('6.6.6.200'), 429, 'too_many_failed_attempts');
    const notes = strict.logs.filter((l) => l.includes('not in TRUSTED_PROXIES'));
    assert.is(notes.length, 1, notes.join('\n'));
    assert.match(notes[0]!, /127\.0\.0\.1.*10\.0\.0\.0\/8/);
  },
);

untrusted.run();
