/**
 * Synthetic Property Price Register: one Windows-1252 file per year, 2010 to the snapshot year,
 * older header (with `Postal Code`) up to 2018 and the current one (with `Eircode`) from 2019.
 * Sales are drawn per home (each home its own PRNG: address, Eircode, value, sale dates), so a
 * home sold several times keeps its address text and Eircode, and a snapshot simply shows the
 * sales dated on or before it.
 */
import type { Authority } from '../reference/authorities.ts';
import { AUTHORITIES } from '../reference/authorities.ts';
import { PPR_COLUMNS_CURRENT, PPR_COLUMNS_OLD } from '../sources/formats.ts';
import { FileSink, type FileStats, dayToIso, fmtDmy, fmtEuro, isoToDay, yearStart } from './output.ts';
import { Table, cumulative, recordRng } from './rng.ts';
import { eircode, estateName, placeName, postalDistrict, spacedEircode, streetName, townOf } from './vocab.ts';

/** Default-scale number of homes; calibrated so week 1 shows about 790,000 sales. */
export const PPR_HOMES_DEFAULT = 765_000;
/** Share of homes that are sold again (one to three more times) over the horizon. */
export const PPR_REPEAT_SHARE = 0.43;

const FIRST = isoToDay('2010-01-01');
const LAST = isoToDay('2030-12-31');

/** Relative sales volume by year (register totals, extrapolated after 2026). */
const YEAR_VOLUME: Record<number, number> = {
  2010: 17,
  2011: 15,
  2012: 23,
  2013: 26,
  2014: 38,
  2015: 44,
  2016: 47,
  2017: 50,
  2018: 51,
  2019: 50,
  2020: 43,
  2021: 51,
  2022: 50,
  2023: 49,
  2024: 46,
  2025: 47,
  2026: 47,
  2027: 47,
  2028: 47,
  2029: 47,
  2030: 47,
};

/** National price index (2010-01 = 100) at knots, linearly interpolated. */
const INDEX_KNOTS: readonly [string, number][] = [
  ['2010-01-01', 100],
  ['2011-06-01', 82],
  ['2013-03-01', 65],
  ['2015-01-01', 75],
  ['2016-06-01', 85],
  ['2018-06-01', 100],
  ['2020-03-01', 107],
  ['2021-01-01', 109],
  ['2022-06-01', 130],
  ['2023-06-01', 134],
  ['2024-12-01', 145],
  ['2026-06-01', 151],
  ['2030-12-31', 170],
];
const KNOT_DAYS = INDEX_KNOTS.map(([d]) => isoToDay(d));

/** Price index on a day (2010-01-01 = 100). */
export function priceIndex(day: number): number {
  if (day <= KNOT_DAYS[0]!) return INDEX_KNOTS[0]![1];
  for (let i = 1; i < KNOT_DAYS.length; i++) {
    if (day <= KNOT_DAYS[i]!) {
      const t = (day - KNOT_DAYS[i - 1]!) / (KNOT_DAYS[i]! - KNOT_DAYS[i - 1]!);
      return INDEX_KNOTS[i - 1]![1] + t * (INDEX_KNOTS[i]![1] - INDEX_KNOTS[i - 1]![1]);
    }
  }
  return INDEX_KNOTS[INDEX_KNOTS.length - 1]![1];
}

/** County price multipliers (Dublin highest). */
export const COUNTY_PRICE: Record<string, number> = {
  Dublin: 1.95,
  Wicklow: 1.5,
  Kildare: 1.35,
  Meath: 1.2,
  Cork: 1.1,
  Galway: 1.05,
  Louth: 0.95,
  Wexford: 0.85,
  Kilkenny: 0.9,
  Limerick: 0.9,
  Waterford: 0.85,
  Clare: 0.8,
  Kerry: 0.8,
  Carlow: 0.8,
  Laois: 0.78,
  Westmeath: 0.78,
  Offaly: 0.7,
  Tipperary: 0.72,
  Sligo: 0.7,
  Mayo: 0.65,
  Donegal: 0.62,
  Cavan: 0.62,
  Monaghan: 0.65,
  Roscommon: 0.58,
  Longford: 0.55,
  Leitrim: 0.52,
};

const AUTH_CUM = cumulative(AUTHORITIES.map((a) => (a.county === 'Dublin' ? a.weight * 1.25 : a.weight)));

interface Home {
  authority: Authority;
  address: string;
  eircode: string;
  showEircode: boolean;
  district: string | null;
  value: number;
  apartment: boolean;
  newBuild: boolean;
  sizeDesc: string;
}

const SIZE = new Table<string>([
  ['less than 38 sq metres', 5],
  ['greater than or equal to 38 sq metres and less than 125 sq metres', 76],
  ['greater than or equal to 125 sq metres', 19],
]);

function buildHome(seed: number, h: number): Home {
  const r = recordRng(seed, 'ppr-home', h);
  const a = AUTHORITIES[r.weighted(AUTH_CUM)]!;
  const town = townOf(r, a);
  const apartment = r.chance(a.county === 'Dublin' ? 0.3 : 0.1);
  const rural = !apartment && r.chance(a.spreadKm > 15 ? 0.3 : 0.05);
  const routing = r.pick(a.routingKeys);
  const district = a.county === 'Dublin' ? postalDistrict(routing) : null;
  let address: string;
  if (apartment) {
    address = `Apt ${r.int(1, 240)}, ${placeName(r)} House, ${estateName(r)}, ${town}`;
  } else if (rural) {
    address = `${placeName(r)}, ${town}, Co. ${a.county}`;
  } else {
    address = `${r.int(1, 260)} ${r.chance(0.7) ? estateName(r) : streetName(r)}, ${town}`;
  }
  if (district && r.chance(0.6)) address = `${address}, ${district}`;
  if (r.chance(0.75)) address = address.toUpperCase();
  const code = eircode(r, routing);
  const value = Math.exp(r.normal() * 0.33) * (apartment ? 0.72 : rural ? 0.9 : 1) * (COUNTY_PRICE[a.county] ?? 0.8);
  return {
    authority: a,
    address,
    eircode: r.chance(0.15) ? spacedEircode(code) : code,
    showEircode: r.chance(0.7),
    district,
    value,
    apartment,
    newBuild: r.chance(0.2),
    sizeDesc: SIZE.draw(r),
  };
}

const dayTable: { cum: number[]; days: number[] } = (() => {
  const days: number[] = [];
  const cum: number[] = [];
  let s = 0;
  for (let d = FIRST; d <= LAST; d++) {
    const w = YEAR_VOLUME[+dayToIso(d).slice(0, 4)] ?? 47;
    const dow = (d + 4) % 7;
    s += dow === 0 ? w * 0.02 : dow === 6 ? w * 0.05 : w;
    days.push(d);
    cum.push(s);
  }
  return { cum, days };
})();

/** Sale days of a home (ascending), drawn from its own date stream. */
function saleDays(seed: number, h: number): number[] {
  const r = recordRng(seed, 'ppr-dates', h);
  const first = dayTable.days[r.weighted(dayTable.cum)]!;
  const out = [first];
  if (r.chance(PPR_REPEAT_SHARE)) {
    const extra = r.chance(0.8) ? 1 : r.chance(0.85) ? 2 : 3;
    let d = first;
    for (let k = 0; k < extra; k++) {
      d += r.int(300, 365 * 8);
      if (d > LAST) break;
      out.push(d);
    }
  }
  return out;
}

const Q = (s: string): string => `"${s}"`;

function saleLine(seed: number, h: number, k: number, day: number, home: Home): string {
  const r = recordRng(seed, 'ppr-sale', h * 4 + k);
  const year = +dayToIso(day).slice(0, 4);
  const isNew = home.newBuild && k === 0;
  const nfmp = r.chance(0.03);
  let price = 2_150 * priceIndex(day) * home.value * (isNew ? 1.08 : 1) * Math.exp(r.normal() * 0.06);
  if (nfmp) price *= r.float(0.4, 0.9);
  let cents: number;
  if (isNew && r.chance(0.7))
    cents = Math.round((price / 1.135) * 100); // VAT-exclusive figure, odd cents
  else {
    // round to €5,000 or €1,000: one unit for both steps (two separate draws scaled half the prices by 5 or 1/5)
    const unit = r.chance(0.5) ? 5000 : 1000;
    r.next(); // the draw the second unit used to take: every later draw of the row stays as it was
    cents = Math.round(price / unit) * unit * 100;
  }
  cents = Math.max(cents, 1_000_000);
  const irish = r.chance(0.0008);
  const description = isNew
    ? irish
      ? 'Teach/Árasán Cónaithe Nua'
      : 'New Dwelling house /Apartment'
    : irish
      ? 'Teach/Árasán Cónaithe Atháimhe'
      : 'Second-Hand Dwelling house /Apartment';
  const size = isNew && r.chance(year < 2020 ? 0.8 : 0.4) ? home.sizeDesc : '';
  let date = fmtDmy(day);
  let priceText = fmtEuro(cents);
  const malformed = r.next();
  if (malformed < 0.0003) date = `31/02/${year}`;
  else if (malformed < 0.0006) priceText = '€';
  const county = home.authority.county;
  const nf = nfmp ? 'Yes' : 'No';
  const vat = isNew ? 'Yes' : 'No';
  // quoting is uneven in the register: a few rows leave Yes/No or the description bare
  const loose = r.chance(0.002);
  const q = (s: string): string => (loose ? s : Q(s));
  const tail = `${q(nf)},${Q(vat)},${loose && r.chance(0.5) ? description : Q(description)},${Q(size)}`;
  if (year <= 2018) {
    let postal = home.district ?? '';
    if (postal && r.chance(0.002)) postal = postal.replace('Dublin', 'Baile Átha Cliath');
    return `${Q(date)},${Q(home.address)},${Q(postal)},${Q(county)},${Q(priceText)},${tail}`;
  }
  return `${Q(date)},${Q(home.address)},${Q(county)},${Q(home.showEircode ? home.eircode : '')},${Q(priceText)},${tail}`;
}

/**
 * Write `ppr/PPR-<year>.csv` for 2010..year(asOf) with the sales dated on or before `asOf`.
 * Sales are sorted by date; two passes over the homes keep memory to a few typed arrays.
 */
export function writePpr(seed: number, scale: number, asOf: number, outDir: string): FileStats[] {
  const homes = Math.max(500, Math.round(PPR_HOMES_DEFAULT * scale));
  const keys: number[] = [];
  const last = Math.min(asOf, LAST);
  for (let h = 0; h < homes; h++) {
    const days = saleDays(seed, h);
    for (let k = 0; k < days.length; k++) {
      const d = days[k]!;
      if (d <= last) keys.push((d - FIRST) * homes * 4 + h * 4 + k);
    }
  }
  const sorted = Float64Array.from(keys).sort();
  keys.length = 0;
  const lastYear = +dayToIso(asOf).slice(0, 4);
  const sinks = new Map<number, FileSink>();
  for (let y = 2010; y <= lastYear; y++) {
    const s = new FileSink(`${outDir}/ppr/PPR-${y}.csv`, { encoding: 'windows-1252', eol: '\n' });
    s.header((y <= 2018 ? PPR_COLUMNS_OLD : PPR_COLUMNS_CURRENT).join(','));
    sinks.set(y, s);
  }
  let sink = sinks.get(2010)!;
  let sinkEnd = yearStart(2011);
  for (let i = 0; i < sorted.length; i++) {
    const key = sorted[i]!;
    const day = FIRST + Math.floor(key / (homes * 4));
    const rest = key - (day - FIRST) * homes * 4;
    const h = Math.floor(rest / 4);
    const k = rest % 4;
    if (day >= sinkEnd) {
      const y = +dayToIso(day).slice(0, 4);
      sink = sinks.get(y)!;
      sinkEnd = yearStart(y + 1);
    }
    sink.row(saleLine(seed, h, k, day, buildHome(seed, h)));
  }
  return [...sinks.values()].map((s) => s.close());
}
