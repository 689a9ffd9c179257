/**
 * Address normalisation for the repeat-sale matcher. The register's addresses are typed by hand:
 * one home appears as `12 Main St, Navan, Co. Meath` and `12 MAIN STREET, NAVAN`. The key folds
 * case and accents, unifies common abbreviations and drops what the county and Eircode checks
 * already cover (a trailing county, `Co.`, a trailing Dublin postal district). Rules in docs/intel.md.
 */
import { foldText } from '../reference/authorities.ts';

/** Word → the one spelling the key uses (both spellings of a pair map to the same token). */
const SPELLING: ReadonlyMap<string, string> = new Map(
  Object.entries({
    road: 'rd',
    street: 'st',
    saint: 'st',
    avenue: 'ave',
    av: 'ave',
    drive: 'dr',
    court: 'ct',
    terrace: 'tce',
    square: 'sq',
    place: 'pl',
    crescent: 'cres',
    gardens: 'gdns',
    grove: 'gr',
    lane: 'ln',
    park: 'pk',
    apartment: 'apt',
    flat: 'apt',
    house: 'hse',
    upper: 'upr',
    lower: 'lwr',
    mount: 'mt',
    number: 'no',
    cottages: 'cotts',
    heights: 'hts',
    close: 'cl',
  }),
);

const COUNTIES = new Set([
  'carlow',
  'cavan',
  'clare',
  'cork',
  'donegal',
  'dublin',
  'galway',
  'kerry',
  'kildare',
  'kilkenny',
  'laois',
  'leitrim',
  'limerick',
  'longford',
  'louth',
  'mayo',
  'meath',
  'monaghan',
  'offaly',
  'roscommon',
  'sligo',
  'tipperary',
  'waterford',
  'westmeath',
  'wexford',
  'wicklow',
]);

/**
 * The matching key of an address: folded, abbreviations unified, `no` before a number dropped,
 * and trailing `co <county>`, `<county>`, `ireland` and `dublin <district>` removed (repeatedly).
 * '' when nothing is left.
 *
 * @example addressKey('12 Main Street, Navan, Co. Meath') === addressKey('12 MAIN ST, NAVAN') // '12 main st navan'
 */
export function addressKey(address: string): string {
  return keyOfFolded(foldText(address));
}

/** The key and the dwelling class of an address, folding it once (the refresh's hot path). */
export function addressFacts(address: string): { key: string; dwelling: 'house' | 'apartment' } {
  const folded = foldText(address);
  return { key: keyOfFolded(folded), dwelling: APARTMENT.test(folded) ? 'apartment' : 'house' };
}

const APARTMENT = /\b(apt|apts|apartment|apartments|flat|flats|penthouse|duplex)\b/;

function keyOfFolded(folded: string): string {
  const words = folded.split(' ');
  for (let i = 0; i < words.length; i++) words[i] = SPELLING.get(words[i]!) ?? words[i]!;
  const out: string[] = [];
  for (let i = 0; i < words.length; i++) {
    if (words[i] === 'no' && /^\d/.test(words[i + 1] ?? '')) continue;
    if (words[i] === 'co' && COUNTIES.has(words[i + 1] ?? '')) continue;
    out.push(words[i]!);
  }
  for (;;) {
    const n = out.length;
    const last = out[n - 1];
    if (n > 1 && (last === 'ireland' || COUNTIES.has(last!))) out.pop();
    else if (n > 2 && out[n - 2] === 'dublin' && /^(\d{1,2}|6w)$/.test(last!)) out.splice(n - 2, 2);
    else break;
  }
  return out.join(' ');
}

/** `apartment` when the address names an apartment or flat, else `house`. */
export function dwellingOf(address: string): 'house' | 'apartment' {
  return APARTMENT.test(foldText(address)) ? 'apartment' : 'house';
}
