/**
 * The alert e-mail of one saved search: a plain-text part and an HTML part with the same
 * content, the RFC 8058 one-click unsubscribe headers, and nothing else. Pure: the leads come in
 * already masked for the scope the alert is sent with (api/alerts/alert-access.ts, masked by
 * api/access/masking.ts `maskRecord`, as the API serves them to that scope).
 *
 * Each lead shows its council reference, address, authority and county, stage in words, the
 * start of its description, the applicant and main contractor only when the scope may see them
 * (masked fields arrive null and are left out) and a link to its page in the app. A lead record
 * holds no person's name and no contact details (the pipeline's name gate, `has_contact` is a
 * flag), so none can reach an e-mail.
 */
import { labelOf } from '../../common/labels.ts';
import { html } from '../app-area/html.ts';
import type { SafeHtml } from '../app-area/contract.ts';

type Lead = Record<string, unknown>;

/** A lead whose stage changed: the lead as it is now, and the stages before and after. */
export interface StageChange {
  lead: Lead;
  before: string | null;
  after: string | null;
}

export interface AlertContent {
  searchName: string;
  /** The search in plain words (api/alerts/saved-search.ts `searchInWords`). */
  searchWords: string;
  frequency: 'daily' | 'weekly';
  releaseId: string;
  /** The app's base URL (`https://host/app`). */
  appBase: string;
  /** The canonical query, linked as `<app>/explorer?<query>`. */
  query: string;
  newLeads: Lead[];
  /** New leads matching in all (more than `newLeads` when the list was cut). */
  newTotal: number;
  changed: StageChange[];
  changedTotal: number;
  unsubscribeUrl: string;
  /** The attribution commonwealth data must carry (spec 1.5), or null. */
  attribution: string | null;
}

export interface AlertMail {
  subject: string;
  text: string;
  html: string;
  headers: Record<string, string>;
}

const stage = (v: unknown): string => (typeof v === 'string' ? labelOf('lead_readiness', v) : '—');
const str = (v: unknown): string | null => (typeof v === 'string' && v.trim() !== '' ? v : null);
const short = (s: string, n = 160): string => (s.length > n ? s.slice(0, n - 1) + '…' : s);
const plural = (n: number, one: string, many: string): string => `${n.toLocaleString('en-IE')} ${n === 1 ? one : many}`;

/** The lines that describe one lead: its title, then where and its stage (or the change of stage), then the rest. */
function leadFacts(l: Lead, change?: Pick<StageChange, 'before' | 'after'>): { title: string; lines: string[] } {
  const ref = str(l['application_number']) ?? `lead ${String(l['id'])}`;
  const place = [str(l['planning_authority']), str(l['county']) ? `Co. ${String(l['county'])}` : null]
    .filter(Boolean)
    .join(', ');
  const title = `${ref} — ${str(l['address']) ?? 'address not given'}`;
  const stageText = change ? `${stage(change.before)} → ${stage(change.after)}` : stage(l['lead_readiness']);
  const lines = [`${place}. Stage: ${stageText}.`];
  const d = str(l['description']);
  if (d) lines.push(short(d));
  const org = str(l['applicant_org']);
  const contractor = str(l['main_contractor']);
  if (org) lines.push(`Applicant: ${org}`);
  if (contractor) lines.push(`Main contractor: ${contractor}`);
  return { title, lines };
}

const leadUrl = (c: AlertContent, l: Lead): string => `${c.appBase}/explorer/${String(l['id'])}`;

/**
 * Build the e-mail of an alert.
 *
 * @example alertMail({ searchName: 'Cork roofs', …, newLeads: [lead], newTotal: 1, changed: [], changedTotal: 0 })
 *   // { subject: 'Cork roofs: 1 new lead', text: '…', html: '…', headers: { 'List-Unsubscribe': '<…>', … } }
 */
export function alertMail(c: AlertContent): AlertMail {
  const counts = [
    c.newTotal ? plural(c.newTotal, 'new lead', 'new leads') : null,
    c.changedTotal ? plural(c.changedTotal, 'lead changed stage', 'leads changed stage') : null,
  ].filter(Boolean);
  const subject = `${c.searchName}: ${counts.join(', ')}`;
  const searchUrl = `${c.appBase}/explorer${c.query ? `?${c.query}` : ''}`;
  const period = c.frequency === 'daily' ? 'daily' : 'weekly';
  const more = (shown: number, total: number): string | null =>
    total > shown ? `…and ${plural(total - shown, 'more', 'more')}: see them all in the explorer, ${searchUrl}` : null;

  const text: string[] = [
    `Your ${period} alert for the saved search “${c.searchName}”`,
    `(${c.searchWords}), data release ${c.releaseId}.`,
    '',
  ];
  if (c.newLeads.length) {
    text.push(`NEW LEADS (${c.newTotal.toLocaleString('en-IE')})`, '');
    for (const l of c.newLeads) {
      const f = leadFacts(l);
      text.push(f.title, ...f.lines.map((x) => `  ${x}`), `  ${leadUrl(c, l)}`, '');
    }
    const m = more(c.newLeads.length, c.newTotal);
    if (m) text.push(m, '');
  }
  if (c.changed.length) {
    text.push(`LEADS THAT CHANGED STAGE (${c.changedTotal.toLocaleString('en-IE')})`, '');
    for (const ch of c.changed) {
      const f = leadFacts(ch.lead, ch);
      text.push(f.title, ...f.lines.map((x) => `  ${x}`), `  ${leadUrl(c, ch.lead)}`, '');
    }
    const m = more(c.changed.length, c.changedTotal);
    if (m) text.push(m, '');
  }
  text.push(
    `Open the search in the explorer: ${searchUrl}`,
    `Change or stop this alert: ${c.appBase}/searches`,
    `Unsubscribe from this alert (no sign-in needed): ${c.unsubscribeUrl}`,
  );
  if (c.attribution) text.push('', c.attribution);

  const leadItem = (l: Lead, change?: StageChange): SafeHtml => {
    const f = leadFacts(l, change);
    return html`<li style="margin:0 0 16px"><a href="${leadUrl(c, l)}"><strong>${f.title}</strong></a>${f.lines.map((x) => html`<br>${x}`)}</li>`;
  };
  const moreHtml = (shown: number, total: number): SafeHtml | string =>
    total > shown
      ? html`<p>…and ${plural(total - shown, 'more', 'more')}: <a href="${searchUrl}">see them all in the explorer</a>.</p>`
      : '';
  const body = html`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${subject}</title></head><body style="font-family:sans-serif;line-height:1.4;color:#1b1b1b">
<p>Your ${period} alert for the saved search <strong>${c.searchName}</strong> (${c.searchWords}), data release ${c.releaseId}.</p>
${
  c.newLeads.length
    ? html`<h2 style="font-size:1.2em">New leads (${c.newTotal.toLocaleString('en-IE')})</h2><ul style="padding-left:1.2em">${c.newLeads.map((l) => leadItem(l))}</ul>${moreHtml(c.newLeads.length, c.newTotal)}`
    : ''
}${
    c.changed.length
      ? html`<h2 style="font-size:1.2em">Leads that changed stage (${c.changedTotal.toLocaleString('en-IE')})</h2><ul style="padding-left:1.2em">${c.changed.map((ch) => leadItem(ch.lead, ch))}</ul>${moreHtml(c.changed.length, c.changedTotal)}`
      : ''
  }
<p><a href="${searchUrl}">Open the search in the explorer</a> · <a href="${c.appBase}/searches">Change or stop this alert</a> · <a href="${c.unsubscribeUrl}">Unsubscribe</a> (no sign-in needed)</p>
${c.attribution ? html`<p style="font-size:0.85em;color:#555">${c.attribution}</p>` : ''}
</body></html>`;
  return {
    subject,
    text: text.join('\n'),
    html: body.__html,
    headers: {
      'List-Unsubscribe': `<${c.unsubscribeUrl}>`,
      'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
      'Auto-Submitted': 'auto-generated',
    },
  };
}
