/**
 * Source adapter for residential rents: the Residential Tenancies Board's rent index as the CSO
 * publishes it (PxStat table RIQ02, CSV download; `RENT_COLUMNS`). One row per location, property
 * type, number of bedrooms and quarter, `VALUE` the average monthly rent in euro.
 *
 * PxStat leaves `VALUE` empty (or writes `..`) for cells it suppresses (too few tenancies): those
 * are not errors and are skipped, counted in `suppressed`. Rows of another statistic than the
 * average rent are skipped too. Anything else wrong becomes a reject naming the column.
 */
import { foldText, resolveCounty } from '../reference/authorities.ts';
import type { AdapterResult, DwellingClass, Reject, RentRow } from '../types.ts';
import { clean, parseNumber, reject, scanCsv } from './common.ts';
import { RENT_COLUMNS, RENT_REQUIRED } from './formats.ts';

const SOURCE = 'rents' as const;
const SUPPRESSED = new Set(['', '..', '.', '-', 'x', 'X']);

/**
 * `20231` (PxStat's TLIST(Q1) code) or `2023Q1` / `2023 Q1` → `{ quarter: '2023Q1', start: '2023-01-01' }`;
 * anything else → undefined.
 */
export function parseQuarter(raw: string): { quarter: string; start: string } | undefined {
  const m = /^(\d{4})\s*Q?([1-4])$/i.exec(raw.trim());
  if (!m) return undefined;
  const y = Number(m[1]);
  if (y < 1990 || y > 2100) return undefined;
  const q = Number(m[2]);
  return { quarter: `${y}Q${q}`, start: `${y}-${String((q - 1) * 3 + 1).padStart(2, '0')}-01` };
}

/** RIQ02's property types → the dwelling classes the yields use; null when it names neither. */
export function dwellingClass(propertyType: string): DwellingClass | null {
  const f = foldText(propertyType);
  if (/^all\b/.test(f)) return 'all';
  if (/\b(flat|flats|apartment|apartments)\b/.test(f)) return 'apartment';
  if (/\b(house|houses|detached|terrace|terraced|bungalow)\b/.test(f)) return 'house';
  return null;
}

/** Where a RIQ02 location lies: the whole State, a county (a bare county name), or neither (null). */
export function rentPlace(location: string): { county: string | null; national: boolean } {
  const folded = foldText(location);
  const national = folded === 'ireland' || folded === 'state' || folded === 'national';
  // "Dublin 4" is a postal district, not the county: only a bare county name counts as the county.
  const county = national || /\d/.test(folded) ? null : resolveCounty(location.replace(/^co\.?\s+/i, ''));
  return { county, national };
}

/**
 * What a row's repeated cells mean, worked out once per distinct cell: a file of ~50,000 rows
 * repeats a few hundred locations, a handful of property types, bedroom counts and quarters, and
 * folding and matching them for every row was most of reading it.
 */
export class RentCells {
  readonly quarter = remembered(parseQuarter);
  readonly dwelling = remembered(dwellingClass);
  readonly place = remembered(rentPlace);
  readonly allBedrooms = remembered((bedrooms: string) => /^all\b/.test(foldText(bedrooms)));
}

/** `f` answered once per distinct argument (its answers must not be changed by the caller). */
function remembered<T>(f: (cell: string) => T): (cell: string) => T {
  const known = new Map<string, T>();
  return (cell) => {
    if (known.has(cell)) return known.get(cell) as T;
    const v = f(cell);
    known.set(cell, v);
    return v;
  };
}

/**
 * Turn one RIQ02 record into a `RentRow`, `'skip'` (a suppressed cell or another statistic), or
 * a reject naming the column.
 */
export function normaliseRent(
  rec: Record<string, string>,
  file: string,
  line: number,
  cells: RentCells = new RentCells(),
): RentRow | Reject | 'skip' {
  const bad = (reason: Reject['reason'], detail: string): Reject => reject(SOURCE, file, line, reason, detail, null);
  const statistic = clean(rec['Statistic Label']) ?? '';
  if (statistic && !/rent/i.test(statistic)) return 'skip';
  const value = (rec.VALUE ?? '').trim();
  if (SUPPRESSED.has(value)) return 'skip';

  const rawQuarter = clean(rec['TLIST(Q1)']) ?? clean(rec.Quarter);
  if (rawQuarter === null) return bad('missing_field', 'TLIST(Q1)');
  const q = cells.quarter(rawQuarter);
  if (!q) return bad('invalid_date', 'TLIST(Q1)');

  const location = clean(rec.Location);
  if (location === null) return bad('missing_field', 'Location');
  const propertyType = clean(rec['Property Type']);
  if (propertyType === null) return bad('missing_field', 'Property Type');
  const dwelling = cells.dwelling(propertyType);
  if (dwelling === null) return bad('unknown_category', 'Property Type'); // a type that is neither a house nor a flat cannot be compared with sales
  const bedrooms = clean(rec['Number of Bedrooms']);
  if (bedrooms === null) return bad('missing_field', 'Number of Bedrooms');

  const rent = parseNumber(value);
  if (rent === undefined || rent === null || rent <= 0 || rent > 50_000) return bad('invalid_number', 'VALUE');

  const { county, national } = cells.place(location);
  return {
    quarter: q.quarter,
    period_start: q.start,
    location,
    county,
    national,
    property_type: propertyType,
    dwelling,
    bedrooms,
    all_bedrooms: cells.allBedrooms(bedrooms),
    rent_eur: Math.round(rent * 100) / 100,
    line,
  };
}

/**
 * Read RIQ02 CSV files. `suppressed` counts the empty cells skipped; `lines` counts the data lines
 * that carry a value, so rows + rejects = lines as for every source.
 */
export async function readRents(files: string[]): Promise<AdapterResult<RentRow> & { suppressed: number }> {
  const rows: RentRow[] = [];
  const rejects: Reject[] = [];
  let lines = 0;
  let suppressed = 0;
  const layouts = [{ kind: 'riq02', columns: RENT_COLUMNS, required: RENT_REQUIRED }] as const;
  const cells = new RentCells();
  for (const file of files) {
    const seen = new Map<string, number>();
    lines += (
      await scanCsv(
        file,
        SOURCE,
        layouts,
        (_k, rec, line) => {
          const r = normaliseRent(rec, file, line, cells);
          if (r === 'skip') return void suppressed++;
          if ('reason' in r) return void rejects.push(r);
          const key = `${r.quarter}|${r.location}|${r.property_type}|${r.bedrooms}`;
          const first = seen.get(key);
          if (first !== undefined)
            return void rejects.push(reject(SOURCE, file, line, 'duplicate', `same cell as line ${first}`, key));
          seen.set(key, line);
          rows.push(r);
        },
        (r) => void rejects.push(r),
      )
    ).lines;
  }
  return { rows, rejects, lines: lines - suppressed, suppressed };
}
