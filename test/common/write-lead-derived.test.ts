/**
 * The lead record is declared once (schemas/lead.schema.json): the files derived from it and
 * checked in — the pipeline's record type, the list page's result and the detail schema — are
 * what `make schemas` writes, and the API's columns are the schema's properties in order.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { derivedFiles, leadDetailSchema, leadRecordTs, leadsPageSchema } from '../../common/write-lead-derived.ts';
import { LEAD_COLUMNS, LEAD_SCHEMA } from '../../common/lead-record.ts';
import { REPO_ROOT } from '../helpers/tmp.ts';

test('every derived file is up to date (run `make schemas` after editing schemas/lead.schema.json)', () => {
  for (const [path, text] of Object.entries(derivedFiles())) {
    assert.is(readFileSync(join(REPO_ROOT, path), 'utf8'), text, path);
  }
});

test('a field added to the lead schema reaches the record type, the page result and the detail, in place', () => {
  const saved = LEAD_SCHEMA.properties;
  const entries = Object.entries(saved);
  const at = entries.findIndex(([k]) => k === 'works_kind') + 1;
  // the schema object is shared: add a field for this test only, in the middle
  LEAD_SCHEMA.properties = Object.fromEntries([
    ...entries.slice(0, at),
    ['roof_area_m2', { type: ['number', 'null'], description: 'Roof area.' }],
    ...entries.slice(at),
  ]);
  try {
    assert.match(
      leadRecordTs(),
      /works_kind: [^\n]+;\n {2}\/\*\* Roof area\. \*\/\n {2}roof_area_m2: number \| null;\n/,
    );
    const page = leadsPageSchema(JSON.parse(readFileSync(join(REPO_ROOT, 'schemas/leads-page.schema.json'), 'utf8')));
    const keys = Object.keys(page.$defs.result.properties);
    assert.is(keys[keys.indexOf('works_kind') + 1], 'roof_area_m2');
    assert.equal(page.$defs.result.properties.roof_area_m2, { $ref: 'lead.schema.json#/properties/roof_area_m2' });
    assert.ok(page.$defs.result.required.includes('roof_area_m2'));
    assert.is(keys.at(-1), 'distance_m', "the page's own field stays, after the lead's");
    const detail = leadDetailSchema(
      JSON.parse(readFileSync(join(REPO_ROOT, 'schemas/lead-detail.schema.json'), 'utf8')),
    );
    assert.ok('roof_area_m2' in detail.properties && detail.required.includes('roof_area_m2'));
    assert.equal(
      detail.properties.main_contractor,
      JSON.parse(readFileSync(join(REPO_ROOT, 'schemas/lead-detail.schema.json'), 'utf8')).properties.main_contractor,
      'an override stays',
    );
  } finally {
    LEAD_SCHEMA.properties = saved;
  }
});

test("the API's lead columns are the schema's properties, in order", () => {
  const schema = JSON.parse(readFileSync(join(REPO_ROOT, 'schemas/lead.schema.json'), 'utf8'));
  assert.equal([...LEAD_COLUMNS], Object.keys(schema.properties));
});

test.run();
