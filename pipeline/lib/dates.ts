/**
 * Date parsing for the publishers' mixed formats. Every source date goes through `parseDate`,
 * which returns an ISO `YYYY-MM-DD` string, `null` for an empty value, or `undefined` for a
 * value that is present but not a valid calendar date (the caller turns that into a reject).
 *
 * Accepted: `YYYY-MM-DD`, `YYYY-MM-DDTHH:MM:SS[.sss][Z]`, `YYYY-MM-DD HH:MM:SS`,
 * `YYYY/MM/DD[ HH:MM:SS][+00]` (the ArcGIS CSV download form), `DD/MM/YYYY[ HH:MM:SS]`, `DD-MM-YYYY`, `DD.MM.YYYY`,
 * `DD MMM YYYY` / `DD-MMM-YYYY` / `DD-MMM-YY` (English month abbreviations), and epoch
 * milliseconds (the ArcGIS JSON form, 11–13 digits). Day-first is the Irish convention:
 * `05/04/2023` is 5 April.
 */
export type IsoDate = string;

const MONTHS: Record<string, number> = {
  jan: 1,
  feb: 2,
  mar: 3,
  apr: 4,
  may: 5,
  jun: 6,
  jul: 7,
  aug: 8,
  sep: 9,
  sept: 9,
  oct: 10,
  nov: 11,
  dec: 12,
};

const ISO =
  /^(\d{4})[-/](\d{1,2})[-/](\d{1,2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(?:Z|[+-]\d{2}(?::?\d{2})?)?)?$/;
const DMY = /^(\d{1,2})[/.-](\d{1,2})[/.-](\d{4})(?:[ T](\d{2}):(\d{2})(?::(\d{2}))?)?$/;
const DMONY = /^(\d{1,2})[ -]([A-Za-z]{3,4})[ -](\d{2}|\d{4})$/;
const EPOCH_MS = /^-?\d{11,13}$/;

/** Parse one date; see the module comment for the formats. */
export function parseDate(raw: string | null | undefined): IsoDate | null | undefined {
  if (raw === null || raw === undefined) return null;
  const s = raw.trim();
  if (s === '') return null;
  let m = ISO.exec(s);
  if (m) return ymd(+m[1]!, +m[2]!, +m[3]!);
  m = DMY.exec(s);
  if (m) return ymd(+m[3]!, +m[2]!, +m[1]!);
  m = DMONY.exec(s);
  if (m) {
    const mon = MONTHS[m[2]!.toLowerCase()];
    if (!mon) return undefined;
    let y = +m[3]!;
    if (m[3]!.length === 2) y += y >= 70 ? 1900 : 2000;
    return ymd(y, mon, +m[1]!);
  }
  if (EPOCH_MS.test(s)) {
    const d = new Date(Number(s));
    if (Number.isNaN(d.getTime())) return undefined;
    return d.toISOString().slice(0, 10);
  }
  return undefined;
}

/** Days in each month of a common year. */
const MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
/** '01' … '31', the two-digit months and days. */
const TWO_DIGITS = Array.from({ length: 32 }, (_, i) => String(i).padStart(2, '0'));

/** Format a calendar date, or undefined when it does not exist (31 February, month 13). */
export function ymd(y: number, m: number, d: number): IsoDate | undefined {
  if (!(y >= 1900 && y <= 2100 && m >= 1 && m <= 12 && d >= 1) || !Number.isInteger(d) || !Number.isInteger(m))
    return undefined;
  const leap = y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);
  if (d > (m === 2 && leap ? 29 : MONTH_DAYS[m - 1]!)) return undefined;
  return `${y}-${TWO_DIGITS[m]}-${TWO_DIGITS[d]}`;
}

/** Add whole days to an ISO date. */
export function addDays(date: IsoDate, days: number): IsoDate {
  const t = Date.parse(`${date}T00:00:00Z`) + days * 86_400_000;
  return new Date(t).toISOString().slice(0, 10);
}

/** Whole days from `a` to `b` (positive when b is later). */
export function daysBetween(a: IsoDate, b: IsoDate): number {
  return Math.round((Date.parse(`${b}T00:00:00Z`) - Date.parse(`${a}T00:00:00Z`)) / 86_400_000);
}
