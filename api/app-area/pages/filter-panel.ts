/**
 * The lead filter panel in plain words (issue 32, items 1 and 5): every filter of the one filter
 * table (api/query/lead-filters.ts), grouped into a few collapsible groups — trade, place, stage,
 * kind of project, value and size, dates, more — with the words a buyer uses, human labels for
 * codes (common/labels.ts), type-ahead for places (a native `<datalist>` of the release's values)
 * and check boxes for lists. A group is open when one of its filters is set, so a page's filters
 * are in sight and the rest is one line each. Developer detail (the API's parameter names and
 * exact rules, the coordinate filters) sits behind `<details>` disclosures.
 *
 * The fields post the API's own parameter names and values, read back by `givenFilters`
 * (./common.ts): a check box per value (repeated names), several places in one box separated by
 * commas. A filter added to the table and not named here still gets a field, in "More".
 */
import { labelOf, STATUS_LABELS } from '../../../common/labels.ts';
import type { PlaceNames } from '../../query/leads-params.ts';
import { FILTERS, type LeadFilter } from '../../query/lead-filters.ts';
import type { SafeHtml } from '../contract.ts';
import { html } from '../html.ts';

type Group = 'trade' | 'place' | 'stage' | 'project' | 'size' | 'dates' | 'more' | 'area';

/** The groups in the order the panel shows them. */
const GROUPS: [Group, string][] = [
  ['trade', 'Trade'],
  ['place', 'Place'],
  ['stage', 'Stage'],
  ['project', 'Kind of project'],
  ['size', 'Value and size'],
  ['dates', 'Dates'],
  ['more', 'More'],
  ['area', 'Area by coordinates (for developers)'],
];

interface Words {
  group: Group;
  label: string;
  /** Plain help shown under the field (optional). */
  hint?: string;
}

/** What each filter is called, and where it goes. */
const WORDS: Record<string, Words> = {
  q: { group: 'more', label: 'Search words', hint: 'Words in the description, address or reference.' },
  vertical: { group: 'trade', label: 'Trades' },
  explicit_vertical: { group: 'more', label: 'Trade named in the description' },
  county: { group: 'place', label: 'County', hint: 'Start typing; separate several with commas.' },
  authority: {
    group: 'place',
    label: 'Planning authority (council)',
    hint: 'Start typing; separate several with commas.',
  },
  readiness: { group: 'stage', label: 'Stage' },
  status: { group: 'stage', label: 'Broader status' },
  use_class: { group: 'project', label: 'Kind of development' },
  works_kind: { group: 'project', label: 'Kind of works' },
  scale: { group: 'project', label: 'Size of project' },
  application_type: { group: 'project', label: 'Application type (as the council writes it)' },
  min_value: { group: 'size', label: 'Estimated value at least (€)' },
  min_units: { group: 'size', label: 'Homes at least', hint: 'Leads without a count of homes are left out.' },
  received_from: { group: 'dates', label: 'Received on or after' },
  received_to: { group: 'dates', label: 'Received on or before' },
  changed_since: {
    group: 'dates',
    label: 'Changed on or after',
    hint: 'New leads and leads whose stage or details changed.',
  },
  created_since: { group: 'dates', label: 'New on or after', hint: 'Leads first seen on or after this date.' },
  has_contact: { group: 'more', label: 'The council published contact details' },
  demolition: { group: 'more', label: 'Involves demolition' },
  application_number: { group: 'more', label: 'Council reference', hint: 'For example 26/02170.' },
  near: { group: 'area', label: 'Near a point (latitude, longitude)' },
  bbox: { group: 'area', label: 'Inside a box (west, south, east, north)' },
  polygon: { group: 'area', label: 'Inside an area (GeoJSON polygon)' },
};

const wordsOf = (f: LeadFilter): Words => WORDS[f.name] ?? { group: 'more', label: f.name.replace(/_/g, ' ') };

/** The words for one value of an enum filter. */
function valueLabel(f: LeadFilter, v: string): string {
  switch (f.name) {
    case 'vertical':
    case 'explicit_vertical':
      return labelOf('verticals', v);
    case 'readiness':
      return labelOf('lead_readiness', v);
    case 'status':
      return STATUS_LABELS[v] ?? labelOf('lead_readiness', v);
    case 'use_class':
    case 'works_kind':
    case 'scale':
      return labelOf(f.name, v);
    default:
      return v;
  }
}

/** The values a filter offers: the table's (enum; `status` only its four groups — stages are under Stage) or the release's (multi). */
function choices(f: LeadFilter, places: PlaceNames): string[] {
  if (f.kind === 'enum') return f.name === 'status' ? f.values.filter((v) => v in STATUS_LABELS) : [...f.values];
  if (f.kind === 'multi')
    return [...new Set(places.values.get(f.name)?.values() ?? [])].sort((a, b) => a.localeCompare(b));
  return [];
}

/** The API's rule for a filter, for developers: its parameter name and the table's text. */
const devDetail = (f: LeadFilter): SafeHtml =>
  html`<details class="dev"><summary>For developers</summary><p><code>${f.name}</code>: ${f.doc.replace(/`/g, '')}</p></details>`;

/** One filter's field(s). */
function field(f: LeadFilter, given: Map<string, string[]>, places: PlaceNames, idPrefix: string): SafeHtml {
  const id = `${idPrefix}-${f.name}`;
  const w = wordsOf(f);
  const v = given.get(f.name) ?? [];
  const hint = w.hint ? html`<small id="${id}-hint">${w.hint}</small>` : html``;
  const described = w.hint ? html` aria-describedby="${id}-hint"` : html``;
  switch (f.kind) {
    case 'text':
    case 'key':
      return html`<div class="field"><label for="${id}">${w.label}</label><input type="${f.kind === 'text' ? 'search' : 'text'}" id="${id}" name="${f.name}" maxlength="${f.maxLength}" value="${v[0] ?? ''}"${described}>${hint}</div>`;
    case 'enum': {
      const opts = choices(f, places);
      return html`<fieldset class="checks"><legend>${w.label}</legend>${hint}${opts.map(
        (o) =>
          html`<div class="choice"><input type="checkbox" id="${id}-${o}" name="${f.name}" value="${o}"${v.includes(o) ? html` checked` : ''}><label for="${id}-${o}">${valueLabel(f, o)}</label></div>`,
      )}</fieldset>`;
    }
    case 'multi': {
      const opts = choices(f, places);
      if (f.name === 'application_type')
        return html`<fieldset class="checks"><legend>${w.label}</legend>${opts.map(
          (o, i) =>
            html`<div class="choice"><input type="checkbox" id="${id}-${i}" name="${f.name}" value="${o}"${v.includes(o) ? html` checked` : ''}><label for="${id}-${i}">${o}</label></div>`,
        )}</fieldset>`;
      return html`<div class="field"><label for="${id}">${w.label}</label><input type="text" id="${id}" name="${f.name}" list="${id}-list" autocomplete="off" value="${v.join(', ')}"${described}><datalist id="${id}-list">${opts.map(
        (o) => html`<option value="${o}"></option>`,
      )}</datalist>${hint}</div>`;
    }
    case 'range':
      return html`<div class="field"><label for="${id}">${w.label}</label><input type="number" id="${id}" name="${f.name}" min="0" step="${f.type === 'integer' ? '1' : 'any'}" inputmode="numeric" value="${v[0] ?? ''}"${described}>${hint}</div>`;
    case 'flag':
      return html`<div class="field"><label for="${id}">${w.label}</label><select id="${id}" name="${f.name}"${described}><option value="">Either</option><option value="true"${
        v[0] === 'true' || v[0] === '1' ? html` selected` : ''
      }>Yes</option><option value="false"${v[0] === 'false' || v[0] === '0' ? html` selected` : ''}>No</option></select>${hint}</div>`;
    case 'date':
      return html`<div class="field"><label for="${id}">${w.label}</label><input type="date" id="${id}" name="${f.name}" value="${v[0] ?? ''}"${described}>${hint}</div>`;
    case 'geometry': {
      const c = f.companion;
      const input =
        f.shape === 'polygon'
          ? html`<textarea id="${id}" name="${f.name}" rows="3">${v[0] ?? ''}</textarea>`
          : html`<input type="text" id="${id}" name="${f.name}" value="${v[0] ?? ''}">`;
      const companion = c
        ? html`<label for="${id}-${c.name}">Radius in metres</label><input type="number" id="${id}-${c.name}" name="${c.name}" min="${c.min}" max="${c.max}" step="1" value="${given.get(c.name)?.[0] ?? ''}">`
        : html``;
      return html`<div class="field"><label for="${id}">${w.label}</label>${input}${companion}${devDetail(f)}</div>`;
    }
  }
}

/** How many values of the panel's filters are set (a companion such as `radius_m` counts with its filter). */
export function filtersSet(given: Map<string, string[]>, except: readonly string[] = []): number {
  return FILTERS.filter((f) => !except.includes(f.name) && given.has(f.name)).length;
}

/**
 * The panel: one `<details>` per group, open when a filter of it is set (or `open` names it).
 * `omit` leaves filters out (the explorer shows `q` in its own search box).
 */
export function filterPanel(
  given: Map<string, string[]>,
  places: PlaceNames,
  idPrefix: string,
  opts: { omit?: readonly string[]; open?: readonly Group[] } = {},
): SafeHtml {
  const omit = new Set(opts.omit ?? []);
  const filters = FILTERS.filter((f) => !omit.has(f.name));
  return html`${GROUPS.map(([g, title]) => {
    const fs = filters.filter((f) => wordsOf(f).group === g);
    if (fs.length === 0) return '';
    const set = fs.filter((f) => given.has(f.name)).length;
    const open = set > 0 || (opts.open ?? []).includes(g);
    return html`<details class="filter-group"${open ? html` open` : ''}><summary>${title}${
      set > 0 ? html` <span class="badge">${set} set</span>` : ''
    }</summary>${fs.map((f) => field(f, given, places, idPrefix))}${
      g === 'area'
        ? ''
        : html`<details class="dev"><summary>For developers</summary><p>API parameters: ${fs.map(
            (f, i) => html`${i > 0 ? ', ' : ''}<code>${f.name}</code>`,
          )}. Several values of one filter match any of them; different filters all apply.</p></details>`
    }</details>`;
  })}`;
}

/** A filter's name in the panel's words (the parameter name for anything else, e.g. `sort`, `page`). */
export function filterWords(name: string): string {
  if (name === 'sort') return 'Sort';
  if (name === 'page') return 'Page';
  if (name === 'radius_m') return 'Radius in metres';
  return WORDS[name]?.label ?? name;
}

/** A refused query in the panel's words: each field's label and what is wrong with it. */
export function customerText(e: { message: string; errors?: readonly { name: string; reason: string }[] }): string {
  return e.errors?.length
    ? `Please check: ${e.errors.map((r) => `${filterWords(r.name)} — ${r.reason}`).join('; ')}.`
    : e.message;
}
