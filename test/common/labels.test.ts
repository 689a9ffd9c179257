/** Every code a buyer can meet has words: the trades of the classifier, the stages and kinds of the lead schema. */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  STAGE_LABELS,
  STATUS_LABELS,
  VERTICAL_LABELS,
  WORKS_KIND_LABELS,
  labelOf,
  humanise,
} from '../../common/labels.ts';
import { VERTICALS } from '../../pipeline/normalise/classify.ts';
import { LEAD_SCHEMA } from '../../common/lead-record.ts';

test("the classifier's trades and the labels are the same set, and the classifier reads its labels from them", () => {
  assert.equal(VERTICALS.map((v) => v.code).sort(), Object.keys(VERTICAL_LABELS).sort());
  for (const v of VERTICALS) assert.is(v.label, VERTICAL_LABELS[v.code]);
});

test('every stage, status and kind of works of the lead schema has a label', () => {
  for (const [field, labels] of [
    ['lead_readiness', STAGE_LABELS],
    ['status', STATUS_LABELS],
    ['works_kind', WORKS_KIND_LABELS],
  ] as const) {
    const codes = (LEAD_SCHEMA.properties[field]!.enum ?? []).filter((v): v is string => v !== null);
    assert.equal(codes.sort(), Object.keys(labels).sort(), field);
  }
});

test('an unknown code is humanised', () => {
  assert.is(labelOf('use_class', 'warehouse_logistics'), 'Warehouse and logistics');
  assert.is(labelOf('use_class', 'data_centre'), 'Data centre');
  assert.is(humanise('office'), 'Office');
  assert.is(labelOf('lead_readiness', 'commencing'), 'Commencing');
});

test.run();
