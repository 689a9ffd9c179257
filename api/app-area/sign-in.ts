/**
 * The session layer's routes (everything else under /app needs a session):
 *
 *   GET  /app/sign-in                    the sign-in page: account name + password, or a passkey
 *   POST /app/sign-in                    form: account, password, _csrf, next → 303 to `next`
 *   POST /app/sign-in/passkey/options    JSON → WebAuthn authentication options
 *   POST /app/sign-in/passkey            JSON {response, next} → {redirect}
 *   POST /app/sign-out                   form with the session's _csrf → 303 to the sign-in page
 *   GET  /app/invite                     the invitation page (token in the URL fragment)
 *   POST /app/invite/lookup              JSON {token} → the account the invitation is for
 *   POST /app/invite/passkey/options     JSON {token} → WebAuthn registration options
 *   POST /app/invite/passkey             JSON {token, response} → passkey set, signed in, {redirect}
 *   POST /app/invite/password            JSON {token, password} → password set, signed in, {redirect}
 *
 * Every POST has passed the CSRF check (api/app-area/session.ts) before it gets here. Failed
 * sign-ins are throttled (api/app-area/throttle.ts) and logged in the account's activity when the
 * account is known (never the password, never the name typed when it is not an account).
 * A wrong account name and a wrong password get the same answer, in about the same time.
 */
import Router from '@koa/router';
import type { ApiConfig } from '../config.ts';
import { ApiError } from '../http/errors.ts';
import type { ProblemCode } from '../http/problems.ts';
import { hashToken } from '../access/licences.ts';
import type { AppStore, InvitationRefusal } from '../state/app-store.ts';
import type { CredentialKind } from '../state/tables.ts';
import type { Account } from '../state/store-interface.ts';
import { logActivity, SESSION_EVENTS } from './activity.ts';
import { readForm, readJson } from './body.ts';
import type { AppAreaContext, AppAreaState } from './contract.ts';
import { html } from './html.ts';
import { INVITATION_TOKEN } from './invitations.ts';
import { renderPublicPage } from './layout.ts';
import {
  dummyPasswordHash,
  hashPassword,
  passwordRefusal,
  PASSWORD_MIN_LENGTH,
  SCRYPT,
  verifyPassword,
  type ScryptCost,
} from './passwords.ts';
import {
  csrfFor,
  hashSecret,
  newSession,
  preSessionSecret,
  readCookie,
  SESSION_COOKIE,
  sessionTimes,
  type SessionTimes,
  writeCookie,
} from './session.ts';
import type { SigninThrottle } from './throttle.ts';
import {
  authenticationOptions,
  isCredentialResponse,
  registrationOptions,
  relyingParty,
  type RelyingParty,
  verifyAuthentication,
  verifyRegistration,
} from './webauthn.ts';
import { randomBytes } from 'node:crypto';

export interface SessionRouteDeps {
  store: AppStore;
  accounts: { getAccountByName(name: string): Promise<Account | null> };
  clock: () => Date;
  throttle: SigninThrottle;
  /** The scrypt cost of new password hashes (`SCRYPT` when absent; a test server's is cheaper: AppDeps.passwordCost). */
  passwordCost?: ScryptCost;
}

/** Where to go after sign-in: a path under /app, else /app. */
export function safeNext(v: unknown): string {
  return typeof v === 'string' && /^\/app(\/[^\s\\]*)?$/.test(v) && !v.startsWith('//') ? v : '/app';
}

const INVITATION_REFUSALS: Record<InvitationRefusal, [number, ProblemCode, string]> = {
  unknown: [404, 'invitation_unknown', 'this invitation link is not known: check that you opened all of it'],
  used: [
    410,
    'invitation_used',
    'this invitation has already been used; each link works once. Sign in, or ask your account manager for a new invitation',
  ],
  revoked: [
    410,
    'invitation_replaced',
    'a newer invitation was issued for this account; open the newest link you were sent',
  ],
  expired: [410, 'invitation_expired', 'this invitation has expired; ask your account manager for a new one'],
};
const refused = (r: InvitationRefusal): ApiError => {
  const [status, code, detail] = INVITATION_REFUSALS[r];
  return new ApiError(status, code, detail);
};

const tooMany = (retryAfterS: number): ApiError =>
  new ApiError(
    429,
    'sign_in_throttled',
    `too many failed sign-ins; try again in ${Math.ceil(retryAfterS / 60)} minute(s)`,
    { headers: { 'Retry-After': String(retryAfterS) } },
  );

/** What the session routes share: their deps and what is made once from the config. */
interface SessionEnv extends Pick<SessionRouteDeps, 'store' | 'accounts' | 'throttle'> {
  config: ApiConfig;
  rp: RelyingParty;
  times: SessionTimes;
  /** The clock's time, in ms. */
  now: () => number;
  passwordCost: ScryptCost;
}

/** The session layer's routes: sign-in with a password or a passkey, sign-out, invitations. */
export function sessionRouter(config: ApiConfig, deps: SessionRouteDeps): Router<AppAreaState> {
  const env: SessionEnv = {
    config,
    store: deps.store,
    accounts: deps.accounts,
    throttle: deps.throttle,
    rp: relyingParty(config),
    times: sessionTimes(config),
    now: () => deps.clock().getTime(),
    passwordCost: deps.passwordCost ?? SCRYPT,
  };
  const router = new Router<AppAreaState>();
  router.get('/app/sign-in', showSignIn);
  router.post('/app/sign-in', (ctx) => passwordSignIn(env, ctx));
  router.post('/app/sign-in/passkey/options', (ctx) => passkeyOptions(env, ctx));
  router.post('/app/sign-in/passkey', (ctx) => passkeySignIn(env, ctx));
  router.post('/app/sign-out', (ctx) => signOut(env, ctx));
  router.get('/app/invite', invitePage);
  router.post('/app/invite/lookup', (ctx) => inviteLookup(env, ctx));
  router.post('/app/invite/passkey/options', (ctx) => invitePasskeyOptions(env, ctx));
  router.post('/app/invite/passkey', (ctx) => invitePasskey(env, ctx));
  router.post('/app/invite/password', (ctx) => invitePassword(env, ctx));
  return router;
}

/** Start a session for `accountId` (cookie set) and log the sign-in. */
async function signIn(env: SessionEnv, ctx: AppAreaContext, accountId: number, method: CredentialKind): Promise<void> {
  const { store, times, now } = env;
  const s = newSession(now(), times);
  await store.createSession({
    id_hash: s.id_hash,
    public_id: s.public_id,
    account_id: accountId,
    method,
    expires_at: s.expires_at,
  });
  writeCookie(ctx, SESSION_COOKIE, s.secret);
  await logActivity(store, ctx, accountId, SESSION_EVENTS.signedIn, { method }, s.public_id);
  // housekeeping, now and then: sessions past their absolute end, used-up challenges, old throttle windows
  if (Math.random() < 0.05)
    await store.pruneApp({
      sessionsBefore: new Date(now()).toISOString(),
      windowBefore: Math.floor(now() / 1000) - 2 * env.config.appSigninFailWindowS,
    });
}

/** The sign-in page: a passkey button (shown by its script) and the password form. */
function signInPage(
  ctx: AppAreaContext,
  o: { status?: number; error?: string; account?: string; next?: string; notice?: string } = {},
): void {
  const token = csrfFor(preSessionSecret(ctx));
  renderPublicPage(ctx, {
    title: 'Sign in',
    status: o.status ?? 200,
    csrfToken: token,
    scripts: ['/app/assets/webauthn-browser.js', '/app/assets/sign-in.js'],
    body: html`
${o.notice ? html`<p class="notice" role="status">${o.notice}</p>` : ''}
${o.error ? html`<div class="error" role="alert" id="sign-in-error"><p>${o.error}</p></div>` : ''}
<section aria-labelledby="passkey-heading" class="passkey-section" id="passkey-section" hidden>
<h2 id="passkey-heading">With a passkey</h2>
<p><button type="button" id="passkey-sign-in">Sign in with a passkey</button></p>
<p id="passkey-status" role="status" aria-live="polite"></p>
</section>
<section aria-labelledby="password-heading">
<h2 id="password-heading">With a password</h2>
<form method="post" action="/app/sign-in" class="stack">
<input type="hidden" name="_csrf" value="${token}">
<input type="hidden" name="next" value="${safeNext(o.next)}">
<p><label for="account">Account name</label>
<input id="account" name="account" autocomplete="username" required value="${o.account ?? ''}"${o.error ? html` aria-describedby="sign-in-error"` : ''}></p>
<p><label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required></p>
<p><button type="submit">Sign in</button></p>
</form>
</section>
<p>No credential yet, or lost it? Ask your account manager for an invitation link: it lets you set a new passkey or password.</p>`,
  });
}

/** `GET /app/sign-in`: the page, or on to `next` when already signed in. */
function showSignIn(ctx: AppAreaContext): void {
  if (ctx.state.app) {
    ctx.redirect(safeNext(ctx.query['next']));
    ctx.status = 303;
    return;
  }
  signInPage(ctx, {
    next: safeNext(ctx.query['next']),
    ...(ctx.query['signed_out'] === '1' ? { notice: 'You have signed out.' } : {}),
  });
}

/** `POST /app/sign-in`: the password form, throttled; 303 to `next` when right. */
async function passwordSignIn(env: SessionEnv, ctx: AppAreaContext): Promise<void> {
  const { store, throttle } = env;
  const form = await readForm(ctx);
  const name = (form.get('account') ?? '').trim();
  const password = form.get('password') ?? '';
  const next = safeNext(form.get('next'));
  const account = name ? await env.accounts.getAccountByName(name) : null;
  const keys = throttle.keys(ctx.ip, account?.id);
  const wait = await throttle.retryAfter(keys);
  if (wait > 0) {
    ctx.set('Retry-After', String(wait));
    signInPage(ctx, {
      status: 429,
      account: name,
      next,
      error: `Too many failed sign-ins. Try again in ${Math.ceil(wait / 60)} minute(s), or sign in with a passkey.`,
    });
    return;
  }
  const cred = account ? await store.passwordCredential(account.id) : null;
  const ok = await verifyPassword(password, cred?.password_hash ?? (await dummyPasswordHash(env.passwordCost)));
  if (!account || !cred || !ok) {
    const throttled = await throttle.fail(keys);
    if (account) {
      await logActivity(store, ctx, account.id, SESSION_EVENTS.signInFailed, {
        method: 'password',
        reason: cred ? 'wrong_password' : 'no_password_set',
      });
      if (throttled) await logActivity(store, ctx, account.id, SESSION_EVENTS.signInThrottled, { method: 'password' });
    }
    signInPage(ctx, { status: 401, account: name, next, error: 'The account name or password is not right.' });
    return;
  }
  await store.credentialUsed(cred.id);
  await signIn(env, ctx, account.id, 'password');
  ctx.redirect(next);
  ctx.status = 303;
}

/** `POST /app/sign-in/passkey/options`: WebAuthn authentication options. */
async function passkeyOptions(env: SessionEnv, ctx: AppAreaContext): Promise<void> {
  const { store, throttle, rp, now } = env;
  const wait = await throttle.retryAfter(throttle.keys(ctx.ip));
  if (wait > 0) throw tooMany(wait);
  ctx.body = await authenticationOptions(store, rp, now());
}

/** `POST /app/sign-in/passkey`: the browser's passkey response, throttled; `{redirect}` when verified. */
async function passkeySignIn(env: SessionEnv, ctx: AppAreaContext): Promise<void> {
  const { store, throttle, rp } = env;
  const body = await readJson(ctx);
  const keys = throttle.keys(ctx.ip);
  const wait = await throttle.retryAfter(keys);
  if (wait > 0) throw tooMany(wait);
  const response = body['response'];
  if (!isCredentialResponse(response))
    throw new ApiError(400, 'invalid_parameter', 'response: must be the passkey response of the browser');
  const passkey = await store.passkeyCredential(response.id);
  const counter = passkey ? await verifyAuthentication(store, rp, response as never, passkey) : null;
  if (!passkey || counter === null) {
    await throttle.fail(keys);
    if (passkey)
      await logActivity(store, ctx, passkey.account_id, SESSION_EVENTS.signInFailed, {
        method: 'passkey',
        reason: 'not_verified',
      });
    throw new ApiError(
      401,
      'sign_in_failed',
      'this passkey could not be verified for this site; try again, or ask for a new invitation',
    );
  }
  await store.credentialUsed(passkey.id, counter);
  await signIn(env, ctx, passkey.account_id, 'passkey');
  ctx.body = { redirect: safeNext(body['next']) };
}

/** `POST /app/sign-out`: end the session, 303 to the sign-in page. */
async function signOut(env: SessionEnv, ctx: AppAreaContext): Promise<void> {
  const { store } = env;
  const s = ctx.state.app;
  const secret = readCookie(ctx, SESSION_COOKIE);
  if (secret) await store.endSession(hashSecret(secret));
  writeCookie(ctx, SESSION_COOKIE, null);
  if (s) await logActivity(store, ctx, s.account.id, SESSION_EVENTS.signedOut, {}, s.id);
  ctx.redirect('/app/sign-in?signed_out=1');
  ctx.status = 303;
}

// — invitations —

/** The invitation of the posted token, or the refusal as a problem. */
async function openInvitation(env: SessionEnv, body: Record<string, unknown>) {
  const { store, now } = env;
  const token = body['token'];
  if (typeof token !== 'string' || !INVITATION_TOKEN.test(token))
    throw new ApiError(
      400,
      'invalid_parameter',
      'token: must be the 43-character token after # in the invitation link',
    );
  const hash = hashToken(token);
  const inv = await store.getInvitation(hash);
  if (!inv) throw refused('unknown');
  if (inv.used_at !== null) throw refused('used');
  if (inv.revoked_at !== null) throw refused('revoked');
  if (Date.parse(inv.expires_at) <= now()) throw refused('expired');
  return { hash, inv };
}

/** Accept the invitation with `credential`, start the session, log both. */
async function accept(
  env: SessionEnv,
  ctx: AppAreaContext,
  hash: string,
  credential: Parameters<AppStore['acceptInvitation']>[1],
): Promise<void> {
  const { store, times, now } = env;
  const s = newSession(now(), times);
  const r = await store.acceptInvitation(hash, credential, {
    id_hash: s.id_hash,
    public_id: s.public_id,
    method: credential.kind,
    expires_at: s.expires_at,
  });
  if ('refused' in r) throw refused(r.refused);
  writeCookie(ctx, SESSION_COOKIE, s.secret);
  await logActivity(
    store,
    ctx,
    r.account_id,
    SESSION_EVENTS.credentialSet,
    { method: credential.kind, via: 'invitation' },
    s.public_id,
  );
  await logActivity(store, ctx, r.account_id, SESSION_EVENTS.signedIn, { method: credential.kind }, s.public_id);
  ctx.body = { redirect: '/app' };
}

/** `GET /app/invite`: the invitation page (its script reads the token from the URL fragment). */
function invitePage(ctx: AppAreaContext): void {
  const token = csrfFor(preSessionSecret(ctx));
  renderPublicPage(ctx, {
    title: 'Set up your sign-in',
    csrfToken: token,
    scripts: ['/app/assets/webauthn-browser.js', '/app/assets/invite.js'],
    body: html`
<p id="invite-status" role="status" aria-live="polite">Checking your invitation…</p>
<noscript><p class="error">This page needs JavaScript: the invitation's secret stays in your browser and is sent from this page only.</p></noscript>
<div id="invitation" hidden>
<p>This invitation is for the account <strong id="invite-account"></strong>; it works once, until <span id="invite-expires"></span>.
Setting a credential here replaces any earlier one and signs out every other session of the account.</p>
<section aria-labelledby="invite-passkey-heading" id="invite-passkey-section" hidden>
<h2 id="invite-passkey-heading">Create a passkey (recommended)</h2>
<p>A passkey lives on your device or security key and cannot be phished or guessed.</p>
<p><button type="button" id="create-passkey">Create a passkey</button></p>
</section>
<section aria-labelledby="invite-password-heading">
<h2 id="invite-password-heading">Or choose a password</h2>
<form id="password-form" class="stack" novalidate>
<p><label for="invite-username">Account name</label>
<input id="invite-username" name="username" autocomplete="username" readonly></p>
<p><label for="new-password">New password</label>
<input id="new-password" name="password" type="password" autocomplete="new-password" minlength="${PASSWORD_MIN_LENGTH}" required aria-describedby="password-hint"></p>
<p id="password-hint" class="hint">At least ${PASSWORD_MIN_LENGTH} characters. A passphrase of several words is easy to remember and hard to guess.</p>
<p><label for="confirm-password">Repeat the password</label>
<input id="confirm-password" name="confirm" type="password" autocomplete="new-password" required></p>
<p><button type="submit">Set password and sign in</button></p>
</form>
</section>
</div>
<div id="invite-error" class="error" role="alert" hidden></div>`,
  });
}

/** `POST /app/invite/lookup`: the account the invitation is for. */
async function inviteLookup(env: SessionEnv, ctx: AppAreaContext): Promise<void> {
  const { inv } = await openInvitation(env, await readJson(ctx));
  ctx.body = { account: inv.account_name, expires_at: inv.expires_at };
}

/** `POST /app/invite/passkey/options`: WebAuthn registration options. */
async function invitePasskeyOptions(env: SessionEnv, ctx: AppAreaContext): Promise<void> {
  const { store, rp, now } = env;
  const { hash, inv } = await openInvitation(env, await readJson(ctx));
  ctx.body = await registrationOptions(store, rp, inv.account_name, hash, now());
}

/** `POST /app/invite/passkey`: the new passkey set, signed in. */
async function invitePasskey(env: SessionEnv, ctx: AppAreaContext): Promise<void> {
  const { store, rp } = env;
  const body = await readJson(ctx);
  const { hash } = await openInvitation(env, body);
  const response = body['response'];
  if (!isCredentialResponse(response))
    throw new ApiError(400, 'invalid_parameter', 'response: must be the passkey response of the browser');
  const made = await verifyRegistration(store, rp, response as never, hash);
  if (!made)
    throw new ApiError(400, 'passkey_not_verified', 'the new passkey could not be verified for this site; try again');
  await accept(env, ctx, hash, { id: newCredentialId(), kind: 'passkey', ...made });
}

/** `POST /app/invite/password`: the new password set, signed in. */
async function invitePassword(env: SessionEnv, ctx: AppAreaContext): Promise<void> {
  const body = await readJson(ctx);
  const { hash } = await openInvitation(env, body);
  const password = body['password'];
  const why = typeof password === 'string' ? passwordRefusal(password) : 'a password is required';
  if (why)
    throw new ApiError(400, 'invalid_parameter', `password: ${why}`, { errors: [{ name: 'password', reason: why }] });
  await accept(env, ctx, hash, {
    id: newCredentialId(),
    kind: 'password',
    password_hash: await hashPassword(password as string, env.passwordCost),
  });
}

const newCredentialId = (): string => 'cred_' + randomBytes(8).toString('hex');
