/**
 * Source adapter for the four infrastructure files: consenting-body cases (`ABP_CASE_COLUMNS`),
 * renewable-auction results (`AUCTION_COLUMNS`), grid connections (`GRID_CONNECTION_COLUMNS`,
 * whose first seven columns are the system operator's published wind / solar lists) and the
 * data-centre schemes register (`DATA_CENTRE_COLUMNS`). Each row becomes an `InfraFragment`
 * keyed by `projectKey(name, vertical)`; `pipeline/normalise/infrastructure.ts` merges the
 * fragments of one project. Rules: docs/infrastructure.md.
 */
import { parseDate } from '../lib/dates.ts';
import { inIreland } from '../lib/itm.ts';
import { foldText, resolveAuthority, resolveCounty } from '../reference/authorities.ts';
import type { AdapterResult, InfraFragment, InfraVertical, Reject } from '../types.ts';
import { clean, parseFlag, parseNumber, reject, scanCsv, type Layout } from './common.ts';
import { keptDetail } from './companies.ts';
import { ABP_CASE_COLUMNS, AUCTION_COLUMNS, DATA_CENTRE_COLUMNS, GRID_CONNECTION_COLUMNS } from './formats.ts';

type Kind = InfraFragment['kind'];

/** Generic words removed from a project name before keying, longest first. */
const GENERIC_SUFFIXES = [
  'battery energy storage system',
  'battery storage',
  'energy storage',
  'wind farm',
  'wind park',
  'windfarm',
  'solar farm',
  'solar park',
  'solar pv',
  'data centre',
  'data center',
  'substation',
  'project',
  'limited',
  'bess',
  'ltd',
];
const GENERIC_RE = new RegExp(`\\b(${GENERIC_SUFFIXES.map((s) => s.replace(/ /g, '\\s+')).join('|')})\\b`, 'g');

/**
 * Natural key of an infrastructure project: the vertical, then the folded name without generic
 * words, so "Knockanore Wind Farm" (a consenting case) and "KNOCKANORE" (a grid list) meet.
 *
 * @example projectKey('Knockanore Wind Farm', 'wind') // 'wind:knockanore'
 * @example projectKey('Dromana BESS', 'battery_storage') // 'battery_storage:dromana'
 */
export function projectKey(name: string, vertical: InfraVertical | null): string {
  const folded = foldText(name);
  const stripped = folded.replace(GENERIC_RE, ' ').replace(/\s+/g, ' ').trim();
  return `${vertical ?? 'unknown'}:${stripped || folded}`;
}

const VERTICAL_RULES: readonly [InfraVertical, RegExp][] = [
  ['data_centre', /\bdata (centre|center)s?\b/],
  ['wind', /\b(wind|windfarm|turbines?)\b/],
  ['solar', /\b(solar|photovoltaics?|pv)\b/],
  ['battery_storage', /\b(battery|batteries|bess|energy storage)\b/],
  ['grid', /\b(substations?|interconnectors?|transmission|grid|(\d+ ?)?kv (overhead |underground )?(line|cable)s?)\b/],
];

/**
 * Infer the vertical from a name or description by keyword (first rule that matches, in the
 * order data centre, wind, solar, battery storage, grid: grid words are often ancillary, e.g.
 * "wind farm with 110 kV substation"). Null when none matches.
 */
export function inferVertical(text: string | null): InfraVertical | null {
  if (!text) return null;
  const t = foldText(text);
  for (const [v, re] of VERTICAL_RULES) if (re.test(t)) return v;
  return null;
}

/**
 * Technology code of a project: `onshore_wind`, `offshore_wind`, `solar_pv`, `bess`,
 * `substation`, `interconnector`, `transmission_line` or `data_centre`; null without a vertical.
 * `texts` are searched in order (the name before the description), so "Kilpaddoge Substation:
 * … interconnector cable bays" is a substation.
 */
export function inferTechnology(vertical: InfraVertical | null, ...texts: (string | null)[]): string | null {
  const folded = texts.map((t) => (t ? foldText(t) : ''));
  switch (vertical) {
    case 'wind':
      return folded.some((t) => /\b(offshore|off shore)\b/.test(t)) ? 'offshore_wind' : 'onshore_wind';
    case 'solar':
      return 'solar_pv';
    case 'battery_storage':
      return 'bess';
    case 'data_centre':
      return 'data_centre';
    case 'grid':
      for (const t of folded) {
        if (/\binterconnectors?\b/.test(t)) return 'interconnector';
        if (/\bsubstations?\b/.test(t)) return 'substation';
        if (/\b(transmission|lines?|cables?|circuits?)\b/.test(t)) return 'transmission_line';
      }
      return 'transmission_line';
    default:
      return null;
  }
}

/** Vertical named by a file's Technology column (`Onshore Wind`, `Solar`, `Battery`, `Grid`). */
function verticalOfTechnology(raw: string | null): InfraVertical | null {
  if (!raw) return null;
  const t = foldText(raw);
  if (/\bwind\b/.test(t)) return 'wind';
  if (/\b(solar|pv|photovoltaics?)\b/.test(t)) return 'solar';
  if (/\b(battery|bess|storage)\b/.test(t)) return 'battery_storage';
  if (/\bdata (centre|center)\b/.test(t)) return 'data_centre';
  if (/\b(grid|substation|interconnector|transmission)\b/.test(t)) return 'grid';
  return null;
}

const CAPACITY = /(\d+(?:\.\d+)?)\s?MW(?!h)/i;
/** Longest project name taken from a description that has no `Name:` prefix. */
const NAME_MAX = 80;

const LAYOUTS: readonly Layout<Kind>[] = [
  { kind: 'abp_case', columns: ABP_CASE_COLUMNS, required: ['ABPCASEID', 'DEVDESC'] },
  { kind: 'auction', columns: AUCTION_COLUMNS, required: ['Auction', 'Project Name', 'Capacity (MW)'] },
  { kind: 'grid_connection', columns: GRID_CONNECTION_COLUMNS, required: GRID_CONNECTION_COLUMNS.slice(0, 7) },
  { kind: 'data_centre', columns: DATA_CENTRE_COLUMNS, required: ['Scheme Name', 'Demand (MW)'] },
];

function base(kind: Kind, file: string, line: number): InfraFragment {
  return {
    kind,
    project_key: '',
    name: '',
    vertical: null,
    technology: null,
    applicant: null,
    capacity_mw: null,
    connection_voltage_kv: null,
    county: null,
    authority: null,
    lat: null,
    lon: null,
    case_id: null,
    category: null,
    description: null,
    lodged_date: null,
    decision: null,
    decision_date: null,
    connection_date: null,
    auction_round: null,
    status: null,
    cru_connection_policy: null,
    public_url: null,
    line,
    file,
  };
}

const rej = (file: string, line: number, reason: Reject['reason'], detail: string, key: string | null = null) =>
  reject('infrastructure', file, line, reason, detail, key);

/** A date column: empty or wordy text without digits ("Date unavailable at this time") → null. */
function dateField(rec: Record<string, string>, col: string, file: string, line: number, key: string | null) {
  const raw = clean(rec[col]);
  if (raw === null || !/\d/.test(raw)) return null;
  const d = parseDate(raw);
  return d === undefined ? rej(file, line, 'invalid_date', col, key) : d;
}

function numberField(rec: Record<string, string>, col: string, file: string, line: number, key: string | null) {
  const n = parseNumber(rec[col]);
  return n === undefined || (n !== null && n < 0) ? rej(file, line, 'invalid_number', col, key) : n;
}

/** Latitude/longitude in WGS84; a pair given the wrong way round (lat in Longitude) is swapped. */
function coordinates(rec: Record<string, string>, file: string, line: number, key: string | null) {
  const lat = parseNumber(rec.Latitude);
  const lon = parseNumber(rec.Longitude);
  if (lat === null || lon === null) return { lat: null, lon: null };
  if (lat === undefined || lon === undefined) return rej(file, line, 'invalid_coordinates', 'Latitude/Longitude', key);
  if (inIreland(lon, lat)) return { lat, lon };
  if (inIreland(lat, lon)) return { lat: lon, lon: lat };
  return rej(file, line, 'invalid_coordinates', 'Latitude/Longitude', key);
}

function authorityField(rec: Record<string, string>, col: string, file: string, line: number, key: string | null) {
  const raw = clean(rec[col]);
  if (raw === null) return null;
  return resolveAuthority(raw) ?? rej(file, line, 'unknown_authority', col, key);
}

function isReject(x: unknown): x is Reject {
  return typeof x === 'object' && x !== null && 'reason' in x;
}

function finish(
  f: InfraFragment,
  name: string,
  vertical: InfraVertical | null,
  ...techTexts: (string | null)[]
): InfraFragment {
  f.name = name;
  f.vertical = vertical;
  f.technology = inferTechnology(vertical, ...techTexts);
  f.project_key = projectKey(name, vertical);
  return f;
}

/** The public case page of the national consenting body (An Coimisiún Pleanála, formerly An Bord Pleanála), by case number. */
export const CONSENTING_CASE_URL = 'https://www.pleanala.ie/en-ie/case/';

/**
 * The consenting body's public case page of a case reference, or null when the reference is not
 * one of its: `ABP-318540-23`, `ACP-323187-25` (the body's references since 2018 and 2025),
 * `PL06F.248544` (before 2018: `PL`, the authority's code, the case number) and, when `bare` (a
 * reference read from the consenting body's own file), a case number alone (`318540`). A council
 * reference (`24/1234`, `F21A/0123`) has no page here.
 *
 * @example consentingCaseUrl('ABP-318540-23') // 'https://www.pleanala.ie/en-ie/case/318540'
 * @example consentingCaseUrl('PL06F.248544') // 'https://www.pleanala.ie/en-ie/case/248544'
 * @example consentingCaseUrl('24/1234') // null
 */
export function consentingCaseUrl(ref: string | null, bare = false): string | null {
  if (ref === null) return null;
  const t = ref.trim().toUpperCase();
  const m =
    /^(?:ABP|ACP)-?(\d{5,7})(?:-\d{2})?$/.exec(t) ??
    /^PL\s?\d{2}[A-Z]?\s?\.\s?(\d{5,7})$/.exec(t) ??
    (bare ? /^(\d{5,7})$/.exec(t) : null);
  return m ? `${CONSENTING_CASE_URL}${m[1]}` : null;
}

/** A link given by a publisher: kept when it is an http(s) URL, else null. */
function publishedUrl(raw: string | undefined): string | null {
  const v = clean(raw);
  return v !== null && /^https?:\/\/[^\s]+$/i.test(v) ? v : null;
}

/**
 * One consenting-body case → fragment. Name = DEVDESC before its first ':' (else DEVDESC cut to
 * 80 characters); vertical and technology from keywords in the name, else the description;
 * capacity from the first `<n> MW` in DEVDESC.
 */
export function normaliseAbpCase(rec: Record<string, string>, file: string, line: number): InfraFragment | Reject {
  const caseId = clean(rec.ABPCASEID);
  if (caseId === null) return rej(file, line, 'missing_field', 'ABPCASEID');
  const desc = clean(rec.DEVDESC);
  if (desc === null) return rej(file, line, 'missing_field', 'DEVDESC', caseId);
  const colon = desc.indexOf(':');
  let name = colon > 0 ? desc.slice(0, colon).trim() : '';
  if (!name) name = desc.length <= NAME_MAX ? desc : desc.slice(0, NAME_MAX).replace(/\s+\S*$/, '');
  const lodged = dateField(rec, 'LODGEDON', file, line, caseId);
  if (isReject(lodged)) return lodged;
  const decided = dateField(rec, 'DECIDED_ON', file, line, caseId);
  if (isReject(decided)) return decided;
  const authority = authorityField(rec, 'PLANINGATY', file, line, caseId);
  if (isReject(authority)) return authority;
  const cap = CAPACITY.exec(desc);
  const f = base('abp_case', file, line);
  f.case_id = caseId;
  f.description = desc;
  f.category = clean(rec.CATEGORY);
  f.lodged_date = lodged;
  f.decision = clean(rec.DECISION);
  f.decision_date = decided;
  f.public_url = publishedUrl(rec.LINKABPWEB) ?? consentingCaseUrl(caseId, true);
  f.authority = authority?.name ?? null;
  f.county = authority?.county ?? null;
  f.capacity_mw = cap ? Number(cap[1]) : null;
  const vertical = inferVertical(name) ?? inferVertical(desc);
  return finish(f, name, vertical, name, desc);
}

/** One renewable-auction result → fragment (applicant = Company, auction_round = Auction). */
export function normaliseAuction(rec: Record<string, string>, file: string, line: number): InfraFragment | Reject {
  const name = clean(rec['Project Name']);
  const id = clean(rec['Project ID']);
  if (name === null) return rej(file, line, 'missing_field', 'Project Name', id);
  const round = clean(rec.Auction);
  if (round === null) return rej(file, line, 'missing_field', 'Auction', id);
  const cap = numberField(rec, 'Capacity (MW)', file, line, id);
  if (isReject(cap)) return cap;
  const tech = clean(rec.Technology);
  const f = base('auction', file, line);
  f.auction_round = round;
  f.capacity_mw = cap;
  f.applicant = clean(rec.Company);
  f.county = resolveCounty(rec.County);
  const vertical = verticalOfTechnology(tech) ?? inferVertical(name);
  return finish(f, name, vertical, tech, name);
}

/**
 * One grid connection → fragment. Vertical from the Technology column when present, else the
 * file name (`wind` / `solar` in it), else the name. NI rows are kept with county null.
 */
export function normaliseGridConnection(
  rec: Record<string, string>,
  file: string,
  line: number,
): InfraFragment | Reject {
  const name = clean(rec.Name);
  if (name === null) return rej(file, line, 'missing_field', 'Name');
  const cap = numberField(rec, 'Capacity (MW)', file, line, null);
  if (isReject(cap)) return cap;
  const kv = numberField(rec, 'Connection Voltage (kV)', file, line, null);
  if (isReject(kv)) return kv;
  const date = dateField(rec, 'Connection date', file, line, null);
  if (isReject(date)) return date;
  const xy = coordinates(rec, file, line, null);
  if (isReject(xy)) return xy;
  const ni = foldText(rec['ROI/NI'] ?? '') === 'ni';
  const f = base('grid_connection', file, line);
  f.capacity_mw = cap;
  f.connection_voltage_kv = kv;
  f.connection_date = date;
  f.lat = xy.lat;
  f.lon = xy.lon;
  f.county = ni ? null : (resolveCounty(rec.County) ?? resolveCounty(rec.Region));
  const fileName = foldText(file.split(/[\\/]/).pop() ?? '');
  const fromFile: InfraVertical | null = /\bwind\b/.test(fileName)
    ? 'wind'
    : /\bsolar\b/.test(fileName)
      ? 'solar'
      : null;
  const tech = clean(rec.Technology);
  const vertical = verticalOfTechnology(tech) ?? fromFile ?? inferVertical(name);
  return finish(f, name, vertical, name);
}

/** One data-centre scheme → fragment (applicant = Operator, capacity = Demand, case_id = Planning Reference, public_url = its consenting-body case page when the reference is one). */
export function normaliseDataCentre(rec: Record<string, string>, file: string, line: number): InfraFragment | Reject {
  const name = clean(rec['Scheme Name']);
  const ref = clean(rec['Planning Reference']);
  if (name === null) return rej(file, line, 'missing_field', 'Scheme Name', ref);
  const cap = numberField(rec, 'Demand (MW)', file, line, ref);
  if (isReject(cap)) return cap;
  const kv = numberField(rec, 'Connection Voltage (kV)', file, line, ref);
  if (isReject(kv)) return kv;
  const lodged = dateField(rec, 'Lodged Date', file, line, ref);
  if (isReject(lodged)) return lodged;
  const authority = authorityField(rec, 'Planning Authority', file, line, ref);
  if (isReject(authority)) return authority;
  const xy = coordinates(rec, file, line, ref);
  if (isReject(xy)) return xy;
  const f = base('data_centre', file, line);
  f.applicant = clean(rec.Operator);
  f.authority = authority?.name ?? null;
  f.case_id = ref;
  f.public_url = consentingCaseUrl(ref); // a scheme decided by the consenting body: its case page; a council reference: none
  f.county = resolveCounty(rec.County) ?? authority?.county ?? null;
  f.lat = xy.lat;
  f.lon = xy.lon;
  f.capacity_mw = cap;
  f.connection_voltage_kv = kv;
  f.status = clean(rec.Status);
  f.lodged_date = lodged;
  f.cru_connection_policy =
    clean(rec['CRU Connection Policy']) === null ? null : parseFlag(rec['CRU Connection Policy']);
  return finish(f, name, 'data_centre', name);
}

const NORMALISERS: Record<Kind, (rec: Record<string, string>, file: string, line: number) => InfraFragment | Reject> = {
  abp_case: normaliseAbpCase,
  auction: normaliseAuction,
  grid_connection: normaliseGridConnection,
  data_centre: normaliseDataCentre,
};

/**
 * Duplicate key of a fragment: the case id for consenting cases, round + project for auction
 * results, and for data centres a row equal in every field. Grid rows are never duplicates:
 * the operator's lists repeat a name, even with identical figures, for each connected phase
 * (Castledockrell has four rows, two of them identical); the merger adds them up.
 */
function dedupeKey(f: InfraFragment, rec: Record<string, string>): string | null {
  switch (f.kind) {
    case 'abp_case':
      return `abp|${f.case_id}`;
    case 'auction':
      return `auction|${f.auction_round}|${clean(rec['Project ID']) ?? f.project_key}`;
    case 'data_centre':
      return `dc|${JSON.stringify({ ...f, line: 0, file: '' })}`;
    default:
      return null;
  }
}

/**
 * Read infrastructure files (any mix of the four kinds, recognised by header). Duplicates are
 * rejected as `duplicate` (the later row is kept in the earlier one's place).
 */
export async function readInfrastructure(files: string[]): Promise<AdapterResult<InfraFragment>> {
  const rows: InfraFragment[] = [];
  const at = new Map<string, number>();
  const rejects: Reject[] = [];
  let lines = 0;
  for (const file of files) {
    const res = await scanCsv(
      file,
      'infrastructure',
      LAYOUTS,
      (kind, rec, line) => {
        const r = NORMALISERS[kind](rec, file, line);
        if (isReject(r)) return void rejects.push(r);
        const key = dedupeKey(r, rec);
        const prev = key === null ? undefined : at.get(key);
        if (prev === undefined) {
          if (key !== null) at.set(key, rows.length);
          rows.push(r);
        } else {
          const old = rows[prev]!;
          rejects.push(
            reject(
              'infrastructure',
              old.file,
              old.line,
              'duplicate',
              keptDetail(file, line),
              old.case_id ?? old.project_key,
            ),
          );
          rows[prev] = r;
        }
      },
      (r) => rejects.push(r),
    );
    lines += res.lines;
  }
  return { rows, rejects, lines };
}
