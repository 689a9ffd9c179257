/**
 * The SSRF guard: address classes in every spelling, URL checks at creation, what a name resolves
 * to at creation, and the lookup used at connect time. Names are resolved by injected resolvers
 * (no DNS query leaves the box); the only connections made go to 127.0.0.1.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import http from 'node:http';
import net from 'node:net';
import {
  checkDestination,
  checkDestinationUrl,
  describeAddress,
  guardedLookup,
  isPublicAddress,
  normaliseHost,
  type HostResolver,
} from '../../../api/webhooks/destination.ts';
import { postDelivery } from '../../../api/webhooks/send.ts';

test('private, loopback, link-local, CGNAT, multicast and reserved addresses are not public', () => {
  for (const ip of [
    '127.0.0.1',
    '10.2.3.4',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '224.0.0.1',
    '255.255.255.255',
    '::1',
    '::',
    'fe80::1',
    'fd00::1',
    'ff02::1',
    '::ffff:127.0.0.1',
    '::ffff:10.0.0.1',
    'not-an-ip',
  ]) {
    assert.not.ok(isPublicAddress(ip), ip);
  }
  for (const ip of ['8.8.8.8', '1.1.1.1', '172.32.0.1', '100.128.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8'])
    assert.ok(isPublicAddress(ip), ip);
});

test('destination URLs: https on a public host; http and private hosts only when allow-listed', () => {
  const names = (url: unknown, allow: string[] = []) => checkDestinationUrl(url, allow).map((e) => e.reason);
  assert.equal(names('https://hooks.example.com/leads'), []);
  assert.equal(names('https://203.0.114.9/x'), []);
  for (const bad of [
    'http://hooks.example.com/',
    'https://127.0.0.1/',
    'https://localhost/x',
    'https://[::1]/x',
    'https://10.0.0.8/',
    'https://user:pw@hooks.example.com/',
    'https://hooks.example.com/#x',
    'not a url',
    '',
    42,
  ]) {
    assert.is(checkDestinationUrl(bad, []).length, 1, String(bad));
    assert.is(checkDestinationUrl(bad, [])[0]!.name, 'url');
  }
  assert.equal(names('http://127.0.0.1:8080/hook', ['127.0.0.1']), []);
  assert.equal(names('https://[::1]/x', ['::1']), []);
  assert.match(names('https://192.168.0.5/x', ['127.0.0.1'])[0]!, /WEBHOOK_ALLOW_HOSTS/);
});

/** The loopback address in every spelling issue 13 names, and more. */
const LOOPBACK_FORMS = [
  '::7f00:1',
  '::127.0.0.1',
  '::ffff:0:7f00:1',
  '::ffff:0:127.0.0.1',
  '::ffff:7f00:1',
  '0:0:0:0:0:ffff:7f00:1',
  '2130706433',
  '0177.0.0.1',
  '0x7f.0.0.1',
  '0x7f000001',
  '017700000001',
  '127.1',
  '127.0.1',
  '127.0.0.1.',
  '64:ff9b::7f00:1',
  '2002:7f00:1::1',
];

test('every spelling of a private address is normalised before it is judged', () => {
  for (const ip of LOOPBACK_FORMS) assert.not.ok(isPublicAddress(ip), ip);
  for (const ip of [
    '::ffff:a9fe:a9fe',
    '0xa9.0xfe.0xa9.0xfe',
    '2852039166',
    '::a00:1',
    '64:ff9b::a00:1',
    '2002:c0a8:1::',
    '0300.0250.0.1',
    '10.1',
    'fec0::1',
    '2001::1',
    '3fff::1',
    '64:ff9b:1::1',
  ]) {
    assert.not.ok(isPublicAddress(ip), ip);
  }
  // IPv4-compatible and -translated forms are never destinations, whatever they carry
  for (const ip of ['::8.8.8.8', '::ffff:0:808:808']) assert.not.ok(isPublicAddress(ip), ip);
  // NAT64 and 6to4 are judged by the IPv4 address inside
  for (const ip of ['64:ff9b::808:808', '2002:808:808::1', '0x8.0x8.0x8.0x8', '134744072'])
    assert.ok(isPublicAddress(ip), ip);
  assert.is(normaliseHost('[::FFFF:127.0.0.1]'), '127.0.0.1');
  assert.is(normaliseHost('Hooks.Example.COM..'), 'hooks.example.com');
  assert.is(describeAddress('::7f00:1'), '::7f00:1 (ipv4-compatible form of 127.0.0.1)');
  assert.is(describeAddress('::ffff:7f00:1'), '::ffff:7f00:1 (= 127.0.0.1)');
});

test('URLs with a loopback host in any spelling are refused at creation; the allow-list matches any spelling', () => {
  const urls = [
    'https://[::127.0.0.1]/',
    'https://[::ffff:0:7f00:1]/',
    'https://[::ffff:127.0.0.1]/',
    'https://[0:0:0:0:0:ffff:7f00:1]/',
    'https://2130706433/',
    'https://0177.0.0.1/',
    'https://0x7f.0.0.1/',
    'https://127.1/',
    'https://127.0.0.1./',
    'https://127.0.0.1../',
    'https://localhost./',
    'https://LOCALHOST../x',
    'https://api.localhost./',
    'https://[64:ff9b::7f00:1]/',
    'https://[::ffff:a9fe:a9fe]/latest/meta-data',
  ];
  for (const url of urls) {
    const errors = checkDestinationUrl(url, []);
    assert.is(errors.length, 1, url);
    assert.match(errors[0]!.reason, /private or loopback/, url);
  }
  assert.match(checkDestinationUrl('https://[::127.0.0.1]/', [])[0]!.reason, /127\.0\.0\.1/);
  assert.equal(
    checkDestinationUrl('http://0x7f.1:8080/hook', ['127.0.0.1']),
    [],
    'an allow-listed address in another spelling',
  );
  assert.equal(
    checkDestinationUrl('http://127.0.0.1:8080/hook', ['2130706433']),
    [],
    'an allow-list entry in another spelling',
  );
  assert.equal(checkDestinationUrl('https://hooks.example.com./x', []), [], 'a trailing dot on a public name is fine');
});

/** A resolver over a fixed table; every name asked for is recorded. */
function fakeResolver(table: Record<string, string[]>): HostResolver & { asked: string[] } {
  const asked: string[] = [];
  const r = async (host: string) => {
    asked.push(host);
    const a = table[host];
    if (!a) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return a.map((address) => ({ address, family: net.isIP(address) }));
  };
  return Object.assign(r, { asked });
}

test('at creation a name is resolved: one with a private address is refused; one that does not resolve is accepted', async () => {
  const dns = fakeResolver({
    '127.0.0.1.nip.io': ['127.0.0.1'],
    'mapped.example': ['93.184.216.34', '::ffff:7f00:1'],
    'hooks.example.com': ['93.184.216.34', '2606:2800:220:1::1'],
  });
  const nip = await checkDestination('https://127.0.0.1.nip.io/hook', [], dns);
  assert.is(nip.length, 1);
  assert.match(nip[0]!.reason, /127\.0\.0\.1\.nip\.io resolves to 127\.0\.0\.1/);
  assert.match(
    (await checkDestination('https://127.0.0.1.nip.io./hook', [], dns))[0]!.reason,
    /resolves to 127\.0\.0\.1/,
    'trailing dot',
  );
  assert.match(
    (await checkDestination('https://mapped.example/', [], dns))[0]!.reason,
    /::ffff:7f00:1 \(= 127\.0\.0\.1\)/,
    'any address of the name',
  );
  assert.equal(await checkDestination('https://hooks.example.com/leads', [], dns), []);
  assert.equal(
    await checkDestination('https://not-yet.example/leads', [], dns),
    [],
    'does not resolve (yet): checked at delivery',
  );
  assert.equal(
    await checkDestination('https://127.0.0.1.nip.io/hook', ['127.0.0.1.nip.io'], dns),
    [],
    'an allow-listed name',
  );
  assert.equal(
    await checkDestination('https://127.0.0.1.nip.io/hook', ['127.0.0.1'], dns),
    [],
    'an allow-listed address',
  );
  assert.equal(
    dns.asked.filter((h) => h.endsWith('.')),
    [],
    'names are resolved without the trailing dot',
  );
});

const resolve = (host: string, allow: string[], dns?: HostResolver): Promise<string> =>
  new Promise((res) =>
    guardedLookup(allow, dns)(host, {}, (err, address) => res(err ? `refused: ${err.message}` : String(address))),
  );

test('at connect time every address the resolver returns is normalised and checked', async () => {
  const dns = fakeResolver({
    'rebind.example': ['::ffff:7f00:1'],
    'compat.example': ['::7f00:1'],
    'nat64.example': ['64:ff9b::a9fe:a9fe'],
    'public.example': ['::ffff:93.184.216.34'],
  });
  assert.match(
    await resolve('rebind.example', [], dns),
    /^refused: rebind\.example resolves to ::ffff:7f00:1 \(= 127\.0\.0\.1\).*refused at connect time/,
  );
  assert.match(await resolve('compat.example.', [], dns), /^refused: .*ipv4-compatible form of 127\.0\.0\.1/);
  assert.match(await resolve('nat64.example', [], dns), /^refused: .*nat64 form of 169\.254\.169\.254/);
  assert.is(
    await resolve('public.example', [], dns),
    '93.184.216.34',
    'the checked, canonical address goes to the socket',
  );
  assert.match(await resolve('missing.example', [], dns), /^refused: .*ENOTFOUND/);
  const all = await new Promise<unknown>((res) =>
    guardedLookup([], dns)('public.example', { all: true }, (_e, a) => res(a)),
  );
  assert.equal(all, [{ address: '93.184.216.34', family: 4 }]);
});

test('deliveries to a literal in any loopback spelling are refused before any connection; a name resolving to 127.0.0.1 at connect time too', async () => {
  let connections = 0;
  const probe = http.createServer((_req, res) => res.end()).on('connection', () => connections++);
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  const port = (probe.address() as net.AddressInfo).port;
  try {
    for (const form of LOOPBACK_FORMS) {
      const host = form.includes(':') ? `[${form}]` : form;
      const r = await postDelivery(`https://${host}:${port}/x`, {}, '{}', { timeoutMs: 2000, allowHosts: [] });
      assert.match(r.error ?? '', /private or loopback/, form);
      assert.is(r.statusCode, null);
    }
    const dns = fakeResolver({ 'rebind.example': ['127.0.0.1'] });
    const r = await postDelivery(`http://rebind.example:${port}/x`, {}, '{}', {
      timeoutMs: 2000,
      allowHosts: [],
      resolveHost: dns,
    });
    assert.match(r.error ?? '', /rebind\.example resolves to 127\.0\.0\.1.*refused at connect time/);
    assert.is(connections, 0, 'nothing reached the loopback receiver');
    // the allow-list still lets a local receiver in (the tests' own way)
    const ok = await postDelivery(`http://rebind.example:${port}/x`, {}, '{}', {
      timeoutMs: 2000,
      allowHosts: ['127.0.0.1'],
      resolveHost: dns,
    });
    assert.is(ok.statusCode, 200, ok.error ?? '');
    assert.is(connections, 1);
  } finally {
    await new Promise<void>((r) => probe.close(() => r()));
  }
});

test('delivery-time lookup refuses names resolving to private addresses unless allow-listed', async () => {
  assert.match(await resolve('localhost', []), /^refused: localhost resolves to .*private or loopback/);
  assert.match(await resolve('localhost', ['localhost']), /^(127\.0\.0\.1|::1)$/);
  assert.match(await resolve('localhost', ['127.0.0.1', '::1']), /^(127\.0\.0\.1|::1)$/);
});

test.run();
