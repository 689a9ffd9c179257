/**
 * Sending the alerts of saved searches (`leads alerts send`, docs/operations.md "Alert e-mails").
 * For every search with a daily or weekly alert that has not been sent for the current period
 * (`alertPeriod`: the UTC day, or the ISO week):
 *
 * 1. access at send time (api/alerts/alert-access.ts): no key of the account grants anything →
 *    nothing is sent and the search's marks stay (the next alert covers the leads since the last one);
 * 2. the leads of the current release with an id above the search's lead watermark that match its
 *    filters (the webhooks' `newLeadsQuery`: the same clauses as `GET /v1/leads`), and the
 *    `lead.stage_changed` events of the release's event log above its event watermark for the
 *    leads the same filters select (`eventsPageQuery`, as `GET /v1/events` serves them);
 * 3. nothing new → the period is marked done, no e-mail; else the mark moves to the period and the
 *    release's highest ids by compare-and-set (`store.searches.moveAlertMark`: of two senders
 *    running at once exactly one wins), then the e-mail goes out through SMTP_URL, masked for the
 *    access's scope. A failed send puts the mark back, so the next run tries again.
 *
 * So running it twice in a period sends nothing twice; a crash between the mark and the send
 * loses that one e-mail rather than sending it twice.
 */
import nodemailer from 'nodemailer';
import type { ApiConfig } from '../config.ts';
import { attribution, maskRecord } from '../access/masking.ts';
import { areaIds } from '../gis/geometry-ids.ts';
import { eventsPageQuery, type EventRow } from '../query/events-query.ts';
import { LEAD_COLUMNS, type LeadsSource, type SqlQuery } from '../query/leads-query.ts';
import { newLeadsQuery } from '../query/webhook-leads-query.ts';
import type { AlertMark, SavedSearch } from '../state/search-store.ts';
import type { StateStore } from '../state/store-interface.ts';
import type { LeadReader, LeadSnapshot } from '../webhooks/lead-reader.ts';
import { appBaseUrl, mailFrom } from '../app-area/invitations.ts';
import { alertAccess } from './alert-access.ts';
import { alertMail, type StageChange } from './alert-mail.ts';
import { parseSearchQuery, searchInWords } from './saved-search.ts';
import { unsubscribeToken } from './unsubscribe-token.ts';

/** Leads listed per section of one e-mail (the rest are counted, with a link to the explorer). */
export const ALERT_LEADS_MAX = 25;
/** Stage-change events read per search and run (the e-mail lists the first `ALERT_LEADS_MAX` leads). */
const EVENTS_READ_MAX = 10_000;

/** The period an alert of `frequency` is sent once in: the UTC day (`2026-11-27`) or ISO week (`2026-W48`). */
export function alertPeriod(frequency: 'daily' | 'weekly', now: Date): string {
  const day = now.toISOString().slice(0, 10);
  if (frequency === 'daily') return day;
  // ISO 8601 week: the week (Monday to Sunday) holding the year's first Thursday is week 1
  const d = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
  const dow = d.getUTCDay() || 7;
  d.setUTCDate(d.getUTCDate() + 4 - dow); // the Thursday of this week
  const yearStart = Date.UTC(d.getUTCFullYear(), 0, 1);
  const week = Math.ceil(((d.getTime() - yearStart) / 86_400_000 + 1) / 7);
  return `${d.getUTCFullYear()}-W${String(week).padStart(2, '0')}`;
}

/** The unsubscribe link of a search (works without signing in). */
export const unsubscribeUrl = (publicBaseUrl: string, s: Pick<SavedSearch, 'id' | 'unsubscribe_key'>): string =>
  `${appBaseUrl(publicBaseUrl)}/alerts/unsubscribe/${unsubscribeToken(s)}`;

/** Where a search's alert is sent from: a mail transport (nodemailer's `sendMail`). */
export interface MailTransport {
  sendMail(m: {
    from: string;
    to: string;
    subject: string;
    text: string;
    html: string;
    headers: Record<string, string>;
  }): Promise<unknown>;
  close(): void;
}

export interface AlertSenderDeps {
  store: Pick<StateStore, 'searches' | 'getAccountById' | 'listKeys'>;
  leads: LeadReader;
  config: Pick<ApiConfig, 'smtpUrl' | 'smtpFrom' | 'publicBaseUrl' | 'pageSizeDefault' | 'pageSizeMax' | 'pageMax'>;
  now: Date;
  log?: (line: string) => void;
  /** The mail transport (default: nodemailer over SMTP_URL). */
  transport?: MailTransport;
}

export interface AlertSummary {
  release: string | null;
  /** Searches with an alert. */
  searches: number;
  sent: number;
  /** Sent (or found empty) earlier in this period, or by another sender now. */
  already: number;
  /** Nothing new since the last alert: the period is marked, no e-mail. */
  nothing_new: number;
  /** Held: no key of the account grants access now. */
  no_access: number;
  /** Not sent: no address, a query the release refuses, or the send failed (logged; retried next run). */
  failed: number;
}

/** The leads with these ids, every lead column, in id order. */
export function leadsByIdQuery(src: LeadsSource, ids: readonly number[]): SqlQuery {
  return {
    sql: `SELECT ${LEAD_COLUMNS.map((c) => `l.${c}`).join(', ')} FROM ${src.leads} AS l WHERE l.id IN (${ids.map(() => '?').join(', ')}) ORDER BY l.id`,
    params: [...ids],
  };
}

/** What is new for one search in the release: new leads (the first `ALERT_LEADS_MAX`) and stage changes. */
async function whatIsNew(
  leads: LeadReader,
  snap: LeadSnapshot,
  s: SavedSearch,
  filters: ReturnType<typeof parseSearchQuery>['filters'],
): Promise<{ newLeads: Record<string, unknown>[]; newTotal: number; changed: StageChange[]; changedTotal: number }> {
  const ids = await areaIds(leads, snap.source.leads, filters);
  let newLeads: Record<string, unknown>[] = [];
  let newTotal = 0;
  if (snap.maxLeadId > s.watermark_lead_id) {
    const q = newLeadsQuery(snap.source, filters, s.watermark_lead_id, ids);
    const [count] = await leads.all<{ n: number }>(`SELECT count(*)::BIGINT AS n FROM (${q.sql})`, q.params);
    newTotal = Number(count?.n ?? 0);
    if (newTotal > 0) newLeads = await leads.all(`${q.sql}\nLIMIT ${ALERT_LEADS_MAX}`, q.params);
  }
  let changed: StageChange[] = [];
  let changedTotal = 0;
  if (snap.events && snap.maxEventId > s.watermark_event_id) {
    const q = eventsPageQuery(
      snap.events,
      snap.source,
      { types: ['lead.stage_changed'], filters },
      s.watermark_event_id,
      EVENTS_READ_MAX,
      ids,
    );
    const events = await leads.all<EventRow & Record<string, unknown>>(q.sql, q.params);
    // one entry per lead (its first stage before, its last after); new leads are listed as new
    const seenNew = new Set(newLeads.map((l) => Number(l['id'])));
    const byLead = new Map<number, { before: string | null; after: string | null }>();
    for (const e of events) {
      const id = Number(e.lead_id);
      if (seenNew.has(id) || id > s.watermark_lead_id) continue;
      const c = (JSON.parse(e.changes) as Record<string, { before?: unknown; after?: unknown }>)['lead_readiness'];
      const before = typeof c?.before === 'string' ? c.before : null;
      const after = typeof c?.after === 'string' ? c.after : null;
      const was = byLead.get(id);
      byLead.set(id, { before: was ? was.before : before, after });
    }
    changedTotal = byLead.size;
    const first = [...byLead.keys()].slice(0, ALERT_LEADS_MAX);
    if (first.length) {
      const q2 = leadsByIdQuery(snap.source, first);
      const rows = new Map((await leads.all(q2.sql, q2.params)).map((l) => [Number(l['id']), l]));
      changed = first.filter((id) => rows.has(id)).map((id) => ({ lead: rows.get(id)!, ...byLead.get(id)! }));
    }
  }
  return { newLeads, newTotal, changed, changedTotal };
}

/** What sending one alert needs besides its search: the sender's deps, the release, the transport, the app's URL. */
interface AlertRun {
  readonly deps: AlertSenderDeps;
  readonly snap: LeadSnapshot;
  readonly transport: MailTransport;
  readonly appBase: string;
  readonly log: (line: string) => void;
}

/** Send the alert of search `s` if it is due and has something new, counting the outcome in `summary`. */
async function sendAlert(c: AlertRun, s: SavedSearch, summary: AlertSummary): Promise<void> {
  const { deps, snap, transport, appBase, log } = c;
  const { store, config, now } = deps;
  const frequency = s.frequency as 'daily' | 'weekly';
  const period = alertPeriod(frequency, now);
  if (s.last_period === period) {
    summary.already++;
    return;
  }
  const [account, keys] = await Promise.all([store.getAccountById(s.account_id), store.listKeys(s.account_id)]);
  const access = alertAccess(account, keys, now);
  if (access.scope === null) {
    summary.no_access++;
    log(`alert ${s.id}: not sent: ${access.detail}`);
    return;
  }
  if (!s.email) {
    summary.failed++;
    log(`alert ${s.id}: not sent: the search has no address to send to`);
    return;
  }
  let parsed: ReturnType<typeof parseSearchQuery>;
  try {
    parsed = parseSearchQuery(s.query, snap.places, config);
  } catch (e) {
    summary.failed++;
    log(`alert ${s.id}: not sent: release ${snap.releaseId} refuses its query: ${(e as Error).message}`);
    return;
  }
  const found = await whatIsNew(deps.leads, snap, s, parsed.filters);
  const from: AlertMark = { period: s.last_period, leadId: s.watermark_lead_id, eventId: s.watermark_event_id };
  const to: AlertMark = {
    period,
    leadId: Math.max(s.watermark_lead_id, snap.maxLeadId),
    eventId: Math.max(s.watermark_event_id, snap.maxEventId),
  };
  if (found.newTotal === 0 && found.changedTotal === 0) {
    if (await store.searches.moveAlertMark(s.id, from, to, s.last_sent_at)) summary.nothing_new++;
    else summary.already++;
    return;
  }
  if (!(await store.searches.moveAlertMark(s.id, from, to, now.toISOString()))) {
    summary.already++; // another sender took this period
    return;
  }
  const mask = (l: Record<string, unknown>) => maskRecord('lead', l, access.scope!).record;
  const mail = alertMail({
    searchName: s.name,
    searchWords: searchInWords(parsed),
    frequency,
    releaseId: snap.releaseId,
    appBase,
    query: s.query,
    newLeads: found.newLeads.map(mask),
    newTotal: found.newTotal,
    changed: found.changed.map((c) => ({ ...c, lead: mask(c.lead) })),
    changedTotal: found.changedTotal,
    unsubscribeUrl: unsubscribeUrl(config.publicBaseUrl, s),
    attribution: attribution(access.scope)?.metadata.attribution ?? null,
  });
  try {
    await transport.sendMail({ from: mailFrom(config), to: s.email, ...mail });
    summary.sent++;
    log(
      `alert ${s.id}: sent (${found.newTotal} new, ${found.changedTotal} changed stage, scope ${access.scope}, period ${period})`,
    );
  } catch (e) {
    await store.searches.moveAlertMark(s.id, to, from, s.last_sent_at);
    summary.failed++;
    // (the address is never logged, even inside the mail server's answer)
    const why = String((e as Error).message)
      .split(s.email)
      .join('<address>');
    log(`alert ${s.id}: sending failed, retried next run: ${why}`);
  }
}

/** Send every alert due now (see the module comment); returns what happened. */
export async function sendAlerts(deps: AlertSenderDeps): Promise<AlertSummary> {
  const { store, config } = deps;
  const log = deps.log ?? (() => {});
  const searches = await store.searches.alertSearches();
  const summary: AlertSummary = {
    release: null,
    searches: searches.length,
    sent: 0,
    already: 0,
    nothing_new: 0,
    no_access: 0,
    failed: 0,
  };
  if (searches.length === 0) return summary;
  const snap = await deps.leads.snapshot();
  if (!snap) {
    log('alerts: no release published yet; nothing to send');
    return summary;
  }
  summary.release = snap.releaseId;
  if (!deps.transport && !config.smtpUrl) throw new Error('SMTP_URL is not set: alert e-mails cannot be sent');
  const transport = deps.transport ?? (nodemailer.createTransport(config.smtpUrl) as unknown as MailTransport);
  const appBase = appBaseUrl(config.publicBaseUrl);
  try {
    for (const s of searches) await sendAlert({ deps, snap, transport, appBase, log }, s, summary);
  } finally {
    if (!deps.transport) transport.close();
  }
  return summary;
}
