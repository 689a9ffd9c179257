/**
 * /app/keys — the account's Data API keys: the list (label, prefix, scope, created, last used,
 * status), the create form offering the scopes the plan allows (the others listed with why
 * not), the raw key shown once with a copy button, and revoke (the API refuses the key from the
 * next request, api/state/revocations.ts). Key created and revoked are written to the activity log.
 */
import Router from '@koa/router';
import { ApiError } from '../../http/errors.ts';
import { CAPABILITIES, type Plan, type Scope } from '../../access/scopes.ts';
import { accountService, KEY_LABEL_MAX, type KeyRow } from '../account-service.ts';
import type { AppAreaContext, AppAreaState, RecordActivity, RenderPage } from '../contract.ts';
import { html } from '../html.ts';
import type { StateStore } from '../../state/store-interface.ts';
import { actionButton, APP_BASE, csrfField, fmt, formBody, message, notFoundPage, when } from './common.ts';

export interface KeysPageDeps {
  store: StateStore;
  clock: () => Date;
  renderPage: RenderPage;
  recordActivity: RecordActivity;
}

/** What a key of each scope gives, in a buyer's words (the code stays visible, small, for developers). */
export const SCOPE_WORDS: Record<Scope, { name: string; gives: string }> = {
  commonwealth: {
    name: 'Public leads',
    gives: `every lead without applicant or contractor names; ${fmt(CAPABILITIES.commonwealth.dailyRows)} leads a day; show the CC BY 4.0 credit wherever you use them`,
  },
  ent_api: {
    name: 'Full leads',
    gives: `applicant and contractor with their company details, webhooks for new leads; ${fmt(CAPABILITIES.ent_api.dailyRows)} leads a day`,
  },
  ent_feed: {
    name: 'Licensed feed',
    gives: 'full leads with no daily limit, map feeds and bulk files, under an organisation licence',
  },
  custom: { name: 'Custom licence', gives: 'terms agreed with your account manager' },
};

/** What each plan gives, in words. */
export const PLAN_WORDS: Record<Plan, string> = {
  basic: 'public leads',
  pro: 'public leads',
  premium: 'full leads with applicant and contractor details, and webhooks',
};

/** A scope's words with its code, small, for developers. */
const scopeName = (s: Scope) => html`${SCOPE_WORDS[s].name} <small class="code">(<code>${s}</code>)</small>`;

/** The scope the create form starts on: the best one the plan allows (the last allowed in SCOPES' order, lowest to highest). */
export function defaultScope(offers: readonly { scope: Scope; refusal: string | null }[]): Scope | null {
  return offers.filter((o) => o.refusal === null).at(-1)?.scope ?? null;
}

/** A refusal of a scope in a buyer's words. */
function refusalWords(scope: Scope, plan: Plan): string {
  if (scope === 'ent_feed' || scope === 'custom')
    return 'Comes with an organisation licence: your account manager sends a one-time link for each seat.';
  return `Needs the premium plan (yours is ${plan}).`;
}

export function keysPage(_config: unknown, deps: KeysPageDeps): Router<AppAreaState> {
  const router = new Router<AppAreaState>({ prefix: APP_BASE });
  const svc = accountService(deps);

  async function show(
    ctx: AppAreaContext,
    o: { created?: { id: string; raw: string; scope: Scope }; error?: string; notice?: string; status?: number } = {},
  ): Promise<void> {
    const { account } = ctx.state.app;
    const [keys, allowance] = await Promise.all([svc.listKeys(account.id), svc.keyAllowance(account.id)]);
    const offers = svc.offeredScopes(account.plan);
    const chosen = defaultScope(offers);
    const atLimit = allowance.active >= allowance.max;
    deps.renderPage(ctx, {
      section: 'keys',
      title: 'Data API keys',
      status: o.status ?? 200,
      scripts: o.created ? ['/app/assets/copy-secret.js'] : [],
      body: html`${message(o.error ?? null)}${message(o.notice ?? null, 'notice')}
${o.created ? createdPanel(o.created) : ''}
<p>Your plan, <strong>${account.plan}</strong>, gives ${PLAN_WORDS[account.plan]}.</p>
<section aria-labelledby="keys-list"><h2 id="keys-list" tabindex="-1">Your keys</h2>
<p>${allowance.active} of ${allowance.max} keys in use. A key lets your own software read leads from the Data API.</p>
<details class="dev"><summary>For developers</summary><p>Send a key as <code>Authorization: Bearer &lt;key&gt;</code>; the API documentation is at <a href="/v1/docs">/v1/docs</a>. The code in brackets is the key's scope.</p></details>
${keys.length === 0 ? html`<p>No keys yet.</p>` : keyTable(ctx, keys)}
</section>
<section aria-labelledby="keys-new"><h2 id="keys-new">Create a key</h2>
${
  atLimit
    ? html`<p class="notice" id="key-limit">You hold ${allowance.max} active keys, the most an account may hold. Revoke a key you no longer use to create a new one; revoked keys keep their usage history.</p>`
    : html`<form method="post" action="${APP_BASE}/keys">${csrfField(ctx)}
<div class="field"><label for="key-label">Label</label><input id="key-label" name="label" maxlength="${KEY_LABEL_MAX}" autocomplete="off" aria-describedby="key-label-hint"><small id="key-label-hint">So you can tell your keys apart, e.g. "CRM sync".</small></div>
<fieldset><legend>What the key may read</legend>${offers.map(
        (s) =>
          html`<div class="choice"><input type="radio" name="scope" id="scope-${s.scope}" value="${s.scope}" aria-describedby="scope-${s.scope}-why"${s.refusal ? html` disabled` : ''}${
            s.scope === chosen ? html` checked` : ''
          }><label for="scope-${s.scope}">${scopeName(s.scope)}</label><small id="scope-${s.scope}-why">${
            s.refusal ? refusalWords(s.scope, account.plan) : `Gives ${SCOPE_WORDS[s.scope].gives}.`
          }</small></div>`,
      )}</fieldset>
<button type="submit">Create key</button></form>`
}
</section>`,
    });
  }

  router.get('/keys', async (ctx) => {
    // after a revoke (303 from the POST): say what happened, for this account's own key only
    const id = String(ctx.query['revoked'] ?? ctx.query['already'] ?? '');
    const key = id ? (await svc.listKeys(ctx.state.app.account.id)).find((k) => k.id === id) : undefined;
    if (!key || key.status === 'active') return show(ctx);
    await show(ctx, {
      notice:
        ctx.query['already'] !== undefined
          ? `Key ${key.display_prefix}… was already revoked.`
          : `Key ${key.display_prefix}… is revoked: the API refuses it from the next request.`,
    });
  });

  router.post('/keys', async (ctx) => {
    const { account } = ctx.state.app;
    const form = await formBody(ctx);
    try {
      const { key, raw } = await svc.createKey(account.id, account.plan, {
        scope: form.get('scope'),
        label: form.get('label'),
      });
      await deps.recordActivity(ctx, 'key_created', { key_id: key.id, scope: key.scope });
      ctx.set('Cache-Control', 'no-store'); // the raw key is in this page, once
      await show(ctx, { created: { id: key.id, raw, scope: key.scope }, status: 201 });
    } catch (e) {
      if (!(e instanceof ApiError) || !e.expose) throw e;
      // a scope the plan does not allow, in the form's words (the API's message names commands and codes)
      const scope = form.get('scope') as Scope | null;
      const error =
        e.status === 403 && scope !== null && scope in SCOPE_WORDS ? refusalWords(scope, account.plan) : e.message;
      await show(ctx, { error, status: e.status });
    }
  });

  router.post('/keys/:id/revoke', async (ctx) => {
    const { account } = ctx.state.app;
    await formBody(ctx);
    const id = ctx.params['id'] ?? '';
    let r;
    try {
      r = await svc.revokeKey(account.id, id);
    } catch (e) {
      if (e instanceof ApiError && e.status === 404) return notFoundPage(ctx, deps.renderPage, 'keys', 'key');
      throw e;
    }
    if (!r.already) await deps.recordActivity(ctx, 'key_revoked', { key_id: r.key.id, scope: r.key.scope });
    // Post/Redirect/Get: the list's URL, with what happened (a reload does not post again)
    ctx.redirect(`${APP_BASE}/keys?${r.already ? 'already' : 'revoked'}=${encodeURIComponent(r.key.id)}`);
    ctx.status = 303;
  });

  return router;
}

function createdPanel(c: { id: string; raw: string; scope: Scope }) {
  return html`<section class="created" aria-labelledby="key-created"><h2 id="key-created" tabindex="-1" data-focus-result>Your new key: ${scopeName(c.scope)}</h2>
<p><strong>Copy it now: this is the only time it is shown.</strong> Only a hash of it is stored.</p>
<div class="secret"><label for="new-key">Key ${c.id}</label><input id="new-key" readonly value="${c.raw}" data-copy-source><button type="button" data-copy="new-key">Copy</button><span role="status" data-copy-status></span></div>
${CAPABILITIES[c.scope].enriched ? '' : html`<p>Commonwealth responses carry the CC BY 4.0 attribution: show it wherever you use the data.</p>`}
</section>`;
}

function keyTable(ctx: AppAreaContext, keys: KeyRow[]) {
  // on a small screen each key is a block of labelled lines (`table.stack`, `data-label`): nothing to scroll sideways
  return html`<table class="stack"><caption>Keys of this account</caption><thead><tr><th scope="col">Label</th><th scope="col">Prefix</th><th scope="col">Reads</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col">Status</th><th scope="col"><span class="visually-hidden">Action</span></th></tr></thead><tbody>${keys.map(
    (k) =>
      html`<tr><td data-label="Label" id="label-${k.id}">${k.name ?? html`<span class="muted">(no label)</span>`}</td><td data-label="Prefix"><code>${k.display_prefix}…</code></td><td data-label="Reads">${scopeName(k.scope)}${
        k.licence_id ? html` <small>(licence ${k.licence_id})</small>` : ''
      }</td><td data-label="Created">${when(k.created_at)}</td><td data-label="Last used">${k.last_used_day ?? 'never'}</td><td data-label="Status">${k.status}${k.revoked_at ? html` <small>${when(k.revoked_at)}</small>` : ''}${
        k.expires_at ? html` <small>until ${when(k.expires_at)}</small>` : ''
      }</td><td data-label="">${k.status === 'active' ? actionButton(ctx, `${APP_BASE}/keys/${k.id}/revoke`, `Revoke ${k.display_prefix}…`, { danger: true, describedBy: `label-${k.id}` }) : ''}</td></tr>`,
  )}</tbody></table>`;
}
