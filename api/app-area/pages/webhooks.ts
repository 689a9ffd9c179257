/**
 * /app/webhooks — the account's webhooks, through the same service as `/v1/webhooks` and
 * `leads webhooks …` (api/webhooks/service.ts): create with a filter builder generated from the
 * `/v1/leads` filter table (values from the current release), send a test delivery, the delivery
 * log and each delivery's attempts, replay dead letters, rotate the secret (shown once), disable,
 * enable and delete. Only where the account may have webhooks: a webhook-capable key it holds
 * (ent_api and above) or a plan whose scope has webhooks (premium); otherwise the page says why.
 * Changes are written to the activity log. Another account's webhook or delivery id is a 404.
 */
import Router from '@koa/router';
import type { ApiConfig } from '../../config.ts';
import type { ApiDb } from '../../duckdb/db.ts';
import { filterPanel, filterWords } from './filter-panel.ts';
import { ApiError, notFound } from '../../http/errors.ts';
import type { ReleaseManager } from '../../releases/release.ts';
import { CAPABILITIES, scopesWith, type Scope } from '../../access/scopes.ts';
import type { StateStore } from '../../state/store-interface.ts';
import type { Delivery } from '../../state/webhook-interface.ts';
import { keyRefusal } from '../../webhooks/send-access.ts';
import { createDispatcher } from '../../webhooks/dispatcher.ts';
import type { HostResolver } from '../../webhooks/destination.ts';
import { serverLeadReader } from '../../webhooks/lead-reader.ts';
import { bestWebhookScope, webhookService, type PublicWebhook } from '../../webhooks/service.ts';
import { appScope } from '../account-service.ts';
import type { AppAccount, AppAreaContext, AppAreaState, RecordActivity, RenderPage } from '../contract.ts';
import { html } from '../html.ts';
import {
  actionButton,
  APP_BASE,
  csrfField,
  filterQueryString,
  formBody,
  givenFilters,
  message,
  notFoundPage,
  when,
} from './common.ts';

export interface WebhooksPageDeps {
  store: StateStore;
  db: ApiDb;
  releases: ReleaseManager;
  clock: () => Date;
  log: (line: string) => void;
  resolveHost?: HostResolver;
  renderPage: RenderPage;
  recordActivity: RecordActivity;
}

/**
 * The scope an account's new webhook gets: the best webhook scope among its keys that grant
 * theirs now, else the plan's own scope when it has webhooks (premium → ent_api: the webhook then
 * waits, suspended, until the account holds such a key); null when the account may not have webhooks.
 */
export async function webhookScopeFor(
  store: Pick<StateStore, 'listKeys'>,
  account: AppAccount,
  now: Date,
): Promise<Scope | null> {
  const keys = await store.listKeys(account.id);
  const usable = keys.filter((k) => keyRefusal(k, account, now) === null).map((k) => k.scope);
  const best = bestWebhookScope(usable);
  if (best) return best;
  const plan = appScope(account.plan);
  return CAPABILITIES[plan].webhooks ? plan : null;
}

export function webhooksPage(config: ApiConfig, deps: WebhooksPageDeps): Router<AppAreaState> {
  const router = new Router<AppAreaState>({ prefix: APP_BASE });
  let service: ReturnType<typeof webhookService> | null = null;
  const svc = (): ReturnType<typeof webhookService> => {
    if (!service) {
      const leads = serverLeadReader(deps.db, deps.releases);
      const resolveHost = deps.resolveHost ? { resolveHost: deps.resolveHost } : {};
      const dispatcher = createDispatcher({
        store: deps.store.webhooks,
        accounts: deps.store,
        leads,
        config,
        clock: deps.clock,
        log: deps.log,
        owner: `app-${process.pid}`,
        ...resolveHost,
      });
      service = webhookService({ store: deps.store, leads, dispatcher, config, clock: deps.clock, ...resolveHost });
    }
    return service;
  };
  const who = (ctx: AppAreaContext) => ({ accountId: ctx.state.app.account.id });
  const id = (ctx: AppAreaContext): string => ctx.params['id'] ?? '';

  /** The list page with the create form. */
  async function list(
    ctx: AppAreaContext,
    o: { error?: string; notice?: string; status?: number; form?: URLSearchParams } = {},
  ): Promise<void> {
    const { account } = ctx.state.app;
    const [hooks, scope] = await Promise.all([
      svc().list(who(ctx)),
      webhookScopeFor(deps.store, account, deps.clock()),
    ]);
    const places = deps.releases.current().leads.places();
    const given = o.form ? givenFilters(o.form) : new Map<string, string[]>();
    const capable = scopesWith('webhooks');
    deps.renderPage(ctx, {
      section: 'webhooks',
      title: 'Webhooks',
      status: o.status ?? 200,
      body: html`${message(o.error ?? null)}${message(o.notice ?? null, 'notice')}
<p>A webhook sends the new leads that match its filter to your URL, signed (Standard Webhooks). See the API documentation for verifying signatures.</p>
<section aria-labelledby="wh-list"><h2 id="wh-list">Your webhooks</h2>
${
  hooks.length
    ? html`<div class="table-wrap" role="region" tabindex="0" aria-label="Webhooks table"><table><caption>Webhooks of this account</caption><thead><tr><th scope="col">Description</th><th scope="col">URL</th><th scope="col">Filter</th><th scope="col">Status</th><th scope="col">Created</th></tr></thead><tbody>${hooks.map(
        (w) =>
          html`<tr><td><a href="${APP_BASE}/webhooks/${w.id}">${w.description ?? w.id}</a></td><td><code>${w.url}</code></td><td><code>${w.filter || '(all leads)'}</code></td><td>${statusText(w)}</td><td>${when(w.created_at)}</td></tr>`,
      )}</tbody></table></div>`
    : html`<p>No webhooks yet.</p>`
}</section>
<section aria-labelledby="wh-new"><h2 id="wh-new">Create a webhook</h2>
${
  scope === null
    ? html`<p class="notice">Webhooks need a ${capable.join(', ')} key: the ${account.plan} plan does not include them. The premium plan (or an organisation licence) does; ask your account manager.</p>`
    : html`<form method="post" action="${APP_BASE}/webhooks">${csrfField(ctx)}
<div class="field"><label for="wh-url">Your endpoint's address (https://…)</label><input type="url" id="wh-url" name="url" required value="${o.form?.get('url') ?? ''}" aria-describedby="wh-url-hint"><small id="wh-url-hint">A secure address on the public internet that will receive the leads.</small></div>
<div class="field"><label for="wh-desc">Description</label><input id="wh-desc" name="description" maxlength="200" value="${o.form?.get('description') ?? ''}"></div>
<fieldset class="wh-filters"><legend>Which new leads to send (the lead explorer's filters; none set sends every new lead)</legend>${filterPanel(given, places, 'wh')}</fieldset>
<details class="dev"><summary>For developers</summary><p>Deliveries carry the fields of the <code>${scope}</code> scope, signed as Standard Webhooks; the filter is a <code>GET /v1/leads</code> query.</p></details>
<button type="submit">Create webhook</button></form>`
}</section>`,
    });
  }

  /** One webhook: details, actions, delivery log (and a secret shown once). */
  async function detail(
    ctx: AppAreaContext,
    o: { secret?: string; notice?: string; error?: string; status?: number; delivery?: Delivery | null } = {},
  ): Promise<void> {
    let w: PublicWebhook;
    let deliveries: Delivery[];
    try {
      w = await svc().get(id(ctx), who(ctx));
      deliveries = await svc().deliveries(w.id, who(ctx), { limit: '50' });
    } catch (e) {
      if (e instanceof ApiError && e.status === 404) return notFoundPage(ctx, deps.renderPage, 'webhooks', 'webhook');
      throw e;
    }
    const base = `${APP_BASE}/webhooks/${w.id}`;
    if (o.secret) ctx.set('Cache-Control', 'no-store');
    deps.renderPage(ctx, {
      section: 'webhooks',
      title: `Webhook: ${w.description ?? w.id}`,
      status: o.status ?? 200,
      scripts: o.secret ? ['/app/assets/copy-secret.js'] : [],
      body: html`<p><a href="${APP_BASE}/webhooks">All webhooks</a></p><p class="visually-hidden" id="wh-name">webhook ${w.description ?? w.id}</p>
${message(o.error ?? null)}${message(o.notice ?? null, 'notice')}
${
  o.secret
    ? html`<section class="created" aria-labelledby="wh-secret-h"><h2 id="wh-secret-h">Signing secret</h2><p><strong>Copy it now: this is the only time it is shown.</strong></p><div class="secret"><label for="wh-secret">Secret</label><input id="wh-secret" readonly value="${o.secret}"><button type="button" data-copy="wh-secret">Copy</button><span role="status" data-copy-status></span></div></section>`
    : ''
}
<dl class="facts"><dt>Id</dt><dd><code>${w.id}</code></dd><dt>URL</dt><dd><code>${w.url}</code></dd><dt>Filter</dt><dd><code>${w.filter || '(all leads)'}</code></dd><dt>Scope</dt><dd>${w.scope}</dd><dt>Status</dt><dd>${statusText(w)}</dd>${
        w.access.detail ? html`<dt>Why held</dt><dd>${w.access.detail}</dd>` : ''
      }<dt>Secret rotated</dt><dd>${when(w.secret_rotated_at)}${w.previous_secret_expires_at ? html` (previous secret signs too until ${when(w.previous_secret_expires_at)})` : ''}</dd><dt>Created</dt><dd>${when(w.created_at)}</dd></dl>
<div class="actions">${actionButton(ctx, `${base}/test`, 'Send a test delivery', { describedBy: 'wh-name' })}${
        w.status === 'active'
          ? actionButton(ctx, `${base}/disable`, 'Disable', { describedBy: 'wh-name' })
          : actionButton(ctx, `${base}/enable`, 'Enable', { describedBy: 'wh-name' })
      }${actionButton(ctx, `${base}/rotate-secret`, 'Rotate the secret', { describedBy: 'wh-name' })}${
        deliveries.some((d) => d.status === 'dead')
          ? actionButton(ctx, `${base}/replay`, 'Replay dead deliveries', { describedBy: 'wh-name' })
          : ''
      }${actionButton(ctx, `${base}/delete`, 'Delete', { danger: true, describedBy: 'wh-name' })}</div>
${o.delivery ? deliveryAttempts(o.delivery, await deps.store.webhooks.listAttempts(o.delivery.id)) : ''}
<section aria-labelledby="wh-log"><h2 id="wh-log">Delivery log</h2>${
        deliveries.length
          ? html`<div class="table-wrap" role="region" tabindex="0" aria-label="Delivery log table"><table><caption>The last ${deliveries.length} deliveries, newest first</caption><thead><tr><th scope="col">Delivery</th><th scope="col">Type</th><th scope="col">Leads</th><th scope="col">Status</th><th scope="col">Attempts</th><th scope="col">Last answer</th><th scope="col">Created</th></tr></thead><tbody>${deliveries.map(
              (d) =>
                html`<tr><td><a href="${base}/deliveries/${d.id}"><code>${d.id}</code></a></td><td>${d.type}</td><td>${d.lead_count}</td><td>${d.status}${d.dead_reason ? html` <small>${withoutOperatorSettings(d.dead_reason)}</small>` : ''}</td><td>${d.attempts}</td><td>${
                  d.last_status_code ?? (d.last_error ? withoutOperatorSettings(d.last_error) : '—')
                }</td><td>${when(d.created_at)}</td></tr>`,
            )}</tbody></table></div>`
          : html`<p>No deliveries yet. Send a test delivery to check your endpoint.</p>`
      }</section>`,
    });
  }

  // a query string fills the create form in (a saved search's "Turn into a webhook": its filters and name)
  router.get('/webhooks', (ctx) => {
    const q = new URLSearchParams(ctx.querystring);
    const deleted = q.get('deleted');
    // after a delete (Post/Redirect/Get): what happened, not a form
    if (deleted !== null) return list(ctx, { notice: `Webhook ${deleted} deleted.` });
    return list(ctx, ctx.querystring ? { form: q } : {});
  });

  router.post('/webhooks', async (ctx) => {
    const { account } = ctx.state.app;
    const form = await formBody(ctx);
    const scope = await webhookScopeFor(deps.store, account, deps.clock());
    if (!scope) return list(ctx, { error: `Webhooks are not included in the ${account.plan} plan.`, status: 403 });
    try {
      const description = (form.get('description') ?? '').trim();
      const { webhook, secret } = await svc().create({
        accountId: account.id,
        scope,
        url: form.get('url') ?? '',
        filter: filterQueryString(givenFilters(form)),
        description: description === '' ? null : description,
      });
      await deps.recordActivity(ctx, 'webhook_created', { webhook_id: webhook.id });
      ctx.status = 201;
      ctx.params['id'] = webhook.id;
      await detail(ctx, {
        secret,
        status: 201,
        notice: 'Webhook created. Send a test delivery to check your endpoint.',
      });
    } catch (e) {
      if (!(e instanceof ApiError) || !e.expose) throw e;
      await list(ctx, { error: webhookProblemText(e), status: e.status, form });
    }
  });

  // after an action (Post/Redirect/Get): what happened, from the query the redirect carries
  router.get('/webhooks/:id', async (ctx) => {
    const done = typeof ctx.query['done'] === 'string' ? ctx.query['done'] : '';
    let notice = DONE_NOTICES[done];
    if (done === 'tested' && typeof ctx.query['delivery'] === 'string') {
      const d = await deps.store.webhooks.getDelivery(ctx.query['delivery']);
      if (d && d.webhook_id === id(ctx)) notice = testNotice(d); // detail() checks the webhook is this account's
    }
    const count = Number(ctx.query['count']);
    if (done === 'replayed' && Number.isInteger(count) && count >= 0) notice = `${count} dead deliveries queued again.`;
    await detail(ctx, notice ? { notice } : {});
  });

  router.get('/webhooks/:id/deliveries/:delivery', async (ctx) => {
    const d = await deps.store.webhooks.getDelivery(ctx.params['delivery'] ?? '');
    const w = await deps.store.webhooks.getWebhook(id(ctx));
    // the delivery must belong to this webhook, and the webhook to this account
    if (!d || !w || d.webhook_id !== w.id || w.account_id !== ctx.state.app.account.id)
      return notFoundPage(ctx, deps.renderPage, 'webhooks', 'delivery');
    await detail(ctx, { delivery: d });
  });

  /** A state-changing action on one webhook: 404 page when it is not this account's. */
  /**
   * A state-changing action on one webhook: 404 page when it is not this account's. Done, it
   * redirects (303) to the webhook's page — or the list after a delete — with what happened in the
   * query, so a reload does not post again; a new signing secret is shown on the answer itself,
   * once, never put in a URL.
   */
  const act = (
    path: string,
    run: (ctx: AppAreaContext) => Promise<{ done?: string; secret?: string; notice?: string; gone?: true }>,
  ) =>
    router.post(`/webhooks/:id/${path}`, async (ctx) => {
      await formBody(ctx);
      let r;
      try {
        r = await run(ctx);
      } catch (e) {
        if (e instanceof ApiError && e.status === 404) return notFoundPage(ctx, deps.renderPage, 'webhooks', 'webhook');
        if (!(e instanceof ApiError) || !e.expose) throw e;
        return detail(ctx, { error: withoutOperatorSettings(e.message), status: e.status });
      }
      if (r.secret) return detail(ctx, r);
      ctx.redirect(
        r.gone
          ? `${APP_BASE}/webhooks?deleted=${encodeURIComponent(id(ctx))}`
          : `${APP_BASE}/webhooks/${encodeURIComponent(id(ctx))}?${r.done ?? ''}`,
      );
      ctx.status = 303;
    });

  act('test', async (ctx) => {
    const d = await svc().test(id(ctx), who(ctx));
    return { done: `done=tested&delivery=${encodeURIComponent(d.id)}` };
  });
  for (const [path, status] of [
    ['disable', 'disabled'],
    ['enable', 'active'],
  ] as const) {
    act(path, async (ctx) => {
      const w = await svc().setStatus(id(ctx), who(ctx), status);
      await deps.recordActivity(ctx, 'webhook_changed', { webhook_id: w.id, status });
      return { done: `done=${path}d` };
    });
  }
  act('rotate-secret', async (ctx) => {
    const { webhook, secret } = await svc().rotateSecret(id(ctx), who(ctx));
    await deps.recordActivity(ctx, 'webhook_secret_rotated', { webhook_id: webhook.id });
    return {
      secret,
      notice: `New secret made; the previous one keeps signing until ${when(webhook.previous_secret_expires_at)} so you can switch over.`,
    };
  });
  act('replay', async (ctx) => {
    const ids = await svc().replay(id(ctx), who(ctx));
    await deps.recordActivity(ctx, 'webhook_changed', { webhook_id: id(ctx), replayed: ids.length });
    return { done: `done=replayed&count=${ids.length}` };
  });
  act('delete', async (ctx) => {
    await svc().get(id(ctx), who(ctx)); // 404 unless it is this account's
    if (!(await deps.store.webhooks.deleteWebhook(id(ctx)))) throw notFound(`webhook ${id(ctx)}`);
    await deps.recordActivity(ctx, 'webhook_deleted', { webhook_id: id(ctx) });
    return { gone: true };
  });

  return router;
}

/** What the webhook's page says after an action's redirect (`?done=…`; a test delivery's is `testNotice`). */
const DONE_NOTICES: Readonly<Record<string, string>> = {
  disabled: 'Webhook disabled: nothing is sent until you enable it.',
  enabled: 'Webhook enabled.',
};

/** What a test delivery came to, in the customer's words. */
function testNotice(d: Delivery): string {
  const outcome =
    d.status === 'delivered'
      ? `delivered (your endpoint answered ${d.last_status_code})`
      : d.status === 'suspended'
        ? `held: ${d.suspended_reason ?? 'the account holds no key that may receive webhooks'}`
        : `not delivered yet (${d.last_status_code ?? (d.last_error ? withoutOperatorSettings(d.last_error) : d.status)}); it is retried`;
  return `Test delivery ${d.id}: ${outcome}.`;
}

/** An error as one line: each bad parameter with its reason, or the detail. */
/**
 * A refused webhook in the customer's words: the destination's rules without the operator's
 * settings (an allow-list is the operator's business, not the customer's), filters by their
 * panel labels.
 */
/** An error text of the webhook machinery without the operator's setting (delivery log, test results). */
export const withoutOperatorSettings = (t: string): string =>
  t
    .replace(
      /[;,]?\s*(only public destinations are allowed )?unless the operator lists the host in WEBHOOK_ALLOW_HOSTS/g,
      '; only addresses on the public internet are allowed',
    )
    .replace(/\s*\((add the host to |http only for hosts in )?WEBHOOK_ALLOW_HOSTS[^)]*\)/g, '')
    .replace(/[;,]\s*add it to WEBHOOK_ALLOW_HOSTS to allow it/g, '')
    .replace(/WEBHOOK_ALLOW_HOSTS/g, 'our allow-list');

export function webhookProblemText(e: ApiError): string {
  const reasons = (e.errors ?? []).map((r) => {
    if (r.name !== 'url') return `${filterWords(r.name)} — ${r.reason}`;
    if (/private or loopback|private network|loopback/i.test(r.reason))
      return 'The address — it points into a private network. Webhooks are sent only to addresses on the public internet; if your endpoint is inside your own network, ask us about it.';
    if (/https/i.test(r.reason)) return 'The address — it must start with https:// (a secure connection).';
    return `The address — ${r.reason.replace(/\s*\([^)]*WEBHOOK_ALLOW_HOSTS[^)]*\)/g, '').replace(/WEBHOOK_ALLOW_HOSTS/g, 'our allow-list')}`;
  });
  return reasons.length
    ? `Please check: ${reasons.join('; ')}.`
    : e.message.replace(/WEBHOOK_ALLOW_HOSTS/g, 'our allow-list');
}

export function problemText(e: ApiError): string {
  return e.errors?.length ? e.errors.map((r) => `${r.name}: ${r.reason}`).join('; ') : e.message;
}

function statusText(w: PublicWebhook): string {
  if (w.status === 'disabled') return 'disabled';
  return w.access.state === 'suspended' ? 'active, held (no key may receive it)' : 'active';
}

function deliveryAttempts(d: Delivery, attempts: Awaited<ReturnType<StateStore['webhooks']['listAttempts']>>) {
  return html`<section aria-labelledby="wh-attempts"><h2 id="wh-attempts">Delivery <code>${d.id}</code></h2><p>${d.type}, ${d.lead_count} leads, ${d.status}.</p>${
    attempts.length
      ? html`<div class="table-wrap" role="region" tabindex="0" aria-label="Attempts table"><table><caption>Attempts of this delivery</caption><thead><tr><th scope="col">#</th><th scope="col">Started</th><th scope="col">Answer</th><th scope="col">Time</th><th scope="col">Outcome</th></tr></thead><tbody>${attempts.map(
          (a) =>
            html`<tr><td>${a.attempt_no}</td><td>${when(a.started_at)}</td><td>${a.status_code ?? (a.error ? withoutOperatorSettings(a.error) : '—')}</td><td>${a.latency_ms === null ? '—' : `${a.latency_ms} ms`}</td><td>${a.outcome}</td></tr>`,
        )}</tbody></table></div>`
      : html`<p>No attempt yet.</p>`
  }</section>`;
}
