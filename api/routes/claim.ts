/**
 * The organisation's side of a licence (see api/access/licences.ts), public (no key, no release):
 *
 *   GET  /v1/claim          the claim page. Its script reads the one-time token from the URL
 *                           fragment (never sent to the server), removes it from the address bar,
 *                           asks for the licence, then generates the key in the browser with
 *                           WebCrypto, shows it once and sends only its SHA-256 hash.
 *   POST /v1/claim/lookup   {token} → the licence the link is for (changes nothing).
 *   POST /v1/claim          {token, key_hash, display_prefix, name?} → 201 the new key's id.
 *
 * CSRF and replay: both POSTs take only `application/json` (a cross-site form cannot send it
 * without a CORS preflight, and api/middleware/cors.ts offers no CORS on /v1/claim…), refuse a
 * foreign `Origin` or a cross-site `Sec-Fetch-Site`, and a link works once (the claim is one
 * atomic store transaction). Responses
 * are `no-store`; the page has a nonce-based Content-Security-Policy and may not be framed.
 */
import Router from '@koa/router';
import { randomBytes } from 'node:crypto';
import type { ApiConfig } from '../config.ts';
import type { AppDeps } from '../http/app-deps.ts';
import type { AppContext, AppState } from '../http/context.ts';
import { ApiError, invalidParams, type ParamError } from '../http/errors.ts';
import type { ProblemCode } from '../http/problems.ts';
import { readBodyText } from '../http/request-body.ts';
import { hashToken, isLicensedScope, TOKEN_PATTERN } from '../access/licences.ts';
import { KEY_PREFIX } from '../access/scopes.ts';
import type { ClaimRefusal } from '../state/store-interface.ts';
import { mount, type Operation } from './operation.ts';
import { schemaRef } from '../openapi/endpoint.ts';

const BODY_LIMIT = 4096;

/** Problems of a refused claim. */
const REFUSALS: Record<ClaimRefusal, [number, ProblemCode, string]> = {
  unknown_link: [404, 'claim_link_unknown', 'this claim link is not known: check that you copied all of it'],
  link_used: [
    410,
    'claim_link_used',
    'this claim link has already been used; each link creates one key. Ask your account manager for a new link',
  ],
  link_expired: [410, 'claim_link_expired', 'this claim link has expired; ask your account manager for a new one'],
  licence_expired: [410, 'licence_expired', 'the organisation licence of this link has ended'],
  seats_full: [
    409,
    'seats_exhausted',
    'every seat of this licence holds an active key; revoke one or ask for more seats',
  ],
  duplicate_key: [409, 'duplicate_key', 'a key with this hash already exists; generate a new key'],
};

const refused = (r: ClaimRefusal): ApiError => {
  const [status, code, detail] = REFUSALS[r];
  return new ApiError(status, code, detail);
};

/** Refuse what a browser would only send cross-site; take JSON only. */
function checkSameOrigin(ctx: AppContext, config: ApiConfig): void {
  if (!ctx.is('application/json'))
    throw new ApiError(415, 'unsupported_media_type', 'send the request body as application/json');
  const site = ctx.get('Sec-Fetch-Site');
  if (site && site !== 'same-origin' && site !== 'none')
    throw new ApiError(403, 'cross_origin_request', 'claim requests must come from the claim page itself');
  const origin = ctx.get('Origin');
  // (not ctx.origin: in Koa 3 that may echo the Origin header itself)
  const own = `${ctx.protocol}://${ctx.host}`;
  if (origin && origin !== own && origin !== new URL(config.publicBaseUrl).origin) {
    throw new ApiError(403, 'cross_origin_request', 'claim requests must come from the claim page itself');
  }
}

async function readJson(ctx: AppContext): Promise<Record<string, unknown>> {
  const text = await readBodyText(
    ctx.req,
    BODY_LIMIT,
    () => new ApiError(413, 'body_too_large', `the body may be at most ${BODY_LIMIT} bytes`),
  );
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    throw new ApiError(400, 'invalid_body', 'the body is not valid JSON');
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v))
    throw new ApiError(400, 'invalid_body', 'the body must be a JSON object');
  return v as Record<string, unknown>;
}

function takeToken(body: Record<string, unknown>, errors: ParamError[]): string {
  const t = body['token'];
  if (typeof t !== 'string' || !TOKEN_PATTERN.test(t))
    errors.push({ name: 'token', reason: 'must be the 43-character token after # in the claim link' });
  return typeof t === 'string' ? t : '';
}

/** The `token` member of the claim bodies. */
const tokenProp = {
  type: 'string',
  pattern: '^[A-Za-z0-9_-]{43}$',
  description: 'The token after `#` in the claim link.',
};

/** What the claim operations share. */
interface ClaimEnv {
  config: ApiConfig;
  deps: Pick<AppDeps, 'store' | 'clock'>;
}

/** `GET /v1/claim`: the claim page, with its nonce. */
function claimPageAnswer(ctx: AppContext): void {
  const nonce = randomBytes(16).toString('base64');
  ctx.set(
    'Content-Security-Policy',
    `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
  );
  ctx.set('X-Frame-Options', 'DENY');
  ctx.set('Cache-Control', 'no-store');
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = claimPage(nonce);
}

/** `POST /v1/claim/lookup`: the licence a link is for (changes nothing). */
async function lookUpClaim(ctx: AppContext, { config, deps }: ClaimEnv): Promise<void> {
  checkSameOrigin(ctx, config);
  ctx.set('Cache-Control', 'no-store');
  const body = await readJson(ctx);
  const errors: ParamError[] = [];
  const token = takeToken(body, errors);
  if (errors.length) throw invalidParams(errors);
  const link = await deps.store.getClaimLink(hashToken(token));
  if (!link) throw refused('unknown_link');
  const now = deps.clock().getTime();
  if (link.used_at !== null) throw refused('link_used');
  if (Date.parse(link.expires_at) <= now) throw refused('link_expired');
  const lic = (await deps.store.getLicence(link.licence_id))!;
  if (Date.parse(lic.expires_at) <= now) throw refused('licence_expired');
  ctx.body = {
    organisation: lic.account_name,
    licence_id: lic.id,
    scope: lic.scope,
    key_prefix: KEY_PREFIX[lic.scope],
    seats: lic.seats,
    seats_used: lic.seats_used,
    licence_expires_at: lic.expires_at,
    link_expires_at: link.expires_at,
  };
}

/** `POST /v1/claim`: record the key's hash under the licence (one atomic store transaction). */
async function claimKey(ctx: AppContext, { config, deps }: ClaimEnv): Promise<void> {
  checkSameOrigin(ctx, config);
  ctx.set('Cache-Control', 'no-store');
  const body = await readJson(ctx);
  const errors: ParamError[] = [];
  const token = takeToken(body, errors);
  const keyHash = body['key_hash'];
  const display = body['display_prefix'];
  const name = body['name'] ?? null;
  if (typeof keyHash !== 'string' || !/^[0-9a-f]{64}$/.test(keyHash))
    errors.push({ name: 'key_hash', reason: 'must be the SHA-256 of the key, 64 lowercase hex characters' });
  if (typeof display !== 'string' || !/^lk_(ef|cu)_[A-Za-z0-9_-]{4}$/.test(display)) {
    errors.push({
      name: 'display_prefix',
      reason: 'must be the key prefix plus its first 4 characters, e.g. lk_ef_Ab3d',
    });
  }
  if (name !== null && (typeof name !== 'string' || name.length > 100))
    errors.push({ name: 'name', reason: 'must be a string of at most 100 characters' });
  for (const k of Object.keys(body))
    if (!['token', 'key_hash', 'display_prefix', 'name'].includes(k)) errors.push({ name: k, reason: 'unknown field' });
  if (errors.length) throw invalidParams(errors);
  // the prefix must be the licence's scope: look the link up first (the claim re-checks atomically)
  const link = await deps.store.getClaimLink(hashToken(token));
  if (!link) throw refused('unknown_link');
  const lic = (await deps.store.getLicence(link.licence_id))!;
  if (!isLicensedScope(lic.scope) || !(display as string).startsWith(KEY_PREFIX[lic.scope])) {
    throw invalidParams([
      {
        name: 'display_prefix',
        reason: `this licence issues ${lic.scope} keys, which start with ${KEY_PREFIX[lic.scope]}`,
      },
    ]);
  }
  const id = 'key_' + randomBytes(8).toString('hex');
  const r = await deps.store.claimLink(hashToken(token), {
    id,
    name: (name as string | null)?.trim() || null,
    display_prefix: display as string,
    hash: keyHash as string,
  });
  if ('refused' in r) throw refused(r.refused);
  ctx.status = 201;
  ctx.body = {
    id: r.key.id,
    scope: r.key.scope,
    display_prefix: r.key.display_prefix,
    organisation: r.key.account_name,
    licence_id: r.key.licence_id,
    expires_at: r.key.expires_at,
    created_at: r.key.created_at,
  };
}

export const CLAIM_OPERATIONS: readonly Operation<ClaimEnv>[] = [
  {
    method: 'get',
    path: '/claim',
    tag: 'Licences',
    public: true,
    summary: 'Claim page of an organisation licence',
    description:
      'Opened from a one-time claim link `…/v1/claim#<token>` (the token is in the fragment, which browsers never send). The page generates the key in the browser (WebCrypto), ' +
      'shows it once and sends only its SHA-256 hash (POST /claim). No key needed.',
    ok: { schema: { type: 'string' }, type: 'text/html', description: 'The claim page.' },
    errors: [],
    handler: claimPageAnswer,
  },
  {
    method: 'post',
    path: '/claim/lookup',
    tag: 'Licences',
    public: true,
    summary: 'The licence a claim link is for',
    description: 'Reads the licence of a claim link without using it. JSON only; cross-site requests are refused.',
    bodyDescription: 'The token of the claim link.',
    body: { type: 'object', additionalProperties: false, properties: { token: tokenProp }, required: ['token'] },
    bodyRequired: true,
    ok: { schema: schemaRef('ClaimLookup'), description: 'The licence.' },
    errors: [400, 403, 404, 410, 413, 415],
    handler: lookUpClaim,
  },
  {
    method: 'post',
    path: '/claim',
    tag: 'Licences',
    public: true,
    summary: 'Claim a licensed key by its hash',
    description:
      "Uses the one-time link: records a key of the licence's scope, of which the service receives only the SHA-256 hash (the client generated the key and keeps it). " +
      "Single use (a replay is 410), within the link's and the licence's validity, and only while a seat is free. JSON only; cross-site requests are refused.",
    bodyDescription: "The token and the new key's hash.",
    bodyRequired: true,
    body: {
      type: 'object',
      additionalProperties: false,
      properties: {
        token: tokenProp,
        key_hash: {
          type: 'string',
          pattern: '^[0-9a-f]{64}$',
          description:
            "SHA-256 (hex) of the key the client generated: the licence's prefix plus 43 base64url characters of 32 random bytes.",
        },
        display_prefix: {
          type: 'string',
          pattern: '^lk_(ef|cu)_[A-Za-z0-9_-]{4}$',
          description: 'The prefix plus the first 4 characters of the key, to recognise it in lists.',
        },
        name: { type: 'string', maxLength: 100, description: 'Label of the key.' },
      },
      required: ['token', 'key_hash', 'display_prefix'],
    },
    ok: { schema: schemaRef('ClaimedKey'), description: 'The key was recorded.', status: 201 },
    errors: [400, 403, 404, 409, 410, 413, 415],
    handler: claimKey,
  },
];

/** The claim router (paths relative to the /v1 mount). */
export function claimRouter(config: ApiConfig, deps: Pick<AppDeps, 'store' | 'clock'>): Router<AppState> {
  return mount(CLAIM_OPERATIONS, { config, deps });
}

/** The claim page (one file: markup, style and script under a per-response CSP nonce). */
function claimPage(nonce: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Claim your API key</title>
<style nonce="${nonce}">
  body { font: 16px/1.5 system-ui, sans-serif; max-width: 44rem; margin: 3rem auto; padding: 0 1rem; color: #1b1b1b; }
  code#key { display: block; padding: .75rem; background: #f3f3f3; border: 1px solid #ccc; word-break: break-all; font-size: 1.05rem; }
  .warn { color: #8a1c00; font-weight: 600; }
  button { font: inherit; padding: .4rem 1rem; }
  [hidden] { display: none; }
</style>
</head>
<body>
<main>
  <h1>Claim your API key</h1>
  <p id="status" role="status">Checking your link…</p>
  <section id="licence" hidden>
    <p>Organisation <b id="org"></b> · scope <b id="scope"></b> · licence ends <b id="ends"></b> · seats in use <b id="seats"></b></p>
    <p>Your browser creates the key. Only a fingerprint (its SHA-256 hash) is sent to the service, which never sees the key and cannot show it again.</p>
    <p><label>Key name (optional) <input id="name" maxlength="100" autocomplete="off"></label></p>
    <p><button id="create" type="button">Create my key</button></p>
  </section>
  <section id="done" hidden>
    <p class="warn">This is the only time the key is shown. Store it now in your secrets manager.</p>
    <code id="key"></code>
    <p><button id="copy" type="button">Copy</button></p>
    <p>Key id <code id="keyid"></code> (safe to share with support). Use it as <code>Authorization: Bearer &lt;key&gt;</code>.</p>
  </section>
</main>
<script nonce="${nonce}">
(() => {
  const $ = (id) => document.getElementById(id);
  const token = location.hash.slice(1);
  // the token leaves the address bar (and history) at once
  history.replaceState(null, '', location.pathname);
  const base = location.pathname.replace(/\\/claim$/, '');
  const post = async (path, body) => {
    const res = await fetch(base + path, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body), credentials: 'omit', cache: 'no-store' });
    const data = await res.json().catch(() => null);
    if (!res.ok) throw new Error((data && data.detail) || ('the service answered ' + res.status));
    return data;
  };
  const fail = (e) => { $('status').textContent = 'This link cannot be used: ' + e.message; $('licence').hidden = true; };
  if (!/^[A-Za-z0-9_-]{43}$/.test(token)) { fail(new Error('the link is incomplete; open the whole link you were sent')); return; }
  if (!window.crypto || !crypto.subtle) { fail(new Error('this browser cannot create keys here (WebCrypto needs HTTPS)')); return; }
  let licence;
  post('/claim/lookup', { token }).then((l) => {
    licence = l;
    $('org').textContent = l.organisation;
    $('scope').textContent = l.scope;
    $('ends').textContent = l.licence_expires_at.slice(0, 10);
    $('seats').textContent = l.seats_used + ' of ' + l.seats;
    $('status').textContent = 'Ready to create a key for this licence.';
    $('licence').hidden = false;
  }, fail);
  const b64url = (bytes) => btoa(String.fromCharCode(...bytes)).replace(/\\+/g, '-').replace(/\\//g, '_').replace(/=+$/, '');
  const hex = (buf) => Array.from(new Uint8Array(buf), (b) => b.toString(16).padStart(2, '0')).join('');
  $('create').addEventListener('click', async () => {
    $('create').disabled = true;
    try {
      const secret = b64url(crypto.getRandomValues(new Uint8Array(32)));
      const key = licence.key_prefix + secret;
      const keyHash = hex(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(key)));
      const name = $('name').value.trim();
      const made = await post('/claim', { token, key_hash: keyHash, display_prefix: licence.key_prefix + secret.slice(0, 4), ...(name ? { name } : {}) });
      $('licence').hidden = true;
      $('status').textContent = 'Key created.';
      $('key').textContent = key;
      $('keyid').textContent = made.id;
      $('done').hidden = false;
    } catch (e) {
      fail(e);
    }
  });
  $('copy').addEventListener('click', () => navigator.clipboard && navigator.clipboard.writeText($('key').textContent));
})();
</script>
</body>
</html>
`;
}
