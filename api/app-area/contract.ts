/**
 * The account area's contract between its two halves (issue 16):
 *
 *   - the session layer (api/app-area/session.ts, credentials, invitations, sign-in): turns a
 *     signed-in browser into an `AppSession` on `ctx.state.app`, checks CSRF on every
 *     state-changing request, sets the CSP and framing headers, renders the layout;
 *   - the pages (api/app-area/pages/*.ts: keys, usage, webhooks, explorer, searches, licences, activity):
 *     read `ctx.state.app`, act for that account only, and hand their HTML to `renderPage`.
 *
 * Pages never read cookies, never check CSRF tokens themselves and never write headers for
 * security; the session layer never knows what a page shows.
 */
import type { ParameterizedContext } from 'koa';
import type Router from '@koa/router';
import type { Plan } from '../access/scopes.ts';
import type { AppDeps } from '../http/app-deps.ts';
import type { ApiConfig } from '../config.ts';
import type { UsageLedger } from '../access/ledger.ts';

/** The signed-in account, as the session layer read it from the state store on this request. */
export interface AppAccount {
  readonly id: number;
  readonly name: string;
  /** The plan as it is NOW (a downgrade applies to the next request, not the next sign-in). */
  readonly plan: Plan;
}

/** A signed-in session (`ctx.state.app`), present on every /app request past sign-in. */
export interface AppSession {
  /** Public id of the session (safe to log), never the cookie's secret. */
  readonly id: string;
  readonly account: AppAccount;
  /** The token every state-changing form or fetch must send (hidden field `_csrf` or header `X-CSRF-Token`). */
  readonly csrfToken: string;
  /** The per-response nonce that the CSP allows for `<script nonce>` / `<style nonce>`. */
  readonly nonce: string;
  readonly expiresAt: string;
}

/** The sections of the app's navigation, in order. */
export const APP_SECTIONS = ['keys', 'usage', 'webhooks', 'explorer', 'searches', 'licences', 'activity'] as const;
export type AppSection = (typeof APP_SECTIONS)[number];

/** One page to render inside the layout: `body` is HTML built with the `html` tag (api/app-area/html.ts). */
export interface AppPage {
  readonly section: AppSection;
  readonly title: string;
  readonly body: SafeHtml;
  /** Scripts of this page: paths under /app/assets/ (served from the repo or node_modules, never a CDN). */
  readonly scripts?: readonly string[];
  readonly status?: number;
}

/** HTML that is safe to send: every interpolated value was escaped by the `html` tag. */
export interface SafeHtml {
  readonly __html: string;
}

/** Koa state of an /app request. */
export interface AppAreaState {
  requestId: string;
  app: AppSession;
  /** The CSP nonce of this response, set before sign-in too (equal to `app.nonce` once signed in). */
  nonce?: string;
}
export type AppAreaContext = ParameterizedContext<AppAreaState>;

/** Writes a page with the layout (navigation, account name, sign-out form, CSP nonce) as the response. */
export type RenderPage = (ctx: AppAreaContext, page: AppPage) => void;

/** Appends an entry to the account's activity log (keys created/revoked, webhooks changed, sign-ins…). */
export type RecordActivity = (
  ctx: AppAreaContext,
  event: string,
  details?: Readonly<Record<string, string | number | null>>,
) => Promise<void>;

/** What the app area needs of the server: the API's deps, with the usage ledger. */
export type AppAreaDeps = AppDeps & { ledger: UsageLedger };

/** What a page factory gets. */
export interface AppTools {
  config: ApiConfig;
  deps: AppAreaDeps;
  renderPage: RenderPage;
  recordActivity: RecordActivity;
}

export type AppPageFactory = (tools: AppTools) => Router<AppAreaState>;
