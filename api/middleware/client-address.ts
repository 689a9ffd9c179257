/**
 * The client address of a request (`ctx.ip`), which the failed-key throttle counts against.
 *
 * Without `TRUST_PROXY` it is the address of the connection. With `TRUST_PROXY=1` it comes from
 * `X-Forwarded-For`, but only as far as it can be believed: each proxy appends the address it
 * received the request from, so only entries appended by a proxy we trust are true, and the
 * left-most entries are whatever the client wrote. `clientAddress` therefore walks the header from
 * the right, starting at the connection's peer, past every address in `TRUSTED_PROXIES`, and takes
 * the first one that is not a trusted proxy. A peer that is not a trusted proxy is the client
 * itself, and its `X-Forwarded-For`, `-Proto` and `-Host` headers are removed from the request
 * (so neither the scheme, the host in links nor HSTS can be steered by a client that bypasses the
 * proxy); the first such peer is logged once, as a hint that `TRUSTED_PROXIES` may be missing it.
 */
import type { Middleware } from 'koa';
import { lastAnswer } from '../../common/lru.ts';
import type { ApiConfig } from '../config.ts';
import { canonicalIp, CidrList } from '../http/ip-address.ts';

/** An `X-Forwarded-For` entry as an address: `a.b.c.d`, `a.b.c.d:port`, `x::y`, `[x::y]:port`; null when none. */
function entryAddress(entry: string): string | null {
  const e = entry.trim();
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(e);
  const v4port = /^(\d+\.\d+\.\d+\.\d+):\d+$/.exec(e);
  const ip = canonicalIp(bracketed ? bracketed[1]! : v4port ? v4port[1]! : e);
  return ip ? ip.address : null;
}

/**
 * The client address of a request that reached us from `peer` with `forwardedFor` (the
 * `X-Forwarded-For` value, or null when there is none): `peer` itself unless it is in `trusted`;
 * else the right-most `X-Forwarded-For` address that is not in `trusted`; the left-most one when
 * every entry is trusted; the last trusted hop when an entry is not an address (a proxy wrote
 * something it could not vouch for, e.g. `unknown`). IPv4-mapped IPv6 addresses are given as IPv4.
 *
 * @example clientAddress('127.0.0.1', '6.6.6.6, 203.0.113.9', new CidrList(['127.0.0.0/8'])) // '203.0.113.9'
 */
export function clientAddress(peer: string, forwardedFor: string | null, trusted: CidrList): string {
  let hop = canonicalIp(peer)?.address ?? peer;
  if (!trusted.has(hop) || !forwardedFor) return hop;
  const entries = forwardedFor.split(',').filter((e) => e.trim() !== '');
  for (let i = entries.length - 1; i >= 0; i--) {
    const a = entryAddress(entries[i]!);
    if (a === null) return hop;
    hop = a;
    if (!trusted.has(a)) return a;
  }
  return hop; // every entry is a trusted proxy: the left-most
}

/** Set `ctx.ip` to the client address (see `clientAddress`); put it before anything that reads it. */
export function clientAddressMiddleware(
  config: Pick<ApiConfig, 'trustProxy' | 'trustedProxies'>,
  log: (line: string) => void = () => {},
): Middleware {
  const trusted = new CidrList(config.trustedProxies);
  let warned = false;
  // a peer's address, remembered for the last peer: a connection carries many requests, a proxy's even more
  const addressOf = lastAnswer((peer: string) => canonicalIp(peer)?.address ?? peer);
  return async (ctx, next) => {
    const peer = ctx.req.socket.remoteAddress ?? '';
    if (!config.trustProxy) {
      ctx.request.ip = addressOf(peer);
      return next();
    }
    if (!trusted.has(peer)) {
      const h = ctx.req.headers;
      if (!warned && h['x-forwarded-for'] !== undefined) {
        warned = true;
        log(
          `TRUST_PROXY=1: a request from ${peer} carried X-Forwarded-For, but ${peer} is not in TRUSTED_PROXIES (${trusted.networks.join(', ')}); its X-Forwarded-* headers are ignored (logged once)`,
        );
      }
      delete h['x-forwarded-for'];
      delete h['x-forwarded-proto'];
      delete h['x-forwarded-host'];
    }
    const xff = ctx.get('X-Forwarded-For');
    ctx.request.ip = clientAddress(peer, xff === '' ? null : xff, trusted);
    return next();
  };
}
