/**
 * What the account area's pages share: the form body reader, the CSRF hidden field, the
 * not-found page, number and date formatting, the lead filter form generated from the one
 * filter table (api/query/lead-filters.ts) and its reading back into a `/v1/leads` query, and
 * small server-rendered SVG charts. All markup is built with the `html` tag.
 */
import type { ReleaseManager } from '../../releases/release.ts';
import { ApiError } from '../../http/errors.ts';
import type { PlaceNames } from '../../query/leads-params.ts';
import { FILTERS, filterParams, STATUS_GROUP_OF, type LeadFilter } from '../../query/lead-filters.ts';
import { readForm } from '../body.ts';
import type { AppAreaContext, AppPage, AppSection, RenderPage, SafeHtml } from '../contract.ts';
import { html } from '../html.ts';

/** Where the account area is mounted. */
export const APP_BASE = '/app';

/** The posted form (read once per request by the session layer's reader, api/app-area/body.ts, whose CSRF check saw it first). */
export const formBody = (ctx: AppAreaContext): Promise<URLSearchParams> => readForm(ctx);

/** The hidden CSRF field every state-changing form carries (the session layer checks it). */
export const csrfField = (ctx: AppAreaContext): SafeHtml =>
  html`<input type="hidden" name="_csrf" value="${ctx.state.app.csrfToken}">`;

/** A one-button form posting to `action` (revoke, delete, test…), with the CSRF field. */
export function actionButton(
  ctx: AppAreaContext,
  action: string,
  label: string,
  opts: { danger?: boolean; describedBy?: string } = {},
): SafeHtml {
  return html`<form method="post" action="${action}" class="inline">${csrfField(ctx)}<button type="submit"${opts.danger ? html` class="danger"` : ''}${
    opts.describedBy ? html` aria-describedby="${opts.describedBy}"` : ''
  }>${label}</button></form>`;
}

/** The page for an id this account does not own or that does not exist (the same answer for both). */
export function notFoundPage(ctx: AppAreaContext, render: RenderPage, section: AppSection, what: string): void {
  render(ctx, {
    section,
    title: 'Not found',
    status: 404,
    body: html`<p>There is no ${what} of this account with that id.</p><p><a href="${APP_BASE}/${section}">Back</a></p>`,
  });
}

/** Render `page`, or the 404 page when `work` throws a 404 `ApiError`; other exposed `ApiError`s become a message on `page`. */
export async function orNotFound(
  ctx: AppAreaContext,
  render: RenderPage,
  section: AppSection,
  what: string,
  work: () => Promise<AppPage | null>,
): Promise<void> {
  try {
    const page = await work();
    if (page) render(ctx, page);
  } catch (e) {
    if (e instanceof ApiError && e.status === 404) return notFoundPage(ctx, render, section, what);
    throw e;
  }
}

/**
 * An error or notice message (announced to screen readers). It is the result of what the person
 * just did, so the page moves focus to it (`data-focus-result`, /app/assets/focus-result.js).
 */
export const message = (text: string | null, kind: 'error' | 'notice' = 'error'): SafeHtml =>
  text
    ? html`<p class="${kind}" role="${kind === 'error' ? 'alert' : 'status'}" tabindex="-1" data-focus-result>${text}</p>`
    : html``;

export const fmt = (n: number | null | undefined): string =>
  n === null || n === undefined ? '—' : n.toLocaleString('en-IE');
/** An instant as `YYYY-MM-DD HH:MM UTC`. */
export const when = (iso: string | null | undefined): string =>
  iso ? `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC` : '—';

/** Pin the current release for this request (answers 503 `no_release` when none is loaded). */
export function pinRelease(ctx: AppAreaContext, releases: Pick<ReleaseManager, 'acquire'>) {
  let pin: ReturnType<ReleaseManager['acquire']>;
  try {
    pin = releases.acquire();
  } catch {
    throw new ApiError(503, 'no_release', 'no data release is loaded yet; try again later', {
      headers: { 'Retry-After': '30' },
    });
  }
  ctx.res.once('finish', pin.done);
  ctx.res.once('close', pin.done);
  return pin.release;
}

// ---------------------------------------------------------------------------------------------
// The lead filter form, generated from the filter table

/** The values a filter's field offers: the table's (enum) or the release's (multi). */
function choices(f: LeadFilter, places: PlaceNames): string[] {
  if (f.kind === 'enum') return [...f.values];
  if (f.kind === 'multi')
    return [...new Set(places.values.get(f.name)?.values() ?? [])].sort((a, b) => a.localeCompare(b));
  return [];
}

const labelOf = (f: LeadFilter): string => {
  const named: Record<string, string> = {
    q: 'Search',
    min_value: 'Minimum value (€)',
    min_units: 'Minimum units',
    has_contact: 'Has contact details',
    received_from: 'Received from',
    received_to: 'Received to',
    use_class: 'Use class',
    application_type: 'Application type',
    works_kind: 'Kind of works',
    explicit_vertical: 'Trade named in the text',
    application_number: 'Council reference',
    near: 'Near (latitude,longitude)',
    bbox: 'Box (minLon,minLat,maxLon,maxLat)',
    polygon: 'Area (GeoJSON polygon)',
  };
  return named[f.name] ?? f.name.charAt(0).toUpperCase() + f.name.slice(1).replace(/_/g, ' ');
};
const optionLabel = (f: LeadFilter, v: string): string =>
  (f.name === 'status' && !(v in STATUS_GROUP_OF) ? `${v} (group)` : v).replace(/_/g, ' ');

/** The filters given in a query or form, by name: lists as arrays (repeated fields and commas both split). */
export function givenFilters(q: URLSearchParams): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const f of FILTERS) {
    for (const name of filterParams(f)) {
      const vs = q
        .getAll(name)
        .flatMap((v) => (f.kind === 'enum' || f.kind === 'multi' ? v.split(',') : [v]))
        .map((v) => v.trim())
        .filter((v) => v !== '');
      if (vs.length) out.set(name, vs);
    }
  }
  return out;
}

/** The filters as a `/v1/leads` query string, in table order (what `parseLeadsQuery` and saved filters read). */
export function filterQueryString(given: Map<string, string[]>): string {
  const p = new URLSearchParams();
  for (const name of FILTERS.flatMap(filterParams)) {
    const vs = given.get(name);
    if (vs?.length) p.set(name, vs.join(','));
  }
  return p.toString();
}

/** The filters as the raw query `parseLeadsQuery` takes (one value per name). */
export function filterRawQuery(given: Map<string, string[]>): Record<string, string> {
  return Object.fromEntries([...given].map(([k, vs]) => [k, vs.join(',')]));
}

/**
 * One labelled field per filter of the table: text, select (multiple) for enum and release
 * values, number, a yes/no/any select for flags, a date input for dates. `idPrefix` keeps ids
 * unique when two forms share a page.
 */
export function filterFields(given: Map<string, string[]>, places: PlaceNames, idPrefix: string): SafeHtml {
  return html`${FILTERS.map((f) => {
    const id = `${idPrefix}-${f.name}`;
    const v = given.get(f.name) ?? [];
    const hint = html`<small id="${id}-hint">${f.doc.replace(/`/g, '')}</small>`;
    switch (f.kind) {
      case 'text':
        return html`<div class="field"><label for="${id}">${labelOf(f)}</label><input type="search" id="${id}" name="${f.name}" maxlength="${f.maxLength}" value="${v[0] ?? ''}" aria-describedby="${id}-hint">${hint}</div>`;
      case 'enum':
      case 'multi': {
        const opts = choices(f, places);
        return html`<div class="field"><label for="${id}">${labelOf(f)}</label><select id="${id}" name="${f.name}" multiple size="${Math.min(6, Math.max(2, opts.length))}" aria-describedby="${id}-hint">${opts.map(
          (o) => html`<option value="${o}"${v.includes(o) ? html` selected` : ''}>${optionLabel(f, o)}</option>`,
        )}</select>${hint}</div>`;
      }
      case 'range':
        return html`<div class="field"><label for="${id}">${labelOf(f)}</label><input type="number" id="${id}" name="${f.name}" min="0" step="${f.type === 'integer' ? '1' : 'any'}" value="${v[0] ?? ''}" aria-describedby="${id}-hint">${hint}</div>`;
      case 'flag':
        return html`<div class="field"><label for="${id}">${labelOf(f)}</label><select id="${id}" name="${f.name}" aria-describedby="${id}-hint"><option value="">any</option><option value="true"${
          v[0] === 'true' || v[0] === '1' ? html` selected` : ''
        }>yes</option><option value="false"${v[0] === 'false' || v[0] === '0' ? html` selected` : ''}>no</option></select>${hint}</div>`;
      case 'date':
        return html`<div class="field"><label for="${id}">${labelOf(f)}</label><input type="date" id="${id}" name="${f.name}" value="${v[0] ?? ''}" aria-describedby="${id}-hint">${hint}</div>`;
      case 'key':
        return html`<div class="field"><label for="${id}">${labelOf(f)}</label><input type="text" id="${id}" name="${f.name}" maxlength="${f.maxLength}" value="${v[0] ?? ''}" aria-describedby="${id}-hint">${hint}</div>`;
      case 'geometry': {
        const c = f.companion;
        const input =
          f.shape === 'polygon'
            ? html`<textarea id="${id}" name="${f.name}" rows="3" aria-describedby="${id}-hint">${v[0] ?? ''}</textarea>`
            : html`<input type="text" id="${id}" name="${f.name}" value="${v[0] ?? ''}" aria-describedby="${id}-hint">`;
        const companion = c
          ? html`<label for="${id}-${c.name}">${c.name.replace(/_/g, ' ')}</label><input type="number" id="${id}-${c.name}" name="${c.name}" min="${c.min}" max="${c.max}" step="1" value="${given.get(c.name)?.[0] ?? ''}">`
          : html``;
        return html`<div class="field"><label for="${id}">${labelOf(f)}</label>${input}${companion}${hint}</div>`;
      }
    }
  })}`;
}

// ---------------------------------------------------------------------------------------------
// Charts: inline SVG rendered on the server (no chart library, no script)

/**
 * A bar chart of `values` by `labels` (issue 32, item 6): a figure with its title as the caption,
 * the SVG (`role="img"`, titled) with both axes labelled (`opts.x`, `opts.y`: what the axis
 * counts) and the highest value ticked, and the same numbers as a table in a disclosure beside it.
 */
export function barChart(
  title: string,
  labels: string[],
  values: number[],
  opts: { width?: number; height?: number; x?: string; y?: string } = {},
): SafeHtml {
  const w = opts.width ?? 480;
  const h = opts.height ?? 200;
  const left = 56;
  const bottom = 44;
  const max = Math.max(1, ...values);
  const n = Math.max(1, values.length);
  const bw = (w - left - 10) / n;
  const bars = values.map((v, i) => {
    const bh = Math.round((v / max) * (h - bottom - 14));
    return html`<rect x="${(left + i * bw + bw * 0.1).toFixed(1)}" y="${h - bottom - bh}" width="${(bw * 0.8).toFixed(1)}" height="${bh}" class="bar"><title>${labels[i]}: ${fmt(v)}</title></rect>`;
  });
  const first = labels[0] ?? '';
  const last = labels.at(-1) ?? '';
  const id = idOf(title);
  const xName = opts.x ?? '';
  const yName = opts.y ?? '';
  return html`<figure class="chart-figure" aria-labelledby="${id}-cap"><figcaption id="${id}-cap" class="chart-title">${title}</figcaption><svg class="chart" viewBox="0 0 ${w} ${h}" role="img" aria-labelledby="${id}"><title id="${id}">${title}${yName ? `: ${yName}` : ''}${xName ? ` by ${xName.toLowerCase()}` : ''}, highest ${fmt(max)}</title><line x1="${left}" y1="${h - bottom}" x2="${w - 10}" y2="${h - bottom}" class="axis"/><line x1="${left}" y1="10" x2="${left}" y2="${h - bottom}" class="axis"/><text x="${left - 4}" y="18" class="tick" text-anchor="end">${fmt(max)}</text><text x="${left - 4}" y="${h - bottom}" class="tick" text-anchor="end">0</text><text x="${left}" y="${h - bottom + 16}" class="tick">${first}</text><text x="${w - 10}" y="${h - bottom + 16}" class="tick" text-anchor="end">${last}</text>${
    xName
      ? html`<text x="${(left + w - 10) / 2}" y="${h - 6}" class="axis-label" text-anchor="middle">${xName}</text>`
      : ''
  }${
    yName
      ? html`<text x="14" y="${(h - bottom) / 2 + 5}" class="axis-label" text-anchor="middle" transform="rotate(-90 14 ${(h - bottom) / 2 + 5})">${yName}</text>`
      : ''
  }${bars}</svg><details class="chart-table"><summary>${title}: the numbers as a table</summary><div class="table-wrap" role="region" tabindex="0" aria-label="${title} (table)"><table><thead><tr><th scope="col">${xName || 'Label'}</th><th scope="col">${yName || 'Value'}</th></tr></thead><tbody>${labels.map(
    (l, i) => html`<tr><td>${l}</td><td>${fmt(values[i] ?? 0)}</td></tr>`,
  )}</tbody></table></div></details></figure>`;
}

const idOf = (s: string): string =>
  'c-' +
  s
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .slice(0, 40);
