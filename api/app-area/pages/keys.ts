/**
 * /app/keys — the account's Data API keys: the list (label, prefix, scope, created, last used,
 * status), the create form offering the scopes the plan allows (the others listed with why
 * not), the raw key shown once with a copy button, and revoke (the API refuses the key from the
 * next request, api/state/revocations.ts). Key created and revoked are written to the activity log.
 */
import Router from '@koa/router';
import { ApiError } from '../../http/errors.ts';
import { CAPABILITIES, type Scope } from '../../access/scopes.ts';
import { accountService, KEY_LABEL_MAX, type KeyRow } from '../account-service.ts';
import type { AppAreaContext, AppAreaState, RecordActivity, RenderPage } from '../contract.ts';
import { html } from '../html.ts';
import type { StateStore } from '../../state/store-interface.ts';
import { actionButton, APP_BASE, csrfField, formBody, message, notFoundPage, when } from './common.ts';

export interface KeysPageDeps {
  store: StateStore;
  clock: () => Date;
  renderPage: RenderPage;
  recordActivity: RecordActivity;
}

const SCOPE_TEXT: Record<Scope, string> = {
  commonwealth: 'commonwealth — public data, attribution required',
  ent_api: 'ent_api — enriched: applicant and company, webhooks',
  ent_feed: 'ent_feed — licensed feed',
  custom: 'custom — licensed',
};

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
    const atLimit = allowance.active >= allowance.max;
    deps.renderPage(ctx, {
      section: 'keys',
      title: 'Data API keys',
      status: o.status ?? 200,
      scripts: o.created ? ['/app/assets/copy-secret.js'] : [],
      body: html`${message(o.error ?? null)}${message(o.notice ?? null, 'notice')}
${o.created ? createdPanel(o.created) : ''}
<section aria-labelledby="keys-list"><h2 id="keys-list">Your keys</h2>
<p>${allowance.active} of ${allowance.max} active self-serve keys. Send a key as <code>Authorization: Bearer &lt;key&gt;</code>.</p>
${keys.length === 0 ? html`<p>No keys yet.</p>` : keyTable(ctx, keys)}
</section>
<section aria-labelledby="keys-new"><h2 id="keys-new">Create a key</h2>
${
  atLimit
    ? html`<p class="notice" id="key-limit">You hold ${allowance.max} active keys, the most an account may hold. Revoke a key you no longer use to create a new one; revoked keys keep their usage history.</p>`
    : html`<form method="post" action="${APP_BASE}/keys">${csrfField(ctx)}
<div class="field"><label for="key-label">Label</label><input id="key-label" name="label" maxlength="${KEY_LABEL_MAX}" autocomplete="off" aria-describedby="key-label-hint"><small id="key-label-hint">So you can tell your keys apart, e.g. "CRM sync".</small></div>
<fieldset><legend>Scope</legend>${offers.map(
        (s, i) =>
          html`<div class="choice"><input type="radio" name="scope" id="scope-${s.scope}" value="${s.scope}"${s.refusal ? html` disabled aria-describedby="scope-${s.scope}-why"` : ''}${
            i === 0 ? html` checked` : ''
          }><label for="scope-${s.scope}">${SCOPE_TEXT[s.scope]}</label>${s.refusal ? html` <small id="scope-${s.scope}-why">${s.refusal}</small>` : ''}</div>`,
      )}</fieldset>
<button type="submit">Create key</button></form>`
}
</section>`,
    });
  }

  router.get('/keys', (ctx) => show(ctx));

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
      await show(ctx, { error: e.message, status: e.status });
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
    await show(ctx, {
      notice: r.already
        ? `Key ${r.key.display_prefix}… was already revoked.`
        : `Key ${r.key.display_prefix}… is revoked: the API refuses it from the next request.`,
    });
  });

  return router;
}

function createdPanel(c: { id: string; raw: string; scope: Scope }) {
  return html`<section class="created" aria-labelledby="key-created"><h2 id="key-created">Your new ${c.scope} key</h2>
<p><strong>Copy it now: this is the only time it is shown.</strong> Only a hash of it is stored.</p>
<div class="secret"><label for="new-key">Key ${c.id}</label><input id="new-key" readonly value="${c.raw}" data-copy-source><button type="button" data-copy="new-key">Copy</button><span role="status" data-copy-status></span></div>
${CAPABILITIES[c.scope].enriched ? '' : html`<p>Commonwealth responses carry the CC BY 4.0 attribution: show it wherever you use the data.</p>`}
</section>`;
}

function keyTable(ctx: AppAreaContext, keys: KeyRow[]) {
  return html`<div class="table-wrap"><table><caption>Keys of this account</caption><thead><tr><th scope="col">Label</th><th scope="col">Prefix</th><th scope="col">Scope</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col">Status</th><th scope="col"><span class="visually-hidden">Action</span></th></tr></thead><tbody>${keys.map(
    (k) =>
      html`<tr><td id="label-${k.id}">${k.name ?? html`<span class="muted">(no label)</span>`}</td><td><code>${k.display_prefix}…</code></td><td>${k.scope}${
        k.licence_id ? html` <small>(licence ${k.licence_id})</small>` : ''
      }</td><td>${when(k.created_at)}</td><td>${k.last_used_day ?? 'never'}</td><td>${k.status}${k.revoked_at ? html` <small>${when(k.revoked_at)}</small>` : ''}${
        k.expires_at ? html` <small>until ${when(k.expires_at)}</small>` : ''
      }</td><td>${k.status === 'active' ? actionButton(ctx, `${APP_BASE}/keys/${k.id}/revoke`, `Revoke ${k.display_prefix}…`, { danger: true, describedBy: `label-${k.id}` }) : ''}</td></tr>`,
  )}</tbody></table></div>`;
}
