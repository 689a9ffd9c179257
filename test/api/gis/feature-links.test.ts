/**
 * Every `link` of the served GeoJSON layers is the record's public page or null (issue 14.6, then
 * 31.15), over real HTTP on the tiny release: never a URL of the API — not the address a refresh
 * once baked in (`https://leads.example.ie/v1/…`, a keyed route), nor this server's — but the
 * record's own `public_url` (the planning authority's page, the consenting body's case page; not
 * fetched: no network in tests). An infrastructure project whose case is the consenting body's
 * links to `https://www.pleanala.ie/en-ie/case/<number>`; one without a case has no link and is
 * read on the API by its id. The same on the OGC items and one feature.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { consentingCaseUrl } from '../../../pipeline/sources/infrastructure.ts';
import { startTestApi, type TestApi } from '../../helpers/api.ts';

let api: TestApi;

test.before(async () => {
  api = await startTestApi();
});
test.after(async () => {
  await api?.close();
});

/** Every feature of a feed, following `next` links. */
async function features(layer: 'leads' | 'infrastructure'): Promise<{ id: number; properties: Record<string, any> }[]> {
  const out: { id: number; properties: Record<string, any> }[] = [];
  let url: string | null = `/v1/feeds/${layer}.geojson?page_size=1000`;
  while (url) {
    const res = await api.request(url, { key: api.keys.ent_feed });
    assert.is(res.status, 200, res.text.slice(0, 200));
    out.push(...res.body.features);
    const next = (res.body.links ?? []).find((l: { rel: string }) => l.rel === 'next');
    url = next ? new URL(next.href).pathname + new URL(next.href).search : null;
  }
  return out;
}

const notTheApi = (link: string): boolean =>
  !link.includes('leads.example.ie') &&
  !link.includes('/v1/') &&
  !link.startsWith(api.baseUrl) &&
  !link.startsWith('http://localhost');

for (const layer of ['infrastructure', 'leads'] as const) {
  test(`${layer} layer: every link is the record's public page or null, never a URL of the API`, async () => {
    const all = await features(layer);
    assert.ok(all.length > 0);
    const kinds = new Map<string, number>();
    const count = (k: string): void => void kinds.set(k, (kinds.get(k) ?? 0) + 1);
    for (const f of all) {
      const link = f.properties['link'] as string | null;
      assert.is(link, f.properties['public_url'], `feature ${f.id}: the link is the record's public_url`);
      if (link === null) {
        count('none');
        continue;
      }
      assert.ok(notTheApi(link), `feature ${f.id}: ${link}`);
      assert.match(link, /^https:\/\/[a-z0-9.-]+\//);
      count(`public ${new URL(link).host}`);
      if (layer === 'infrastructure') {
        const page = consentingCaseUrl(f.properties['case_id']);
        if (page !== null) assert.is(link, page, `feature ${f.id}: its case page`);
      }
    }
    if (layer === 'infrastructure') {
      // both occur: cases link to the consenting body's page, projects without one have no link
      assert.ok(
        (kinds.get('public www.pleanala.ie') ?? 0) > 0 && (kinds.get('none') ?? 0) > 0,
        JSON.stringify([...kinds]),
      );
    }
  });
}

test('a project without a public page is read on the API by its feature id; OGC items and one feature carry the same links', async () => {
  const infra = await features('infrastructure');
  const without = infra.find((f) => f.properties['link'] === null)!;
  const res = await api.request(`/v1/infrastructure/${without.id}`, { key: api.keys.ent_api });
  assert.is(res.status, 200);
  assert.is(res.body.id, without.id);
  const items = (await api.request('/v1/ogc/collections/infrastructure/items?limit=10000', { key: api.keys.ent_feed }))
    .body.features as typeof infra;
  assert.equal(
    items.map((f) => [f.id, f.properties['link']]),
    infra.map((f) => [f.id, f.properties['link']]),
  );
  const one = await api.request(`/v1/ogc/collections/infrastructure/items/${without.id}`, { key: api.keys.ent_feed });
  assert.is(one.body.properties.link, null);
});

test.run();
