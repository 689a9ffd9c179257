/**
 * Issue 31, item 16: one paging style on every list. Each list is walked twice — by the body's
 * `next_cursor` passed as `cursor`, and by the `Link: <…>; rel="next"` header alone — and each
 * walk must yield every row exactly once (the union equals the total). The older parameters
 * (`page`, intel's `next_page`, events' `after`, deliveries' `limit`) keep working.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestApi, type TestApi, type TestResponse } from '../helpers/api.ts';
import { weeklyReleases } from '../helpers/weekly-releases.ts';

let api: TestApi;
const KEY = (): string => api.keys.custom; // every capability, no daily row cap
test.before(async () => {
  api = await startTestApi({ config: { webhookAllowHosts: ['127.0.0.1'] } });
});
test.after(async () => {
  await api?.close();
});

/** The `rel="next"` target of a response, as a path on this server; null when there is none. */
function nextLink(res: TestResponse): string | null {
  const link = res.headers.get('link') ?? '';
  const m = /<([^>]+)>;\s*rel="next"/.exec(link);
  if (!m) return null;
  const u = new URL(m[1]!);
  return u.pathname + u.search;
}

type Rows = (res: TestResponse) => unknown[];

/** Walk by `next_cursor` (appended as `cursor`); the ids seen and the pages taken. */
async function walkByCursor(
  first: string,
  rows: Rows,
  id: (r: any) => unknown,
  done: (res: TestResponse) => boolean = (r) => r.body.next_cursor === null,
): Promise<unknown[]> {
  const ids: unknown[] = [];
  let url = first;
  for (let i = 0; i < 500; i++) {
    const res = await api.request(url, { key: KEY() });
    assert.is(res.status, 200, `${url}: ${res.text.slice(0, 300)}`);
    assert.ok('next_cursor' in res.body, `${url}: next_cursor in the body`);
    ids.push(...rows(res).map(id));
    if (done(res)) {
      assert.is(nextLink(res), null, `${url}: no rel="next" on the last page`);
      return ids;
    }
    assert.type(res.body.next_cursor, 'string');
    const u = new URL(first, 'http://x');
    u.searchParams.set('cursor', res.body.next_cursor);
    u.searchParams.delete('page');
    url = u.pathname + u.search;
  }
  throw new Error(`${first}: more than 500 pages`);
}

/** Walk by `Link: rel="next"` alone. */
async function walkByLink(
  first: string,
  rows: Rows,
  id: (r: any) => unknown,
): Promise<{ ids: unknown[]; pages: number }> {
  const ids: unknown[] = [];
  let url: string | null = first;
  let pages = 0;
  while (url !== null && pages < 500) {
    const res = await api.request(url, { key: KEY() });
    assert.is(res.status, 200, `${url}: ${res.text.slice(0, 300)}`);
    ids.push(...rows(res).map(id));
    pages++;
    url = nextLink(res);
  }
  return { ids, pages };
}

/** Both walks yield every row once, `total` of them, in more than one page. */
async function checkList(
  first: string,
  total: number,
  rows: Rows,
  id: (r: any) => unknown,
  done?: (res: TestResponse) => boolean,
): Promise<void> {
  assert.ok(total > 0, `${first}: rows to walk`);
  const byCursor = await walkByCursor(first, rows, id, done);
  const byLink = await walkByLink(first, rows, id);
  assert.ok(byLink.pages > 2, `${first}: several pages (${byLink.pages})`);
  for (const [how, ids] of [
    ['next_cursor', byCursor],
    ['Link', byLink.ids],
  ] as const) {
    assert.is(new Set(ids).size, ids.length, `${first} by ${how}: no row twice`);
    assert.is(ids.length, total, `${first} by ${how}: every row`);
  }
  assert.equal(new Set(byCursor), new Set(byLink.ids));
}

const results: Rows = (res) => res.body.results;
const byId = (r: { id: unknown }): unknown => r.id;

test('leads, infrastructure and renewables: page + next_cursor + Link', async () => {
  const leads = await api.request('/v1/leads?county=Cork&page_size=1', { key: KEY() });
  await checkList('/v1/leads?county=Cork&page_size=40', leads.body.total, results, byId);
  const infra = await api.request('/v1/infrastructure?page_size=1', { key: KEY() });
  await checkList('/v1/infrastructure?page_size=3', infra.body.total, results, byId);
  const ren = await api.request('/v1/infrastructure/renewables?page_size=1', { key: KEY() });
  await checkList('/v1/infrastructure/renewables?page_size=2', ren.body.total, results, byId);
  // the page numbers still work, and agree with the cursor walk's first pages
  const p2 = await api.request('/v1/leads?county=Cork&page_size=40&page=2', { key: KEY() });
  assert.is(p2.body.page, 2);
  assert.ok(nextLink(p2)?.includes('cursor='));
});

test('the export pages: limit + next_cursor + Link', async () => {
  const total = (await api.request('/v1/leads?county=Cork&page_size=1', { key: KEY() })).body.total as number;
  await checkList('/v1/export/applications?county=Cork&limit=25', total, results, byId);
});

test('events: cursor (or after) + next_cursor + Link; the end is has_more false', async () => {
  // the tiny release is a first release, without events: the four weekly releases have them
  const w = await weeklyReleases();
  w.switchTo(w.ids.at(-1)!);
  const single = api;
  api = await startTestApi({ config: { dataDir: w.dataDir } });
  try {
    await walkEvents();
  } finally {
    await api.close();
    api = single;
  }
});

async function walkEvents(): Promise<void> {
  const all = await api.request('/v1/events?page_size=1000', { key: KEY() });
  assert.is(all.body.has_more, false, 'one page holds them all');
  const total = all.body.results.length as number;
  await checkList('/v1/events?page_size=10', total, results, byId, (r) => r.body.has_more === false);
  // `after`, the older spelling, is the same parameter
  const first = await api.request('/v1/events?page_size=10', { key: KEY() });
  const a = await api.request(`/v1/events?page_size=10&after=${encodeURIComponent(first.body.next_cursor)}`, {
    key: KEY(),
  });
  const c = await api.request(`/v1/events?page_size=10&cursor=${encodeURIComponent(first.body.next_cursor)}`, {
    key: KEY(),
  });
  assert.equal(a.body.results.map(byId), c.body.results.map(byId));
  const both = await api.request(
    `/v1/events?after=${encodeURIComponent(first.body.next_cursor)}&cursor=${encodeURIComponent(first.body.next_cursor)}`,
    { key: KEY() },
  );
  assert.is(both.status, 400);
}

test('market intelligence: page + next_page still, and now next_cursor + Link', async () => {
  const first = await api.request('/v1/intel/analytics?section=price_index&county=Cork,Dublin&page_size=1', {
    key: KEY(),
  });
  assert.is(first.status, 200, first.text.slice(0, 300));
  const total = first.body.total as number;
  const key = (r: Record<string, unknown>): string => JSON.stringify(r);
  await checkList('/v1/intel/analytics?section=price_index&county=Cork,Dublin&page_size=7', total, results, key);
  const p2 = await api.request('/v1/intel/analytics?section=price_index&county=Cork,Dublin&page_size=7&page=2', {
    key: KEY(),
  });
  assert.is(p2.body.next_page, 3, 'next_page kept');
  const byCursor = await api.request(
    `/v1/intel/analytics?section=price_index&county=Cork,Dublin&page_size=7&cursor=${encodeURIComponent(first.body.next_cursor)}`,
    { key: KEY() },
  );
  assert.is(byCursor.body.page, null);
  assert.equal(
    byCursor.body.results[0],
    (await api.request('/v1/intel/analytics?section=price_index&county=Cork,Dublin&page_size=1&page=2', { key: KEY() }))
      .body.results[0],
  );
});

test('webhook deliveries: limit + next_cursor + Link; the webhooks list is one page', async () => {
  const hook = await api.request('/v1/webhooks', {
    key: KEY(),
    method: 'POST',
    body: { url: 'http://127.0.0.1:9/hook' },
  });
  assert.is(hook.status, 201, hook.text.slice(0, 300));
  for (let i = 0; i < 7; i++)
    assert.is((await api.request(`/v1/webhooks/${hook.body.id}/test`, { key: KEY(), method: 'POST' })).status, 200);
  const all = await api.request(`/v1/webhooks/${hook.body.id}/deliveries`, { key: KEY() });
  assert.is(all.body.results.length, 7);
  assert.is(all.body.next_cursor, null);
  await checkList(`/v1/webhooks/${hook.body.id}/deliveries?limit=2`, 7, results, byId);
  const list = await api.request('/v1/webhooks', { key: KEY() });
  assert.is(list.body.next_cursor, null);
  assert.is(nextLink(list), null);
});

test("the GIS feeds and OGC items: cursor + Link (and the body's OGC next link)", async () => {
  const feed = await api.request('/v1/feeds/leads.geojson?authority=Cork%20County&page_size=1', { key: KEY() });
  const walk = await walkByLink(
    '/v1/feeds/leads.geojson?authority=Cork%20County&page_size=20',
    (r) => r.body.features,
    (f) => f.id,
  );
  assert.ok(walk.pages > 2);
  assert.is(new Set(walk.ids).size, feed.body.numberMatched);
  const items = await api.request('/v1/ogc/collections/infrastructure/items?limit=1', { key: KEY() });
  const ogc = await walkByLink(
    '/v1/ogc/collections/infrastructure/items?limit=3',
    (r) => r.body.features,
    (f) => f.id,
  );
  assert.is(new Set(ogc.ids).size, items.body.numberMatched);
});

test.run();
