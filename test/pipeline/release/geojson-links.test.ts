/**
 * The feature links of a release built by the pipeline from generated raw files (the tiny
 * release, issue 31.15): no `link` names the API — in particular not the address a refresh used to
 * bake in (`https://leads.example.ie/v1/…`) — and each is the record's `public_url` or null; an
 * infrastructure project with a consenting-body case reference links to that case's public page
 * (`https://www.pleanala.ie/en-ie/case/<number>`), one without any reference has no link.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { consentingCaseUrl, CONSENTING_CASE_URL } from '../../../pipeline/sources/infrastructure.ts';
import { tinyRelease } from '../../helpers/api.ts';

type Feature = { id: number; properties: Record<string, any> };
let dir = '';

test.before(async () => {
  dir = (await tinyRelease()).dir;
});

async function lines(file: string): Promise<Feature[]> {
  return (await readFile(join(dir, file), 'utf8'))
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Feature);
}

test('infrastructure: no link to the API; a case reference of the consenting body links to its public case page; no reference, no link', async () => {
  const features = await lines('geojson/infrastructure.ndjson');
  assert.ok(features.length > 0);
  const kinds = { casePage: 0, none: 0 };
  for (const f of features) {
    const { link, public_url: url, case_id: ref } = f.properties;
    assert.is(link, url, `feature ${f.id}: the link is the record's public_url`);
    if (link !== null) {
      assert.not.match(link, /leads\.example\.ie|\/v1\//, `feature ${f.id}: ${link} is not a URL of the API`);
      assert.match(link, /^https:\/\/[a-z0-9.-]+\//);
    }
    const page = consentingCaseUrl(ref);
    if (page !== null) {
      // the generator writes the consenting body's own link, which is the same page
      assert.is(link, page, `feature ${f.id} (${ref as string}) links to its case page`);
      assert.ok(link.startsWith(CONSENTING_CASE_URL));
      kinds.casePage++;
    }
    if (ref === null) (assert.is(link, null, `feature ${f.id}: no case, no page`), kinds.none++);
  }
  assert.ok(kinds.casePage > 0 && kinds.none > 0, JSON.stringify(kinds));
});

test("leads: every link is the authority's page of the application (public_url) or null, never the API", async () => {
  const index = JSON.parse(await readFile(join(dir, 'geojson', 'index.json'), 'utf8')) as {
    layers: { file?: string }[];
  };
  let n = 0;
  for (const layer of index.layers) {
    if (!layer.file?.startsWith('geojson/leads/')) continue;
    for (const f of await lines(layer.file)) {
      n++;
      assert.is(f.properties.link, f.properties.public_url, `lead ${f.id}`);
      if (f.properties.link !== null) assert.not.match(f.properties.link, /leads\.example\.ie|\/v1\//, `lead ${f.id}`);
    }
  }
  assert.ok(n > 0);
});

test.run();
