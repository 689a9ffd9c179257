/** The SSRF guard: address classes, URL checks at creation, and the lookup used at delivery. */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { checkDestinationUrl, guardedLookup, isPublicAddress } from '../../../api/webhooks/destination.ts';

test('private, loopback, link-local, CGNAT, multicast and reserved addresses are not public', () => {
  for (const ip of ['127.0.0.1', '10.2.3.4', '172.16.0.1', '172.31.255.255', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '224.0.0.1', '255.255.255.255', '::1', '::', 'fe80::1', 'fd00::1', 'ff02::1', '::ffff:127.0.0.1', '::ffff:10.0.0.1', 'not-an-ip']) {
    assert.not.ok(isPublicAddress(ip), ip);
  }
  for (const ip of ['8.8.8.8', '1.1.1.1', '172.32.0.1', '100.128.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8']) assert.ok(isPublicAddress(ip), ip);
});

test('destination URLs: https on a public host; http and private hosts only when allow-listed', () => {
  const names = (url: unknown, allow: string[] = []) => checkDestinationUrl(url, allow).map((e) => e.reason);
  assert.equal(names('https://hooks.example.com/leads'), []);
  assert.equal(names('https://203.0.114.9/x'), []);
  for (const bad of ['http://hooks.example.com/', 'https://127.0.0.1/', 'https://localhost/x', 'https://[::1]/x', 'https://10.0.0.8/', 'https://user:pw@hooks.example.com/', 'https://hooks.example.com/#x', 'not a url', '', 42]) {
    assert.is(checkDestinationUrl(bad, []).length, 1, String(bad));
    assert.is(checkDestinationUrl(bad, [])[0]!.name, 'url');
  }
  assert.equal(names('http://127.0.0.1:8080/hook', ['127.0.0.1']), []);
  assert.equal(names('https://[::1]/x', ['::1']), []);
  assert.match(names('https://192.168.0.5/x', ['127.0.0.1'])[0]!, /WEBHOOK_ALLOW_HOSTS/);
});

const resolve = (host: string, allow: string[]): Promise<string> =>
  new Promise((res) => guardedLookup(allow)(host, {}, (err, address) => res(err ? `refused: ${err.message}` : String(address))));

test('delivery-time lookup refuses names resolving to private addresses unless allow-listed', async () => {
  assert.match(await resolve('localhost', []), /^refused: localhost resolves to .*private or loopback/);
  assert.match(await resolve('localhost', ['localhost']), /^(127\.0\.0\.1|::1)$/);
  assert.match(await resolve('localhost', ['127.0.0.1', '::1']), /^(127\.0\.0\.1|::1)$/);
});

test.run();
