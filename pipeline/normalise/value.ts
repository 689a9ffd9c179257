/**
 * Estimated project value (`est_value`, `est_value_basis`): from the floor area, the number of
 * units, or a quantity the description states (kW or MW of solar or a heat pump, solar panels or
 * their area, charging points, windows, signs, a shopfront's width, a mast's height), before a use class's typical value. So two solar
 * jobs of 4 kW and 40 kW are not worth the same. Pure; the rate tables are classify.ts's
 * (`RATE_PER_M2`, `UNIT_COST`, `TYPICAL_VALUE`, `TYPICAL_JOB_VALUE`, `ENERGY_VALUE_PER_MW`,
 * `REGIONAL_FACTOR`) and the per-quantity ones below.
 */
import type { Lead } from '../types.ts';
import {
  ENERGY_VALUE_PER_MW,
  RATE_PER_M2,
  REGIONAL_FACTOR,
  TYPICAL_JOB_VALUE,
  TYPICAL_VALUE,
  UNIT_COST,
} from './classify.ts';

/** A job valued by a quantity its description states: value = fixed + quantity × per unit (EUR, 2026, no regional factor). */
export interface QuantityJob {
  job: string;
  /** The description names the job. */
  pattern: RegExp;
  /** The quantity, from the description (null when it states none). */
  quantity: (d: string) => number | null;
  unit: string;
  perUnit: number;
  fixed: number;
}

const num =
  (re: RegExp) =>
  (d: string): number | null => {
    const m = re.exec(d);
    const v = m ? Number(m[1]!.replace(/,/g, '')) : NaN;
    return Number.isFinite(v) && v > 0 ? v : null;
  };
const KW = num(/\b(\d+(?:\.\d+)?)\s?kwp?\b/i);
const MW = num(/\b(\d+(?:\.\d+)?)\s?mwp?\b/i);
const PANELS = num(/\b(\d{1,5})\s?no\.?\s(?:of\s)?(?:solar\s)?(?:pv\s|photovoltaic\s)?panels\b/i);
const SOLAR_M2 = num(/\b(\d[\d,]*)\s?(?:sq\.?\s?m|m2|m²)\b/i);

/** kW of a solar installation: stated kW, MW, or panels (0.42 kWp each) or panel area (0.2 kWp/m²). */
function solarKw(d: string): number | null {
  const kw = KW(d);
  if (kw !== null) return kw;
  const mw = MW(d);
  if (mw !== null) return mw * 1000;
  const panels = PANELS(d);
  if (panels !== null) return panels * 0.42;
  const m2 = SOLAR_M2(d);
  return m2 === null ? null : m2 * 0.2;
}

/**
 * Jobs valued by a stated quantity, first match. Solar: €1,500/kW up to 20 kW (a house's roof),
 * then the energy rate per MW (€1,000/kW); the other rates are installed costs of 2026.
 */
export const QUANTITY_JOBS: readonly QuantityJob[] = [
  {
    job: 'solar_domestic',
    pattern: /solar|photovoltaic|\bpv\b/i,
    quantity: (d) => {
      const k = solarKw(d);
      return k !== null && k <= 20 ? k : null;
    },
    unit: 'kW',
    perUnit: 1_500,
    fixed: 1_500,
  },
  {
    job: 'solar',
    pattern: /solar|photovoltaic|\bpv\b/i,
    quantity: solarKw,
    unit: 'kW',
    perUnit: ENERGY_VALUE_PER_MW / 1000,
    fixed: 10_000,
  },
  {
    job: 'heat_pump',
    pattern: /heat pump|air[- ]to[- ]water|air source/i,
    quantity: KW,
    unit: 'kW',
    perUnit: 1_200,
    fixed: 4_000,
  },
  {
    job: 'ev_charging',
    pattern: /charging|electric vehicle|\bev\b/i,
    quantity: num(/\b(\d{1,3})\s?no\.?\s(?:\w+\s){0,2}(?:charging|charge|charger)/i),
    unit: 'point',
    perUnit: 6_000,
    fixed: 5_000,
  },
  {
    job: 'windows_doors',
    pattern: /windows/i,
    quantity: num(/\b(\d{1,3})\s?no\.?\s(?:[\w-]+\s){0,3}windows\b/i),
    unit: 'window',
    perUnit: 1_100,
    fixed: 1_000,
  },
  {
    job: 'shopfront',
    pattern: /shop ?front/i,
    quantity: num(/\b(\d{1,2}(?:\.\d+)?)\s?m (?:wide|frontage|long)\b/i),
    unit: 'metre of frontage',
    perUnit: 4_000,
    fixed: 6_000,
  },
  {
    job: 'telecom_mast',
    pattern: /monopole|lattice tower|\bmasts?\b|telecommunications? (?:support )?structure/i,
    quantity: num(/\b(\d{1,2}(?:\.\d+)?)\s?m\b/i),
    unit: 'metre of height',
    perUnit: 2_500,
    fixed: 20_000,
  },
  {
    job: 'signage',
    pattern: /\bsigns?\b|signage/i,
    quantity: num(/\b(\d{1,2})\s?no\.?\s(?:[\w-]+\s){0,5}signs?\b/i),
    unit: 'sign',
    perUnit: 3_000,
    fixed: 1_000,
  },
];

const NEW_BUILD = /extension|construct|erect|demoli|new (?:dwelling|house|building)|change of use/i;

/** Round to the nearest €1,000 (at least €1,000). */
function roundK(v: number): number {
  return Math.max(1_000, Math.round(v / 1_000) * 1_000);
}

/**
 * Estimated project value in whole euros (2026 prices), with the basis used, first that applies:
 * - `floor_area`: floor area × `RATE_PER_M2[useClass]` × `REGIONAL_FACTOR[county]`;
 * - `units`: units × `UNIT_COST[useClass]` × regional factor (residential classes only);
 * - `quantity`: an energy project's stated MW (or a solar array's kW, panels or area) ×
 *   `ENERGY_VALUE_PER_MW`, or a single-trade job's
 *   stated quantity (`QUANTITY_JOBS`);
 * - `typical`: a small single-trade job's value (`TYPICAL_JOB_VALUE`), else `TYPICAL_VALUE[useClass]`.
 * Rounded to €1,000.
 *
 * @example estimateValue({ useClass: 'residential_extension', floorAreaM2: null, units: null, county: 'Clare', description: 'Installation of 12 no. solar PV panels on roof' })
 *   // { est_value: 9000, est_value_basis: 'quantity' }   (12 × 0.42 kW × €1,500 + €1,500)
 */
export function estimateValue(i: {
  useClass: string;
  floorAreaM2: number | null;
  units: number | null;
  county: string;
  description: string;
}): { est_value: number; est_value_basis: Lead['est_value_basis'] } {
  const factor = REGIONAL_FACTOR[i.county] ?? 1;
  if (i.floorAreaM2 !== null && i.floorAreaM2 > 0) {
    const rate = RATE_PER_M2[i.useClass] ?? RATE_PER_M2.other!;
    return { est_value: roundK(i.floorAreaM2 * rate * factor), est_value_basis: 'floor_area' };
  }
  const unitCost = UNIT_COST[i.useClass];
  if (unitCost !== undefined && i.units !== null && i.units > 0) {
    return { est_value: roundK(i.units * unitCost * factor), est_value_basis: 'units' };
  }
  if (i.useClass === 'energy') {
    const solar = /solar|photovoltaic|\bpv\b/i.test(i.description) ? solarKw(i.description) : null;
    const mw = MW(i.description) ?? (solar === null ? null : solar / 1000);
    if (mw !== null) return { est_value: roundK(mw * ENERGY_VALUE_PER_MW), est_value_basis: 'quantity' };
  }
  if (
    i.useClass !== 'energy' &&
    i.useClass !== 'data_centre' &&
    i.useClass !== 'residential_multi' &&
    i.useClass !== 'mixed_use' &&
    !NEW_BUILD.test(i.description)
  ) {
    for (const j of QUANTITY_JOBS) {
      if (!j.pattern.test(i.description)) continue;
      const q = j.quantity(i.description);
      if (q !== null) return { est_value: roundK(j.fixed + q * j.perUnit), est_value_basis: 'quantity' };
    }
    for (const j of TYPICAL_JOB_VALUE)
      if (j.pattern.test(i.description)) return { est_value: j.value, est_value_basis: 'typical' };
  }
  return { est_value: TYPICAL_VALUE[i.useClass] ?? TYPICAL_VALUE.other!, est_value_basis: 'typical' };
}
