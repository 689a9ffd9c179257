/**
 * Source adapter for the BCMS commencement notices file (one row per notice, with its completion
 * certificate columns). Reads the columns of `COMMENCEMENT_COLUMNS` and ignores the rest of the
 * national file's 99. The owner's name and phone are never read; a builder's name is kept only
 * when it is an organisation.
 */
import { parseDate } from '../lib/dates.ts';
import { inIreland } from '../lib/itm.ts';
import { resolveAuthority, resolveCounty } from '../reference/authorities.ts';
import type { AdapterResult, CommencementRow, Reject } from '../types.ts';
import { clean, parseFlag, parseInteger, parseNumber, reject, routingKey, scanCsv } from './common.ts';
import { COMMENCEMENT_COLUMNS } from './formats.ts';
import { cleanApplicationNumber } from './planning.ts';

const SOURCE = 'commencements' as const;

/** Columns a commencement file must have to be read at all. */
export const COMMENCEMENT_REQUIRED_COLUMNS = ['CN_Number'] as const;

/** Personal-data columns that are dropped from every record before it is normalised. */
export const COMMENCEMENT_PERSONAL_COLUMNS = ['CN_Owner_Name', 'CN_Owner_Phone'] as const;

const DATES = [
  ['CN_Date_Granted', 'date_granted'],
  ['CN_Date_Submitted_or_Received', 'submitted_date'],
  ['CN_Commencement_Date', 'commencement_date'],
  ['CN_Proposed_end_date', 'proposed_end_date'],
  ['CCC_Date_Validated', 'ccc_date'],
] as const;

const INTEGERS = [
  ['CN_Units_for_phase', 'units_for_phase'],
  ['CN_Total_Number_of_Dwelling_Units', 'total_units'],
  ['CCC_Units_Completed', 'ccc_units_completed'],
] as const;

type DateField = (typeof DATES)[number][1];
type IntegerField = (typeof INTEGERS)[number][1];

/**
 * Turn one raw commencement record (column → text) into a `CommencementRow`, or a reject naming
 * the offending column. An unknown `LocalAuthority` or county gives null, not a reject.
 */
export function normaliseCommencement(
  rec: Record<string, string>,
  file: string,
  line: number,
): CommencementRow | Reject {
  const key = clean(rec.CN_Number)?.toUpperCase() ?? null;
  const bad = (reason: Reject['reason'], detail: string): Reject => reject(SOURCE, file, line, reason, detail, key);
  if (key === null) return bad('missing_field', 'CN_Number');

  const dates = {} as Record<DateField, string | null>;
  for (const [column, field] of DATES) {
    const d = parseDate(rec[column]);
    if (d === undefined) return bad('invalid_date', column);
    dates[field] = d;
  }
  const ints = {} as Record<IntegerField, number | null>;
  for (const [column, field] of INTEGERS) {
    const n = parseInteger(rec[column]);
    if (n === undefined) return bad('invalid_number', column);
    ints[field] = n;
  }

  const lat = parseNumber(rec.CN_LAT);
  const lon = parseNumber(rec.CN_LNG);
  if (lat === undefined) return bad('invalid_coordinates', 'CN_LAT');
  if (lon === undefined) return bad('invalid_coordinates', 'CN_LNG');
  const located = lat !== null && lon !== null;
  if (located && !inIreland(lon, lat)) return bad('invalid_coordinates', 'CN_LAT/CN_LNG');

  const builder = clean(rec.CN_Builder_Name);

  return {
    cn_number: key,
    permission_number: cleanApplicationNumber(rec.CN_Planning_Permission_Number),
    authority: resolveAuthority(rec.LocalAuthority)?.name ?? null,
    project_name: clean(rec.CN_Project_Name),
    description: clean(rec.CN_Description_proposed_development),
    project_type: clean(rec.CN_Project_type),
    activity_type: clean(rec.CN_Activity_Type),
    date_granted: dates.date_granted,
    submitted_date: dates.submitted_date,
    commencement_date: dates.commencement_date,
    proposed_end_date: dates.proposed_end_date,
    units_for_phase: ints.units_for_phase,
    phase: clean(rec.CN_Phase_for_this_Notice),
    total_units: ints.total_units,
    town: clean(rec.CN_Town),
    eircode_routing_key: routingKey(rec.CN_Eircode),
    county: resolveCounty(rec.CN_County),
    lat: located ? lat : null,
    lon: located ? lon : null,
    validation_status: clean(rec.CN_Validation_Status),
    not_commenced: parseFlag(rec.CN_Not_Commenced),
    opt_out: parseFlag(rec.Opt_Out_Comm_Notice),
    builder_name: builder,
    builder_company_number: clean(rec.CN_Builder_Company_Number),
    ccc_number: clean(rec.CCC_Number),
    ccc_date: dates.ccc_date,
    ccc_type: clean(rec.CCC_Type_of_Completion_Certificate),
    ccc_units_completed: ints.ccc_units_completed,
    line,
  };
}

/**
 * Read BCMS commencement files into rows and rejects. A CN_Number seen again replaces the
 * earlier row (the later one is kept), which becomes a `duplicate` reject.
 *
 * With `onRow`, every accepted row is handed to it as it is read, with its arrival number, and
 * `rows` stays empty; `kept` lists the arrival of the row kept for each notice (as `readPlanning`).
 */
export async function readCommencements(
  files: string[],
  onRow?: (row: CommencementRow, arrival: number) => void,
): Promise<AdapterResult<CommencementRow> & { kept: number[] }> {
  const rows: CommencementRow[] = [];
  const rejects: Reject[] = [];
  // the row kept so far per notice: where it was read, its position among the rows, its arrival
  const byKey = new Map<string, { at: number; arrival: number; file: string; line: number }>();
  let arrivals = 0;
  let lines = 0;
  for (const file of files) {
    const onRecord = (rec: Record<string, string>, line: number): void => {
      const row = normaliseCommencement(rec, file, line);
      if (!('cn_number' in row)) {
        rejects.push(row);
        return;
      }
      const arrival = arrivals++;
      onRow?.(row, arrival);
      const old = byKey.get(row.cn_number);
      if (old === undefined) {
        byKey.set(row.cn_number, { at: byKey.size, arrival, file, line });
        if (!onRow) rows.push(row);
        return;
      }
      rejects.push(reject(SOURCE, old.file, old.line, 'duplicate', `superseded by ${file}:${line}`, row.cn_number));
      byKey.set(row.cn_number, { at: old.at, arrival, file, line });
      if (!onRow) rows[old.at] = row;
    };
    const layout = { kind: 'notice', columns: COMMENCEMENT_COLUMNS, required: COMMENCEMENT_REQUIRED_COLUMNS } as const;
    const scanned = await scanCsv(
      file,
      SOURCE,
      [layout],
      (_k, rec, line) => onRecord(rec, line),
      (r) => void rejects.push(r),
      COMMENCEMENT_PERSONAL_COLUMNS,
    );
    lines += scanned.lines;
  }
  return { rows, rejects, lines, kept: [...byKey.values()].map((k) => k.arrival) };
}
