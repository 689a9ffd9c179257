/**
 * Source adapter for the Property Price Register (PSRA): Windows-1252 CSV, current header (with
 * `Eircode`) or the older one (with `Postal Code`). Prices are parsed exactly to the cent from
 * the text, never through a float; addresses keep their accents; a full Eircode is used only
 * inside `home_key` and never published.
 */
import { hash } from 'node:crypto';
import { parseDate } from '../lib/dates.ts';
import { foldText, resolveCounty } from '../reference/authorities.ts';
import type { AdapterResult, Reject, SaleRow } from '../types.ts';
import { clean, parseFlag, reject, routingKey, scanCsv } from './common.ts';
import { PPR_COLUMNS_CURRENT, PPR_COLUMNS_OLD } from './formats.ts';

const SOURCE = 'ppr' as const;

const DATE = 'Date of Sale (dd/mm/yyyy)';
const PRICE = 'Price (€)';
const DMY_SLASH = /^\d{1,2}\/\d{1,2}\/\d{4}$/;
const EURO = /^€?\s*(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d{1,2}))?$/;

/**
 * Parse a PPR price to whole cents by string arithmetic, so no float rounding can creep in.
 * Accepts an optional leading `€`, thousands separators in groups of three and up to two
 * decimals; anything else (negative, letters, three decimals, misplaced commas) → undefined.
 * @example parseEuroCents('€458,150.00') // 45815000
 */
export function parseEuroCents(s: string): number | undefined {
  const m = EURO.exec(s.trim());
  if (!m) return undefined;
  const digits = (m[1]!.replace(/,/g, '') + (m[2] ?? '').padEnd(2, '0')).replace(/^0+(?=\d)/, '');
  const n = Number(digits);
  return Number.isSafeInteger(n) ? n : undefined;
}

const DUBLIN_DISTRICTS = new Set([...Array.from({ length: 18 }, (_, i) => i + 1), 20, 22, 24].map(String));

/**
 * Routing key of an old-header `Postal Code` (a Dublin postal district such as `Dublin 6w` or
 * `Baile Átha Cliath 18`): the Dublin Eircode routing keys D01–D24 and D6W follow the postal
 * districts. Anything else → null.
 */
export function postalDistrictRoutingKey(raw: string | null | undefined): string | null {
  const t = raw ? foldText(raw) : '';
  const m = /^(?:dublin|baile atha cliath) (\d{1,2}|6w)$/.exec(t);
  if (!m) return null;
  if (m[1] === '6w') return 'D6W';
  const n = String(Number(m[1]));
  return DUBLIN_DISTRICTS.has(n) ? `D${n.padStart(2, '0')}` : null;
}

/** True for the register's new-dwelling descriptions, in English or in Irish. */
export function isNewDwelling(description: string | null): boolean {
  if (!description) return false;
  const f = foldText(description);
  return f.startsWith('new dwelling') || f.startsWith('teach arasan conaithe nua');
}

/**
 * sha256 (hex) of the folded address and the full Eircode (upper-case, no spaces; '' when there
 * is none): identifies one home across sales without publishing its Eircode.
 */
export function homeKey(address: string, eircode: string | null): string {
  const code = (eircode ?? '').toUpperCase().replace(/\s+/g, '');
  return hash('sha256', `${foldText(address)}|${code}`); // one-shot: ~800,000 calls
}

/**
 * A 64-bit hash (16 hex) of a full Eircode (upper-case, no spaces); null when there is none. It
 * only has to tell two codes apart inside one refresh (it never leaves the build), so a fast
 * non-cryptographic hash (two 32-bit multiply–xor lanes, "cyrb53" style) is used: a second
 * sha256 per sale would cost the PPR stage ~2 s at the default scale.
 */
export function eircodeHash(eircode: string | null): string | null {
  const code = (eircode ?? '').toUpperCase().replace(/\s+/g, '');
  if (!code) return null;
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < code.length; i++) {
    const c = code.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return (h2 >>> 0).toString(16).padStart(8, '0') + (h1 >>> 0).toString(16).padStart(8, '0');
}

/**
 * Turn one raw PPR record (either header's column names) into a `SaleRow`, or a reject naming
 * the offending column. Rejects carry no key: the register has none, and the address stays out
 * of reject details.
 */
export function normaliseSale(rec: Record<string, string>, file: string, line: number): SaleRow | Reject {
  // (no closure per row for the rejects: ~800,000 rows, each a function object to make and name)
  const rawDate = clean(rec[DATE]);
  if (rawDate === null) return reject(SOURCE, file, line, 'missing_field', DATE);
  const date = DMY_SLASH.test(rawDate) ? parseDate(rawDate) : undefined;
  if (!date) return reject(SOURCE, file, line, 'invalid_date', DATE);

  const address = clean(rec.Address);
  if (address === null) return reject(SOURCE, file, line, 'missing_field', 'Address');

  const rawCounty = clean(rec.County);
  if (rawCounty === null) return reject(SOURCE, file, line, 'missing_field', 'County');
  const county = resolveCounty(rawCounty);
  if (county === null) return reject(SOURCE, file, line, 'unknown_county', 'County');

  const rawPrice = clean(rec[PRICE]);
  if (rawPrice === null) return reject(SOURCE, file, line, 'missing_field', PRICE);
  const price = parseEuroCents(rawPrice);
  if (price === undefined) return reject(SOURCE, file, line, 'invalid_number', PRICE);

  const eircode = 'Eircode' in rec ? clean(rec.Eircode) : null;
  const routing = 'Eircode' in rec ? routingKey(eircode) : postalDistrictRoutingKey(rec['Postal Code']);
  const description = clean(rec['Description of Property']);

  return {
    date_of_sale: date,
    address,
    county,
    eircode_routing_key: routing,
    home_key: homeKey(address, eircode),
    eircode_hash: eircodeHash(eircode),
    price_cents: price,
    not_full_market_price: parseFlag(rec['Not Full Market Price']),
    vat_exclusive: parseFlag(rec['VAT Exclusive']),
    description,
    is_new_dwelling: isNewDwelling(description),
    property_size: clean(rec['Property Size Description']),
    line,
  };
}

/**
 * Read PPR files (either header) into rows and rejects. Sales are not deduplicated, except a
 * line repeating an earlier line of the same file field for field, which becomes a `duplicate`
 * reject (the first one is kept).
 *
 * With a `sink`, each sale is handed to it as soon as it is read and `rows` stays empty: the
 * refresh streams ~800,000 sales straight to its staging file instead of holding them.
 */
export async function readPpr(files: string[], sink?: (row: SaleRow) => void): Promise<AdapterResult<SaleRow>> {
  const rows: SaleRow[] = [];
  const keep = sink ?? ((row: SaleRow): void => void rows.push(row));
  const rejects: Reject[] = [];
  let lines = 0;
  const layouts = [
    { kind: 'current', columns: PPR_COLUMNS_CURRENT, required: PPR_COLUMNS_CURRENT },
    { kind: 'old', columns: PPR_COLUMNS_OLD, required: PPR_COLUMNS_OLD },
  ] as const;
  for (const file of files) {
    const seen = new Map<string, number>(); // the fields → line first seen (this file only)
    const onRecord = (rec: Record<string, string>, line: number): void => {
      const h = Object.values(rec).join('\u0001'); // the line itself is the key: cheaper than hashing it
      const first = seen.get(h);
      if (first !== undefined) {
        rejects.push(reject(SOURCE, file, line, 'duplicate', `same as line ${first}`, null));
        return;
      }
      seen.set(h, line);
      const row = normaliseSale(rec, file, line);
      if ('reason' in row) rejects.push(row);
      else keep(row);
    };
    lines += (
      await scanCsv(
        file,
        SOURCE,
        layouts,
        (_k, rec, line) => onRecord(rec, line),
        (r) => void rejects.push(r),
      )
    ).lines;
  }
  return { rows, rejects, lines };
}
