/**
 * Every `link` of the GeoJSON layers leads somewhere real (issue 14.6), over real HTTP on the tiny
 * release: a link under the pipeline's PUBLIC_BASE_URL (`…/v1/infrastructure/{id}`,
 * `…/v1/leads/{id}`) is followed on the API and answers 200 with that record; any other link is
 * the record's own `public_url` (the planning authority's or the consenting body's page, not
 * fetched: no network in tests). Each layer must have links of the API kind or the public kind.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadPipelineConfig } from '../../../pipeline/config.ts';
import { startTestApi, type TestApi } from '../../helpers/api.ts';

let api: TestApi;
/** The base the pipeline wrote the links with (the tiny release is built with the defaults). */
const base = loadPipelineConfig({}, {}).publicBaseUrl;

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

for (const layer of ['infrastructure', 'leads'] as const) {
  test(`${layer} layer: every link is an API route answering 200 with the record, or the record's public page`, async () => {
    const all = await features(layer);
    assert.ok(all.length > 0);
    const kinds = new Map<string, number>();
    for (const f of all) {
      const link = f.properties['link'] as string;
      if (link.startsWith(`${base}/`)) {
        const path = `/v1/${link.slice(base.length + 1)}`;
        assert.match(path, new RegExp(`^/v1/(leads|infrastructure)/${f.id}$`));
        const res = await api.request(path, { key: api.keys.ent_api });
        assert.is(res.status, 200, `${link} → ${path}: ${res.text.slice(0, 200)}`);
        assert.is(res.body.id, f.id, link);
        kinds.set(`api ${path.split('/')[2]}`, (kinds.get(`api ${path.split('/')[2]}`) ?? 0) + 1);
      } else {
        assert.is(link, f.properties['public_url'], `feature ${f.id}: a link off the API is the record's public_url`);
        assert.match(link, /^https:\/\/[a-z0-9.-]+\//);
        kinds.set(`public ${new URL(link).host}`, (kinds.get(`public ${new URL(link).host}`) ?? 0) + 1);
      }
    }
    if (layer === 'infrastructure') {
      // both kinds occur: projects without a case page link to the API, cases to the consenting body
      assert.ok((kinds.get('api infrastructure') ?? 0) > 0 && (kinds.get('public www.pleanala.ie') ?? 0) > 0, JSON.stringify([...kinds]));
    }
  });
}

test('a lead without public_url would link to /v1/leads/{id}: that route answers too', async () => {
  const first = (await api.request('/v1/leads?page_size=1')).body.results[0];
  const res = await api.request(`/v1/leads/${first.id}`);
  assert.is(res.status, 200);
  assert.is(res.body.id, first.id);
});

test.run();
