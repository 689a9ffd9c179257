/**
 * Where webhooks may point (SSRF guard). A destination must be an `https://` URL (or `http://`
 * to an allow-listed host) without credentials, whose host resolves only to public addresses.
 * Private, loopback, link-local, CGNAT, multicast and reserved addresses (IPv4 and IPv6) are
 * refused unless the operator allow-list `WEBHOOK_ALLOW_HOSTS` names the host or the address.
 *
 * Every spelling of an address is normalised before it is judged (`api/http/ip-address.ts`): decimal, octal,
 * hex and short IPv4 forms (`2130706433`, `0177.0.0.1`, `0x7f.0.0.1`, `127.1`), trailing dots
 * (`localhost.`), IPv4-mapped IPv6 (`::ffff:127.0.0.1`, `::ffff:7f00:1`) as the IPv4 address, and
 * the IPv6 forms that carry an IPv4 address — IPv4-compatible `::127.0.0.1` (= `::7f00:1`) and
 * IPv4-translated `::ffff:0:7f00:1` (deprecated, never a destination), NAT64 `64:ff9b::/96` and
 * 6to4 `2002::/16` (judged by the IPv4 address inside).
 *
 * The check runs three times: on the URL at creation (literal addresses and `localhost` names),
 * on what the host name resolves to at creation (a name such as `127.0.0.1.nip.io` is refused
 * then), and at every delivery on what the resolver returns at connect time (`guardedLookup`: the
 * vetted address is handed to the socket, so a DNS answer that changes between check and connect
 * — rebinding — cannot slip through). The resolver is injected (`HostResolver`), so the tests
 * resolve names without any DNS query.
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import { BlockList, type LookupFunction } from 'node:net';
import type { ParamError } from '../http/errors.ts';
import { canonicalIp, embeddedIPv4, type Ip } from '../http/ip-address.ts';

/** Resolve a host name to its addresses (as `dns.lookup` with `all: true` does). */
export type HostResolver = (hostname: string) => Promise<{ address: string; family: number }[]>;

/** The system resolver (`getaddrinfo`: /etc/hosts, then DNS). */
export const systemResolver: HostResolver = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

/** How long a name may take to resolve when a webhook is created (unanswered: accepted, checked again at delivery). */
export const CREATE_LOOKUP_TIMEOUT_MS = 3000;

const BLOCKED4 = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  BLOCKED4.addSubnet(net, prefix, 'ipv4');
const BLOCKED6 = new BlockList();
for (const [net, prefix] of [
  // ::/96 holds ::, ::1 and the IPv4-compatible forms; ::ffff:0:0/96 the IPv4-translated forms;
  // 64:ff9b:1::/48 local NAT64; 2001::/32 Teredo; 2001:2::/48 benchmarking; 2001:10::/28 ORCHID;
  // 3fff::/20 documentation; 5f00::/16 SRv6; fec0::/10 deprecated site-local
  ['::', 96],
  ['::ffff:0:0:0', 96],
  ['64:ff9b:1::', 48],
  ['100::', 64],
  ['2001::', 32],
  ['2001:2::', 48],
  ['2001:10::', 28],
  ['2001:db8::', 32],
  ['3fff::', 20],
  ['5f00::', 16],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const)
  BLOCKED6.addSubnet(net, prefix, 'ipv6');

/** Whether a canonical address is public. */
function publicIp(ip: Ip): boolean {
  if (ip.family === 4) return !BLOCKED4.check(ip.address, 'ipv4');
  const inner = embeddedIPv4(ip.address);
  if (inner && (inner.form === 'nat64' || inner.form === '6to4') && BLOCKED4.check(inner.v4, 'ipv4')) return false;
  return !BLOCKED6.check(ip.address, 'ipv6');
}

/**
 * Whether an IP address, in any spelling, is public (routable on the internet), e.g. false for
 * 127.0.0.1, 0x7f.1, 10.1.2.3, ::1, ::ffff:192.168.0.1, ::127.0.0.1, ::ffff:0:7f00:1, and for
 * anything that is not an address.
 */
export function isPublicAddress(ip: string): boolean {
  const c = canonicalIp(ip, true);
  return c !== null && publicIp(c);
}

/** What an address is, for messages: `::7f00:1 (IPv4-compatible form of 127.0.0.1)`. */
export function describeAddress(ip: string): string {
  const c = canonicalIp(ip, true);
  if (!c) return ip;
  const shown = c.address === ip.replace(/^\[|\]$/g, '').toLowerCase() ? c.address : `${ip} (= ${c.address})`;
  const inner = c.family === 6 ? embeddedIPv4(c.address) : null;
  return inner ? `${shown} (${inner.form} form of ${inner.v4})` : shown;
}

/**
 * A host as compared and judged: lower case, without IPv6 brackets and trailing dots; an IP
 * literal in any spelling becomes its canonical address.
 */
export function normaliseHost(host: string): string {
  const h = host
    .trim()
    .replace(/^\[|\]$/g, '')
    .toLowerCase()
    .replace(/\.+$/, '');
  return canonicalIp(h, true)?.address ?? h;
}

/** Whether the allow-list names this host or address (any spelling of either). */
export function allowListed(host: string, allowHosts: readonly string[]): boolean {
  const h = normaliseHost(host);
  return allowHosts.some((a) => normaliseHost(a) === h);
}

const isLocalName = (h: string): boolean => h === 'localhost' || h.endsWith('.localhost');

const refusedReason = (what: string): string =>
  `points to a private or loopback address (${what}); only public destinations are allowed unless the operator lists the host in WEBHOOK_ALLOW_HOSTS`;

/**
 * Check a destination URL as given at creation; the parameter errors (empty when acceptable).
 * Literal addresses (every spelling) and `localhost` names are checked here; what a name resolves
 * to is checked by `checkDestination` (creation) and `guardedLookup` (delivery).
 */
export function checkDestinationUrl(raw: unknown, allowHosts: readonly string[]): ParamError[] {
  if (typeof raw !== 'string' || raw.trim() === '')
    return [{ name: 'url', reason: 'is required: the https:// URL to deliver to' }];
  if (raw.length > 2048) return [{ name: 'url', reason: 'must be at most 2048 characters' }];
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return [{ name: 'url', reason: 'is not an absolute URL' }];
  }
  const host = normaliseHost(u.hostname);
  if (host === '') return [{ name: 'url', reason: 'has no host' }];
  const allowed = allowListed(host, allowHosts);
  if (u.protocol !== 'https:' && !(u.protocol === 'http:' && allowed)) {
    return [
      {
        name: 'url',
        reason: `must use https (http only for hosts in WEBHOOK_ALLOW_HOSTS), got ${u.protocol.replace(':', '')}`,
      },
    ];
  }
  if (u.username || u.password) return [{ name: 'url', reason: 'must not carry credentials (user:password@)' }];
  if (u.hash) return [{ name: 'url', reason: 'must not have a #fragment' }];
  if (allowed) return [];
  if (isLocalName(host)) return [{ name: 'url', reason: refusedReason(host) }];
  const ip = canonicalIp(host, true);
  if (ip && !publicIp(ip))
    return [{ name: 'url', reason: refusedReason(describeAddress(u.hostname.replace(/^\[|\]$/g, ''))) }];
  return [];
}

/**
 * The full check at creation: `checkDestinationUrl`, then — for a host name that is not
 * allow-listed — what it resolves to now. A name with a private or loopback address is refused;
 * a name that does not resolve (yet), or not within CREATE_LOOKUP_TIMEOUT_MS, is accepted (its
 * deliveries are checked at connect time).
 */
export async function checkDestination(
  raw: unknown,
  allowHosts: readonly string[],
  resolve: HostResolver = systemResolver,
): Promise<ParamError[]> {
  const errors = checkDestinationUrl(raw, allowHosts);
  if (errors.length) return errors;
  const host = normaliseHost(new URL(raw as string).hostname);
  if (canonicalIp(host, true) || allowListed(host, allowHosts)) return [];
  let timer: NodeJS.Timeout | undefined;
  const addresses = await Promise.race([
    resolve(host).catch(() => null),
    new Promise<null>((r) => {
      timer = setTimeout(() => r(null), CREATE_LOOKUP_TIMEOUT_MS);
    }),
  ]).finally(() => clearTimeout(timer));
  const bad = (addresses ?? []).find((a) => !isPublicAddress(a.address) && !allowListed(a.address, allowHosts));
  return bad ? [{ name: 'url', reason: refusedReason(`${host} resolves to ${describeAddress(bad.address)}`) }] : [];
}

/** Raised (as a delivery error) when a destination resolves to an address that is not allowed. */
export class DestinationRefusedError extends Error {
  readonly code = 'EDESTINATION';
}

/**
 * A `lookup` for http(s).request that resolves the host with `resolve` and refuses
 * (DestinationRefusedError) when any resolved address — in any spelling — is not public and
 * neither the host nor the address is allow-listed. The addresses handed to the socket are the
 * canonical ones that were checked.
 */
export function guardedLookup(allowHosts: readonly string[], resolve: HostResolver = systemResolver): LookupFunction {
  return (hostname, options, callback) => {
    const host = normaliseHost(hostname);
    resolve(host).then(
      (found) => {
        const hostAllowed = allowListed(host, allowHosts);
        const bad = found.find(
          (a) => !isPublicAddress(a.address) && !hostAllowed && !allowListed(a.address, allowHosts),
        );
        const list = found.map((a) => canonicalIp(a.address) ?? { address: a.address, family: a.family as 4 | 6 });
        if (bad) {
          return callback(
            new DestinationRefusedError(
              `${hostname} resolves to ${describeAddress(bad.address)}, a private or loopback address; refused at connect time (add the host to WEBHOOK_ALLOW_HOSTS to allow it)`,
            ),
            '',
            0,
          );
        }
        const family = (options as { family?: number }).family;
        const usable = family === 4 || family === 6 ? list.filter((a) => a.family === family) : list;
        if (usable.length === 0) {
          return callback(
            Object.assign(new Error(`${hostname} has no IPv${family} address`), { code: 'ENOTFOUND' }),
            '',
            0,
          );
        }
        if ((options as { all?: boolean }).all)
          return (callback as unknown as (e: null, a: typeof usable) => void)(null, usable);
        callback(null, usable[0]!.address, usable[0]!.family);
      },
      (err: NodeJS.ErrnoException) => callback(err, '', 0),
    );
  };
}
