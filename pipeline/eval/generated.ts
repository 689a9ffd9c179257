/**
 * The classification scored on generated descriptions, against the generator's own ground truth
 * where it has one: the use class it drew (mapped to ours where the mapping is one-to-one), the
 * trade a trade template is about, whether it prefixed a demolition, and the application type it
 * wrote. The generator draws from the same vocabulary as the rules, so these figures flatter
 * them; the real-text figures (`make eval`, docs/data-quality.md) are the ones that count.
 */
import { classifyApplication, NO_WORK_KINDS, worksKindOfType } from '../normalise/classify.ts';
import { describeDevelopment, USE_CLASSES, type UseClassKey } from '../synth/descriptions.ts';
import { phraseDevelopment } from '../synth/phrasing.ts';
import { recordRng } from '../synth/rng.ts';
import { estateName, placeName, streetName } from '../synth/vocab.ts';
import { confusionTable, prf, type Prf } from './score.ts';

/** The generator's class → the use class a lead of it must have (classes without one are not scored). */
const USE_CLASS_OF: Partial<Record<UseClassKey, string>> = {
  extension: 'residential_extension',
  one_off: 'house',
  housing: 'residential_multi',
  apartments: 'residential_multi',
  lrd: 'residential_multi',
  data_centre: 'data_centre',
  agricultural: 'agricultural',
  hotel: 'hospitality',
  school: 'education',
  healthcare: 'healthcare',
  community: 'community',
  change_of_use: 'change_of_use',
  telecom: 'telecoms',
};

/** The generator's trade templates → the vertical a lead of it must publish (when it has work to sell). */
const TRADE_OF: Partial<Record<UseClassKey, string>> = {
  solar: 'solar',
  roofing: 'roofing',
  landscaping: 'landscaping',
  windows: 'windows_doors',
  heat_pump: 'heat_pumps',
  insulation: 'insulation',
  ev_charger: 'ev_charging',
  shopfront: 'signage_shopfronts',
  signage: 'signage_shopfronts',
  telecom: 'telecoms',
  data_centre: 'data_centre_fitout',
  agricultural: 'agricultural_buildings',
};

export interface GeneratedReport {
  rows: number;
  useClassScored: number;
  useClassRight: number;
  useClassConfusion: Record<string, Record<string, number>>;
  trade: Record<string, { rows: number; published: number }>;
  demolition: Prf;
  worksKindRight: number;
  noVerticals: number;
}

/** Score `n` generated developments (seed-deterministic). */
export function scoreGenerated(n: number, seed = 1): GeneratedReport {
  const rep: GeneratedReport = {
    rows: n,
    useClassScored: 0,
    useClassRight: 0,
    useClassConfusion: {},
    trade: {},
    demolition: prf(0, 0, 0),
    worksKindRight: 0,
    noVerticals: 0,
  };
  let dtp = 0,
    dfp = 0,
    dfn = 0;
  for (let i = 0; i < n; i++) {
    const r = recordRng(seed, 'eval-classification', i);
    const cls = USE_CLASSES.draw(r);
    // as the generator writes them: half in Dublin City's register style (prefix codes, cut
    // texts), half in a county's, retention / duration / outline kinds included
    const [authority, town] = i % 2 === 0 ? ['Dublin City', 'Dublin 8'] : ['Meath', 'Navan'];
    const drawn = describeDevelopment(cls, {
      r,
      town,
      place: placeName(r),
      estate: estateName(r),
      street: streetName(r),
      authority,
    });
    const dev = phraseDevelopment(drawn, { r, authority, year: 2026 });
    const c = classifyApplication({
      description: dev.description,
      application_type: dev.appType,
      land_use_code: dev.landUse,
      num_units: dev.units,
      one_off_house: dev.oneOff,
      floor_area_m2: dev.floorM2,
    });
    const want = USE_CLASS_OF[cls];
    if (want !== undefined) {
      rep.useClassScored++;
      if (c.use_class === want) rep.useClassRight++;
      const row = (rep.useClassConfusion[`${cls} (${want})`] ??= {});
      row[c.use_class] = (row[c.use_class] ?? 0) + 1;
    }
    const kind = worksKindOfType(dev.appType) ?? 'new_works';
    if (c.works_kind === kind) rep.worksKindRight++;
    const trade = TRADE_OF[cls];
    if (trade !== undefined && !NO_WORK_KINDS.has(kind)) {
      const t = (rep.trade[trade] ??= { rows: 0, published: 0 });
      t.rows++;
      if (c.verticals.includes(trade)) t.published++;
    }
    if (c.verticals.length === 0) rep.noVerticals++;
    if (dev.demolition && c.demolition) dtp++;
    else if (c.demolition) dfp++;
    else if (dev.demolition) dfn++;
  }
  rep.demolition = prf(dtp, dfp, dfn);
  return rep;
}

/** The generated-data report as text. */
export function formatGenerated(r: GeneratedReport): string {
  const pct = (a: number, b: number): string => (b === 0 ? '-' : `${((100 * a) / b).toFixed(1)}%`);
  const out = [
    `== generated descriptions (the generator's own truth): ${r.rows} rows ==`,
    '',
    `use class right: ${r.useClassRight}/${r.useClassScored} (${pct(r.useClassRight, r.useClassScored)}) of the rows whose generator class maps to one use class`,
    `works kind right (against the application type written): ${r.worksKindRight}/${r.rows} (${pct(r.worksKindRight, r.rows)})`,
    `demolition flag: P ${r.demolition.precision.toFixed(2)} R ${r.demolition.recall.toFixed(2)} F1 ${r.demolition.f1.toFixed(2)}`,
    `rows published with no vertical: ${r.noVerticals} (${pct(r.noVerticals, r.rows)})`,
    '',
    'trade templates: the trade published (recall)',
  ];
  for (const [v, t] of Object.entries(r.trade).sort())
    out.push(
      `  ${v.padEnd(22)} ${String(t.published).padStart(5)}/${String(t.rows).padEnd(5)} ${pct(t.published, t.rows)}`,
    );
  out.push('', 'use class confusion (generator class (expected) × classifier):', confusionTable(r.useClassConfusion));
  return out.join('\n');
}
