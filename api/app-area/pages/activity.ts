/**
 * /app/activity — the account's activity log, newest first, 50 per page (the session layer
 * writes sign-ins, credentials and invitations; the pages write key created / revoked and
 * webhook created / changed / secret rotated / deleted). Read from `store.app.listActivity`.
 */
import Router from '@koa/router';
import type { StateStore } from '../../state/store-interface.ts';
import type { AppAreaState, RenderPage } from '../contract.ts';
import { html } from '../html.ts';
import { APP_BASE, when } from './common.ts';

export interface ActivityPageDeps {
  store: Pick<StateStore, 'app'>;
  renderPage: RenderPage;
}

export const ACTIVITY_PAGE_SIZE = 50;

export function activityPage(_config: unknown, deps: ActivityPageDeps): Router<AppAreaState> {
  const router = new Router<AppAreaState>({ prefix: APP_BASE });
  router.get('/activity', async (ctx) => {
    const before = /^\d{1,15}$/.test(String(ctx.query['before'] ?? '')) ? Number(ctx.query['before']) : undefined;
    const entries = await deps.store.app.listActivity(ctx.state.app.account.id, {
      limit: ACTIVITY_PAGE_SIZE + 1,
      ...(before !== undefined ? { beforeId: before } : {}),
    });
    const shown = entries.slice(0, ACTIVITY_PAGE_SIZE);
    const more = entries.length > ACTIVITY_PAGE_SIZE;
    deps.renderPage(ctx, {
      section: 'activity',
      title: 'Account activity',
      body: html`${
        shown.length
          ? html`<div class="table-wrap" role="region" tabindex="0" aria-label="Activity log table"><table><caption>Sign-ins, keys and webhooks, newest first</caption><thead><tr><th scope="col">When</th><th scope="col">What</th><th scope="col">Details</th><th scope="col">From</th></tr></thead><tbody>${shown.map(
              (e) =>
                html`<tr><td>${when(e.at)}</td><td>${e.event.replace(/_/g, ' ')}</td><td>${Object.entries(e.details)
                  .map(([k, v]) => `${k.replace(/_/g, ' ')}: ${v ?? '—'}`)
                  .join(', ')}</td><td>${e.address ?? (e.session_id ? 'this app' : 'operator')}</td></tr>`,
            )}</tbody></table></div>`
          : html`<p>No activity yet.</p>`
      }
${more ? html`<nav aria-label="Older activity"><a href="${APP_BASE}/activity?before=${shown.at(-1)!.id}">Older entries</a></nav>` : ''}`,
    });
  });
  return router;
}
