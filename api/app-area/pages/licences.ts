/**
 * /app/licences — the organisation licences of the account (api/access/licences.ts): scope,
 * seats used of seats, when the licence ends, and the keys claimed under it (with their status:
 * a licensed key expires with its licence). Licences are recorded by the operator; claiming a
 * seat is done with the one-time claim link (/v1/claim).
 */
import Router from '@koa/router';
import type { StateStore } from '../../state/store-interface.ts';
import { accountService } from '../account-service.ts';
import type { AppAreaState, RenderPage } from '../contract.ts';
import { html } from '../html.ts';
import { APP_BASE, when } from './common.ts';

export interface LicencesPageDeps {
  store: StateStore;
  clock: () => Date;
  renderPage: RenderPage;
}

export function licencesPage(_config: unknown, deps: LicencesPageDeps): Router<AppAreaState> {
  const router = new Router<AppAreaState>({ prefix: APP_BASE });
  const svc = accountService(deps);
  router.get('/licences', async (ctx) => {
    const ls = await svc.licences(ctx.state.app.account.id);
    const now = deps.clock().getTime();
    deps.renderPage(ctx, {
      section: 'licences',
      title: 'Organisation licences',
      body: html`<p>An organisation licence gives a number of seats of a feed scope (ent_feed or custom) until its end date. Each seat is claimed with a one-time link from your account manager; the key is made in your browser and never seen by us.</p>
${
  ls.length === 0
    ? html`<p>This account holds no organisation licence.</p>`
    : ls.map(
        ({
          licence: l,
          keys,
        }) => html`<section aria-labelledby="lic-${l.id}"><h2 id="lic-${l.id}">Licence <code>${l.id}</code> (${l.scope})</h2>
<dl class="facts"><dt>Seats used</dt><dd>${l.seats_used} of ${l.seats}</dd><dt>Ends</dt><dd>${when(l.expires_at)}${Date.parse(l.expires_at) <= now ? ' (ended)' : ''}</dd><dt>Recorded</dt><dd>${when(l.created_at)}</dd></dl>
${
  keys.length
    ? html`<div class="table-wrap" role="region" tabindex="0" aria-label="Keys claimed under licence ${l.id}"><table><caption>Keys claimed under licence ${l.id}</caption><thead><tr><th scope="col">Label</th><th scope="col">Prefix</th><th scope="col">Claimed</th><th scope="col">Status</th></tr></thead><tbody>${keys.map(
        (k) =>
          html`<tr><td>${k.name ?? '(no label)'}</td><td><code>${k.display_prefix}…</code></td><td>${when(k.created_at)}</td><td>${k.status}</td></tr>`,
      )}</tbody></table></div>`
    : html`<p>No key claimed yet.</p>`
}</section>`,
      )
}`,
    });
  });
  return router;
}
