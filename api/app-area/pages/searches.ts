/**
 * /app/searches — saved searches and their e-mail alerts (issue 32; docs/app.md "Saved searches
 * and alerts"):
 *
 *   - `GET /app/searches/new?query=<explorer query string>`: the explorer links here ("Save this
 *     search"); the form shows the search in plain words and asks for a name, an alert frequency
 *     (none, daily, weekly) and the address alerts go to. The query is checked by the `/v1/leads`
 *     parser (api/alerts/saved-search.ts), so a saved search never holds a filter the API refuses.
 *   - `POST /app/searches` saves it and answers 303 to `/app/searches?focus=<id>#search-<id>`.
 *   - `GET /app/searches`: the list — each search in words, a link back to
 *     `/app/explorer?<query>`, rename, change the alert, "Turn into a webhook" (the webhook form
 *     with the search's filters filled in) and delete; every action answers 303 back to the list
 *     with the search focused.
 *   - `GET|POST /app/alerts/unsubscribe/<token>` (`unsubscribeRouter`, mounted by the session layer
 *     before sign-in): the alert e-mail's unsubscribe link — a confirm page, and the POST that turns
 *     the alert off (also RFC 8058 one-click from the mail client). The signed token is the only
 *     credential (api/alerts/unsubscribe-token.ts).
 *
 * Alerts are sent by `leads alerts send` (api/alerts/sender.ts), with the access of the account at
 * send time. Another account's search id answers 404. The alert address is shown to the account
 * only and never written to the activity log.
 */
import Router from '@koa/router';
import { randomBytes } from 'node:crypto';
import type { ApiConfig } from '../../config.ts';
import { ApiError } from '../../http/errors.ts';
import type { ReleaseManager } from '../../releases/release.ts';
import type { StateStore } from '../../state/store-interface.ts';
import { ALERT_FREQUENCIES, type AlertFrequency, type SavedSearch } from '../../state/search-store.ts';
import { describeSearch, parseSearchQuery, type ParsedSearch } from '../../alerts/saved-search.ts';
import { newUnsubscribeKey, tokenSearchId, tokenValid } from '../../alerts/unsubscribe-token.ts';
import { alertAccess } from '../../alerts/alert-access.ts';
import { serverLeadReader } from '../../webhooks/lead-reader.ts';
import type { ApiDb } from '../../duckdb/db.ts';
import type { AppAreaContext, AppAreaState, RecordActivity, RenderPage, SafeHtml } from '../contract.ts';
import { html } from '../html.ts';
import { renderPublicPage } from '../layout.ts';
import { logActivity } from '../activity.ts';
import { APP_BASE, actionButton, csrfField, formBody, message, notFoundPage, pinRelease, when } from './common.ts';
import { problemText } from './webhooks.ts';

export interface SearchesPageDeps {
  store: StateStore;
  db: ApiDb;
  releases: ReleaseManager;
  clock: () => Date;
  renderPage: RenderPage;
  recordActivity: RecordActivity;
}

/** Most saved searches an account may keep. */
export const SEARCHES_MAX = 100;
/** Longest search name. */
export const SEARCH_NAME_MAX = 100;

const FREQUENCY_WORDS: Record<AlertFrequency, string> = {
  none: 'No e-mail',
  daily: 'Daily e-mail of new leads',
  weekly: 'Weekly e-mail of new leads',
};
const EMAIL = /^[^\s@<>(),;:"]+@[^\s@<>(),;:"]+\.[^\s@<>(),;:"]+$/;

/** A refusal of a form field, shown beside the form (400). */
const refuse = (text: string): ApiError => new ApiError(400, 'invalid_parameter', text);

/** A name, trimmed, without control characters (it becomes an e-mail subject). */
function nameOf(v: string | null): string {
  const name = (v ?? '').replace(/[\u0000-\u001f\u007f]+/g, ' ').trim();
  if (name === '') throw refuse('Give the search a name.');
  if (name.length > SEARCH_NAME_MAX) throw refuse(`The name may have at most ${SEARCH_NAME_MAX} characters.`);
  return name;
}

/** The alert's frequency and address from a form (an address is needed unless the frequency is none). */
function alertOf(form: URLSearchParams): { frequency: AlertFrequency; email: string | null } {
  const f = form.get('frequency') ?? 'none';
  if (!(ALERT_FREQUENCIES as readonly string[]).includes(f)) throw refuse('Choose how often to be e-mailed.');
  const email = (form.get('email') ?? '').trim();
  if (email !== '' && (email.length > 254 || !EMAIL.test(email)))
    throw refuse('The e-mail address does not look right (name@example.ie).');
  if (f !== 'none' && email === '') throw refuse('Give the e-mail address the alert should go to.');
  return { frequency: f as AlertFrequency, email: email === '' ? null : email };
}

/** The search in plain words, as a definition list. */
function inWords(s: Pick<ParsedSearch, 'filters' | 'sort'>): SafeHtml {
  const d = describeSearch(s);
  return d.length
    ? html`<dl class="facts">${d.map(([k, v]) => html`<dt>${k}</dt><dd>${v}</dd>`)}</dl>`
    : html`<p>All leads (no filter).</p>`;
}

/** The fields of an alert (frequency radios and the address). */
function alertFields(prefix: string, frequency: AlertFrequency, email: string | null): SafeHtml {
  return html`<fieldset><legend>E-mail alert</legend>${ALERT_FREQUENCIES.map(
    (f) =>
      html`<div class="choice"><input type="radio" name="frequency" id="${prefix}-freq-${f}" value="${f}"${f === frequency ? html` checked` : ''}><label for="${prefix}-freq-${f}">${FREQUENCY_WORDS[f]}</label></div>`,
  )}<div class="field"><label for="${prefix}-email">Send alerts to (e-mail address)</label><input type="email" id="${prefix}-email" name="email" autocomplete="email" maxlength="254" value="${email ?? ''}" aria-describedby="${prefix}-email-hint"><small id="${prefix}-email-hint">Needed for a daily or weekly alert. An alert lists the leads that are new (or changed stage) since the last one; every e-mail has a link to stop it.</small></div></fieldset>`;
}

/** What the saved-search pages share: config, deps and the lead reader of the alerts' watermarks. */
interface SearchesEnv {
  config: ApiConfig;
  deps: SearchesPageDeps;
  reader: ReturnType<typeof serverLeadReader>;
}

/** A change to one saved search: it answers the `done` word of the redirect. */
type SearchAction = (env: SearchesEnv, ctx: AppAreaContext, s: SavedSearch, form: URLSearchParams) => Promise<string>;

/** The changes to one saved search (`POST /app/searches/{id}/{path}`), in the order they are mounted. */
const SEARCH_ACTIONS: readonly [string, SearchAction][] = [
  ['rename', renameSearch],
  ['alert', changeAlert],
  ['delete', deleteSearch],
];

/** What the list says after a change's redirect (`?done=…`). */
const SEARCH_DONE_NOTICES: Readonly<Record<string, string>> = {
  saved: 'Search saved.',
  renamed: 'Search renamed.',
  alert: 'Alert changed.',
  deleted: 'Search deleted.',
};

/** /app/searches: save a search, the list, and each search's changes. */
export function searchesPage(config: ApiConfig, deps: SearchesPageDeps): Router<AppAreaState> {
  const router = new Router<AppAreaState>({ prefix: APP_BASE });
  const env: SearchesEnv = { config, deps, reader: serverLeadReader(deps.db, deps.releases) };
  router.get('/searches/new', (ctx) => newForm(env, ctx, String(ctx.query['query'] ?? '')));
  router.post('/searches', (ctx) => saveSearch(env, ctx));
  router.get('/searches', (ctx) => listSearches(env, ctx));
  for (const [path, run] of SEARCH_ACTIONS) router.post(`/searches/:id/${path}`, (ctx) => act(env, ctx, run));
  return router;
}

/** A query parser against the place names of the release this request pinned (503 `no_release` before the first). */
function parserFor(env: SearchesEnv, ctx: AppAreaContext): (query: string) => ParsedSearch {
  const places = pinRelease(ctx, env.deps.releases).leads.places();
  return (query) => parseSearchQuery(query, places, env.config);
}

/** The saved search of the path's id when it is this account's, else null. */
async function own(env: SearchesEnv, ctx: AppAreaContext): Promise<SavedSearch | null> {
  const s = await env.deps.store.searches.getSearch(ctx.params['id'] ?? '');
  return s && s.account_id === ctx.state.app.account.id ? s : null;
}

/** Where a new or re-enabled alert starts: the current release's highest ids (only later leads are sent). */
async function watermarks(env: SearchesEnv): Promise<{ leadId: number; eventId: number }> {
  const snap = await env.reader.snapshot();
  return { leadId: snap?.maxLeadId ?? 0, eventId: snap?.maxEventId ?? 0 };
}

/** A note when alerts could not be sent now: they go out only while a key of the account grants access (as webhooks). */
async function accessNote(env: SearchesEnv, ctx: AppAreaContext): Promise<SafeHtml> {
  const { account } = ctx.state.app;
  const a = alertAccess(account, await env.deps.store.listKeys(account.id), env.deps.clock());
  return a.scope
    ? html``
    : html`<p class="notice" role="note">Alert e-mails are sent only while the account holds an API key that works — as the API would read the leads with it. It holds none now (revoked, expired or not in the ${account.plan} plan), so no alert is sent until you <a href="${APP_BASE}/keys">create a key</a>.</p>`;
}

/** 303 to the list, focused on the search `id` (none after a delete), saying what was `done`. */
function back(ctx: AppAreaContext, id: string | null, done: string): void {
  ctx.redirect(`${APP_BASE}/searches?${id ? `focus=${id}&` : ''}done=${done}${id ? `#search-${id}` : ''}`);
  ctx.status = 303;
}

/** The new-search form (also re-shown with an error). */
async function newForm(
  env: SearchesEnv,
  ctx: AppAreaContext,
  query: string,
  o: { error?: string; status?: number; form?: URLSearchParams } = {},
): Promise<void> {
  const note = await accessNote(env, ctx);
  let parsed: ParsedSearch | null = null;
  let error = o.error ?? null;
  const parse = parserFor(env, ctx);
  try {
    parsed = parse(query);
  } catch (e) {
    if (!(e instanceof ApiError) || !e.expose) throw e;
    error = `This search cannot be saved: ${problemText(e)}`;
  }
  const status = parsed ? (o.status ?? 200) : 400;
  const suggested = parsed
    ? describeSearch(parsed)
        .map(([, v]) => v)
        .join(', ')
        .slice(0, 80)
    : '';
  env.deps.renderPage(ctx, {
    section: 'searches',
    title: 'Save a search',
    status,
    body: html`${message(error)}${parsed ? note : ''}
${
  parsed
    ? html`<section aria-labelledby="ns-what"><h2 id="ns-what">What the search finds</h2>${inWords(parsed)}<p><a href="${APP_BASE}/explorer${parsed.query ? `?${parsed.query}` : ''}">Back to these results in the explorer</a></p></section>
<form method="post" action="${APP_BASE}/searches">${csrfField(ctx)}<input type="hidden" name="query" value="${parsed.query}">
<div class="field"><label for="ns-name">Name</label><input id="ns-name" name="name" required maxlength="${SEARCH_NAME_MAX}" value="${o.form?.get('name') ?? (suggested || 'All leads')}"></div>
${alertFields('ns', ((o.form?.get('frequency') as AlertFrequency) ?? 'weekly') as AlertFrequency, o.form?.get('email') ?? null)}
<button type="submit">Save search</button></form>`
    : html`<p><a href="${APP_BASE}/explorer">Go to the lead explorer</a> to build a search.</p>`
}`,
  });
}

/** `POST /app/searches`: save the search (at most `SEARCHES_MAX`), its alert starting from now. */
async function saveSearch(env: SearchesEnv, ctx: AppAreaContext): Promise<void> {
  const { account } = ctx.state.app;
  const form = await formBody(ctx);
  const query = form.get('query') ?? '';
  try {
    const parsed = parserFor(env, ctx)(query);
    const name = nameOf(form.get('name'));
    const alert = alertOf(form);
    if ((await env.deps.store.searches.listSearches(account.id)).length >= SEARCHES_MAX)
      throw new ApiError(
        409,
        'search_limit',
        `You already keep ${SEARCHES_MAX} saved searches, the most an account may keep. Delete one you no longer use first.`,
      );
    const w = await watermarks(env);
    const s = await env.deps.store.searches.createSearch({
      id: `ss_${randomBytes(12).toString('hex')}`,
      account_id: account.id,
      name,
      query: parsed.query,
      frequency: alert.frequency,
      email: alert.email,
      unsubscribe_key: newUnsubscribeKey(),
      watermark_lead_id: w.leadId,
      watermark_event_id: w.eventId,
    });
    await env.deps.recordActivity(ctx, 'search_saved', { search_id: s.id, alert: s.frequency });
    back(ctx, s.id, 'saved');
  } catch (e) {
    if (!(e instanceof ApiError) || !e.expose) throw e;
    await newForm(env, ctx, query, { error: problemText(e), status: e.status, form });
  }
}

/** `GET /app/searches`: the account's saved searches. */
async function listSearches(env: SearchesEnv, ctx: AppAreaContext): Promise<void> {
  const list = await env.deps.store.searches.listSearches(ctx.state.app.account.id);
  const parse = parserFor(env, ctx);
  const focus = String(ctx.query['focus'] ?? '');
  const done = String(ctx.query['done'] ?? '');
  const note = list.some((s) => s.frequency !== 'none') ? await accessNote(env, ctx) : html``;
  env.deps.renderPage(ctx, {
    section: 'searches',
    title: 'Saved searches',
    body: html`${message(SEARCH_DONE_NOTICES[done] ?? null, 'notice')}${note}
<p>Save a search from the <a href="${APP_BASE}/explorer">lead explorer</a> ("Save this search") to come back to it, and choose a daily or weekly e-mail of the leads that are new since the last one.</p>
${list.length ? list.map((s) => searchItem(ctx, s, parse, focus)) : html`<p>No saved searches yet.</p>`}`,
  });
}

/** One saved search in the list: in words, its alert, links, rename / alert forms and delete. */
function searchItem(
  ctx: AppAreaContext,
  s: SavedSearch,
  parse: (query: string) => ParsedSearch,
  focus: string,
): SafeHtml {
  let parsed: ParsedSearch | null = null;
  try {
    parsed = parse(s.query);
  } catch {
    // a value the current release no longer has (an authority renamed): shown as stored
  }
  const hid = `search-${s.id}`;
  const explorer = `${APP_BASE}/explorer${s.query ? `?${s.query}` : ''}`;
  const hook = new URLSearchParams(parsed ? s.query.replace(/(^|&)sort=[^&]*/, '') : '');
  hook.set('description', s.name);
  return html`<section id="${hid}" class="saved-search" tabindex="-1" aria-labelledby="${hid}-h"${s.id === focus ? html` aria-current="true"` : ''}><h2 id="${hid}-h">${s.name}</h2>
${parsed ? inWords(parsed) : html`<p><code>${s.query}</code> (a value the current data release no longer has)</p>`}
<p>${FREQUENCY_WORDS[s.frequency]}${s.frequency !== 'none' && s.email ? html` to ${s.email}` : ''}${
    s.last_sent_at ? html`; last sent ${when(s.last_sent_at)}` : ''
  }. Saved ${when(s.created_at)}.</p>
<p><a href="${explorer}">Open in the explorer</a> · <a href="${APP_BASE}/webhooks?${hook.toString()}#wh-new">Turn into a webhook</a></p>
<details><summary>Rename or change the alert<span class="visually-hidden"> of ${s.name}</span></summary>
<form method="post" action="${APP_BASE}/searches/${s.id}/rename">${csrfField(ctx)}<div class="field"><label for="${hid}-name">New name</label><input id="${hid}-name" name="name" required maxlength="${SEARCH_NAME_MAX}" value="${s.name}"></div><button type="submit">Rename</button></form>
<form method="post" action="${APP_BASE}/searches/${s.id}/alert">${csrfField(ctx)}${alertFields(hid, s.frequency, s.email)}<button type="submit">Save alert</button></form>
</details>
<div class="actions">${actionButton(ctx, `${APP_BASE}/searches/${s.id}/delete`, 'Delete', { danger: true, describedBy: `${hid}-h` })}</div>
</section>`;
}

/** A change to one of the account's searches; 404 page for any other id; 303 back to the list. */
async function act(env: SearchesEnv, ctx: AppAreaContext, run: SearchAction): Promise<void> {
  const form = await formBody(ctx);
  const s = await own(env, ctx);
  if (!s) return notFoundPage(ctx, env.deps.renderPage, 'searches', 'saved search');
  try {
    const done = await run(env, ctx, s, form);
    back(ctx, done === 'deleted' ? null : s.id, done);
  } catch (e) {
    if (!(e instanceof ApiError) || !e.expose) throw e;
    env.deps.renderPage(ctx, {
      section: 'searches',
      title: 'Saved searches',
      status: e.status,
      body: html`${message(e.message)}<p><a href="${APP_BASE}/searches#search-${s.id}">Back to your saved searches</a></p>`,
    });
  }
}

/** Rename the search. */
async function renameSearch(
  env: SearchesEnv,
  ctx: AppAreaContext,
  s: SavedSearch,
  form: URLSearchParams,
): Promise<string> {
  await env.deps.store.searches.updateSearch(s.id, s.account_id, { name: nameOf(form.get('name')) });
  await env.deps.recordActivity(ctx, 'search_renamed', { search_id: s.id });
  return 'renamed';
}

/** Change the alert: its frequency and address. */
async function changeAlert(
  env: SearchesEnv,
  ctx: AppAreaContext,
  s: SavedSearch,
  form: URLSearchParams,
): Promise<string> {
  const a = alertOf(form);
  // an alert switched on starts from now: only leads after it are sent
  const restart = s.frequency === 'none' && a.frequency !== 'none' ? { watermarks: await watermarks(env) } : {};
  await env.deps.store.searches.updateSearch(s.id, s.account_id, { ...a, ...restart });
  await env.deps.recordActivity(ctx, 'search_alert_changed', { search_id: s.id, alert: a.frequency });
  return 'alert';
}

/** Delete the search. */
async function deleteSearch(env: SearchesEnv, ctx: AppAreaContext, s: SavedSearch): Promise<string> {
  await env.deps.store.searches.deleteSearch(s.id, s.account_id);
  await env.deps.recordActivity(ctx, 'search_deleted', { search_id: s.id });
  return 'deleted';
}

/** The path of the unsubscribe links (the session layer lets them through without sign-in or CSRF token). */
export const UNSUBSCRIBE_PATH = `${APP_BASE}/alerts/unsubscribe/`;

/**
 * The alert e-mails' unsubscribe link, before sign-in: `GET` a confirm page, `POST` turn the
 * search's alert off (a browser's form, or a mail client's RFC 8058 one-click
 * `List-Unsubscribe=One-Click`). A token that is malformed, forged or of a deleted search gets
 * the same 404 page. The token is the credential, so no CSRF token is asked (a forger would need
 * it); the activity log records the unsubscription without an address.
 */
export function unsubscribeRouter(deps: { store: StateStore }): Router<AppAreaState> {
  const router = new Router<AppAreaState>({ prefix: `${APP_BASE}/alerts/unsubscribe` });
  const find = async (token: string): Promise<SavedSearch | null> => {
    const id = tokenSearchId(token);
    const s = id ? await deps.store.searches.getSearch(id) : null;
    return s && tokenValid(token, s) ? s : null;
  };
  const gone = (ctx: AppAreaContext): void =>
    renderPublicPage(ctx, {
      title: 'Link not valid',
      status: 404,
      body: html`<p>This unsubscribe link is not valid (the saved search may have been deleted, which stops its alerts too).</p><p><a href="${APP_BASE}/searches">Manage your saved searches</a> (sign-in needed)</p>`,
    });
  router.get('/:token', async (ctx) => {
    const token = ctx.params['token'] ?? '';
    const s = await find(token);
    if (!s) return gone(ctx);
    renderPublicPage(ctx, {
      title: 'Stop this alert?',
      body:
        s.frequency === 'none'
          ? html`<p>The alert of the saved search <strong>${s.name}</strong> is already off: no more e-mails are sent for it.</p>`
          : html`<p>Stop the ${s.frequency} e-mail of the saved search <strong>${s.name}</strong>? The search stays saved; you can switch the alert on again on your saved searches page.</p>
<form method="post" action="${UNSUBSCRIBE_PATH}${token}"><button type="submit">Stop the alert</button></form>`,
    });
  });
  router.post('/:token', async (ctx) => {
    // (the body — a form's, or RFC 8058's `List-Unsubscribe=One-Click` — carries nothing needed)
    const s = await find(ctx.params['token'] ?? '');
    if (!s) return gone(ctx);
    const was = s.frequency;
    await deps.store.searches.unsubscribe(s.id);
    if (was !== 'none') await logActivity(deps.store.app, ctx, s.account_id, 'alert_unsubscribed', { search_id: s.id });
    renderPublicPage(ctx, {
      title: 'Alert stopped',
      body: html`<p role="status">No more e-mails will be sent for the saved search <strong>${s.name}</strong>. The search itself is kept.</p>`,
    });
  });
  return router;
}
