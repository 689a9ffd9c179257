/**
 * The saved-search store (api/state/search-store.ts, `store.searches`) on both backends: a real
 * SQLite file (the sibling is another connection, as another process would open it) and the
 * local PostgreSQL server (the sibling is another pool on the schema, as another replica).
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { StateStore } from '../../../api/state/store-interface.ts';
import type { NewSearch } from '../../../api/state/search-store.ts';
import { postgresBackend, sqliteBackend, type StoreBackend } from '../../helpers/store-backends.ts';

const t0 = new Date('2026-11-20T10:00:00Z');

const search = (id: string, accountId: number, o: Partial<NewSearch> = {}): NewSearch => ({
  id,
  account_id: accountId,
  name: `search ${id}`,
  query: 'vertical=roofing&county=Cork',
  frequency: 'weekly',
  email: 'alerts@acme.example',
  unsubscribe_key: `key-${id}`,
  watermark_lead_id: 100,
  watermark_event_id: 7,
  ...o,
});

for (const [name, backend] of [
  ['sqlite', sqliteBackend()],
  ['postgres', postgresBackend('leads_searchtest')],
] as [string, StoreBackend][]) {
  const test = suite(`saved searches on ${name}`);
  let a: StateStore;
  let b: StateStore;
  let acme: number;
  let other: number;

  test.before(async () => {
    a = await backend.open({ now: () => t0 });
    b = await backend.openSibling(a, { now: () => t0 });
    acme = (await a.createAccount('acme', 'premium')).id;
    other = (await a.createAccount('other', 'pro')).id;
  });
  test.after(async () => {
    await a?.close();
    await b?.close();
    await backend.cleanup();
  });

  test('create, read, list per account (oldest first), rename, change the alert; another account reads nothing', async () => {
    const s1 = await a.searches.createSearch(search('ss_1', acme));
    assert.equal(s1, {
      ...search('ss_1', acme),
      last_period: null,
      last_sent_at: null,
      created_at: t0.toISOString(),
      updated_at: t0.toISOString(),
    });
    await a.searches.createSearch(search('ss_2', acme, { frequency: 'none', email: null }));
    await a.searches.createSearch(search('ss_3', other));
    assert.equal(
      (await b.searches.listSearches(acme)).map((s) => s.id),
      ['ss_1', 'ss_2'],
    );
    assert.equal(await b.searches.getSearch('ss_1'), s1, 'the other connection reads the same row');
    assert.is(await b.searches.updateSearch('ss_1', other, { name: 'stolen' }), null, 'not the account’s: nothing');
    assert.is((await b.searches.getSearch('ss_1'))!.name, 'search ss_1');
    const renamed = await b.searches.updateSearch('ss_2', acme, {
      name: 'Cork roofs',
      frequency: 'daily',
      email: 'sales@acme.example',
      watermarks: { leadId: 500, eventId: 40 },
    });
    assert.equal(
      [renamed!.name, renamed!.frequency, renamed!.email, renamed!.watermark_lead_id, renamed!.watermark_event_id],
      ['Cork roofs', 'daily', 'sales@acme.example', 500, 40],
    );
    assert.equal(
      (await a.searches.alertSearches()).map((s) => s.id),
      ['ss_1', 'ss_2', 'ss_3'],
    );
  });

  test('the alert mark moves once from what a sender read (compare-and-set across connections)', async () => {
    const from = { period: null, leadId: 100, eventId: 7 };
    const to = { period: '2026-W47', leadId: 180, eventId: 9 };
    assert.ok(await a.searches.moveAlertMark('ss_1', from, to, '2026-11-20T10:00:00.000Z'));
    assert.not.ok(await b.searches.moveAlertMark('ss_1', from, to, '2026-11-20T10:00:00.000Z'), 'moved already');
    const s = (await b.searches.getSearch('ss_1'))!;
    assert.equal(
      [s.last_period, s.watermark_lead_id, s.watermark_event_id, s.last_sent_at],
      ['2026-W47', 180, 9, '2026-11-20T10:00:00.000Z'],
    );
    // back (a failed send gives its claim back), then forward again
    assert.ok(await b.searches.moveAlertMark('ss_1', to, from, null));
    assert.is((await a.searches.getSearch('ss_1'))!.last_sent_at, null);
    assert.ok(await a.searches.moveAlertMark('ss_1', from, { ...to, period: '2026-W48' }, '2026-11-27T07:00:00.000Z'));
    assert.is((await a.searches.getSearch('ss_1'))!.last_sent_at, '2026-11-27T07:00:00.000Z');
  });

  test('unsubscribe turns the alert off; delete only the account’s own', async () => {
    const u = await b.searches.unsubscribe('ss_1');
    assert.is(u!.frequency, 'none');
    assert.is(await b.searches.unsubscribe('ss_nope'), null);
    assert.not.ok(await a.searches.deleteSearch('ss_3', acme));
    assert.ok(await a.searches.deleteSearch('ss_3', other));
    assert.is(await b.searches.getSearch('ss_3'), null);
    assert.equal(
      (await a.searches.alertSearches()).map((s) => s.id),
      ['ss_2'],
    );
  });

  test.run();
}
