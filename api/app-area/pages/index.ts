/**
 * The account area's pages, one router per section of `APP_SECTIONS` in that order, for the
 * session layer's /app router to mount past sign-in with one call:
 *
 * @example APP_PAGES = PAGE_FACTORIES (api/app-area/router.ts); tests: appPages(config, deps)
 *
 * Every page reads the signed-in account from `ctx.state.app` and acts for that account only.
 */
import type Router from '@koa/router';
import type { ApiConfig } from '../../config.ts';
import type { ApiDb } from '../../duckdb/db.ts';
import type { ExportTempSpace } from '../../exports/temp-space.ts';
import type { UsageLedger } from '../../access/ledger.ts';
import type { ReleaseManager } from '../../releases/release.ts';
import type { StateStore } from '../../state/store-interface.ts';
import type { HostResolver } from '../../webhooks/destination.ts';
import { APP_SECTIONS, type AppAreaState, type AppSection, type RecordActivity, type RenderPage } from '../contract.ts';
import { html } from '../html.ts';
import type { AppPageFactory, AppTools } from '../contract.ts';
import { activityPage } from './activity.ts';
import { explorerPage } from './explorer.ts';
import { keysPage } from './keys.ts';
import { licencesPage } from './licences.ts';
import { searchesPage } from './searches.ts';
import { usagePage } from './usage.ts';
import { webhooksPage } from './webhooks.ts';

/** What the pages need: the API's own store, releases, DuckDB and usage ledger, and the session layer's layout and activity writer. */
export interface AppPagesDeps {
  store: StateStore;
  db: ApiDb;
  releases: ReleaseManager;
  clock: () => Date;
  log: (line: string) => void;
  /** The API's usage ledger (the same instance the access middleware writes), so the explorer's rows show on the usage page. */
  ledger: Pick<UsageLedger, 'record' | 'flush'>;
  exportTemp?: ExportTempSpace;
  resolveHost?: HostResolver;
  renderPage: RenderPage;
  recordActivity: RecordActivity;
}

/** The pages' stylesheet, linked from each page's body (the layout links only its own app.css). */
const withPageStyles =
  (render: RenderPage): RenderPage =>
  (ctx, p) =>
    render(ctx, { ...p, body: html`<link rel="stylesheet" href="/app/assets/pages.css">${p.body}` });

const FACTORIES: Record<AppSection, (config: ApiConfig, deps: AppPagesDeps) => Router<AppAreaState>> = {
  keys: keysPage,
  usage: usagePage,
  webhooks: webhooksPage,
  explorer: explorerPage,
  searches: searchesPage,
  licences: licencesPage,
  activity: activityPage,
};

/** The pages' routers, in `APP_SECTIONS` order (full paths under /app). */
export function appPages(config: ApiConfig, deps: AppPagesDeps): Router<AppAreaState>[] {
  const d = { ...deps, renderPage: withPageStyles(deps.renderPage) };
  return APP_SECTIONS.map((s) => FACTORIES[s](config, d));
}

/** The pages as the session layer's page factories (api/app-area/router.ts `APP_PAGES`), in `APP_SECTIONS` order. */
export const PAGE_FACTORIES: readonly AppPageFactory[] = APP_SECTIONS.map(
  (s) =>
    (tools: AppTools): Router<AppAreaState> =>
      FACTORIES[s](tools.config, {
        ...tools.deps,
        renderPage: withPageStyles(tools.renderPage),
        recordActivity: tools.recordActivity,
      }),
);
