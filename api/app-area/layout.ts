/**
 * The account area's layout: `renderPage` (the contract's `RenderPage`) for signed-in pages and
 * `renderPublicPage` for the sign-in, invitation and error pages. Plain server-rendered HTML:
 *
 *   skip link → header (product, account name and plan, sign-out form with its CSRF field)
 *   → nav of APP_SECTIONS (`aria-current="page"` on the page's section) → <main id="main"> with
 *   the page's <h1> (from `title`; the page's body starts below it, with <h2>s) → footer.
 *
 * One stylesheet (/app/assets/app.css, responsive down to 375 px); scripts are files under
 * /app/assets/ loaded with the response's CSP nonce — no inline script or style is needed, and
 * none runs without the nonce. The CSRF token is also in `<meta name="csrf-token">` for scripts
 * (sent as `X-CSRF-Token`).
 */
import { APP_SECTIONS, type AppAreaContext, type AppPage, type AppSection, type SafeHtml } from './contract.ts';
import { html } from './html.ts';

export const SECTION_LABELS: Record<AppSection, string> = {
  keys: 'API keys',
  usage: 'Usage',
  webhooks: 'Webhooks',
  explorer: 'Lead explorer',
  searches: 'Saved searches',
  licences: 'Licences',
  activity: 'Activity',
};

const PRODUCT = 'Irish construction leads';

/** On every page: moves focus to the result of an action (an element marked `data-focus-result`), if the page has one. */
const FOCUS_SCRIPT = '/app/assets/focus-result.js';

interface Frame {
  title: string;
  body: SafeHtml;
  status?: number;
  scripts?: readonly string[];
  nonce: string;
  csrfToken: string | null;
  header: SafeHtml;
  nav: SafeHtml | null;
}

function page(ctx: AppAreaContext, f: Frame): void {
  const scripts = [...(f.scripts ?? []), FOCUS_SCRIPT].map(
    (src) => html`<script src="${src}" nonce="${f.nonce}" defer></script>`,
  );
  ctx.status = f.status ?? 200;
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
${f.csrfToken ? html`<meta name="csrf-token" content="${f.csrfToken}">` : ''}
<title>${f.title} · ${PRODUCT}</title>
<link rel="icon" href="/app/assets/favicon.svg" type="image/svg+xml" nonce="${f.nonce}">
<link rel="stylesheet" href="/app/assets/app.css" nonce="${f.nonce}">
${scripts}
</head>
<body>
<a class="skip-link" href="#main">Skip to main content</a>
<header class="site-header">
<a class="brand" href="/app">${PRODUCT}</a>
${f.header}
</header>
${f.nav ?? ''}
<main id="main" tabindex="-1">
<h1>${f.title}</h1>
${f.body}
</main>
<footer class="site-footer"><p>${PRODUCT} · account area · <a href="/v1/docs">API documentation</a></p></footer>
</body>
</html>
`.__html;
}

/** The navigation of the signed-in layout (no section current on a 404). */
function nav(current: AppSection | null): SafeHtml {
  return html`<nav class="site-nav" aria-label="Account sections"><ul>${APP_SECTIONS.map(
    (s) =>
      html`<li><a href="/app/${s}"${s === current ? html` aria-current="page"` : ''}>${SECTION_LABELS[s]}</a></li>`,
  )}</ul></nav>`;
}

/** Render a signed-in page in the layout (the contract's `RenderPage`). Needs `ctx.state.app`. */
export function renderPage(ctx: AppAreaContext, p: AppPage): void {
  renderSignedIn(ctx, { ...p, section: p.section });
}

/** `renderPage` where no section is current (the 404 page inside the layout). */
export function renderSignedIn(
  ctx: AppAreaContext,
  p: Omit<AppPage, 'section'> & { section: AppSection | null },
): void {
  const s = ctx.state.app;
  page(ctx, {
    title: p.title,
    body: p.body,
    ...(p.status !== undefined ? { status: p.status } : {}),
    ...(p.scripts ? { scripts: p.scripts } : {}),
    nonce: s.nonce,
    csrfToken: s.csrfToken,
    header: html`<div class="who">
<span class="account"><span class="visually-hidden">Signed in as </span><span id="account-name">${s.account.name}</span> <span class="plan">${s.account.plan} plan</span></span>
<form class="sign-out" method="post" action="/app/sign-out"><input type="hidden" name="_csrf" value="${s.csrfToken}"><button type="submit">Sign out</button></form>
</div>`,
    nav: nav(p.section),
  });
}

/** Render a page for a visitor who is not signed in (sign-in, invitation, errors). */
export function renderPublicPage(
  ctx: AppAreaContext,
  p: { title: string; body: SafeHtml; status?: number; scripts?: readonly string[]; csrfToken?: string | null },
): void {
  page(ctx, {
    title: p.title,
    body: p.body,
    ...(p.status !== undefined ? { status: p.status } : {}),
    ...(p.scripts ? { scripts: p.scripts } : {}),
    nonce: ctx.state.nonce ?? '',
    csrfToken: p.csrfToken ?? null,
    header: html``,
    nav: null,
  });
}
