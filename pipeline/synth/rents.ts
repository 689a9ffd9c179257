/**
 * Synthetic RTB rent index in the CSO PxStat RIQ02 CSV layout (`rents/RIQ02.csv`): average
 * monthly rent by location (the State, every county, a few Dublin postal districts), property
 * type, number of bedrooms and quarter, 2010Q1 to the last quarter that ended before the
 * snapshot. Rents are tied to the generator's sales: a county's rent is a gross yield of the
 * price its homes sell at (`ppr.ts`: 2,150 × price index × county multiplier), moved by a rent
 * path of its own (rents kept rising through the 2010–2013 price fall). `expectedGrossYield`
 * says what yield the pipeline should find. The table's size does not depend on the scale.
 */
import { AUTHORITIES } from '../reference/authorities.ts';
import { RENT_COLUMNS } from '../sources/formats.ts';
import type { DwellingClass } from '../types.ts';
import { FileSink, type FileStats, isoToDay } from './output.ts';
import { COUNTY_PRICE, priceIndex } from './ppr.ts';
import { recordRng } from './rng.ts';

/** Rent index (2010-01 = 100) at knots, linearly interpolated. */
const RENT_KNOTS: readonly [string, number][] = [
  ['2010-01-01', 100],
  ['2012-06-01', 95],
  ['2014-01-01', 102],
  ['2016-01-01', 120],
  ['2018-06-01', 140],
  ['2020-03-01', 150],
  ['2021-01-01', 150],
  ['2022-06-01', 165],
  ['2024-12-01', 182],
  ['2026-06-01', 190],
  ['2030-12-31', 215],
];
const RENT_DAYS = RENT_KNOTS.map(([d]) => isoToDay(d));

/** Rent index on a day (2010-01-01 = 100). */
export function rentIndex(day: number): number {
  if (day <= RENT_DAYS[0]!) return RENT_KNOTS[0]![1];
  for (let i = 1; i < RENT_DAYS.length; i++) {
    if (day <= RENT_DAYS[i]!) {
      const t = (day - RENT_DAYS[i - 1]!) / (RENT_DAYS[i]! - RENT_DAYS[i - 1]!);
      return RENT_KNOTS[i - 1]![1] + t * (RENT_KNOTS[i]![1] - RENT_KNOTS[i - 1]![1]);
    }
  }
  return RENT_KNOTS[RENT_KNOTS.length - 1]![1];
}

/** Gross yield of a typical home in a county whose price multiplier is 1, in January 2010. */
const YIELD_2010 = 0.055;
/** RIQ02 property types, with the dwelling class each belongs to and its rent relative to all types. */
export const RENT_PROPERTY_TYPES: readonly [string, DwellingClass, number][] = [
  ['All property types', 'all', 1],
  ['Detached house', 'house', 1.12],
  ['Semi detached house', 'house', 1.04],
  ['Terrace house', 'house', 0.97],
  ['Other flats', 'apartment', 0.88],
];
const BEDROOMS: readonly [string, string, number][] = [
  ['-', 'All bedrooms', 1],
  ['1', 'One bed', 0.72],
  ['2', 'Two bed', 0.88],
  ['3', 'Three bed', 1],
  ['4', 'Four plus bed', 1.22],
];
/** Price of each dwelling class relative to the county's typical home (ppr.ts: apartments 0.72, rural houses 0.9). */
const PRICE_FACTOR: Record<DwellingClass, number> = { all: 0.95, house: 0.98, apartment: 0.72 };
/** Rent of each class relative to the county's all-types rent (mean of its RIQ02 types). */
const RENT_FACTOR: Record<DwellingClass, number> = { all: 1, house: (1.12 + 1.04 + 0.97) / 3, apartment: 0.88 };

const COUNTIES = [...new Set(AUTHORITIES.map((a) => a.county))].sort();
const DISTRICTS = ['Dublin 4', 'Dublin 8', 'Dublin 15'];

/** Average monthly rent (EUR, all bedrooms) of a dwelling class in a county on a day, before noise. */
export function rentLevel(county: string, dwelling: DwellingClass, day: number): number {
  const cp = COUNTY_PRICE[county] ?? 0.8;
  const priceAt2010 = 2_150 * 100 * cp * PRICE_FACTOR.all;
  return ((YIELD_2010 * Math.pow(cp, -0.25) * priceAt2010) / 12) * (rentIndex(day) / 100) * RENT_FACTOR[dwelling];
}

/**
 * The gross yield (rent × 12 / typical price) the generator builds into a county and dwelling
 * class on a day: what the pipeline's yields should recover from the generated files.
 */
export function expectedGrossYield(county: string, dwelling: DwellingClass, day: number): number {
  const cp = COUNTY_PRICE[county] ?? 0.8;
  return (rentLevel(county, dwelling, day) * 12) / (2_150 * priceIndex(day) * cp * PRICE_FACTOR[dwelling]);
}

const q = (s: string): string => `"${s}"`;

/** Write `rents/RIQ02.csv` (UTF-8 with BOM, CRLF, every field quoted, as PxStat writes it). */
export function writeRents(seed: number, asOf: number, outDir: string): FileStats {
  const sink = new FileSink(`${outDir}/rents/RIQ02.csv`, { encoding: 'utf-8', bom: true, eol: '\r\n' });
  sink.header(RENT_COLUMNS.map(q).join(','));
  const locations: [string, string, string | null][] = [
    ['-', 'Ireland', null],
    ...COUNTIES.map((c, i): [string, string, string | null] => [String(i + 1).padStart(2, '0'), c, c]),
    ...DISTRICTS.map((d, i): [string, string, string | null] => [`D${i + 1}`, d, 'Dublin']),
  ];
  let n = 0;
  for (let y = 2010; ; y++) {
    let done = false;
    for (let qu = 1; qu <= 4; qu++) {
      const start = isoToDay(`${y}-${String((qu - 1) * 3 + 1).padStart(2, '0')}-01`);
      const end =
        qu === 4 ? isoToDay(`${y + 1}-01-01`) - 1 : isoToDay(`${y}-${String(qu * 3 + 1).padStart(2, '0')}-01`) - 1;
      if (end >= asOf) {
        done = true;
        break;
      }
      const mid = Math.round((start + end) / 2);
      for (const [locCode, location, county] of locations) {
        for (const [typeName, dwelling, typeFactor] of RENT_PROPERTY_TYPES) {
          for (const [bedCode, bedName, bedFactor] of BEDROOMS) {
            const r = recordRng(seed, 'rent-cell', n++);
            const small = county !== null && (COUNTY_PRICE[county] ?? 0.8) < 0.75;
            // PxStat leaves a cell empty when too few tenancies were registered
            const suppressed =
              r.chance(small && (dwelling === 'apartment' || bedCode === '4') ? 0.4 : 0.01) && location !== 'Ireland';
            let value = '';
            if (!suppressed) {
              const base =
                county === null
                  ? national(dwelling, mid)
                  : rentLevel(county, dwelling, mid) * (location === county ? 1 : 1.25);
              const rent = base * (typeFactor / RENT_FACTOR[dwelling]) * bedFactor * Math.exp(r.normal() * 0.03);
              value = rent.toFixed(2);
              if (r.chance(0.0004)) value = 'n/a'; // a damaged cell: the adapter rejects it
            }
            const tlist = r.chance(0.0002) ? `${y}5` : `${y}${qu}`;
            sink.row(
              [
                q('RIQ02'),
                q('RTB Average Monthly Rent Report'),
                q(tlist),
                q(`${y}Q${qu}`),
                q(bedCode),
                q(bedName),
                q(String(RENT_PROPERTY_TYPES.findIndex((t) => t[0] === typeName) + 1).padStart(2, '0')),
                q(typeName),
                q(locCode),
                q(location),
                q('Euro'),
                q(value),
              ].join(','),
            );
          }
        }
      }
    }
    if (done) break;
  }
  return sink.close();
}

/** The State's rent: the county rents weighted by the counties' shares of homes. */
function national(dwelling: DwellingClass, day: number): number {
  let s = 0;
  let w = 0;
  for (const a of AUTHORITIES) {
    s += a.weight * rentLevel(a.county, dwelling, day);
    w += a.weight;
  }
  return s / w;
}
