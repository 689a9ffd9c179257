/**
 * Security headers on every response. HSTS only when the client reached us over HTTPS: our own
 * TLS listener, or — with TRUST_PROXY — a proxy that says `X-Forwarded-Proto: https` (the header
 * is dropped earlier when the peer is not in TRUSTED_PROXIES: api/middleware/client-address.ts).
 */
import type { Middleware } from 'koa';
import type { ApiConfig } from '../config.ts';

export const HSTS = 'max-age=31536000; includeSubDomains';

export function securityHeadersMiddleware(config: Pick<ApiConfig, 'trustProxy'>): Middleware {
  return async (ctx, next) => {
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('Referrer-Policy', 'no-referrer');
    const encrypted = Boolean((ctx.req.socket as { encrypted?: boolean }).encrypted);
    const forwardedHttps =
      config.trustProxy && ctx.get('X-Forwarded-Proto').split(',')[0]!.trim().toLowerCase() === 'https';
    if (encrypted || forwardedHttps) ctx.set('Strict-Transport-Security', HSTS);
    await next();
  };
}
