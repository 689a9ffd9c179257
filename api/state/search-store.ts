/**
 * Saved searches and their e-mail alerts (issue 32), written once over any `Backend` and exposed
 * as `store.searches`. Migration 40 (versions 40–49 are reserved for them).
 *
 * A saved search is an explorer query string (validated by the `/v1/leads` parser before it is
 * stored: api/alerts/saved-search.ts) with a name, an alert frequency (`none`, `daily`,
 * `weekly`) and the address alerts go to. The address is the account owner's own setting: it is
 * used to send, shown only to the account on its searches page, and never logged.
 *
 * What an alert has already covered is kept per search: the lead-id and event-id watermarks (the
 * highest lead id and stage-change event id of the release the last alert read) and the period
 * (`2026-11-27` for daily, `2026-W48` for weekly) it was sent for. The sender moves them with a
 * compare-and-set (`moveAlertMark`), so of two senders running at once (two replicas, a timer
 * and an operator) exactly one sends a search's alert for a period.
 *
 * `unsubscribe_key` is 32 random bytes per search that sign its unsubscribe links
 * (api/alerts/unsubscribe-token.ts); deleting the search makes its links dead.
 */
import { rows, template, type Backend, type Row } from './backend.ts';
import type { AlertFrequency } from './tables.ts';

export type { AlertFrequency };

/** The alert frequencies, in the order forms list them. */
export const ALERT_FREQUENCIES: readonly AlertFrequency[] = ['none', 'daily', 'weekly'];

export interface SavedSearch {
  /** `ss_` + 24 hex. */
  id: string;
  account_id: number;
  name: string;
  /** The canonical explorer query string (filters in the filter table's order, then `sort`), without `?`. */
  query: string;
  frequency: AlertFrequency;
  /** Where alerts go (null while the frequency is `none` and none was given). */
  email: string | null;
  unsubscribe_key: string;
  watermark_lead_id: number;
  watermark_event_id: number;
  /** The period the last alert was sent (or found nothing) for; null before the first. */
  last_period: string | null;
  last_sent_at: string | null;
  created_at: string;
  updated_at: string;
}

export type NewSearch = Pick<
  SavedSearch,
  | 'id'
  | 'account_id'
  | 'name'
  | 'query'
  | 'frequency'
  | 'email'
  | 'unsubscribe_key'
  | 'watermark_lead_id'
  | 'watermark_event_id'
>;

/** What an alert has covered: the period and both watermarks. */
export interface AlertMark {
  period: string | null;
  leadId: number;
  eventId: number;
}

export interface SearchChange {
  name?: string;
  frequency?: AlertFrequency;
  email?: string | null;
  /** Start the alert afresh from these watermarks (when an alert is switched on). */
  watermarks?: { leadId: number; eventId: number };
}

export interface SearchStore {
  createSearch(s: NewSearch): Promise<SavedSearch>;
  /** A search by id (any account), or null. */
  getSearch(id: string): Promise<SavedSearch | null>;
  /** The account's searches, oldest first. */
  listSearches(accountId: number): Promise<SavedSearch[]>;
  /** Change one of the account's searches; null when it is not the account's (or does not exist). */
  updateSearch(id: string, accountId: number, change: SearchChange): Promise<SavedSearch | null>;
  /** Delete one of the account's searches; false when it is not the account's. */
  deleteSearch(id: string, accountId: number): Promise<boolean>;
  /** Every search with an alert (frequency daily or weekly), in id order. */
  alertSearches(): Promise<SavedSearch[]>;
  /**
   * Move a search's alert mark from `from` to `to`, with `last_sent_at` set to `sentAt`, only if
   * it still is `from`: true when moved. One statement, so exactly one of several
   * senders moves it.
   */
  moveAlertMark(id: string, from: AlertMark, to: AlertMark, sentAt: string | null): Promise<boolean>;
  /** Turn a search's alert off (the unsubscribe link); null when there is no such search. */
  unsubscribe(id: string): Promise<SavedSearch | null>;
}

const COLUMNS = [
  'id',
  'account_id',
  'name',
  'query',
  'frequency',
  'email',
  'unsubscribe_key',
  'watermark_lead_id',
  'watermark_event_id',
  'last_period',
  'last_sent_at',
  'created_at',
  'updated_at',
] as const;

function searchQueries(b: Backend) {
  const { db } = b;
  const select = () => db.selectFrom('saved_searches').select(COLUMNS);
  return {
    insert: (s: NewSearch, at: string) =>
      db
        .insertInto('saved_searches')
        .values({ ...s, last_period: null, last_sent_at: null, created_at: at, updated_at: at })
        .compile(),
    byId: template((id: string) => select().where('id', '=', id)),
    ofAccount: template((accountId: number) =>
      select().where('account_id', '=', accountId).orderBy('created_at').orderBy('id'),
    ),
    update: (id: string, accountId: number, change: SearchChange, at: string) =>
      db
        .updateTable('saved_searches')
        .set({
          updated_at: at,
          ...(change.name !== undefined ? { name: change.name } : {}),
          ...(change.frequency !== undefined ? { frequency: change.frequency } : {}),
          ...(change.email !== undefined ? { email: change.email } : {}),
          ...(change.watermarks
            ? {
                watermark_lead_id: change.watermarks.leadId,
                watermark_event_id: change.watermarks.eventId,
                last_period: null,
              }
            : {}),
        })
        .where('id', '=', id)
        .where('account_id', '=', accountId)
        .returning('id')
        .compile(),
    delete: template((id: string, accountId: number) =>
      db.deleteFrom('saved_searches').where('id', '=', id).where('account_id', '=', accountId).returning('id'),
    ),
    alerting: template((none: AlertFrequency) => select().where('frequency', '<>', none).orderBy('id')),
    move: (id: string, from: AlertMark, to: AlertMark, sentAt: string | null, at: string) =>
      db
        .updateTable('saved_searches')
        .set({
          last_period: to.period,
          watermark_lead_id: to.leadId,
          watermark_event_id: to.eventId,
          updated_at: at,
          last_sent_at: sentAt,
        })
        .where('id', '=', id)
        .where('watermark_lead_id', '=', from.leadId)
        .where('watermark_event_id', '=', from.eventId)
        .where((eb) => (from.period === null ? eb('last_period', 'is', null) : eb('last_period', '=', from.period)))
        .returning('id')
        .compile(),
    unsubscribe: template((at: string, none: string, id: string) =>
      db
        .updateTable('saved_searches')
        .set({ frequency: none as AlertFrequency, updated_at: at })
        .where('id', '=', id)
        .returning('id'),
    ),
  };
}

const toSearch = (r: Row): SavedSearch => ({
  ...(r as SavedSearch),
  account_id: Number(r['account_id']),
  watermark_lead_id: Number(r['watermark_lead_id']),
  watermark_event_id: Number(r['watermark_event_id']),
});

/** The saved-search store on `b`; `now` dates every row (tests inject a clock). */
export function searchStore(b: Backend, now: () => Date): SearchStore {
  const q = searchQueries(b);
  const iso = (): string => now().toISOString();
  const one = async (id: string): Promise<SavedSearch | null> => {
    const [r] = await b.run('plain', () => rows(q.byId(id)));
    return r ? toSearch(r) : null;
  };
  return {
    async createSearch(s) {
      await b.run('plain', () => rows(q.insert(s, iso())));
      return (await one(s.id))!;
    },
    getSearch: one,
    async listSearches(accountId) {
      return (await b.run('plain', () => rows(q.ofAccount(accountId)))).map(toSearch);
    },
    async updateSearch(id, accountId, change) {
      const [r] = await b.run('plain', () => rows(q.update(id, accountId, change, iso())));
      return r ? one(id) : null;
    },
    async deleteSearch(id, accountId) {
      return (await b.run('plain', () => rows(q.delete(id, accountId)))).length > 0;
    },
    async alertSearches() {
      return (await b.run('plain', () => rows(q.alerting('none' as AlertFrequency)))).map(toSearch);
    },
    async moveAlertMark(id, from, to, sentAt) {
      return (await b.run('plain', () => rows(q.move(id, from, to, sentAt, iso())))).length > 0;
    },
    async unsubscribe(id) {
      const [r] = await b.run('plain', () => rows(q.unsubscribe(iso(), 'none', id)));
      return r ? one(id) : null;
    },
  };
}
