/**
 * RFC 8288 `Link` headers on paged answers (GitHub's convention): `Link: <…>; rel="next"` names the
 * next page with the same URL the body gives (`next_cursor` as `cursor`, or the GIS `next` link),
 * so a generic client can page without knowing the body. Absolute URLs on the origin the request
 * came to (`X-Forwarded-Proto` / `-Host` with TRUST_PROXY=1), like the GIS links.
 */
import type { ParameterizedContext } from 'koa';

/**
 * The request's own URL (path and query, `dry_run` already taken off by the access model) with
 * `set` applied: a string sets the parameter, null removes it.
 *
 * @example pageHref(ctx, { cursor: 'eyJr…', page: null }) // 'http://host/v1/leads?county=Cork&cursor=eyJr…'
 */
export function pageHref(ctx: ParameterizedContext, set: Record<string, string | null>): string {
  const q = new URLSearchParams(ctx.querystring);
  for (const [k, v] of Object.entries(set)) {
    if (v === null) q.delete(k);
    else q.set(k, v);
  }
  const qs = q.toString();
  return `${ctx.protocol}://${ctx.host}${ctx.path}${qs ? `?${qs}` : ''}`;
}

/** Add one `Link` value per relation given (`next`, `prev`); null hrefs are skipped. */
export function setPageLinks(ctx: ParameterizedContext, links: Partial<Record<'next' | 'prev', string | null>>): void {
  const values = Object.entries(links)
    .filter((e): e is [string, string] => typeof e[1] === 'string')
    .map(([rel, href]) => `<${href}>; rel="${rel}"`);
  if (values.length > 0) ctx.append('Link', values.join(', '));
}
