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
import type { AppAccount, AppAreaContext, AppAreaState, RecordActivity, RenderPage, SafeHtml } from '../contract.ts';
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

/** The webhook service of the app's pages, made on first use (with its own dispatcher for test deliveries). */
function lazyWebhookService(config: ApiConfig, deps: WebhooksPageDeps): () => WebhookService {
  let service: WebhookService | null = null;
  return () => {
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
}

type WebhookService = ReturnType<typeof webhookService>;

/** What the page's handlers share: its deps and the webhook service. */
interface WebhooksEnv {
  deps: WebhooksPageDeps;
  svc: () => WebhookService;
}

/** What an action did: where its redirect goes (`done`, or the list when `gone`), or a secret to show once. */
type ActionResult = { done?: string; secret?: string; notice?: string; gone?: true };

/** The state-changing actions on one webhook (`POST /app/webhooks/{id}/{path}`), in the order they are mounted. */
const WEBHOOK_ACTIONS: readonly [string, (env: WebhooksEnv, ctx: AppAreaContext) => Promise<ActionResult>][] = [
  ['test', sendTest],
  ['disable', (env, ctx) => setStatus(env, ctx, 'disable', 'disabled')],
  ['enable', (env, ctx) => setStatus(env, ctx, 'enable', 'active')],
  ['rotate-secret', rotateSecret],
  ['replay', replayDead],
  ['delete', deleteWebhook],
];

/** The /app/webhooks pages and their actions. */
export function webhooksPage(config: ApiConfig, deps: WebhooksPageDeps): Router<AppAreaState> {
  const router = new Router<AppAreaState>({ prefix: APP_BASE });
  const env: WebhooksEnv = { deps, svc: lazyWebhookService(config, deps) };
  router.get('/webhooks', (ctx) => showList(env, ctx));
  router.post('/webhooks', (ctx) => createWebhook(env, ctx));
  router.get('/webhooks/:id', (ctx) => showWebhook(env, ctx));
  router.get('/webhooks/:id/deliveries/:delivery', (ctx) => showDelivery(env, ctx));
  for (const [path, run] of WEBHOOK_ACTIONS) router.post(`/webhooks/:id/${path}`, (ctx) => act(env, ctx, run));
  return router;
}

const who = (ctx: AppAreaContext) => ({ accountId: ctx.state.app.account.id });
const id = (ctx: AppAreaContext): string => ctx.params['id'] ?? '';

/** The list page with the create form. */
async function listPage(
  env: WebhooksEnv,
  ctx: AppAreaContext,
  o: { error?: string; notice?: string; status?: number; form?: URLSearchParams } = {},
): Promise<void> {
  const { account } = ctx.state.app;
  const [hooks, scope] = await Promise.all([
    env.svc().list(who(ctx)),
    webhookScopeFor(env.deps.store, account, env.deps.clock()),
  ]);
  env.deps.renderPage(ctx, {
    section: 'webhooks',
    title: 'Webhooks',
    status: o.status ?? 200,
    body: html`${message(o.error ?? null)}${message(o.notice ?? null, 'notice')}
<p>A webhook sends the new leads that match its filter to your URL, signed (Standard Webhooks). See the API documentation for verifying signatures.</p>
<section aria-labelledby="wh-list"><h2 id="wh-list">Your webhooks</h2>
${webhooksTable(hooks)}</section>
<section aria-labelledby="wh-new"><h2 id="wh-new">Create a webhook</h2>
${createForm(env, ctx, scope, o.form)}</section>`,
  });
}

/** The account's webhooks as a table, or "No webhooks yet". */
function webhooksTable(hooks: readonly PublicWebhook[]): SafeHtml {
  return hooks.length
    ? html`<div class="table-wrap" role="region" tabindex="0" aria-label="Webhooks table"><table><caption>Webhooks of this account</caption><thead><tr><th scope="col">Description</th><th scope="col">URL</th><th scope="col">Filter</th><th scope="col">Status</th><th scope="col">Created</th></tr></thead><tbody>${hooks.map(
        (w) =>
          html`<tr><td><a href="${APP_BASE}/webhooks/${w.id}">${w.description ?? w.id}</a></td><td><code>${w.url}</code></td><td><code>${w.filter || '(all leads)'}</code></td><td>${statusText(w)}</td><td>${when(w.created_at)}</td></tr>`,
      )}</tbody></table></div>`
    : html`<p>No webhooks yet.</p>`;
}

/** The create form (filled in from `form`), or why the account may not have webhooks. */
function createForm(
  env: WebhooksEnv,
  ctx: AppAreaContext,
  scope: Scope | null,
  form: URLSearchParams | undefined,
): SafeHtml {
  const { account } = ctx.state.app;
  const places = env.deps.releases.current().leads.places();
  const given = form ? givenFilters(form) : new Map<string, string[]>();
  const capable = scopesWith('webhooks');
  return scope === null
    ? html`<p class="notice">Webhooks need a ${capable.join(', ')} key: the ${account.plan} plan does not include them. The premium plan (or an organisation licence) does; ask your account manager.</p>`
    : html`<form method="post" action="${APP_BASE}/webhooks">${csrfField(ctx)}
<div class="field"><label for="wh-url">Your endpoint's address (https://…)</label><input type="url" id="wh-url" name="url" required value="${form?.get('url') ?? ''}" aria-describedby="wh-url-hint"><small id="wh-url-hint">A secure address on the public internet that will receive the leads.</small></div>
<div class="field"><label for="wh-desc">Description</label><input id="wh-desc" name="description" maxlength="200" value="${form?.get('description') ?? ''}"></div>
<fieldset class="wh-filters"><legend>Which new leads to send (the lead explorer's filters; none set sends every new lead)</legend>${filterPanel(given, places, 'wh')}</fieldset>
<details class="dev"><summary>For developers</summary><p>Deliveries carry the fields of the <code>${scope}</code> scope, signed as Standard Webhooks; the filter is a <code>GET /v1/leads</code> query.</p></details>
<button type="submit">Create webhook</button></form>`;
}

/** One webhook: details, actions, delivery log (and a secret shown once). */
async function detailPage(
  env: WebhooksEnv,
  ctx: AppAreaContext,
  o: { secret?: string; notice?: string; error?: string; status?: number; delivery?: Delivery | null } = {},
): Promise<void> {
  let w: PublicWebhook;
  let deliveries: Delivery[];
  try {
    w = await env.svc().get(id(ctx), who(ctx));
    deliveries = await env.svc().deliveries(w.id, who(ctx), { limit: '50' });
  } catch (e) {
    if (e instanceof ApiError && e.status === 404) return notFoundPage(ctx, env.deps.renderPage, 'webhooks', 'webhook');
    throw e;
  }
  const base = `${APP_BASE}/webhooks/${w.id}`;
  if (o.secret) ctx.set('Cache-Control', 'no-store');
  env.deps.renderPage(ctx, {
    section: 'webhooks',
    title: `Webhook: ${w.description ?? w.id}`,
    status: o.status ?? 200,
    scripts: o.secret ? ['/app/assets/copy-secret.js'] : [],
    body: html`<p><a href="${APP_BASE}/webhooks">All webhooks</a></p><p class="visually-hidden" id="wh-name">webhook ${w.description ?? w.id}</p>
${message(o.error ?? null)}${message(o.notice ?? null, 'notice')}
${o.secret ? secretBox(o.secret) : ''}
${webhookFacts(w)}
${webhookActions(ctx, base, w, deliveries)}
${o.delivery ? deliveryAttempts(o.delivery, await env.deps.store.webhooks.listAttempts(o.delivery.id)) : ''}
${deliveryLog(base, deliveries)}`,
  });
}

/** A new signing secret, shown once, with its copy button. */
function secretBox(secret: string): SafeHtml {
  return html`<section class="created" aria-labelledby="wh-secret-h"><h2 id="wh-secret-h">Signing secret</h2><p><strong>Copy it now: this is the only time it is shown.</strong></p><div class="secret"><label for="wh-secret">Secret</label><input id="wh-secret" readonly value="${secret}"><button type="button" data-copy="wh-secret">Copy</button><span role="status" data-copy-status></span></div></section>`;
}

/** The webhook's facts: id, URL, filter, scope, status, secret rotation, creation. */
function webhookFacts(w: PublicWebhook): SafeHtml {
  return html`<dl class="facts"><dt>Id</dt><dd><code>${w.id}</code></dd><dt>URL</dt><dd><code>${w.url}</code></dd><dt>Filter</dt><dd><code>${w.filter || '(all leads)'}</code></dd><dt>Scope</dt><dd>${w.scope}</dd><dt>Status</dt><dd>${statusText(w)}</dd>${
    w.access.detail ? html`<dt>Why held</dt><dd>${w.access.detail}</dd>` : ''
  }<dt>Secret rotated</dt><dd>${when(w.secret_rotated_at)}${w.previous_secret_expires_at ? html` (previous secret signs too until ${when(w.previous_secret_expires_at)})` : ''}</dd><dt>Created</dt><dd>${when(w.created_at)}</dd></dl>`;
}

/** The webhook's action buttons (replay only when a delivery is dead). */
function webhookActions(
  ctx: AppAreaContext,
  base: string,
  w: PublicWebhook,
  deliveries: readonly Delivery[],
): SafeHtml {
  return html`<div class="actions">${actionButton(ctx, `${base}/test`, 'Send a test delivery', { describedBy: 'wh-name' })}${
    w.status === 'active'
      ? actionButton(ctx, `${base}/disable`, 'Disable', { describedBy: 'wh-name' })
      : actionButton(ctx, `${base}/enable`, 'Enable', { describedBy: 'wh-name' })
  }${actionButton(ctx, `${base}/rotate-secret`, 'Rotate the secret', { describedBy: 'wh-name' })}${
    deliveries.some((d) => d.status === 'dead')
      ? actionButton(ctx, `${base}/replay`, 'Replay dead deliveries', { describedBy: 'wh-name' })
      : ''
  }${actionButton(ctx, `${base}/delete`, 'Delete', { danger: true, describedBy: 'wh-name' })}</div>`;
}

/** The delivery log: the last deliveries, newest first, each linked to its attempts. */
function deliveryLog(base: string, deliveries: readonly Delivery[]): SafeHtml {
  return html`<section aria-labelledby="wh-log"><h2 id="wh-log">Delivery log</h2>${
    deliveries.length
      ? html`<div class="table-wrap" role="region" tabindex="0" aria-label="Delivery log table"><table><caption>The last ${deliveries.length} deliveries, newest first</caption><thead><tr><th scope="col">Delivery</th><th scope="col">Type</th><th scope="col">Leads</th><th scope="col">Status</th><th scope="col">Attempts</th><th scope="col">Last answer</th><th scope="col">Created</th></tr></thead><tbody>${deliveries.map(
          (d) =>
            html`<tr><td><a href="${base}/deliveries/${d.id}"><code>${d.id}</code></a></td><td>${d.type}</td><td>${d.lead_count}</td><td>${d.status}${d.dead_reason ? html` <small>${withoutOperatorSettings(d.dead_reason)}</small>` : ''}</td><td>${d.attempts}</td><td>${
              d.last_status_code ?? (d.last_error ? withoutOperatorSettings(d.last_error) : '—')
            }</td><td>${when(d.created_at)}</td></tr>`,
        )}</tbody></table></div>`
      : html`<p>No deliveries yet. Send a test delivery to check your endpoint.</p>`
  }</section>`;
}

/** `GET /app/webhooks`: the list; a query string fills the create form in (a saved search's "Turn into a webhook": its filters and name). */
function showList(env: WebhooksEnv, ctx: AppAreaContext): Promise<void> {
  const q = new URLSearchParams(ctx.querystring);
  const deleted = q.get('deleted');
  // after a delete (Post/Redirect/Get): what happened, not a form
  if (deleted !== null) return listPage(env, ctx, { notice: `Webhook ${deleted} deleted.` });
  return listPage(env, ctx, ctx.querystring ? { form: q } : {});
}

/** `POST /app/webhooks`: create, then the new webhook's page with its secret (201); the form again when refused. */
async function createWebhook(env: WebhooksEnv, ctx: AppAreaContext): Promise<void> {
  const { account } = ctx.state.app;
  const form = await formBody(ctx);
  const scope = await webhookScopeFor(env.deps.store, account, env.deps.clock());
  if (!scope)
    return listPage(env, ctx, { error: `Webhooks are not included in the ${account.plan} plan.`, status: 403 });
  try {
    const description = (form.get('description') ?? '').trim();
    const { webhook, secret } = await env.svc().create({
      accountId: account.id,
      scope,
      url: form.get('url') ?? '',
      filter: filterQueryString(givenFilters(form)),
      description: description === '' ? null : description,
    });
    await env.deps.recordActivity(ctx, 'webhook_created', { webhook_id: webhook.id });
    ctx.status = 201;
    ctx.params['id'] = webhook.id;
    await detailPage(env, ctx, {
      secret,
      status: 201,
      notice: 'Webhook created. Send a test delivery to check your endpoint.',
    });
  } catch (e) {
    if (!(e instanceof ApiError) || !e.expose) throw e;
    await listPage(env, ctx, { error: webhookProblemText(e), status: e.status, form });
  }
}

/** `GET /app/webhooks/{id}`: the webhook's page; after an action (Post/Redirect/Get), what happened, from the query the redirect carries. */
async function showWebhook(env: WebhooksEnv, ctx: AppAreaContext): Promise<void> {
  const done = typeof ctx.query['done'] === 'string' ? ctx.query['done'] : '';
  let notice = DONE_NOTICES[done];
  if (done === 'tested' && typeof ctx.query['delivery'] === 'string') {
    const d = await env.deps.store.webhooks.getDelivery(ctx.query['delivery']);
    if (d && d.webhook_id === id(ctx)) notice = testNotice(d); // detail() checks the webhook is this account's
  }
  const count = Number(ctx.query['count']);
  if (done === 'replayed' && Number.isInteger(count) && count >= 0) notice = `${count} dead deliveries queued again.`;
  await detailPage(env, ctx, notice ? { notice } : {});
}

/** `GET /app/webhooks/{id}/deliveries/{delivery}`: the webhook's page with one delivery's attempts. */
async function showDelivery(env: WebhooksEnv, ctx: AppAreaContext): Promise<void> {
  const d = await env.deps.store.webhooks.getDelivery(ctx.params['delivery'] ?? '');
  const w = await env.deps.store.webhooks.getWebhook(id(ctx));
  // the delivery must belong to this webhook, and the webhook to this account
  if (!d || !w || d.webhook_id !== w.id || w.account_id !== ctx.state.app.account.id)
    return notFoundPage(ctx, env.deps.renderPage, 'webhooks', 'delivery');
  await detailPage(env, ctx, { delivery: d });
}

/**
 * A state-changing action on one webhook: 404 page when it is not this account's. Done, it
 * redirects (303) to the webhook's page — or the list after a delete — with what happened in the
 * query, so a reload does not post again; a new signing secret is shown on the answer itself,
 * once, never put in a URL.
 */
async function act(
  env: WebhooksEnv,
  ctx: AppAreaContext,
  run: (env: WebhooksEnv, ctx: AppAreaContext) => Promise<ActionResult>,
): Promise<void> {
  await formBody(ctx);
  let r;
  try {
    r = await run(env, ctx);
  } catch (e) {
    if (e instanceof ApiError && e.status === 404) return notFoundPage(ctx, env.deps.renderPage, 'webhooks', 'webhook');
    if (!(e instanceof ApiError) || !e.expose) throw e;
    return detailPage(env, ctx, { error: withoutOperatorSettings(e.message), status: e.status });
  }
  if (r.secret) return detailPage(env, ctx, r);
  ctx.redirect(
    r.gone
      ? `${APP_BASE}/webhooks?deleted=${encodeURIComponent(id(ctx))}`
      : `${APP_BASE}/webhooks/${encodeURIComponent(id(ctx))}?${r.done ?? ''}`,
  );
  ctx.status = 303;
}

/** Send a test delivery. */
async function sendTest(env: WebhooksEnv, ctx: AppAreaContext): Promise<ActionResult> {
  const d = await env.svc().test(id(ctx), who(ctx));
  return { done: `done=tested&delivery=${encodeURIComponent(d.id)}` };
}

/** Disable or enable. */
async function setStatus(
  env: WebhooksEnv,
  ctx: AppAreaContext,
  path: 'disable' | 'enable',
  status: 'disabled' | 'active',
): Promise<ActionResult> {
  const w = await env.svc().setStatus(id(ctx), who(ctx), status);
  await env.deps.recordActivity(ctx, 'webhook_changed', { webhook_id: w.id, status });
  return { done: `done=${path}d` };
}

/** A new signing secret, the previous one signing too for a while. */
async function rotateSecret(env: WebhooksEnv, ctx: AppAreaContext): Promise<ActionResult> {
  const { webhook, secret } = await env.svc().rotateSecret(id(ctx), who(ctx));
  await env.deps.recordActivity(ctx, 'webhook_secret_rotated', { webhook_id: webhook.id });
  return {
    secret,
    notice: `New secret made; the previous one keeps signing until ${when(webhook.previous_secret_expires_at)} so you can switch over.`,
  };
}

/** Queue the dead deliveries again. */
async function replayDead(env: WebhooksEnv, ctx: AppAreaContext): Promise<ActionResult> {
  const ids = await env.svc().replay(id(ctx), who(ctx));
  await env.deps.recordActivity(ctx, 'webhook_changed', { webhook_id: id(ctx), replayed: ids.length });
  return { done: `done=replayed&count=${ids.length}` };
}

/** Delete the webhook. */
async function deleteWebhook(env: WebhooksEnv, ctx: AppAreaContext): Promise<ActionResult> {
  await env.svc().get(id(ctx), who(ctx)); // 404 unless it is this account's
  if (!(await env.deps.store.webhooks.deleteWebhook(id(ctx)))) throw notFound(`webhook ${id(ctx)}`);
  await env.deps.recordActivity(ctx, 'webhook_deleted', { webhook_id: id(ctx) });
  return { gone: true };
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

/**
 * A refused webhook in the customer's words: the destination's rules without the operator's
 * settings (an allow-list is the operator's business, not the customer's), filters by their
 * panel labels.
 */
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

/** An error as one line: each bad parameter with its reason, or the detail. */
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
