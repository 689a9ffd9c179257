/**
 * Source adapter for building-material prices: CSO PxStat table WPM28 "Wholesale Price Index
 * (Excl VAT) for Building and Construction Materials" (base 2015 = 100), CSV download
 * (`MATERIAL_COLUMNS`). Each material and month appears under two statistics: the index itself
 * and its percentage change over 12 months. Only the index is read (the year-on-year change is
 * recomputed from it, so it always agrees with the levels served); rows of the other statistic
 * and suppressed cells are skipped, counted in `skipped`.
 */
import { foldText } from '../reference/authorities.ts';
import type { AdapterResult, MaterialRow, Reject } from '../types.ts';
import { clean, parseNumber, reject, scanCsv } from './common.ts';
import { MATERIAL_COLUMNS, MATERIAL_REQUIRED } from './formats.ts';

const SOURCE = 'materials' as const;
const MONTHS = [
  'january',
  'february',
  'march',
  'april',
  'may',
  'june',
  'july',
  'august',
  'september',
  'october',
  'november',
  'december',
];

/**
 * `202301` (PxStat's TLIST(M1) code), `2023M01`, `2023 January` or `2023-01` →
 * `{ month: '2023-01', start: '2023-01-01' }`; anything else → undefined.
 */
export function parseMonth(raw: string): { month: string; start: string } | undefined {
  const t = raw.trim();
  let y: number;
  let m: number;
  let x = /^(\d{4})(?:M|-)?(\d{2})$/i.exec(t);
  if (x) {
    y = Number(x[1]);
    m = Number(x[2]);
  } else if ((x = /^(\d{4})\s+([A-Za-z]+)$/.exec(t))) {
    y = Number(x[1]);
    m = MONTHS.indexOf(x[2]!.toLowerCase()) + 1;
  } else return undefined;
  if (m < 1 || m > 12 || y < 1990 || y > 2100) return undefined;
  const month = `${y}-${String(m).padStart(2, '0')}`;
  return { month, start: `${month}-01` };
}

/** True for the index statistic (not the 12-month percentage change, whose unit is `%`). */
function isIndexStatistic(label: string | null, unit: string | null): boolean {
  return !/percentage|change/.test(foldText(label ?? '')) && unit !== '%';
}

/** Turn one WPM28 record into a `MaterialRow`, `'skip'`, or a reject naming the column. */
export function normaliseMaterial(
  rec: Record<string, string>,
  file: string,
  line: number,
): MaterialRow | Reject | 'skip' {
  const bad = (reason: Reject['reason'], detail: string): Reject => reject(SOURCE, file, line, reason, detail, null);
  const unit = clean(rec.UNIT);
  if (!isIndexStatistic(clean(rec['Statistic Label']), unit)) return 'skip';
  const value = (rec.VALUE ?? '').trim();
  if (value === '' || value === '..' || value === '-') return 'skip';
  const rawMonth = clean(rec['TLIST(M1)']) ?? clean(rec.Month);
  if (rawMonth === null) return bad('missing_field', 'TLIST(M1)');
  const m = parseMonth(rawMonth);
  if (!m) return bad('invalid_date', 'TLIST(M1)');
  const material = clean(rec['Type of Material']);
  if (material === null) return bad('missing_field', 'Type of Material');
  const v = parseNumber(value);
  if (v === undefined || v === null || v <= 0 || v > 10_000) return bad('invalid_number', 'VALUE');
  return { month: m.month, period_start: m.start, material, index_value: v, line };
}

/**
 * Read WPM28 CSV files. `skipped` counts other-statistic rows and suppressed cells; `lines` counts
 * the index lines, so rows + rejects = lines as for every source.
 */
export async function readMaterials(files: string[]): Promise<AdapterResult<MaterialRow> & { skipped: number }> {
  const rows: MaterialRow[] = [];
  const rejects: Reject[] = [];
  let lines = 0;
  let skipped = 0;
  const layouts = [{ kind: 'wpm28', columns: MATERIAL_COLUMNS, required: MATERIAL_REQUIRED }] as const;
  for (const file of files) {
    const seen = new Map<string, number>();
    lines += (
      await scanCsv(
        file,
        SOURCE,
        layouts,
        (_k, rec, line) => {
          const r = normaliseMaterial(rec, file, line);
          if (r === 'skip') return void skipped++;
          if ('reason' in r) return void rejects.push(r);
          const key = `${r.month}|${r.material}`;
          const first = seen.get(key);
          if (first !== undefined)
            return void rejects.push(
              reject(SOURCE, file, line, 'duplicate', `same month and material as line ${first}`, key),
            );
          seen.set(key, line);
          rows.push(r);
        },
        (r) => void rejects.push(r),
      )
    ).lines;
  }
  return { rows, rejects, lines: lines - skipped, skipped };
}
