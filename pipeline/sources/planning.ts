/**
 * Source adapter for the national planning applications export (Department of Housing ArcGIS
 * service), in its CSV download form or its ArcGIS JSON form (`{ features: [{ attributes,
 * geometry }] }`, dates as epoch milliseconds). One `PlanningRow` per application; applicant
 * names and addresses are read only to decide whether the applicant is an organisation and
 * whether contact details existed, and never leave this module.
 */
import { readFile } from 'node:fs/promises';
import { parseDate } from '../lib/dates.ts';
import { inIreland, itmToWgs84, wgs84ToItm } from '../lib/itm.ts';
import { resolveAuthority } from '../reference/authorities.ts';
import type { AdapterResult, PlanningRow, Reject } from '../types.ts';
import { clean, parseFlag, parseInteger, parseNumber, reject, routingKey, scanCsv } from './common.ts';
import { PLANNING_COLUMNS } from './formats.ts';

const SOURCE = 'planning' as const;

/** Columns a planning file must have to be read at all (the others are optional). */
export const PLANNING_REQUIRED_COLUMNS = ['PlanningAuthority', 'ApplicationNumber', 'ReceivedDate'] as const;
const PLANNING_LAYOUT = { kind: 'planning', columns: PLANNING_COLUMNS, required: PLANNING_REQUIRED_COLUMNS } as const;

/** Optional date columns and the row field each one fills. */
const OPTIONAL_DATES = [
  ['WithdrawnDate', 'withdrawn_date'],
  ['DecisionDate', 'decision_date'],
  ['DecisionDueDate', 'decision_due_date'],
  ['GrantDate', 'grant_date'],
  ['ExpiryDate', 'expiry_date'],
  ['AppealDecisionDate', 'appeal_decision_date'],
  ['AppealSubmittedDate', 'appeal_submitted_date'],
  ['FIRequestDate', 'fi_request_date'],
  ['FIRecDate', 'fi_received_date'],
  ['ETL_DATE', 'etl_date'],
] as const;

type DateField = (typeof OPTIONAL_DATES)[number][1];

/**
 * Normalise a planning application number (or a commencement notice's permission number, which
 * links to it): trim, upper-case, collapse inner whitespace to one space; empty → null.
 * @example cleanApplicationNumber(' fw23a/0123 ') // 'FW23A/0123'
 */
export function cleanApplicationNumber(raw: string | null | undefined): string | null {
  return clean(raw)?.toUpperCase() ?? null;
}

/**
 * Turn one raw planning record (column → text, as in `PLANNING_COLUMNS`) into a `PlanningRow`,
 * or a reject naming the offending column. Applicant forename, surname and address are used
 * only to set `applicant_person`, `applicant_name` (only when no forename is given: a possible
 * organisation, decided on evidence by normalise/name-evidence.ts) and `has_contact`.
 */
export function normalisePlanning(rec: Record<string, string>, file: string, line: number): PlanningRow | Reject {
  const key = cleanApplicationNumber(rec.ApplicationNumber);
  const bad = (reason: Reject['reason'], detail: string): Reject => reject(SOURCE, file, line, reason, detail, key);
  if (key === null) return bad('missing_field', 'ApplicationNumber');

  const authorityRaw = clean(rec.PlanningAuthority);
  if (authorityRaw === null) return bad('missing_field', 'PlanningAuthority');
  const authority = resolveAuthority(authorityRaw);
  if (!authority) return bad('unknown_authority', 'PlanningAuthority');

  const received = parseDate(rec.ReceivedDate);
  if (received === null) return bad('missing_field', 'ReceivedDate');
  if (received === undefined) return bad('invalid_date', 'ReceivedDate');

  const dates = {} as Record<DateField, string | null>;
  for (const [column, field] of OPTIONAL_DATES) {
    const d = parseDate(rec[column]);
    if (d === undefined) return bad('invalid_date', column);
    dates[field] = d;
  }

  const siteArea = parseNumber(rec.AreaofSite);
  if (siteArea === undefined) return bad('invalid_number', 'AreaofSite');
  const units = parseInteger(rec.NumResidentialUnits);
  if (units === undefined) return bad('invalid_number', 'NumResidentialUnits');
  const floorArea = parseNumber(rec.FloorArea);
  if (floorArea === undefined) return bad('invalid_number', 'FloorArea');

  const easting = parseNumber(rec.ITMEasting);
  const northing = parseNumber(rec.ITMNorthing);
  if (easting === undefined) return bad('invalid_coordinates', 'ITMEasting');
  if (northing === undefined) return bad('invalid_coordinates', 'ITMNorthing');
  let lat: number | null = null;
  let lon: number | null = null;
  if (easting !== null && northing !== null) {
    const p = itmToWgs84(easting, northing);
    if (!Number.isFinite(p.lon) || !Number.isFinite(p.lat) || !inIreland(p.lon, p.lat)) {
      return bad('invalid_coordinates', 'ITMEasting/ITMNorthing');
    }
    lat = p.lat;
    lon = p.lon;
  }

  // A row that gives a forename is a person, whatever its surname says: the name stops here.
  // Without one, the name may be an organisation's; normalise decides on evidence, in memory.
  const applicantPerson = clean(rec.ApplicantForename) !== null;
  const applicantName = applicantPerson ? null : clean(rec.ApplicantSurname);
  const hasContact = clean(rec.ApplicantAddress) !== null || applicantPerson;

  return {
    authority: authority.name,
    application_number: key,
    description: clean(rec.DevelopmentDescription) ?? '',
    address: clean(rec.DevelopmentAddress),
    eircode_routing_key: routingKey(rec.DevelopmentPostcode),
    lat,
    lon,
    application_status: clean(rec.ApplicationStatus),
    application_type: clean(rec.ApplicationType),
    decision: clean(rec.Decision),
    land_use_code: clean(rec.LandUseCode),
    site_area_ha: siteArea,
    num_units: units,
    floor_area_m2: floorArea,
    one_off_house: parseFlag(rec.OneOffHouse),
    received_date: received,
    withdrawn_date: dates.withdrawn_date,
    decision_date: dates.decision_date,
    decision_due_date: dates.decision_due_date,
    grant_date: dates.grant_date,
    expiry_date: dates.expiry_date,
    appeal_ref: clean(rec.AppealRefNumber),
    appeal_status: clean(rec.AppealStatus),
    appeal_decision: clean(rec.AppealDecision),
    appeal_decision_date: dates.appeal_decision_date,
    appeal_submitted_date: dates.appeal_submitted_date,
    fi_request_date: dates.fi_request_date,
    fi_received_date: dates.fi_received_date,
    public_url: clean(rec.LinkAppDetails),
    etl_date: dates.etl_date,
    site_id: clean(rec.SiteId),
    applicant_person: applicantPerson,
    applicant_name: applicantName,
    has_contact: hasContact,
    line,
  };
}

/** The row kept so far for one key: where it was read, its position among the rows and its arrival. */
interface KeptRow {
  at: number;
  arrival: number;
  file: string;
  line: number;
  etl: string;
}

/**
 * Keeps one row per authority + application number: the one with the latest ETL_DATE, and of
 * equal ETL dates the one read last. The other becomes a `duplicate` reject. With `onRow`, each
 * accepted row is handed over as it is read (with its arrival number) and only a small entry per
 * key is kept, never the rows; `kept()` then says which arrivals won.
 */
class PlanningCollector {
  readonly rows: PlanningRow[] = [];
  readonly rejects: Reject[] = [];
  private readonly byKey = new Map<string, KeptRow>();
  private readonly onRow: ((row: PlanningRow, arrival: number) => void) | undefined;
  private arrivals = 0;

  constructor(onRow?: (row: PlanningRow, arrival: number) => void) {
    this.onRow = onRow;
  }

  add(row: PlanningRow | Reject, file: string): void {
    if (!('application_number' in row)) {
      this.rejects.push(row);
      return;
    }
    const arrival = this.arrivals++;
    this.onRow?.(row, arrival);
    const k = `${row.authority}\u0000${row.application_number}`;
    const old = this.byKey.get(k);
    const etl = row.etl_date ?? '';
    if (old === undefined) {
      this.byKey.set(k, { at: this.byKey.size, arrival, file, line: row.line, etl });
      if (!this.onRow) this.rows.push(row);
      return;
    }
    if (etl >= old.etl) {
      this.rejects.push(duplicate(old.file, old.line, file, row.line, row.application_number));
      this.byKey.set(k, { at: old.at, arrival, file, line: row.line, etl });
      if (!this.onRow) this.rows[old.at] = row;
    } else {
      this.rejects.push(duplicate(file, row.line, old.file, old.line, row.application_number));
    }
  }

  /** The arrival number of the row kept for each key, in the order the keys were first read. */
  kept(): number[] {
    return [...this.byKey.values()].map((k) => k.arrival);
  }
}

function duplicate(file: string, line: number, keptFile: string, keptLine: number, key: string): Reject {
  return reject(SOURCE, file, line, 'duplicate', `superseded by ${keptFile}:${keptLine}`, key);
}

/**
 * Read planning export files (CSV, or ArcGIS JSON when the name ends in `.json`) into rows and
 * rejects. Rows + rejects = lines: duplicates and unreadable headers are rejects too.
 *
 * With `onRow`, every accepted row is handed to it as soon as it is read, with its arrival number
 * (0, 1, … in read order), and `rows` stays empty: `kept` lists the arrival of the row kept for
 * each application (in first-read order), so a caller staging the rows keeps those and drops the
 * superseded ones. The refresh streams 200,000 applications this way instead of holding them.
 */
export async function readPlanning(
  files: string[],
  onRow?: (row: PlanningRow, arrival: number) => void,
): Promise<AdapterResult<PlanningRow> & { kept: number[] }> {
  const out = new PlanningCollector(onRow);
  let lines = 0;
  for (const file of files) {
    const onRecord = (rec: Record<string, string>, line: number): void =>
      out.add(normalisePlanning(rec, file, line), file);
    const onReject = (r: Reject): void => void out.rejects.push(r);
    if (file.toLowerCase().endsWith('.json')) {
      lines += await scanArcgisJson(file, onRecord, onReject);
    } else {
      lines += (await scanCsv(file, SOURCE, [PLANNING_LAYOUT], (_k, rec, line) => onRecord(rec, line), onReject)).lines;
    }
  }
  return { rows: out.rows, rejects: out.rejects, lines, kept: out.kept() };
}

/**
 * Turn one ArcGIS JSON feature into the same column → text record the CSV form gives: numbers
 * (epoch-ms dates included) become their decimal text, null becomes ''. When the attributes
 * carry no ITM coordinates, the point geometry is used (ITM, or WGS84 / Web Mercator when the
 * document's spatial reference says so). Returns null when the feature has no attributes.
 */
export function arcgisFeatureRecord(feature: unknown, wkid: number | null): Record<string, string> | null {
  if (typeof feature !== 'object' || feature === null) return null;
  const { attributes, geometry } = feature as { attributes?: unknown; geometry?: unknown };
  if (typeof attributes !== 'object' || attributes === null || Array.isArray(attributes)) return null;
  const rec: Record<string, string> = {};
  for (const [k, v] of Object.entries(attributes)) {
    rec[k] = v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v);
  }
  const hasItm = clean(rec.ITMEasting) !== null || clean(rec.ITMNorthing) !== null;
  if (!hasItm && typeof geometry === 'object' && geometry !== null) {
    const { x, y } = geometry as { x?: unknown; y?: unknown };
    if (typeof x === 'number' && typeof y === 'number' && Number.isFinite(x) && Number.isFinite(y)) {
      const itm = geometryToItm(x, y, wkid);
      rec.ITMEasting = String(itm.easting);
      rec.ITMNorthing = String(itm.northing);
    }
  }
  return rec;
}

function geometryToItm(x: number, y: number, wkid: number | null): { easting: number; northing: number } {
  if (wkid === 4326) return wgs84ToItm(x, y);
  if (wkid === 3857 || wkid === 102100) {
    const R = 6378137;
    const lon = (x / R) * (180 / Math.PI);
    const lat = (2 * Math.atan(Math.exp(y / R)) - Math.PI / 2) * (180 / Math.PI);
    return wgs84ToItm(lon, lat);
  }
  return { easting: x, northing: y }; // 2157 (ITM), the export's own reference
}

/**
 * Read one ArcGIS JSON file. Line numbers are the 1-based position of the feature in
 * `features`. Invalid JSON → one `malformed_row` reject; no `features` array or a first feature
 * without the required attributes → one `unknown_header` reject.
 */
async function scanArcgisJson(
  file: string,
  onRecord: (rec: Record<string, string>, line: number) => void,
  onReject: (r: Reject) => void,
): Promise<number> {
  const text = (await readFile(file, 'utf8')).replace(/^\uFEFF/, '');
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    onReject(reject(SOURCE, file, 1, 'malformed_row', 'invalid JSON'));
    return 1;
  }
  const { features, spatialReference } = (typeof doc === 'object' && doc !== null ? doc : {}) as {
    features?: unknown;
    spatialReference?: { wkid?: unknown; latestWkid?: unknown };
  };
  if (!Array.isArray(features)) {
    onReject(reject(SOURCE, file, 1, 'unknown_header', 'features'));
    return 1;
  }
  const wk = spatialReference?.latestWkid ?? spatialReference?.wkid;
  const wkid = typeof wk === 'number' ? wk : null;
  for (let i = 0; i < features.length; i++) {
    const rec = arcgisFeatureRecord(features[i], wkid);
    if (i === 0 && (rec === null || !PLANNING_REQUIRED_COLUMNS.every((c) => c in rec))) {
      onReject(reject(SOURCE, file, 1, 'unknown_header', 'attributes'));
      return 1;
    }
    if (rec === null) onReject(reject(SOURCE, file, i + 1, 'malformed_row', 'attributes'));
    else onRecord(rec, i + 1);
  }
  return features.length;
}
