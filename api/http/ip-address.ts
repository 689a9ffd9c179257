/**
 * IP address forms, in one place: the client-address rule behind a proxy
 * (`api/middleware/client-address.ts`) and the webhook SSRF guard (`api/webhooks/destination.ts`)
 * both compare addresses, and an address has many spellings. Everything here is pure.
 *
 * - `parseIPv4` reads every IPv4 form a URL parser or `inet_aton` accepts: dotted decimal, one to
 *   four parts (`127.1`, `2130706433`), octal (`0177.0.0.1`) and hex (`0x7f.0.0.1`) parts, one
 *   trailing dot.
 * - `canonicalIp` turns any literal (IPv4 form, IPv6 with or without brackets, zone or embedded
 *   dotted quad) into one canonical string; an IPv4-mapped IPv6 address (`::ffff:a.b.c.d`,
 *   `::ffff:7f00:1`) becomes its IPv4 address, as a dual-stack socket treats it.
 * - `embeddedIPv4` names the IPv4 address inside the other IPv6 forms that carry one
 *   (IPv4-compatible `::a.b.c.d`, IPv4-translated `::ffff:0:a.b.c.d`, NAT64 `64:ff9b::/96`,
 *   6to4 `2002:AABB:CCDD::/48`).
 * - `CidrList` is a list of networks (`10.0.0.0/8`, `::1`, `fd00::/8`) parsed once, answering
 *   "is this address in it" for any spelling of the address.
 */
import { BlockList, isIP } from 'node:net';

export type Family = 4 | 6;

export interface Ip {
  /** Canonical text: dotted decimal, or RFC 5952 IPv6 (lower case, longest zero run as `::`). */
  address: string;
  family: Family;
}

/** One part of a loose IPv4 address: decimal, octal (leading 0) or hex (0x); null when not a number. */
function ipv4Part(p: string): number | null {
  if (/^0x[0-9a-f]*$/i.test(p)) return p.length === 2 ? 0 : parseInt(p.slice(2), 16);
  if (/^0[0-7]*$/.test(p)) return parseInt(p, 8);
  if (/^[1-9][0-9]*$/.test(p)) return Number(p);
  return null;
}

/**
 * An IPv4 address in any form URL parsers and `inet_aton` accept, as dotted decimal; null when
 * `s` is not one (a host name).
 *
 * @example parseIPv4('0x7f.1') // '127.0.0.1'; parseIPv4('2130706433') // '127.0.0.1'
 */
export function parseIPv4(s: string): string | null {
  const parts = s.split('.');
  if (parts.length > 1 && parts[parts.length - 1] === '') parts.pop();
  if (parts.length < 1 || parts.length > 4) return null;
  const nums = parts.map(ipv4Part);
  if (nums.some((n) => n === null || !Number.isFinite(n))) return null;
  const last = nums.pop()!;
  if (nums.some((n) => n! > 255) || last >= 256 ** (4 - nums.length)) return null;
  let value = last;
  for (const [i, n] of nums.entries()) value += n! * 256 ** (3 - i);
  return [value >>> 24, (value >>> 16) & 255, (value >>> 8) & 255, value & 255].join('.');
}

/** The eight 16-bit words of an IPv6 address (brackets and zone id allowed); null when not IPv6. */
export function ipv6Words(s: string): number[] | null {
  let t = s
    .replace(/^\[|\]$/g, '')
    .replace(/%.*$/, '')
    .toLowerCase();
  if (isIP(t) !== 6) return null;
  const tail: number[] = [];
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(t);
  if (dotted) {
    const b = dotted.slice(1).map(Number);
    tail.push((b[0]! << 8) | b[1]!, (b[2]! << 8) | b[3]!);
    t = t.slice(0, dotted.index);
    if (t.endsWith(':') && !t.endsWith('::')) t = t.slice(0, -1);
  }
  const words = (part: string): number[] => (part === '' ? [] : part.split(':').map((w) => parseInt(w, 16)));
  const [head, rest] = t.split('::') as [string, string | undefined];
  const a = words(head);
  const b = rest === undefined ? [] : words(rest);
  const fill = 8 - tail.length - a.length - b.length;
  if (rest === undefined ? fill !== 0 : fill < 0) return null;
  return [...a, ...Array<number>(fill).fill(0), ...b, ...tail];
}

/** RFC 5952 text of eight IPv6 words. */
export function formatIPv6(w: readonly number[]): string {
  let best = -1;
  let bestLen = 1;
  for (let i = 0; i < 8;) {
    if (w[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && w[j] === 0) j++;
    if (j - i > bestLen) [best, bestLen] = [i, j - i];
    i = j;
  }
  const hex = w.map((x) => x.toString(16));
  if (best < 0) return hex.join(':');
  return `${hex.slice(0, best).join(':')}::${hex.slice(best + bestLen).join(':')}`;
}

const v4OfWords = (hi: number, lo: number): string => [hi >>> 8, hi & 255, lo >>> 8, lo & 255].join('.');

/**
 * The canonical form of an IP literal, or null for anything else (a host name). IPv4-mapped IPv6
 * addresses become IPv4 (a dual-stack socket connects to the IPv4 address). `loose`: also the
 * IPv4 forms of `parseIPv4` (`127.1`, `0x7f.0.0.1`), as in URLs; otherwise dotted quads only.
 *
 * @example canonicalIp('[::FFFF:127.0.0.1]') // { address: '127.0.0.1', family: 4 }
 */
export function canonicalIp(s: string, loose = false): Ip | null {
  const t = s.trim().replace(/^\[|\]$/g, '');
  if (t === '') return null;
  const w = ipv6Words(t);
  if (w) {
    if (w.slice(0, 5).every((x) => x === 0) && w[5] === 0xffff) return { address: v4OfWords(w[6]!, w[7]!), family: 4 };
    return { address: formatIPv6(w), family: 6 };
  }
  if (!loose && isIP(t) !== 4) return null;
  const v4 = parseIPv4(t);
  return v4 ? { address: v4, family: 4 } : null;
}

/** The IPv4 address inside an IPv6 form that carries one, and which form it is. */
export interface EmbeddedIPv4 {
  v4: string;
  form: 'ipv4-compatible' | 'ipv4-translated' | 'nat64' | '6to4';
}

/**
 * The IPv4 address an IPv6 address carries: IPv4-compatible `::a.b.c.d` (deprecated; `::` and
 * `::1` excepted), IPv4-translated `::ffff:0:a.b.c.d`, NAT64 well-known prefix `64:ff9b::/96`,
 * 6to4 `2002:AABB:CCDD::/48`. (IPv4-mapped addresses are IPv4 already, see `canonicalIp`.)
 */
export function embeddedIPv4(address: string): EmbeddedIPv4 | null {
  const w = ipv6Words(address);
  if (!w) return null;
  const zeros = (from: number, to: number): boolean => w.slice(from, to).every((x) => x === 0);
  if (zeros(0, 6) && !(w[6] === 0 && w[7]! <= 1)) return { v4: v4OfWords(w[6]!, w[7]!), form: 'ipv4-compatible' };
  if (zeros(0, 4) && w[4] === 0xffff && w[5] === 0) return { v4: v4OfWords(w[6]!, w[7]!), form: 'ipv4-translated' };
  if (w[0] === 0x64 && w[1] === 0xff9b && zeros(2, 6)) return { v4: v4OfWords(w[6]!, w[7]!), form: 'nat64' };
  if (w[0] === 0x2002) return { v4: v4OfWords(w[1]!, w[2]!), form: '6to4' };
  return null;
}

/** Parse one network: `a.b.c.d/n`, `x:y::/n`, or a single address (a /32 or /128). */
export function parseCidr(s: string): { ip: Ip; prefix: number } | null {
  const m = /^([^/]+)(?:\/(\d{1,3}))?$/.exec(s.trim());
  if (!m) return null;
  const t = m[1]!.replace(/^\[|\]$/g, '');
  // networks are written plainly: dotted quads or IPv6, not the loose IPv4 forms
  if (isIP(t) === 0) return null;
  const ip = canonicalIp(t)!;
  const max = ip.family === 4 ? 32 : 128;
  let prefix = m[2] === undefined ? max : Number(m[2]);
  // ::ffff:10.0.0.0/104 is the IPv4 network 10.0.0.0/8
  if (ip.family === 4 && isIP(t) === 6 && m[2] !== undefined) prefix -= 96;
  if (prefix < 0 || prefix > max) return null;
  return { ip, prefix };
}

/** A list of networks; `has(ip)` for any spelling of an address. */
export class CidrList {
  private readonly list = new BlockList();
  /** The networks as given, normalised (`127.0.0.0/8`, `::1/128`). */
  readonly networks: readonly string[];

  /** Throws with the bad entry's text when one is not a network. */
  constructor(entries: readonly string[]) {
    const out: string[] = [];
    for (const e of entries) {
      const c = parseCidr(e);
      if (!c) throw new Error(`not an IPv4 or IPv6 network (a.b.c.d/n, x:y::/n or an address): ${e}`);
      this.list.addSubnet(c.ip.address, c.prefix, c.ip.family === 4 ? 'ipv4' : 'ipv6');
      out.push(`${c.ip.address}/${c.prefix}`);
    }
    this.networks = Object.freeze(out);
  }

  has(address: string): boolean {
    const ip = canonicalIp(address);
    return ip !== null && this.list.check(ip.address, ip.family === 4 ? 'ipv4' : 'ipv6');
  }
}
