/**
 * Scoring of the classification against labels: per-vertical precision / recall / F1 (micro and
 * macro), use-class accuracy with a confusion table, kind-of-works accuracy, and how many
 * applications with no work to sell were published with verticals. Pure; `formatReport` renders
 * the plain-text tables `make eval` prints.
 */
import { VERTICALS } from '../normalise/classify.ts';

/** One hand label (test/fixtures/classification/dublin-labels.jsonl; docs/data-quality.md). */
export interface GoldLabel {
  app_ref: string;
  use_class: string;
  /** Other use classes the policy accepts as equally right (a change of use's destination). */
  use_class_alt?: string[];
  works_kind: string;
  explicit: string[];
  implied: string[];
  /** The published set: explicit ∪ implied (empty when there is no work to sell). */
  verticals: string[];
}

/** What the classifier answered for the same row. */
export interface Prediction {
  use_class: string;
  works_kind: string;
  verticals: readonly string[];
  explicit_verticals: readonly string[];
}

export interface Prf {
  tp: number;
  fp: number;
  fn: number;
  precision: number;
  recall: number;
  f1: number;
}

export interface Report {
  rows: number;
  perVertical: Record<string, Prf>;
  micro: Prf;
  /** Mean of the per-vertical F1 (and P, R) over verticals with a label or a prediction. */
  macro: { precision: number; recall: number; f1: number; verticals: number };
  /** The explicit verticals (`explicit_verticals`, what `explicit_vertical=` filters on) against the labels' explicit ones. */
  explicit: Prf;
  useClassRight: number;
  useClassStrict: number;
  /** gold class → predicted class → count. */
  useClassConfusion: Record<string, Record<string, number>>;
  worksKindRight: number;
  worksKindConfusion: Record<string, Record<string, number>>;
  /** Rows labelled with no verticals, and how many of them the classifier published with some. */
  noWork: { rows: number; published: number };
}

/** Precision, recall and F1 from counts (0 when undefined). */
export function prf(tp: number, fp: number, fn: number): Prf {
  const precision = tp + fp === 0 ? 0 : tp / (tp + fp);
  const recall = tp + fn === 0 ? 0 : tp / (tp + fn);
  const f1 = precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall);
  return { tp, fp, fn, precision, recall, f1 };
}

function bump(m: Record<string, Record<string, number>>, a: string, b: string): void {
  (m[a] ??= {})[b] = (m[a]![b] ?? 0) + 1;
}

/**
 * Score predictions against labels, row by row (the two arrays in the same order).
 *
 * @example scoreClassification([gold], [pred]).micro.f1
 */
export function scoreClassification(gold: readonly GoldLabel[], pred: readonly Prediction[]): Report {
  if (gold.length !== pred.length) throw new Error(`${gold.length} labels but ${pred.length} predictions`);
  const counts = new Map(VERTICALS.map((v) => [v.code, { tp: 0, fp: 0, fn: 0 }]));
  const ex = { tp: 0, fp: 0, fn: 0 };
  const useClassConfusion: Record<string, Record<string, number>> = {};
  const worksKindConfusion: Record<string, Record<string, number>> = {};
  let useClassRight = 0;
  let useClassStrict = 0;
  let worksKindRight = 0;
  const noWork = { rows: 0, published: 0 };
  gold.forEach((g, i) => {
    const p = pred[i]!;
    const want = new Set(g.verticals);
    const got = new Set(p.verticals);
    for (const [code, c] of counts) {
      if (want.has(code) && got.has(code)) c.tp++;
      else if (got.has(code)) c.fp++;
      else if (want.has(code)) c.fn++;
    }
    const wantEx = new Set(g.explicit);
    for (const v of p.explicit_verticals)
      if (wantEx.has(v)) ex.tp++;
      else ex.fp++;
    for (const v of wantEx) if (!p.explicit_verticals.includes(v)) ex.fn++;
    if (p.use_class === g.use_class) useClassStrict++;
    if (p.use_class === g.use_class || (g.use_class_alt ?? []).includes(p.use_class)) useClassRight++;
    bump(useClassConfusion, g.use_class, p.use_class);
    if (p.works_kind === g.works_kind) worksKindRight++;
    bump(worksKindConfusion, g.works_kind, p.works_kind);
    if (g.verticals.length === 0) {
      noWork.rows++;
      if (p.verticals.length > 0) noWork.published++;
    }
  });
  const perVertical: Record<string, Prf> = {};
  let tp = 0,
    fp = 0,
    fn = 0;
  const macro = { precision: 0, recall: 0, f1: 0, verticals: 0 };
  for (const [code, c] of counts) {
    perVertical[code] = prf(c.tp, c.fp, c.fn);
    tp += c.tp;
    fp += c.fp;
    fn += c.fn;
    if (c.tp + c.fp + c.fn > 0) {
      macro.verticals++;
      macro.precision += perVertical[code]!.precision;
      macro.recall += perVertical[code]!.recall;
      macro.f1 += perVertical[code]!.f1;
    }
  }
  if (macro.verticals > 0) {
    macro.precision /= macro.verticals;
    macro.recall /= macro.verticals;
    macro.f1 /= macro.verticals;
  }
  return {
    rows: gold.length,
    perVertical,
    micro: prf(tp, fp, fn),
    macro,
    explicit: prf(ex.tp, ex.fp, ex.fn),
    useClassRight,
    useClassStrict,
    useClassConfusion,
    worksKindRight,
    worksKindConfusion,
    noWork,
  };
}

const f2 = (x: number): string => x.toFixed(2);
const pct = (n: number, of: number): string => (of === 0 ? '-' : `${((100 * n) / of).toFixed(1)}%`);

/** A confusion table as text: rows are the labels, columns the predictions, only non-empty ones. */
export function confusionTable(
  m: Record<string, Record<string, number>>,
  abbrev: (s: string) => string = (s) => s,
): string {
  const rows = Object.keys(m).sort();
  const cols = [...new Set(Object.values(m).flatMap((r) => Object.keys(r)))].sort();
  const w = Math.max(8, ...rows.map((r) => r.length)) + 1;
  const cw = cols.map((c) => Math.max(4, abbrev(c).length) + 1);
  const lines = [`${'label \\ got'.padEnd(w)}${cols.map((c, j) => abbrev(c).padStart(cw[j]!)).join('')}`];
  for (const r of rows)
    lines.push(`${r.padEnd(w)}${cols.map((c, j) => String(m[r]![c] ?? '.').padStart(cw[j]!)).join('')}`);
  return lines.join('\n');
}

const ABBREV: Record<string, string> = {
  residential_extension: 'res_ext',
  residential_multi: 'res_multi',
  change_of_use: 'ch_use',
  warehouse_logistics: 'wareh',
  extension_of_duration: 'ext_dur',
  declaration: 'decl',
  amendment: 'amend',
  retention: 'retain',
  new_works: 'new',
  hospitality: 'hosp',
  healthcare: 'health',
  education: 'educ',
  community: 'commun',
  commercial: 'comm',
  industrial: 'indus',
  data_centre: 'dc',
  mixed_use: 'mixed',
  agricultural: 'agri',
};

/** The report as the plain-text tables `make eval` prints. */
export function formatReport(title: string, r: Report): string {
  const out = [`== ${title}: ${r.rows} rows ==`, '', 'vertical                  support   P     R     F1'];
  for (const v of VERTICALS) {
    const s = r.perVertical[v.code]!;
    if (s.tp + s.fp + s.fn === 0) continue;
    out.push(
      `${v.code.padEnd(24)}${String(s.tp + s.fn).padStart(8)}  ${f2(s.precision)}  ${f2(s.recall)}  ${f2(s.f1)}`,
    );
  }
  out.push(
    `${'micro'.padEnd(24)}${String(r.micro.tp + r.micro.fn).padStart(8)}  ${f2(r.micro.precision)}  ${f2(r.micro.recall)}  ${f2(r.micro.f1)}`,
    `${`macro (${r.macro.verticals})`.padEnd(24)}${''.padStart(8)}  ${f2(r.macro.precision)}  ${f2(r.macro.recall)}  ${f2(r.macro.f1)}`,
    `micro counts: ${r.micro.tp} right, ${r.micro.fp} published wrongly, ${r.micro.fn} missed`,
    `${'explicit (text names it)'.padEnd(24)}${String(r.explicit.tp + r.explicit.fn).padStart(8)}  ${f2(r.explicit.precision)}  ${f2(r.explicit.recall)}  ${f2(r.explicit.f1)}`,
    '',
    `use class right: ${r.useClassRight}/${r.rows} (${pct(r.useClassRight, r.rows)}); the label's first class only: ${r.useClassStrict}/${r.rows} (${pct(r.useClassStrict, r.rows)})`,
    `works kind right: ${r.worksKindRight}/${r.rows} (${pct(r.worksKindRight, r.rows)})`,
    `no work to sell (labelled without verticals): ${r.noWork.rows} rows, ${r.noWork.published} published with verticals`,
    '',
    "use class confusion (the label's first class × the classifier's):",
    confusionTable(r.useClassConfusion, (s) => ABBREV[s] ?? s),
    '',
    'works kind confusion:',
    confusionTable(r.worksKindConfusion, (s) => ABBREV[s] ?? s),
  );
  return out.join('\n');
}
