/**
 * Sessions of the account area.
 *
 * - The cookie `__Host-leads_app` holds an opaque random value (32 bytes, base64url); the store
 *   keeps only its SHA-256 hash. `__Host-` makes the browser insist on `Secure`, `Path=/` and no
 *   `Domain` (no subdomain can plant or read it); `HttpOnly` keeps it from scripts;
 *   `SameSite=Strict` keeps it off every cross-site request. It is a browser-session cookie (no
 *   `Max-Age`): closing the browser drops it, and the server ends it anyway after
 *   `APP_SESSION_IDLE_MINUTES` without a request or `APP_SESSION_MAX_HOURS` after sign-in.
 *   Browsers accept `Secure` cookies from http://localhost (a secure context), which is how the
 *   tests run; anywhere else the app must be served over HTTPS.
 * - Every request reads the session and its account from the store (a plan change applies to the
 *   next request; a session ended on another replica is ended here too) and moves its idle clock.
 * - CSRF: the token of a session is HMAC-SHA256(cookie value, "csrf") — never stored, unknowable
 *   without the cookie. Before sign-in, a second cookie `__Host-leads_app_pre` (same flags) gives
 *   the sign-in and invitation pages a token the same way. Every POST, PUT, PATCH and DELETE under
 *   /app must carry one of them (hidden field `_csrf` or header `X-CSRF-Token`), compared in
 *   constant time, AND come from our own origin (`Origin` / `Sec-Fetch-Site`): see `checkCsrf`.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { sha256Hex } from '../http/sha256.ts';
import type { ApiConfig } from '../config.ts';
import { ApiError } from '../http/errors.ts';
import type { AppStore, StoredSession } from '../state/app-store.ts';
import type { AppAreaContext, AppSession } from './contract.ts';

export const SESSION_COOKIE = '__Host-leads_app';
export const PRE_SESSION_COOKIE = '__Host-leads_app_pre';
const COOKIE_FLAGS = 'Path=/; HttpOnly; Secure; SameSite=Strict';

/** A new cookie value: 32 random bytes, base64url (43 characters). */
export const newSecret = (): string => randomBytes(32).toString('base64url');
export const hashSecret = (secret: string): string => sha256Hex(secret);
/** The CSRF token that goes with a cookie value (session or pre-session). */
export const csrfFor = (secret: string): string => createHmac('sha256', secret).update('csrf').digest('base64url');

/** The value of cookie `name` in the request, or null. */
export function readCookie(ctx: AppAreaContext, name: string): string | null {
  for (const part of (ctx.get('Cookie') || '').split(';')) {
    const i = part.indexOf('=');
    if (i > 0 && part.slice(0, i).trim() === name) {
      const v = part.slice(i + 1).trim();
      return /^[A-Za-z0-9_-]{43}$/.test(v) ? v : null;
    }
  }
  return null;
}

/** Set (or with `null`, clear) a cookie with the account area's flags. */
export function writeCookie(ctx: AppAreaContext, name: string, value: string | null): void {
  ctx.append(
    'Set-Cookie',
    value === null ? `${name}=; ${COOKIE_FLAGS}; Max-Age=0` : `${name}=${value}; ${COOKIE_FLAGS}`,
  );
}

/** The pre-session cookie's value, set now when the browser has none. */
export function preSessionSecret(ctx: AppAreaContext): string {
  let v = readCookie(ctx, PRE_SESSION_COOKIE);
  if (!v) writeCookie(ctx, PRE_SESSION_COOKIE, (v = newSecret()));
  return v;
}

export interface SessionTimes {
  idleMs: number;
  maxMs: number;
}
export const sessionTimes = (
  config: Pick<ApiConfig, 'appSessionIdleMinutes' | 'appSessionMaxHours'>,
): SessionTimes => ({
  idleMs: config.appSessionIdleMinutes * 60_000,
  maxMs: config.appSessionMaxHours * 3_600_000,
});

/** Whether a stored session is still alive at `now` (absolute and idle expiry). */
export function sessionAlive(
  s: Pick<StoredSession, 'last_seen_at' | 'expires_at'>,
  now: number,
  t: SessionTimes,
): boolean {
  return now < Date.parse(s.expires_at) && now - Date.parse(s.last_seen_at) < t.idleMs;
}

/** A fresh session for an account: the cookie value and what the store keeps. */
export function newSession(
  now: number,
  t: SessionTimes,
): { secret: string; id_hash: string; public_id: string; expires_at: string } {
  const secret = newSecret();
  return {
    secret,
    id_hash: hashSecret(secret),
    public_id: 'ses_' + randomBytes(8).toString('hex'),
    expires_at: new Date(now + t.maxMs).toISOString(),
  };
}

/**
 * Read the request's session: alive → its `AppSession` (idle clock moved); missing, unknown or
 * expired → null (an expired one is deleted and its cookie cleared).
 */
export async function loadSession(
  ctx: AppAreaContext,
  store: AppStore,
  now: number,
  t: SessionTimes,
  nonce: string,
): Promise<AppSession | null> {
  const secret = readCookie(ctx, SESSION_COOKIE);
  if (!secret) return null;
  const hash = hashSecret(secret);
  const s = await store.getSession(hash);
  if (!s || !sessionAlive(s, now, t)) {
    if (s) await store.endSession(hash);
    writeCookie(ctx, SESSION_COOKIE, null);
    return null;
  }
  await store.touchSession(hash);
  return {
    id: s.public_id,
    account: { id: s.account_id, name: s.account_name, plan: s.account_plan },
    csrfToken: csrfFor(secret),
    nonce,
    expiresAt: new Date(Math.min(Date.parse(s.expires_at), now + t.idleMs)).toISOString(),
  };
}

const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
export const isUnsafe = (method: string): boolean => UNSAFE.has(method);

const same = (a: string, b: string): boolean => {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
};

/**
 * Refuse a state-changing request (403 `csrf_refused`) unless it comes from our own origin and
 * carries a valid token: `Sec-Fetch-Site`, when the browser sends it, must be `same-origin`;
 * `Origin`, when sent, must be this server's (PUBLIC_BASE_URL's or the request's own); and the
 * token (`X-CSRF-Token` header or `_csrf` field of `form`) must be the session's or, before
 * sign-in, the pre-session cookie's.
 */
export function checkCsrf(
  ctx: AppAreaContext,
  config: Pick<ApiConfig, 'publicBaseUrl'>,
  form: URLSearchParams | null,
): void {
  const refuse = (why: string): never => {
    throw new ApiError(403, 'csrf_refused', `this request was refused: ${why}. Reload the page and try again`);
  };
  const site = ctx.get('Sec-Fetch-Site');
  if (site && site !== 'same-origin') refuse('it did not come from a page of this site');
  const origin = ctx.get('Origin');
  if (origin && origin !== `${ctx.protocol}://${ctx.host}` && origin !== new URL(config.publicBaseUrl).origin)
    refuse('it came from another site');
  const token = ctx.get('X-CSRF-Token') || form?.get('_csrf') || '';
  const expected = [
    ctx.state.app?.csrfToken,
    ...[readCookie(ctx, PRE_SESSION_COOKIE)].filter((v): v is string => v !== null).map(csrfFor),
  ].filter(Boolean) as string[];
  if (!token || !expected.some((e) => same(token, e))) refuse('its form token is missing or out of date');
}
