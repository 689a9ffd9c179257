/**
 * Synthetic planning applications in the national ArcGIS export layout. Each application is a
 * pure function of (seed, slot): its development, applicant, coordinates and a full timeline of
 * events (further information, decision, grant, appeal, withdrawal, a later correction), some of
 * which lie in the future. A snapshot shows only the events on or before its date, so week N+1
 * changes exactly the applications that had an event in that week.
 */
import type { Authority } from '../reference/authorities.ts';
import { AUTHORITIES } from '../reference/authorities.ts';
import { csvLine } from '../lib/csv.ts';
import { wgs84ToItm } from '../lib/itm.ts';
import type { CompanyRegistry } from './companies.ts';
import { nameVariant, pickCompany } from './companies.ts';
import { type Development, USE_CLASSES, describeDevelopment } from './descriptions.ts';
import { phraseDevelopment } from './phrasing.ts';
import { type DateStyle, dayToIso, fmtDate, isoToDay } from './output.ts';
import { type Rng, Table, cumulative, evenlySpread, recordRng } from './rng.ts';
import {
  BUSINESS_WORD_SURNAMES,
  PUBLIC_APPLICANTS,
  SOLE_TRADES,
  eircode,
  estateName,
  misplaced,
  personName,
  placeName,
  pointNear,
  spacedEircode,
  strayWhitespace,
  streetName,
  townOf,
} from './vocab.ts';
import type { NameTruth } from './truth.ts';

/** Default-scale number of distinct (valid) applications in week 1. */
export const PLANNING_DEFAULT = 201_300;
/** New applications per week at default scale. */
export const PLANNING_WEEKLY = 800;
/** Share of slots that are damaged rows, and of applications written twice. */
export const PLANNING_BAD_SHARE = 0.0025;
export const PLANNING_DUP_SHARE = 0.0025;

export type Outcome = 'grant' | 'refuse' | 'split' | 'withdrawn' | 'invalid';

/** One application with its whole timeline (day numbers; null = never happens). */
export interface PlanningApp {
  slot: number;
  authority: Authority;
  authorityIndex: number;
  appNumber: string;
  received: number;
  dev: Development;
  description: string;
  address: string;
  street: string;
  town: string;
  postcode: string;
  lat: number;
  lon: number;
  hasCoords: boolean;
  applicantForename: string;
  applicantSurname: string;
  applicantAddress: string;
  orgName: string | null;
  orgNum: number | null;
  /** Ground truth: the applicant is a person (the name that identifies them), or null for an organisation. */
  personName: string | null;
  outcome: Outcome;
  fiRequest: number | null;
  fiReceived: number | null;
  decision: number | null;
  withdrawn: number | null;
  grant: number | null;
  appealRef: string | null;
  appealSubmitted: number | null;
  appealDecided: number | null;
  appealDecision: string | null;
  correction: number | null;
  /** What the correction fixes: 0 a misspelt word, 1 coordinates ~3 km off (at `misplacedAt`, still on the authority's land). */
  correctionKind: 0 | 1;
  misplacedAt: { lat: number; lon: number } | null;
  dateStyle: DateStyle;
  siteId: string;
  bad: number; // -1 = good row, else the kind of damage
  dup: boolean;
  dupLag: number;
}

const AUTH_CUM = cumulative(AUTHORITIES.map((a) => a.weight));
const START = isoToDay('2020-01-01');

/** Relative daily intensity of applications by received year (more recent years heavier). */
const YEAR_INTENSITY: Record<number, number> = {
  2020: 0.86,
  2021: 1.0,
  2022: 0.97,
  2023: 0.96,
  2024: 1.02,
  2025: 1.1,
  2026: 1.16,
};

/** Draw a received day in [START, end) following the yearly intensities. */
export function receivedSampler(endDay: number): (r: Rng) => number {
  const days: number[] = [];
  const cum: number[] = [];
  let s = 0;
  for (let d = START; d < endDay; d++) {
    const y = +dayToIso(d).slice(0, 4);
    // weekends are quiet
    const dow = (d + 4) % 7; // 0 = Sunday
    const w = (YEAR_INTENSITY[y] ?? 1.16) * (dow === 0 || dow === 6 ? 0.15 : 1);
    s += w;
    days.push(d);
    cum.push(s);
  }
  return (r: Rng) => days[r.weighted(cum)]!;
}

type NumberStyle = (yy: string, n: number) => string;
const pad = (n: number, w: number): string => String(n).padStart(w, '0');
const NUMBER_STYLES: Record<string, NumberStyle> = {
  'Dublin City': (yy, n) => `${n + 1000}/${yy}`,
  'Dún Laoghaire-Rathdown': (yy, n) => `D${yy}A/${pad(n, 4)}`,
  Fingal: (yy, n) => `F${yy}A/${pad(n, 4)}`,
  'South Dublin': (yy, n) => `SD${yy}A/${pad(n, 4)}`,
  'Cork County': (yy, n) => `${yy}/${pad(n, 5)}`,
  'Cork City': (yy, n) => `${yy}/${n + 40000}`,
  'Galway County': (yy, n) => `${yy}${pad(n + 60000, 5)}`,
  'Galway City': (yy, n) => `${yy}/${n}`,
  Meath: (yy, n) => `${yy}${pad(n, 4)}`,
  Kildare: (yy, n) => `${yy}${pad(n, 4)}`,
  Wicklow: (yy, n) => `${yy}/${n}`,
};
const GENERIC_STYLES: NumberStyle[] = [
  (yy, n) => `${yy}/${pad(n, 3)}`,
  (yy, n) => `${yy}${pad(n + 60000, 5)}`,
  (yy, n) => `${yy}/${pad(n, 4)}`,
  (yy, n) => `${yy}${pad(n, 3)}`,
];

/** The application-number style of an authority (each authority its own). */
export function numberStyle(a: Authority, index: number): NumberStyle {
  return NUMBER_STYLES[a.name] ?? GENERIC_STYLES[index % GENERIC_STYLES.length]!;
}

const EPLANNING: Record<string, string> = {
  'Dublin City':
    'https://webapps.dublincity.ie/PublicAccess_Live/SearchResult/RunThirdPartySearch?FileSystemId=PL&FOLDER1_REF=',
  'Dún Laoghaire-Rathdown': 'https://planning.dlrcoco.ie/swiftlg/apas/run/WPHAPPDETAIL.DisplayUrl?theApnID=',
  Fingal: 'https://planning.fingal.ie/swiftlg/apas/run/WPHAPPDETAIL.DisplayUrl?theApnID=',
  'South Dublin': 'https://www.sdublincoco.ie/Planning/Details?regref=',
  'Cork City': 'https://planning.corkcity.ie/PlanningEnquiry/AppDetails?ref=',
};

/** Public page of an application on its council's e-planning site. */
export function applicationUrl(a: Authority, appNumber: string): string {
  const special = EPLANNING[a.name];
  if (special) return special + appNumber;
  const code = a.councilName.replace(/ (City and County|County|City) Council$/, '').replace(/[^A-Za-z]/g, '');
  return `https://www.eplanning.ie/${code}CC/AppFileRefDetails/${appNumber}/0`;
}

const OUTCOMES = new Table<Outcome>([
  ['grant', 80],
  ['refuse', 10],
  ['withdrawn', 4],
  ['invalid', 2],
  ['split', 4],
]);

/** Five calendar years later (29 February → 1 March). */
export function plusYears(day: number, years: number): number {
  const iso = dayToIso(day);
  return Math.round(Date.UTC(+iso.slice(0, 4) + years, +iso.slice(5, 7) - 1, +iso.slice(8, 10)) / 86_400_000);
}

/** Allocates application numbers: a running counter per authority and year. */
export class NumberAllocator {
  private readonly next = new Map<number, number>();
  /** Next number of `authorityIndex` in `year`. */
  take(authorityIndex: number, year: number): number {
    const k = authorityIndex * 10000 + year;
    const n = (this.next.get(k) ?? 0) + 1;
    this.next.set(k, n);
    return n;
  }
}

export interface PlanningContext {
  seed: number;
  companies: CompanyRegistry;
  numbers: NumberAllocator;
  /** Collects the ground truth about applicants' names, when asked for. */
  truth?: NameTruth;
}

/** Where an application is: its development, address, Eircode and coordinates (and the county they were drawn in). */
type AppSite = Pick<PlanningApp, 'dev' | 'address' | 'street' | 'town' | 'postcode' | 'lat' | 'lon' | 'hasCoords'> & {
  county: string;
};

/** Who applied, as the export shows it, and the name that identifies a person (else null). */
interface Applicant {
  applicantForename: string;
  applicantSurname: string;
  applicantAddress: string;
  orgName: string | null;
  orgNum: number | null;
  person: string | null;
}

/** An application's timeline (day numbers; null = never happens). */
type Timeline = Pick<
  PlanningApp,
  | 'outcome'
  | 'fiRequest'
  | 'fiReceived'
  | 'decision'
  | 'withdrawn'
  | 'grant'
  | 'appealRef'
  | 'appealSubmitted'
  | 'appealDecided'
  | 'appealDecision'
>;

/** The development of an application and where it is: a one-off house in the country, an estate, a street number. */
function drawSite(r: Rng, a: Authority, year: number): AppSite {
  const town = townOf(r, a);
  const place = placeName(r);
  const street = streetName(r);
  const estate = estateName(r);
  const cls = USE_CLASSES.draw(r);
  const dev = phraseDevelopment(describeDevelopment(cls, { r, town, place, estate, street, authority: a.name }), {
    r,
    authority: a.name,
    year,
  });

  const rural = dev.oneOff || cls === 'agricultural' || (cls === 'solar' && /ground-mounted/.test(dev.description));
  const county = a.county === 'Dublin' ? 'Co. Dublin' : `Co. ${a.county}`;
  const address = rural
    ? `${place}, ${town}, ${county}`
    : cls === 'housing' || cls === 'lrd'
      ? `Lands at ${estate}, ${street}, ${town}, ${county}`
      : `${r.int(1, 140)} ${r.chance(0.5) ? estate : street}, ${town}${r.chance(0.6) ? `, ${county}` : ''}`;
  const routing = r.pick(a.routingKeys);
  const postcodeRaw = r.chance(0.45) ? eircode(r, routing) : '';
  const postcode = postcodeRaw && r.chance(0.3) ? spacedEircode(postcodeRaw) : postcodeRaw;
  const { lat, lon } = pointNear(r, a);
  const hasCoords = !r.chance(0.03);
  return { dev, county, address, street, town, postcode, lat, lon, hasCoords };
}

/**
 * An organisation applicant: the public body of the development, else a company of its trade
 * under a variant of its name. `hard` draws the hard cases of the name rule.
 */
function drawOrganisation(ctx: PlanningContext, r: Rng, hard: Rng, a: Authority, dev: Development): Applicant {
  let orgName: string;
  let orgNum: number | null = null;
  if (dev.publicBody) orgName = dev.publicBody;
  else {
    const c = pickCompany(ctx.companies, r, dev.orgNace.length ? dev.orgNace : ['6810']);
    orgName = nameVariant(r, c.name);
    orgNum = c.num;
    // an organisation without a legal form: a council or another public body
    if (hard.chance(0.05)) {
      orgName = hard.chance(0.5) ? a.councilName : hard.pick(PUBLIC_APPLICANTS);
      orgNum = null;
    }
  }
  const applicantAddress = r.chance(0.85) ? `${r.int(1, 60)} ${streetName(r)}, ${townOf(r, a)}` : '';
  return { applicantForename: '', applicantSurname: orgName, applicantAddress, orgName, orgNum, person: null };
}

/** A person applicant, written as a forename and surname or, now and then, as one name. */
function drawPerson(r: Rng, hard: Rng, a: Authority, site: AppSite): Applicant {
  const p = personName(r);
  // a homeowner whose surname is a business word (Power, Church, Bank, Ireland …)
  const surname = hard.chance(0.1) ? hard.pick(BUSINESS_WORD_SURNAMES) : p.surname;
  const person = `${p.forename} ${surname}`;
  let applicantForename = p.forename;
  let applicantSurname = surname;
  const form = hard.next();
  if (form < 0.03) {
    // the whole name in the surname column, no forename given
    applicantForename = '';
    applicantSurname = person;
  } else if (form < 0.05) {
    // an individual trading under their own name, without a legal form
    applicantForename = '';
    applicantSurname = `${person} ${hard.pick(SOLE_TRADES)}`;
  }
  const home = site.dev.oneOff ? `${r.int(1, 90)} ${estateName(r)}, ${townOf(r, a)}, ${site.county}` : site.address;
  const applicantAddress = r.chance(0.9) ? home : '';
  return { applicantForename, applicantSurname, applicantAddress, orgName: null, orgNum: null, person };
}

/** The applicant of the application in `slot`, a share of them organisations as its development says. */
function drawApplicant(ctx: PlanningContext, r: Rng, slot: number, a: Authority, site: AppSite): Applicant {
  // The hard cases of the name rule draw from a stream of their own, so the rest of the record
  // is the same with or without them.
  const hard = recordRng(ctx.seed, 'planning-applicant-hard', slot);
  return r.chance(site.dev.orgShare) ? drawOrganisation(ctx, r, hard, a, site.dev) : drawPerson(r, hard, a, site);
}

/** Tell the ground truth (when collected) what the application is and who applied. */
function recordTruth(ctx: PlanningContext, a: Authority, appNumber: string, dev: Development, who: Applicant): void {
  ctx.truth?.application({
    planning_authority: a.name,
    application_number: appNumber,
    generator_class: dev.cls,
    works_kind: dev.kind,
    application_type: dev.appType,
  });
  if (who.person !== null) ctx.truth?.individual(who.person);
  else if (who.orgName !== null) ctx.truth?.organisation(who.orgName, 'applicant');
}

/** An appeal to An Bord Pleanála of a decision on `decision`, and the grant it leads to (if any). */
function drawAppeal(
  r: Rng,
  slot: number,
  decision: number,
  grants: boolean,
): Pick<Timeline, 'appealRef' | 'appealSubmitted' | 'appealDecided' | 'appealDecision' | 'grant'> {
  const appealSubmitted = decision + r.int(7, 28);
  const appealDecided = appealSubmitted + r.int(90, 330);
  const upheld = grants ? r.chance(0.7) : r.chance(0.35);
  const appealDecision = r.chance(0.04) ? 'WITHDRAWN' : upheld ? 'GRANT PERMISSION' : 'REFUSE PERMISSION';
  const ay = +dayToIso(appealSubmitted).slice(0, 4) % 100;
  const appealRef = `ABP-${300000 + ((slot * 7919 + r.int(0, 50)) % 100000)}-${pad(ay, 2)}`;
  let grant: number | null = null;
  if (appealDecision === 'GRANT PERMISSION') grant = appealDecided + r.int(2, 10);
  else if (appealDecision === 'WITHDRAWN' && grants) grant = appealDecided + r.int(2, 10);
  return { appealRef, appealSubmitted, appealDecided, appealDecision, grant };
}

/** The timeline of an application received on `received`: further information, decision, appeal, grant. */
function drawTimeline(r: Rng, slot: number, received: number, dev: Development): Timeline {
  const t: Timeline = {
    outcome: OUTCOMES.draw(r),
    fiRequest: null,
    fiReceived: null,
    decision: null,
    withdrawn: null,
    grant: null,
    appealRef: null,
    appealSubmitted: null,
    appealDecided: null,
    appealDecision: null,
  };
  if (t.outcome === 'invalid') {
    t.decision = received + r.int(3, 21);
    return t;
  }
  let decisionBase = received + r.int(30, 58);
  if (r.chance(0.082)) {
    t.fiRequest = received + r.int(35, 56);
    t.fiReceived = t.fiRequest + r.int(14, 180);
    decisionBase = t.fiReceived + r.int(14, 28);
  }
  if (t.outcome === 'withdrawn') {
    t.withdrawn = (t.fiRequest ?? received) + r.int(10, 120);
    return t;
  }
  t.decision = decisionBase;
  const grants = t.outcome !== 'refuse';
  if (r.chance(0.05)) Object.assign(t, drawAppeal(r, slot, t.decision, grants));
  else if (grants) t.grant = t.decision + r.int(28, 40);
  // a section 5 declaration decides whether works are exempt: nothing is granted
  if (dev.kind === 'declaration') t.grant = null;
  return t;
}

/**
 * Build the application of one slot. `received` is drawn by the caller (base slots spread over
 * 2020–snapshot, weekly slots in their week). Slots must be built in order (numbers are allocated
 * per authority and year).
 */
export function buildApp(ctx: PlanningContext, slot: number, received: number): PlanningApp {
  const r = recordRng(ctx.seed, 'planning', slot);
  const authorityIndex = slot < AUTHORITIES.length ? slot : r.weighted(AUTH_CUM);
  const a = AUTHORITIES[authorityIndex]!;
  const year = +dayToIso(received).slice(0, 4);
  const appNumber = numberStyle(a, authorityIndex)(
    String(year % 100).padStart(2, '0'),
    ctx.numbers.take(authorityIndex, year),
  );

  const site = drawSite(r, a, year);
  const { dev, address, lat, lon } = site;
  const who = drawApplicant(ctx, r, slot, a, site);
  recordTruth(ctx, a, appNumber, dev, who);
  const timeline = drawTimeline(r, slot, received, dev);

  const corr = r.chance(0.065);
  const bad = evenlySpread(slot, PLANNING_BAD_SHARE, 200) ? r.int(0, 4) : -1;
  const app: PlanningApp = {
    slot,
    authority: a,
    authorityIndex,
    appNumber,
    received,
    dev,
    description: r.chance(0.02) ? strayWhitespace(r, dev.description) : dev.description,
    address: r.chance(0.02) ? strayWhitespace(r, address) : address,
    street: site.street,
    town: site.town,
    postcode: site.postcode,
    lat,
    lon,
    hasCoords: site.hasCoords,
    applicantForename: who.applicantForename,
    applicantSurname: r.chance(0.02) ? strayWhitespace(r, who.applicantSurname) : who.applicantSurname,
    applicantAddress: who.applicantAddress,
    orgName: who.orgName,
    orgNum: who.orgNum,
    personName: who.person,
    ...timeline,
    correction: corr ? received + r.int(7, 1100) : null,
    correctionKind: 0,
    misplacedAt: null,
    dateStyle: r.int(0, 3) as DateStyle,
    siteId: r.chance(0.6) ? String(100000 + slot) : '',
    bad,
    dup: bad < 0 && evenlySpread(slot, PLANNING_DUP_SHARE, 77),
    dupLag: r.int(7, 90),
  };
  if (!r.chance(0.6)) {
    // coordinates published ~3 km off, on the authority's land still (else a misspelt word)
    app.misplacedAt = misplaced(a, { lat, lon });
    if (app.misplacedAt) app.correctionKind = 1;
  }
  return app;
}

/** Misspell one word, as a clerk might before a correction. */
function typo(s: string): string {
  return s.replace(
    /\b(extension|dwelling|permission|construction|associated|development)\b/i,
    (w) => w.slice(0, 3) + w.slice(4),
  );
}

function decisionText(app: PlanningApp): string {
  const retention = /^RETENTION|RETENTION$/.test(app.dev.appType) || /^Retention/.test(app.dev.description);
  const both = app.dev.appType === 'PERMISSION AND RETENTION';
  if (
    app.dev.kind === 'declaration' &&
    (app.outcome === 'grant' || app.outcome === 'refuse' || app.outcome === 'split')
  ) {
    return app.outcome === 'grant' ? 'DECLARED EXEMPT' : 'DECLARED NOT EXEMPT';
  }
  switch (app.outcome) {
    case 'grant':
      if (app.dev.kind === 'extension_of_duration') return 'GRANT EXTENSION OF DURATION';
      if (both) return 'GRANT PERMISSION & GRANT RETENTION';
      if (retention) return 'GRANT RETENTION';
      if (app.dev.appType === 'OUTLINE PERMISSION') return 'GRANT OUTLINE PERMISSION';
      return 'GRANT PERMISSION';
    case 'refuse':
      if (app.dev.kind === 'extension_of_duration') return 'REFUSE EXTENSION OF DURATION';
      return retention ? 'REFUSE RETENTION' : 'REFUSE PERMISSION';
    case 'split':
      return 'SPLIT DECISION';
    case 'invalid':
      return 'INVALID';
    default:
      return 'WITHDRAWN';
  }
}

/** The latest event of the application on or before `asOf` (the export's ETL_DATE). */
export function lastEvent(app: PlanningApp, asOf: number): number {
  let m = app.received;
  for (const d of [
    app.fiRequest,
    app.fiReceived,
    app.decision,
    app.withdrawn,
    app.grant,
    app.appealSubmitted,
    app.appealDecided,
    app.correction,
  ]) {
    if (d !== null && d <= asOf && d > m) m = d;
  }
  return m;
}

const vis = (d: number | null, asOf: number): number | null => (d !== null && d <= asOf ? d : null);

/** The export row of an application as of `asOf` (fields in PLANNING_COLUMNS order). */
export function planningFields(app: PlanningApp, asOf: number): string[] {
  const s = app.dateStyle;
  const corrected = app.correction !== null && app.correction <= asOf;
  const broken = app.correction !== null && !corrected;
  let description = app.description;
  let lat = app.lat;
  let lon = app.lon;
  if (broken && app.correctionKind === 0) description = typo(description);
  if (broken && app.misplacedAt) ({ lat, lon } = app.misplacedAt);
  let easting = '';
  let northing = '';
  if (app.hasCoords) {
    const itm = wgs84ToItm(lon, lat);
    easting = itm.easting.toFixed(1);
    northing = itm.northing.toFixed(1);
  }
  const decision = vis(app.decision, asOf);
  const withdrawn = vis(app.withdrawn, asOf);
  const fiReq = vis(app.fiRequest, asOf);
  const fiRec = vis(app.fiReceived, asOf);
  const appealSub = vis(app.appealSubmitted, asOf);
  const appealDec = vis(app.appealDecided, asOf);
  const grant = vis(app.grant, asOf);

  let status = 'NEW APPLICATION';
  if (app.outcome === 'invalid' && decision !== null) status = 'INCOMPLETE';
  else if (withdrawn !== null) status = 'WITHDRAWN';
  else if (appealSub !== null && appealDec === null) status = 'APPEALED';
  else if (decision !== null) status = 'DECISION MADE';
  else if (fiReq !== null) status = 'FURTHER INFORMATION';

  const dueDay = fiRec !== null ? fiRec + 28 : app.received + 56;
  const dev = app.dev;
  const units = dev.units === null ? (dev.landUse === 'RES' ? '0' : '') : String(dev.units);
  return [
    String(app.slot * 2 + 1),
    app.authority.councilName,
    app.appNumber,
    description,
    app.address,
    app.postcode,
    easting,
    northing,
    status,
    dev.appType,
    app.applicantForename,
    app.applicantSurname,
    app.applicantAddress,
    decision !== null ? decisionText(app) : withdrawn !== null ? 'WITHDRAWN' : '',
    dev.landUse,
    String(dev.siteHa),
    units,
    dev.oneOff ? '1' : '0',
    dev.oneOff ? 'Y' : 'N',
    dev.floorM2 === null ? '' : String(dev.floorM2),
    fmtDate(app.received, s),
    fmtDate(withdrawn, s),
    fmtDate(decision, s),
    fmtDate(dueDay, s),
    fmtDate(grant, s),
    fmtDate(grant === null ? null : plusYears(grant, 5), s),
    appealSub !== null ? app.appealRef! : '',
    appealSub === null ? '' : appealDec === null ? 'APPEAL LODGED' : 'APPEAL DECIDED',
    appealDec !== null ? app.appealDecision! : '',
    fmtDate(appealDec, s),
    fmtDate(appealSub, s),
    fmtDate(fiReq, s),
    fmtDate(fiRec, s),
    applicationUrl(app.authority, app.appNumber),
    dayToIso(lastEvent(app, asOf)),
    app.siteId,
  ];
}

const UNKNOWN_AUTHORITIES = [
  'Dublin Docklands Development Authority',
  'Shannon Development',
  'Unknown Council',
  'Cork Harbour Commissioners',
];

/**
 * The CSV lines of one slot as of `asOf`: usually one, two for a duplicated application (the
 * older copy first, with an earlier ETL_DATE), and a damaged line for a bad slot.
 */
export function planningLines(app: PlanningApp, asOf: number): string[] {
  const f = planningFields(app, asOf);
  if (app.bad >= 0) {
    switch (app.bad) {
      case 0:
        f[20] = app.slot % 2 === 0 ? `31/02/${dayToIso(app.received).slice(0, 4)}` : 'N/A';
        break;
      case 1:
        f[1] = UNKNOWN_AUTHORITIES[app.slot % UNKNOWN_AUTHORITIES.length]!;
        break;
      case 2:
        f[2] = '';
        break;
      case 3:
        return [csvLine(f.slice(0, 12))];
      default:
        f[6] = '1250000.0';
        f[7] = String(2_300_000 + (app.slot % 1000)) + '.0';
    }
    return [csvLine(f)];
  }
  const line = csvLine(f);
  if (!app.dup) return [line];
  const older = [...f];
  older[0] = String(app.slot * 2 + 2);
  older[34] = dayToIso(isoToDay(f[34]!) - app.dupLag);
  if (app.slot % 3 === 0) older[3] = `${older[3]} `; // near duplicate: stray trailing space
  return [csvLine(older), line];
}
