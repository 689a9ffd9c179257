/**
 * The account area's pages, one router per section of `APP_SECTIONS` in that order, for the
 * session layer's /app router to mount past sign-in with one call:
 *
 * @example for (const r of appPages(config, deps)) appRouter.use(r.routes(), r.allowedMethods());
 *
 * Every page reads the signed-in account from `ctx.state.app` and acts for that account only.
 */
import type Router from '@koa/router';
import type { ApiConfig } from '../../config.ts';
import type { ApiDb } from '../../db.ts';
import type { ExportTempSpace } from '../../export-temp.ts';
import type { UsageLedger } from '../../access/ledger.ts';
import type { ReleaseManager } from '../../release.ts';
import type { StateStore } from '../../state/store.ts';
import type { HostResolver } from '../../webhooks/destination.ts';
import { APP_SECTIONS, type AppAreaState, type AppSection, type RecordActivity, type RenderPage } from '../contract.ts';
import { activityPage } from './activity.ts';
import { explorerPage } from './explorer.ts';
import { keysPage } from './keys.ts';
import { licencesPage } from './licences.ts';
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

/** The pages' routers, in `APP_SECTIONS` order (paths relative to the /app mount). */
export function appPages(config: ApiConfig, deps: AppPagesDeps): Router<AppAreaState>[] {
  const pages: Record<AppSection, Router<AppAreaState>> = {
    keys: keysPage(config, deps),
    usage: usagePage(config, deps),
    webhooks: webhooksPage(config, deps),
    explorer: explorerPage(config, deps),
    licences: licencesPage(config, deps),
    activity: activityPage(config, deps),
  };
  return APP_SECTIONS.map((s) => pages[s]);
}
