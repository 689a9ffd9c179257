/**
 * The classification's vocabulary (common/lead-vocabulary.ts) is what both sides use: the
 * pipeline's verticals (each with its keywords) are exactly its codes in its order, the lead
 * filters accept exactly its values, and the lead schema's enums hold no other value.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { SCALES, USE_CLASS_CODES, VERTICAL_CODES, WORKS_KINDS } from '../../common/lead-vocabulary.ts';
import { VERTICALS } from '../../pipeline/normalise/classify.ts';
import { FILTERS } from '../../api/query/lead-filters.ts';
import { LEAD_SCHEMA } from '../../common/lead-record.ts';

const valuesOf = (name: string): readonly string[] => {
  const f = FILTERS.find((x) => x.name === name);
  assert.ok(f && 'values' in f, `filter ${name} has values`);
  return (f as { values: readonly string[] }).values;
};

test('the pipeline classifies into the vocabulary: one vertical per code, in its order', () => {
  assert.equal(
    VERTICALS.map((v) => v.code),
    [...VERTICAL_CODES],
  );
});

test('the lead filters accept exactly the vocabulary', () => {
  assert.equal(valuesOf('vertical'), VERTICAL_CODES);
  assert.equal(valuesOf('explicit_vertical'), VERTICAL_CODES);
  assert.equal(valuesOf('use_class'), USE_CLASS_CODES);
  assert.equal(valuesOf('works_kind'), WORKS_KINDS);
  assert.equal(valuesOf('scale'), SCALES);
});

test("the lead schema's enums hold nothing outside the vocabulary", () => {
  for (const [field, vocabulary] of [
    ['works_kind', WORKS_KINDS],
    ['scale', SCALES],
  ] as const) {
    const values = (LEAD_SCHEMA.properties[field]?.enum ?? []).filter((v): v is string => v !== null);
    for (const v of values) assert.ok((vocabulary as readonly string[]).includes(v), `${field}: ${v}`);
  }
});

test.run();
