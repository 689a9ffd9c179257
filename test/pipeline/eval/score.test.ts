/**
 * The scoring of `make eval` (pipeline/eval/score.ts) on hand-made cases, and the classification's
 * figures on the labelled real Dublin City rows held as a floor (skipped when ../shared/realdata
 * is absent): a rule that makes them worse fails here before it reaches a release.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync } from 'node:fs';
import {
  confusionTable,
  formatReport,
  prf,
  scoreClassification,
  type GoldLabel,
  type Prediction,
} from '../../../pipeline/eval/score.ts';
import {
  LABELS,
  predictReal,
  readLabels,
  readRealDescriptions,
  REAL_CSV,
  VALIDATION_LABELS,
} from '../../../pipeline/eval/run.ts';
import { formatGenerated, scoreGenerated } from '../../../pipeline/eval/generated.ts';
import { VERTICALS } from '../../../pipeline/normalise/classify.ts';
import { USE_CLASS_CODES } from '../../../common/lead-vocabulary.ts';

const USE_CLASSES: readonly string[] = USE_CLASS_CODES;
import { WORKS_KINDS } from '../../../pipeline/types.ts';
import { testIf } from '../../helpers/skip.ts';

const gold = (o: Partial<GoldLabel>): GoldLabel => ({
  app_ref: 'x',
  use_class: 'other',
  works_kind: 'new_works',
  explicit: [],
  implied: [],
  verticals: [],
  ...o,
});
const pred = (o: Partial<Prediction>): Prediction => ({
  use_class: 'other',
  works_kind: 'new_works',
  verticals: [],
  explicit_verticals: [],
  ...o,
});

test('prf: precision, recall and F1 from counts, 0 when undefined', () => {
  assert.equal(prf(0, 0, 0), { tp: 0, fp: 0, fn: 0, precision: 0, recall: 0, f1: 0 });
  const p = prf(3, 1, 2);
  assert.is(p.precision, 0.75);
  assert.is(p.recall, 0.6);
  assert.ok(Math.abs(p.f1 - 2 / 3) < 1e-12);
});

test('scoreClassification: per vertical, micro, macro, use class with alternatives, no-work rows', () => {
  const g = [
    gold({ use_class: 'residential_extension', verticals: ['groundworks', 'roofing'], explicit: ['roofing'] }),
    gold({ use_class: 'change_of_use', use_class_alt: ['hospitality'], verticals: ['kitchens_interiors', 'hvac'] }),
    gold({ use_class: 'residential_extension', works_kind: 'retention' }),
  ];
  const p = [
    pred({
      use_class: 'residential_extension',
      verticals: ['groundworks', 'roofing', 'scaffolding'],
      explicit_verticals: ['roofing'],
    }),
    pred({ use_class: 'hospitality', verticals: ['kitchens_interiors'] }),
    pred({ use_class: 'other', works_kind: 'new_works', verticals: ['groundworks'] }),
  ];
  const r = scoreClassification(g, p);
  assert.is(r.rows, 3);
  assert.equal([r.micro.tp, r.micro.fp, r.micro.fn], [3, 2, 1]);
  assert.equal([r.perVertical.groundworks!.tp, r.perVertical.groundworks!.fp], [1, 1]);
  assert.is(r.perVertical.hvac!.recall, 0);
  assert.is(r.macro.verticals, 5); // groundworks, roofing, scaffolding, kitchens_interiors, hvac
  assert.equal([r.explicit.tp, r.explicit.fp, r.explicit.fn], [1, 0, 0]);
  assert.is(r.useClassRight, 2); // the change of use's destination is an accepted alternative
  assert.is(r.useClassStrict, 1);
  assert.equal(r.useClassConfusion.residential_extension, { residential_extension: 1, other: 1 });
  assert.is(r.worksKindRight, 2);
  assert.equal(r.noWork, { rows: 1, published: 1 });
  const text = formatReport('t', r);
  assert.match(text, /micro\s+4\s+0\.60\s+0\.75\s+0\.67/);
  assert.match(text, /use class right: 2\/3/);
  assert.throws(() => scoreClassification(g, p.slice(1)), /3 labels but 2 predictions/);
});

test('confusionTable: labels as rows, predictions as columns, dots for none', () => {
  assert.is(
    confusionTable({ a: { a: 2, b: 1 }, b: { b: 3 } }),
    ['label \\ got    a    b', 'a            2    1', 'b            .    3'].join('\n'),
  );
});

test('the labels follow the policy: known classes and kinds, published = explicit ∪ implied, none without work to sell', () => {
  const codes = new Set<string>(VERTICALS.map((v) => v.code));
  for (const file of [LABELS, VALIDATION_LABELS]) {
    const labels = readLabels(file);
    assert.ok(labels.length >= 100, file);
    assert.is(new Set(labels.map((l) => l.app_ref)).size, labels.length, 'one label per app_ref');
    for (const l of labels) {
      assert.ok(USE_CLASSES.includes(l.use_class), l.app_ref);
      for (const u of l.use_class_alt ?? []) assert.ok(USE_CLASSES.includes(u), l.app_ref);
      assert.ok((WORKS_KINDS as readonly string[]).includes(l.works_kind), l.app_ref);
      for (const v of l.verticals) assert.ok(codes.has(v), `${l.app_ref} ${v}`);
      assert.equal(l.verticals, [...new Set([...l.explicit, ...l.implied])].sort(), l.app_ref);
      if (['retention', 'amendment', 'declaration'].includes(l.works_kind)) assert.equal(l.verticals, [], l.app_ref);
      assert.not.ok('details' in l || 'description' in l, 'labels carry no real text');
    }
  }
  assert.ok(readLabels(LABELS).length >= 400);
});

const withReal = testIf(
  test,
  existsSync(REAL_CSV) ? null : `${REAL_CSV} is absent (shared real data, not in the repository)`,
);
withReal('real Dublin City rows: the figures of docs/data-quality.md hold (floors)', () => {
  const text = readRealDescriptions()!;
  for (const [file, floor] of [
    [LABELS, 0.95],
    [VALIDATION_LABELS, 0.9],
  ] as const) {
    const labels = readLabels(file);
    const r = scoreClassification(labels, predictReal(labels, text));
    assert.ok(r.micro.f1 >= floor, `${file}: micro F1 ${r.micro.f1.toFixed(3)} < ${floor}`);
    assert.ok(r.useClassRight / r.rows >= 0.9, `${file}: use class ${r.useClassRight}/${r.rows}`);
    assert.is(r.noWork.published, 0, `${file}: no-work rows published with verticals`);
  }
});

test("generated descriptions: the generator's truth is met (use class, trades, demolition)", () => {
  const r = scoreGenerated(600);
  assert.is(r.rows, 600);
  assert.ok(r.useClassRight / r.useClassScored >= 0.95, `use class ${r.useClassRight}/${r.useClassScored}`);
  assert.ok(r.demolition.f1 >= 0.95, `demolition F1 ${r.demolition.f1}`);
  for (const [v, t] of Object.entries(r.trade))
    if (v !== 'landscaping') assert.ok(t.published / t.rows >= 0.95, `${v} ${t.published}/${t.rows}`);
  assert.match(formatGenerated(r), /use class right: \d+\/\d+/);
});

test.run();
