/**
 * Where webhooks may point (SSRF guard). A destination must be an `https://` URL (or `http://`
 * to an allow-listed host) without credentials, whose host resolves only to public addresses.
 * Private, loopback, link-local, CGNAT, multicast and reserved addresses (IPv4 and IPv6, including
 * IPv4-mapped IPv6) are refused unless the operator allow-list `WEBHOOK_ALLOW_HOSTS` names the
 * host or the address. The check runs when a webhook is created and again at every delivery, on
 * the address actually connected to (the vetted address is handed to the socket, so a DNS answer
 * that changes between check and connect cannot slip through).
 */
import { lookup as dnsLookup } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import type { ParamError } from '../errors.ts';

const BLOCKED = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.88.99.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24],
  ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) BLOCKED.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  ['::', 128], ['::1', 128], ['64:ff9b::', 96], ['100::', 64], ['2001:db8::', 32], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8],
] as const) BLOCKED.addSubnet(net, prefix, 'ipv6');

/** Whether an IP address is public (routable on the internet), e.g. false for 127.0.0.1, 10.1.2.3, ::1, ::ffff:192.168.0.1. */
export function isPublicAddress(ip: string): boolean {
  const family = isIP(ip);
  if (family === 4) return !BLOCKED.check(ip, 'ipv4');
  if (family === 6) {
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
    if (mapped) return isPublicAddress(mapped[1]!);
    return !BLOCKED.check(ip, 'ipv6');
  }
  return false;
}

/** Hostname without IPv6 brackets, lower case. */
const bare = (host: string): string => host.replace(/^\[|\]$/g, '').toLowerCase();

/** Whether the allow-list names this host or address. */
export function allowListed(host: string, allowHosts: readonly string[]): boolean {
  const h = bare(host);
  return allowHosts.some((a) => bare(a) === h);
}

/**
 * Check a destination URL as given at creation; the parameter errors (empty when acceptable).
 * Literal addresses are checked here; names are resolved at delivery (`guardedLookup`).
 */
export function checkDestinationUrl(raw: unknown, allowHosts: readonly string[]): ParamError[] {
  if (typeof raw !== 'string' || raw.trim() === '') return [{ name: 'url', reason: 'is required: the https:// URL to deliver to' }];
  if (raw.length > 2048) return [{ name: 'url', reason: 'must be at most 2048 characters' }];
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return [{ name: 'url', reason: 'is not an absolute URL' }];
  }
  const host = bare(u.hostname);
  const allowed = allowListed(host, allowHosts);
  if (u.protocol !== 'https:' && !(u.protocol === 'http:' && allowed)) {
    return [{ name: 'url', reason: `must use https (http only for hosts in WEBHOOK_ALLOW_HOSTS), got ${u.protocol.replace(':', '')}` }];
  }
  if (u.username || u.password) return [{ name: 'url', reason: 'must not carry credentials (user:password@)' }];
  if (u.hash) return [{ name: 'url', reason: 'must not have a #fragment' }];
  if (!allowed && (host === 'localhost' || host.endsWith('.localhost') || (isIP(host) !== 0 && !isPublicAddress(host)))) {
    return [{ name: 'url', reason: `points to a private or loopback address (${host}); only public destinations are allowed unless the operator lists the host in WEBHOOK_ALLOW_HOSTS` }];
  }
  return [];
}

/** Raised (as a delivery error) when a destination resolves to an address that is not allowed. */
export class DestinationRefusedError extends Error {
  readonly code = 'EDESTINATION';
}

/**
 * A `lookup` for http(s).request that resolves the host and refuses (DestinationRefusedError)
 * when any resolved address is not public and neither the host nor the address is allow-listed.
 */
export function guardedLookup(allowHosts: readonly string[]): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '', 0);
      const list = addresses as unknown as { address: string; family: number }[];
      const hostAllowed = allowListed(hostname, allowHosts);
      const bad = list.find((a) => !isPublicAddress(a.address) && !hostAllowed && !allowListed(a.address, allowHosts));
      if (bad) {
        return callback(
          new DestinationRefusedError(`${hostname} resolves to ${bad.address}, a private or loopback address; add the host to WEBHOOK_ALLOW_HOSTS to allow it`),
          '',
          0,
        );
      }
      if ((options as { all?: boolean }).all) return (callback as unknown as (e: null, a: typeof list) => void)(null, list);
      const first = list[0]!;
      callback(null, first.address, first.family);
    });
  };
}
