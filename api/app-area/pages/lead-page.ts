/**
 * A lead's page in the explorer (`/app/explorer/{id}`), written for the person who will call about
 * it: the address and the council's reference as its title, a link to the council's own page, the
 * facts a salesperson asks first (stage, trades, value, what is being built), the stage timeline
 * (the source's dates, then the stages the weekly releases saw, from the event log), the applicant
 * and contractor where the plan allows, then the sections of the detail (zoning and appeals, the
 * area's sales and nearby leads as tables with links, suppliers, the company and its filings).
 *
 * Everything comes from the API's own detail record, already masked for the plan's scope: an
 * enriched field the plan may not see is null and shown as such, never guessed.
 */
import { labelOf } from '../../../common/labels.ts';
import type { SafeHtml } from '../contract.ts';
import { html } from '../html.ts';
import { APP_BASE, fmt } from './common.ts';

type Rec = Record<string, any>;

/** One stage of the lead as the event log saw it (api/releases/lead-history.ts `stagesOf`). */
export interface SeenStage {
  lead_readiness: string | null;
  occurred_at: string | null;
  observed_at: string | null;
}

/** The page's title: the council's reference and the site's address (or its authority). */
export function leadTitle(r: Rec): string {
  const where = (r['address'] as string | null) ?? `${String(r['planning_authority'] ?? '')}`;
  return `${String(r['application_number'] ?? r['id'])} — ${where}`;
}

const euro = (n: unknown): string => (typeof n === 'number' ? `€${fmt(n)}` : '—');
const text = (v: unknown): string => (v === null || v === undefined || v === '' ? '—' : String(v));
const yesNo = (v: unknown): string => (v === true ? 'Yes' : v === false ? 'No' : '—');
const list = (field: 'verticals', v: unknown): string =>
  Array.isArray(v) && v.length > 0 ? v.map((x) => labelOf(field, String(x))).join(', ') : 'None';

/** A `<dl>` of facts, rows with no value left out. */
function facts(rows: [string, string | SafeHtml][]): SafeHtml {
  return html`<dl class="facts">${rows.map(([k, v]) => html`<dt>${k}</dt><dd>${v}</dd>`)}</dl>`;
}

/** The dated steps of the lead from its own record, in order (the source's dates). */
function sourceTimeline(r: Rec, p: Rec): [string, string][] {
  const steps: [string, unknown][] = [
    ['Application received', p['received_date'] ?? r['received_date']],
    ['Further information requested', r['further_info_requested'] === true ? 'yes' : null],
    ['Decision' + (p['decision'] ? ` (${String(p['decision'])})` : ''), p['decision_date']],
    ['Grant of permission', p['grant_date']],
    ['Appeal decided', r['zoning_and_appeals']?.['appeal_decision_date']],
    ['Commencement', p['commencement_date']],
    ['Proposed end of works', p['proposed_end_date']],
    ['Completion', p['completion_date']],
    ['Permission expires', p['expiry_date']],
  ];
  return steps
    .filter(([, d]) => typeof d === 'string' && d !== '')
    .map(([k, d]) => [k, d === 'yes' ? 'Yes' : String(d)]);
}

/** A table of records with chosen columns; `id` columns become links to the lead. */
function table(
  caption: string,
  rows: Rec[],
  cols: [string, string, (v: unknown, row: Rec) => string | SafeHtml][],
): SafeHtml {
  if (rows.length === 0) return html`<p>None.</p>`;
  return html`<div class="table-wrap" role="region" tabindex="0" aria-label="${caption}"><table><caption>${caption}</caption><thead><tr>${cols.map(([, h]) => html`<th scope="col">${h}</th>`)}</tr></thead><tbody>${rows.map(
    (row) => html`<tr>${cols.map(([c, , f]) => html`<td>${f(row[c], row)}</td>`)}</tr>`,
  )}</tbody></table></div>`;
}

/** The body of a lead's page (the layout adds the `<h1>` from `leadTitle`). */
export function leadPageBody(
  r: Rec,
  stages: readonly SeenStage[],
  opts: { enriched: boolean; map: SafeHtml },
): SafeHtml {
  const p: Rec = r['project'] ?? r;
  const council = typeof p['public_url'] === 'string' ? p['public_url'] : (r['public_url'] as string | null);
  return html`<p><a href="${APP_BASE}/explorer">Back to the explorer</a>${council ? html` · <a href="${council}" rel="noopener noreferrer external">The application on the council's website</a>` : ''}</p>
<p class="lead-description">${text(p['description'])}</p>
${keyFacts(r, p)}
${timeline(r, p, stages)}
${people(r, opts.enriched)}
<section aria-labelledby="lead-map"><h2 id="lead-map">Where</h2>${opts.map}</section>
${zoningAndAppeals(r)}
${theArea(r)}
${enrichedSections(r, opts.enriched)}`;
}

/** Key facts: where, stage, trades, value and what is being built. */
function keyFacts(r: Rec, p: Rec): SafeHtml {
  return html`<section aria-labelledby="lead-facts"><h2 id="lead-facts">Key facts</h2>${facts([
    ['Council reference', text(r['application_number'])],
    ['Planning authority', text(r['planning_authority'])],
    ['County', text(r['county'])],
    ['Site address', text(r['address'])],
    ['Eircode area', text(r['eircode_routing_key'])],
    [
      'Stage',
      p['lead_readiness']
        ? html`${labelOf('lead_readiness', String(p['lead_readiness']))}${r['readiness_since'] ? html` <small>(since ${String(r['readiness_since'])})</small>` : ''}`
        : '—',
    ],
    ['Status', p['status'] ? labelOf('status', String(p['status'])) : '—'],
    ['Trades', list('verticals', p['verticals'])],
    [
      'Estimated value',
      html`${euro(p['est_value'])}${p['est_value_basis'] ? html` <small>(from ${String(p['est_value_basis']).replace(/_/g, ' ')})</small>` : ''}`,
    ],
    ['Kind of development', p['use_class'] ? labelOf('use_class', String(p['use_class'])) : '—'],
    ['Kind of works', p['works_kind'] ? labelOf('works_kind', String(p['works_kind'])) : '—'],
    ['Scale', p['scale'] ? labelOf('scale', String(p['scale'])) : '—'],
    ['Units', fmt(p['num_units'] as number | null)],
    ['Floor area', typeof p['floor_area_m2'] === 'number' ? `${fmt(p['floor_area_m2'])} m²` : '—'],
    ['Demolition', yesNo(p['demolition'])],
  ])}</section>`;
}

/** The source's dates, then the stages the weekly releases saw. */
function timeline(r: Rec, p: Rec, stages: readonly SeenStage[]): SafeHtml {
  const steps = sourceTimeline(r, p);
  const seen = stages.filter((s) => s.lead_readiness !== null);
  return html`<section aria-labelledby="lead-timeline"><h2 id="lead-timeline">Timeline</h2>
<ol class="timeline">${steps.map(([k, d]) => html`<li><strong>${k}</strong>: ${d}</li>`)}</ol>
${
  seen.length > 0
    ? html`<h3>Stages seen by the weekly releases</h3><ol class="timeline">${seen.map(
        (s) =>
          html`<li>${labelOf('lead_readiness', s.lead_readiness!)}${s.occurred_at ? html` — at the source ${s.occurred_at}` : ''}${s.observed_at ? html` (seen ${s.observed_at.slice(0, 10)})` : ''}</li>`,
      )}</ol>`
    : ''
}</section>`;
}

/** The applicant and contractor where the plan allows, and the registered company. */
function people(r: Rec, enriched: boolean): SafeHtml {
  const contractor: Rec | null =
    r['main_contractor'] && typeof r['main_contractor'] === 'object' ? r['main_contractor'] : null;
  const company: Rec | null = r['registered_company'] ?? null;
  const hidden = 'Not in your plan';
  const applicant = enriched
    ? text(
        r['applicant_org'] ??
          (r['applicant_type'] === 'individual' ? 'A private individual (name not published)' : null),
      )
    : hidden;
  return html`<section aria-labelledby="lead-people"><h2 id="lead-people">Applicant and contractor</h2>${facts([
    ['Applicant', applicant],
    ['Applicant company number', enriched ? text(r['applicant_company_number']) : hidden],
    ['Main contractor', enriched ? text(contractor?.['name']) : hidden],
    ['Contractor company number', enriched ? text(contractor?.['company_number']) : hidden],
  ])}${
    company
      ? html`<h3>Registered company</h3>${facts([
          ['Name', text(company['company_name'])],
          ['Number', text(company['company_number'])],
          ['Status', text(company['status'])],
          ['Registered', text(company['reg_date'])],
          ['Last annual return', text(company['last_ar_date'])],
          ['Address', text(company['address'])],
        ])}`
      : ''
  }</section>`;
}

/** Zoning and appeals. */
function zoningAndAppeals(r: Rec): SafeHtml {
  const za: Rec = r['zoning_and_appeals'] ?? {};
  return html`<section aria-labelledby="lead-zoning"><h2 id="lead-zoning">Zoning and appeals</h2>${facts([
    ['Land-use zoning', text(za['land_use_description'] ?? za['land_use_code'])],
    ['Further information requested', yesNo(za['further_info_requested'])],
    ['Appeal', text(za['appeal_ref'])],
    ['Appeal status', text(za['appeal_status'])],
    [
      'Appeal decision',
      za['appeal_decision']
        ? `${String(za['appeal_decision'])}${za['appeal_decision_date'] ? ` (${String(za['appeal_decision_date'])})` : ''}`
        : '—',
    ],
  ])}</section>`;
}

/** The area: its sales, nearby leads and recent sales. */
function theArea(r: Rec): SafeHtml {
  const area: Rec = r['area_comparables'] ?? {};
  return html`<section aria-labelledby="lead-area"><h2 id="lead-area">The area</h2>${facts([
    [
      'Property sales',
      `${fmt(area['sales_count'] as number | null)} in ${text(area['eircode_routing_key'] ?? area['county'])} over ${fmt(area['window_months'] as number | null)} months`,
    ],
    ['Median sale price', euro(area['median_price_eur'])],
  ])}
${table('Nearby leads', (area['nearby_leads'] as Rec[] | undefined) ?? [], [
  [
    'description',
    'Lead',
    (v, row) => html`<a href="${APP_BASE}/explorer/${String(row['id'])}">${text(v).slice(0, 120)}</a>`,
  ],
  ['distance_m', 'Distance', (v) => (typeof v === 'number' ? `${fmt(Math.round(v))} m` : '—')],
  ['lead_readiness', 'Stage', (v) => (v ? labelOf('lead_readiness', String(v)) : '—')],
  ['est_value', 'Estimated value', (v) => euro(v)],
])}
${table('Recent sales', (area['recent_sales'] as Rec[] | undefined) ?? [], [
  ['date_of_sale', 'Date', (v) => text(v)],
  ['address', 'Address', (v) => text(v)],
  ['price_eur', 'Price', (v) => euro(v)],
  ['is_new_dwelling', 'New dwelling', (v) => yesNo(v)],
])}</section>`;
}

/** Suppliers and company filings where the plan allows, else what would bring them. */
function enrichedSections(r: Rec, enriched: boolean): SafeHtml {
  return enriched
    ? html`<section aria-labelledby="lead-suppliers"><h2 id="lead-suppliers">Suppliers near the site</h2>${table(
        'Suppliers',
        (r['suppliers'] as Rec[] | null) ?? [],
        [
          ['company_name', 'Supplier', (v) => text(v)],
          ['company_number', 'Company number', (v) => text(v)],
          ['vertical', 'Trade', (v) => (v ? labelOf('verticals', String(v)) : '—')],
          ['county', 'County', (v) => text(v)],
          ['projects_as_builder', 'Projects as builder', (v) => fmt(v as number | null)],
        ],
      )}</section>
<section aria-labelledby="lead-filings"><h2 id="lead-filings">Company filings</h2>${table(
        'Company filings',
        (r['company_filings'] as Rec[] | null) ?? [],
        [
          ['filing_date', 'Date', (v) => text(v)],
          ['filing_type', 'Type', (v) => text(v)],
          ['description', 'Filing', (v) => text(v)],
        ],
      )}</section>`
    : html`<p>Suppliers, the registered company and its filings come with a plan that includes applicant details.</p>`;
}
